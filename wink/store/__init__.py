"""Sessions that outlive the process: ``SessionStore`` and its backends.

``Session.open(store, session_id)`` creates or loads a session; each tool call
committed on it is then appended to the store, with everything it changed, as the
session's next version, in one transaction that succeeds only if the stored version
is still the one the session read (else ``VersionConflict``, and the call is rolled
back). A snapshot every ``snapshot_every`` versions keeps loading to the latest
snapshot and the changes after it.

``SqliteStore`` (stdlib ``sqlite3``) is the embedded default; ``PostgresStore`` needs
the ``postgres`` extra (psycopg 3), imported only when one is opened.
"""

from __future__ import annotations

from wink.store._postgres import PostgresStore
from wink.store._protocol import (
    PruneReport,
    SessionInfo,
    SessionStore,
    StoredChange,
    StoredHistory,
)
from wink.store._sqlite import SqliteStore
from wink.store._url import open_store
from wink.store.errors import StoreError, VersionConflict

__all__ = [
    "PostgresStore",
    "PruneReport",
    "SessionInfo",
    "SessionStore",
    "SqliteStore",
    "StoreError",
    "StoredChange",
    "StoredHistory",
    "VersionConflict",
    "open_store",
]
