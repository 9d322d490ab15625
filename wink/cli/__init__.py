"""The ``wink`` command: provider tool specs, schema files and CI drift checks, payload validation.

``main(argv)`` runs it in-process and returns the exit status; ``WinkSettings``
holds the project defaults (``WINK_*`` variables, ``[tool.wink]`` in ``pyproject.toml``).
"""

from wink.cli.app import WinkCommand, main
from wink.cli.settings import WinkSettings

__all__ = ["WinkCommand", "WinkSettings", "main"]
