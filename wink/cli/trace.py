"""``wink trace``: a saved session as a self-contained HTML page."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import sys
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
    internal_slices: bool = Field(
        False, description="also show wink's own slices (PolicyState and the like)"
    )

    def run(self, settings: WinkSettings) -> int:
        """Write the page."""
        try:
            text = self.snapshot.read_bytes()
        except OSError as error:
            raise CliError(f"{self.snapshot}: cannot read: {error.strerror or error}") from None
        try:
            page = render_snapshot_json(
                text,
                title=self.title or self.snapshot.name,
                internal_slices=self.internal_slices,
            )
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


_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def _write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` all or nothing: an earlier page stays whole if writing
    fails. A link at ``path`` is followed (the user named it), as a shell's ``>`` would.

    The page gets the mode any new file gets (0666 less the umask), or keeps the mode of
    the file it replaces, as a shell's ``>`` would: ``tempfile.mkstemp`` would make it
    0600, readable by its owner alone.
    """
    target = Path(os.path.realpath(path))
    temporary = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    # O_EXCL: a name that exists (a file, a link planted there) is refused, never written.
    handle = os.open(temporary, _CREATE_FLAGS, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            with contextlib.suppress(FileNotFoundError):
                earlier = os.stat(target)
                if stat.S_ISREG(earlier.st_mode):
                    os.fchmod(stream.fileno(), earlier.st_mode & 0o777)
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
