"""``open_store(url)``: a store from a URL, ``sqlite:///path`` or ``postgresql://...``."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from wink._error_text import bounded
from wink.store._protocol import SessionStore

__all__ = ["open_store"]


def open_store(url: str, **options: Any) -> SessionStore:
    """The store ``url`` names; ``options`` go to its class.

    ``sqlite:///relative/file.db``, ``sqlite:////absolute/file.db`` (or
    ``sqlite:///:memory:``) open a ``SqliteStore``; ``postgresql://...`` (or
    ``postgres://...``) a ``PostgresStore`` with that connection string, whose
    ``schema=NAME`` query parameter (wink's, not PostgreSQL's) names the schema of its
    tables unless ``options`` does.
    """
    if not isinstance(url, str):
        raise TypeError(f"open_store takes a URL (str), got {type(url).__name__}")
    scheme = url.partition(":")[0].lower()
    if scheme == "sqlite":
        parts = urlsplit(url)
        if parts.netloc or not url.startswith("sqlite:///") or len(url) == len("sqlite:///"):
            raise ValueError(
                f"a SQLite store URL is sqlite:///relative/path or sqlite:////absolute/path, "
                f"got {bounded(url)!r}"
            )
        from wink.store._sqlite import SqliteStore

        return SqliteStore(unquote(url[len("sqlite:///") :]), **options)
    if scheme in ("postgresql", "postgres"):
        from wink.store._postgres import PostgresStore

        dsn, schema = _schema_taken_out(url)
        if schema is not None:
            options = {"schema": schema, **options}
        return PostgresStore(dsn, **options)
    raise ValueError(
        f"unknown store URL scheme {bounded(scheme)!r}: expected sqlite:///path or postgresql://..."
    )


def _schema_taken_out(url: str) -> tuple[str, str | None]:
    """``url`` without its ``schema`` query parameter (libpq would refuse it), and its value."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [value for name, value in query if name == "schema"]
    if not schemas:
        return url, None
    if len(schemas) > 1 or not schemas[0]:
        raise ValueError("a PostgreSQL store URL names at most one schema (schema=NAME)")
    kept = urlencode([(name, value) for name, value in query if name != "schema"])
    return urlunsplit(parts._replace(query=kept)), schemas[0]
