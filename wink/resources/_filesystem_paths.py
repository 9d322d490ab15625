"""How a path's text becomes names below a filesystem's root, and the limits on it.

Both filesystems read paths with these rules, so a tool sees the same paths refused
with the same messages on either. The limits come first and are checked on the text
as given, before any work that grows with it: whatever a caller passes, normalising
it costs time linear in at most ``MAX_PATH_BYTES`` and memory bounded by it.
"""

from __future__ import annotations

from dataclasses import dataclass

from wink.resources._filesystem_protocol import FilesystemError

__all__ = ["MAX_NAME_BYTES", "MAX_PATH_BYTES", "MAX_PATH_DEPTH"]

MAX_PATH_BYTES = 4096
"""The longest path, in UTF-8 bytes: a relative path as given, or what follows the
mount point in an absolute one. Linux's ``PATH_MAX``; fixed, so that a tool meets the
same limit on every platform and on both filesystems."""

MAX_NAME_BYTES = 255
"""The longest name of one file or directory in a path, in UTF-8 bytes: ``NAME_MAX`` of
Linux, macOS and their common filesystems."""

MAX_PATH_DEPTH = 256
"""The most names a path may have below the root once ``.`` and ``..`` are resolved:
deeper than real projects nest, and a bound on the directories one write creates and
one rollback removes."""

_SHOWN_CHARACTERS = 100
"""Paths up to this long are quoted whole in messages; longer ones by their start."""

_SHOWN_PREFIX = 60

# A path this many characters long may still be within MAX_PATH_BYTES; beyond, its UTF-8
# size is measured in pieces so that a huge path is never copied whole.
_PIECE = 4096


def shown(text: str) -> str:
    """``text`` quoted for a message: whole if short, else its start and its length."""
    if len(text) <= _SHOWN_CHARACTERS:
        return repr(text)
    return f"{text[:_SHOWN_PREFIX]!r}... ({len(text)} characters)"


def resolve_segments(path: str) -> tuple[str, ...]:
    """The names of ``path`` with ``.``, ``..`` and repeated slashes resolved lexically;
    refuses a ``..`` that climbs above the top."""
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment != "..":
            parts.append(segment)
        elif parts:
            parts.pop()
        else:
            raise FilesystemError(f"path {shown(path)} escapes the filesystem root")
    return tuple(parts)


def joined(parts: tuple[str, ...]) -> str:
    """The relative POSIX path of ``parts`` (``"."`` for none)."""
    return "/".join(parts) or "."


@dataclass(frozen=True, slots=True)
class Mount:
    """Lexical path rules shared by both filesystems: where the root appears, and the
    limits every path meets."""

    point: str
    parts: tuple[str, ...]
    prefix_bytes: int
    """UTF-8 bytes of what starts an absolute path under the mount point (``/mnt/``)."""

    @classmethod
    def at(cls, point: str) -> Mount:
        """The mount at the absolute path ``point`` (normalised; not limited: the
        program, not a model, chooses it)."""
        if not point.startswith("/"):
            raise FilesystemError(f"mount point must be an absolute path: {point!r}")
        parts = resolve_segments(point)
        normalised = "/" + "/".join(parts)
        prefix = normalised if not parts else normalised + "/"
        return cls(normalised, parts, _utf8_size(prefix))

    def relative(self, path: str) -> tuple[str, ...]:
        """The names of ``path`` below the root; refuses paths that leave it or break a
        limit, before doing any work that grows with the path."""
        if not path:
            raise FilesystemError("invalid path: ''")
        absolute = path.startswith("/")
        allowance = self.prefix_bytes if absolute else 0
        # Characters never outnumber bytes: a path this long is too long, whatever it holds.
        if len(path) > MAX_PATH_BYTES + allowance:
            self._refuse_length(path, _utf8_size(path) - allowance, absolute)
        if "\x00" in path:
            raise FilesystemError(f"invalid path: {shown(path)}")
        try:
            # As the host encodes names: undecodable bytes read from disk come back.
            size = len(path.encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError as error:
            raise FilesystemError(
                f"invalid path: {shown(path)} is not valid text ({error.reason} at character "
                f"{error.start})"
            ) from None
        if size - allowance > MAX_PATH_BYTES:
            self._refuse_length(path, size - allowance, absolute)
        for segment in path.split("/"):
            _check_name(segment)
        parts = resolve_segments(path)
        if absolute:
            if parts[: len(self.parts)] != self.parts:
                raise FilesystemError(
                    f"path {shown(path)} is outside the mount point {self.point!r}"
                )
            parts = parts[len(self.parts) :]
        if len(parts) > MAX_PATH_DEPTH:
            raise FilesystemError(
                f"path too deep: {len(parts)} names below the root, at most {MAX_PATH_DEPTH} "
                f"allowed (MAX_PATH_DEPTH): {shown(path)}"
            )
        return parts

    def _refuse_length(self, path: str, size: int, absolute: bool) -> None:
        where = f" after the mount point {self.point!r}" if absolute else ""
        raise FilesystemError(
            f"path too long: {size} bytes{where}, at most {MAX_PATH_BYTES} allowed "
            f"(MAX_PATH_BYTES): {shown(path)}"
        )


def _check_name(segment: str) -> None:
    # A name of a quarter of the limit in characters is within it in bytes.
    if len(segment) <= MAX_NAME_BYTES // 4:
        return
    size = len(segment.encode("utf-8", "surrogateescape"))
    if size > MAX_NAME_BYTES:
        raise FilesystemError(
            f"name too long: {size} bytes, at most {MAX_NAME_BYTES} allowed (MAX_NAME_BYTES): "
            f"{shown(segment)}"
        )


def _utf8_size(text: str) -> int:
    """The UTF-8 size of ``text`` (lone surrogates counted as three bytes), measured in
    pieces so that no copy of a huge text is made."""
    if text.isascii():
        return len(text)
    return sum(
        len(text[start : start + _PIECE].encode("utf-8", "surrogatepass"))
        for start in range(0, len(text), _PIECE)
    )
