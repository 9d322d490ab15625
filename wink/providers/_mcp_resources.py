"""Resources offered to MCP clients: ``resources/list``, ``resources/read``, templates.

An ``McpResource`` is one URI whose contents are fixed or read when asked; an
``McpResourceTemplate`` answers every URI its template matches (``{name}`` stands
for one path segment, ``{+name}`` for any text, RFC 6570's simple and reserved
expansions). The prompt's bound filesystem is offered read-only as
``file://<mount point>/<path>`` when the catalog asks for it (``files=True``).
Text contents are sent as ``text``, bytes as base64 ``blob``.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wink.errors import PromptValidationError
from wink.providers._mcp_prompts import matching
from wink.resources import Filesystem

__all__ = [
    "DEFAULT_MAX_LISTED_FILES",
    "McpResource",
    "McpResourceTemplate",
    "file_uri",
    "files_template",
    "listed_files",
    "resource_contents",
]

DEFAULT_MAX_LISTED_FILES = 1000
"""Files of the bound filesystem ``resources/list`` names at most; the rest are read by URI."""

Contents = str | bytes
"""What a resource reads as: text, or bytes."""

_EXPRESSION = re.compile(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class McpResource:
    """One resource at a fixed URI: its contents, or a function reading them when asked."""

    uri: str
    """Such as ``docs://guide``; clients read it by this URI."""
    name: str
    """A short name clients show."""
    contents: Contents | Callable[[], Contents]
    """Text or bytes, or what reads them at each ``resources/read``."""
    description: str = ""
    """What the resource holds."""
    mime_type: str | None = None
    """Such as ``text/plain``; ``None`` when unknown."""

    def read(self) -> Contents:
        """The contents now."""
        return self.contents() if callable(self.contents) else self.contents


@dataclass(frozen=True, slots=True)
class McpResourceTemplate:
    """Resources whose URIs match ``uri_template``, read with the matched variables."""

    uri_template: str
    """Such as ``notes://{topic}/latest``; see the module docstring."""
    name: str
    """A short name clients show."""
    read: Callable[[Mapping[str, str]], Contents]
    """Reads the resource at a matching URI, given its variables by name."""
    description: str = ""
    """What the resources hold."""
    mime_type: str | None = None
    """Such as ``application/json``; ``None`` when unknown."""
    completions: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Values ``completion/complete`` suggests for each variable."""
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [match.group(2) for match in _EXPRESSION.finditer(self.uri_template)]
        if not names:
            raise PromptValidationError(
                f"resource template {self.uri_template!r} has no {{variable}}; "
                "use an McpResource for a single URI"
            )
        unknown = sorted(set(self.completions) - set(names))
        if unknown:
            raise PromptValidationError(
                f"resource template {self.uri_template!r}: completions for {unknown[0]!r}, "
                "which is no variable of it"
            )
        object.__setattr__(self, "_pattern", _compiled(self.uri_template))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` when it matches the template, else ``None``."""
        found = self._pattern.fullmatch(uri)
        return None if found is None else found.groupdict()

    def complete(self, variable: str, prefix: str) -> tuple[list[str], int]:
        """Suggested values of ``variable`` starting with ``prefix``, and how many match."""
        return matching(tuple(self.completions.get(variable, ())), prefix)


def _compiled(template: str) -> re.Pattern[str]:
    pattern: list[str] = []
    position = 0
    for match in _EXPRESSION.finditer(template):
        pattern.append(re.escape(template[position : match.start()]))
        reserved, name = match.groups()
        pattern.append(f"(?P<{name}>{'.+' if reserved else '[^/?#]+'})")
        position = match.end()
    pattern.append(re.escape(template[position:]))
    return re.compile("".join(pattern))


def resource_contents(uri: str, contents: Contents, mime_type: str | None) -> dict[str, Any]:
    """The ``contents`` entry of a ``resources/read`` result."""
    entry: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        entry["mimeType"] = mime_type
    if isinstance(contents, bytes):
        entry["blob"] = base64.b64encode(contents).decode("ascii")
    else:
        entry["text"] = contents
    return entry


def file_uri(filesystem: Filesystem, path: str) -> str:
    """The URI of the file at ``path`` (relative to the root)."""
    mount = filesystem.mount_point.rstrip("/")
    return f"file://{mount}/{path}"


def files_template(filesystem: Filesystem) -> McpResourceTemplate:
    """The bound filesystem's files, read-only, as one resource template."""

    def read(variables: Mapping[str, str]) -> Contents:
        return filesystem.read(variables["path"])

    return McpResourceTemplate(
        uri_template=file_uri(filesystem, "{+path}"),
        name="files",
        read=read,
        description=f"Files under {filesystem.mount_point}, read-only.",
    )


def listed_files(filesystem: Filesystem, limit: int) -> list[str]:
    """Paths of up to ``limit`` files, breadth first, each directory's names sorted."""
    found: list[str] = []
    directories = ["."]
    while directories and len(found) < limit:
        directory = directories.pop(0)
        for name in filesystem.list(directory):
            path = name if directory == "." else f"{directory}/{name}"
            if name.endswith("/"):
                directories.append(path.rstrip("/"))
            elif len(found) < limit:
                found.append(path)
    return found
