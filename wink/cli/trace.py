"""``wink trace``: a saved session as a self-contained HTML page."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

from pydantic import Field
from pydantic_settings import CliPositionalArg
from typing_extensions import TypeAliasType

from wink.cli.commands import Command
from wink.cli.failure import CliError
from wink.cli.settings import WinkSettings
from wink.runtime.snapshot import SnapshotError
from wink.runtime.trace_html import render_snapshot_json

__all__ = ["TraceCommand"]

# Named aliases give readable metavars in --help.
SNAPSHOT = TypeAliasType("SNAPSHOT", Path)
HTML = TypeAliasType("HTML", Path)


class TraceCommand(Command):
    """Render a saved session (Snapshot.to_json) as an HTML timeline of its tool calls."""

    snapshot: CliPositionalArg[SNAPSHOT] = Field(
        description="a session saved with session.snapshot().to_json()"
    )
    html: HTML = Field(Path("-"), description="the page to write; - for standard output")
    title: str = Field("", description="the page title; empty for the snapshot's file name")

    def run(self, settings: WinkSettings) -> int:
        """Write the page."""
        try:
            text = self.snapshot.read_bytes()
        except OSError as error:
            raise CliError(f"{self.snapshot}: cannot read: {error.strerror or error}") from None
        try:
            page = render_snapshot_json(text, title=self.title or self.snapshot.name)
        except SnapshotError as error:
            raise CliError(f"{self.snapshot}: {error}") from None
        if self.html == Path("-"):
            sys.stdout.write(page)
            return 0
        try:
            _write_whole(self.html, page)
        except OSError as error:
            raise CliError(f"{self.html}: cannot write: {error.strerror or error}") from None
        print(f"wrote {self.html}")
        return 0


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` all or nothing: an earlier page stays whole if writing
    fails. A link at ``path`` is followed (the user named it), as a shell's ``>`` would."""
    target = Path(os.path.realpath(path))
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
