"""What a session store raises: ``StoreError``, and ``VersionConflict`` for a lost race."""

from __future__ import annotations

from wink._error_text import bounded
from wink.errors import WinkError

__all__ = ["StoreError", "VersionConflict"]


class StoreError(WinkError):
    """A store could not be opened, read or written; the message names the store or the
    session, and what was wrong."""


class VersionConflict(StoreError):
    """Another writer stored a version of the session first: the call (or ``persist``)
    that read ``expected`` was not stored. Open the session again to go on from ``found``.
    """

    def __init__(self, session_id: str, expected: int, found: int | None) -> None:
        self.session_id = session_id
        """The session whose version moved."""
        self.expected = expected
        """The version the writer read, and expected to find."""
        self.found = found
        """The version stored now; ``None`` when the session was deleted meanwhile."""
        now = "it was deleted" if found is None else f"it is at version {found}"
        super().__init__(
            f"session {bounded(session_id)!r} was changed by another writer: expected "
            f"version {expected}, {now}; open it again (Session.open) to go on from there"
        )
