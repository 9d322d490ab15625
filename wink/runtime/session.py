"""``Session``: typed slices of immutable state, changed only by dispatched events.

Each slice holds the values of one type in a ``SliceValues`` (a persistent
sequence). The session keeps all slices in two immutable maps, ``STATE`` and
``LOG``; an update builds new maps that share every untouched slice. So a
snapshot is the current pair of maps (O(1)) and a restore swaps them back.

A snapshot also holds the slice declarations (which slices are ``LOG``), so a
failed tool call's rollback can put those back too. ``LOG`` slices are history and
never lose values to a restore: each keeps its values from the snapshot, followed
by those added since.

While a call tree holds the session (see ``wink.runtime._turns``), the changes
made from outside that tree (another thread or task dispatching, seeding,
clearing) are noted; a restore made by the tree (a failed call's rollback) puts
back the snapshot's ``STATE`` slices and then applies those outside changes again,
in order, on top of them. So a rollback undoes the call's own changes and never
the application's. A session that no call holds notes nothing.

A session created with ``keep_history=True`` also keeps every committed version of
its ``STATE`` slices, in the ``LOG`` slice ``session[SliceVersion]`` (see
``wink.runtime.history``); without it, a commit pays for that one flag test only.
"""

from __future__ import annotations

import enum
import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar, Token
from itertools import islice
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast
from uuid import uuid4

from pydantic import BaseModel

from wink._error_text import bounded, describe_error, safe_repr, type_label
from wink.errors import WinkError
from wink.runtime._turns import CallLock, CallTree, current_call_tree
from wink.runtime._vector import _WIDTH, SliceValues
from wink.runtime.deadline import Clock, utc_now
from wink.runtime.events import ToolInvoked
from wink.runtime.history import RESTORE, UPDATE, SliceVersion
from wink.runtime.observers import Observer, SessionObservers
from wink.runtime.snapshot import Snapshot, SnapshotError, _share_views, _type_key

if TYPE_CHECKING:
    from wink.store import SessionStore

__all__ = ["Reducer", "Session", "SliceAccessor", "SliceKind"]

T = TypeVar("T")
E = TypeVar("E")

Reducer = Callable[[SliceValues[T], E], Iterable[T]]
"""A pure function from a slice's values and an event to the slice's new values."""

_Route = tuple[type[Any], Reducer[Any, Any]]
_NOTHING: SliceValues[Any] = SliceValues()
_NO_VALUE: Any = object()  # a dispatched ToolInvoked whose value joins no slice


class SliceKind(enum.Enum):
    """Whether a slice is rolled back by a restore."""

    STATE = "state"
    """Working state: a restore puts back the snapshot's values."""
    LOG = "log"
    """History (such as ``ToolInvoked``): a restore keeps it."""


_STATE = SliceKind.STATE
_LOG = SliceKind.LOG  # module constants: enum attribute lookups are slow on the hot path

_Kinds = Mapping[type[Any], SliceKind]

_DEFAULT_KINDS: dict[type[Any], SliceKind] = {ToolInvoked: _LOG, SliceVersion: _LOG}
"""What every new session starts with declared (``Session.declare_default``)."""
_SliceMap = dict[type[Any], SliceValues[Any]]
"""A snapshot's ``STATE`` or ``LOG`` slices: built whole, then never changed."""


class _SessionSnapshot(Snapshot):
    """A snapshot taken from a session: its slices, and the slice declarations then.

    Built by ``_snapshot_of``.

    The declarations map is never changed in place (the session replaces it when a
    slice is declared), so holding it costs nothing.
    """

    __slots__ = ("_kinds", "_origin")  # ``_origin``: the session it was taken from

    _kinds: _Kinds
    _origin: object


def _snapshot_of(
    state: _SliceMap,
    log: _SliceMap,
    kinds: _Kinds,
    origin: object,
    *sources: Snapshot,
) -> _SessionSnapshot:
    """``_SessionSnapshot(state, log, kinds, origin)`` without the checks or copies.

    ``sources``: snapshots whose maps it may share; it shares their views of those too.
    """
    made: _SessionSnapshot = _new(_SessionSnapshot)
    made._state = state
    made._log = log
    made._kinds = kinds
    made._origin = origin
    for source in sources:
        _share_views(made, source)
    return made


_new = object.__new__


_EMPTY: _SliceMap = {}  # never changed: every update builds a new map

# A fork's operations, as (kind, first argument, second argument), replayed by ``_merge``.
_DISPATCH, _APPEND, _UPDATE, _DECLARE, _RESET, _EXTEND, _RESTORE = range(7)
_Op = tuple[int, Any, Any]


def _log_added(before: _SliceMap, now: _SliceMap, kinds: _Kinds) -> dict[type[Any], list[Any]]:
    """The values each ``LOG`` slice of ``now`` holds beyond those it held in ``before``."""
    added: dict[type[Any], list[Any]] = {}
    for slice_type, values in now.items():
        if kinds.get(slice_type) is not _LOG:
            continue
        earlier = before.get(slice_type)
        if earlier is values:
            continue
        start = len(earlier) if earlier is not None else 0
        extra = [values[index] for index in range(start, len(values))]
        if extra:
            added[slice_type] = extra
    return added


class Session:
    """Typed slices of state, updated by events through pure reducers; thread-safe.

    ``session[Plan].latest()`` reads a slice; ``session.dispatch(event)`` routes an
    event to the reducers registered for its type, or appends it to the slice of its
    own type when none is. A successful ``ToolInvoked`` whose value is a dataclass or
    a pydantic model also dispatches that value (from an executor, as an event of the
    tool's declared result class, even for a subclass instance). Each dispatch is
    atomic: if a reducer raises, no slice changes. Executors run one call tree at a
    time on a session (see ``call_lock``), so a rollback never undoes another call;
    nor what code outside the call changed meanwhile (applied again on the restored
    state, see the module docstring).

    With ``keep_history=True`` every committed version of a ``STATE`` slice is kept
    in ``session[SliceVersion]`` (``wink.runtime.history``), for ``to_html()``.
    """

    __slots__ = (
        "__weakref__",
        "_applying",
        "_base",
        "_call_lock",
        "_current",
        "_history_clock",
        "_kinds",
        "_lock",
        "_marks",
        "_observers",
        "_ops",
        "_origin",
        "_outside",
        "_routes",
        "_store",
        "session_id",
    )

    def __init__(
        self,
        *,
        session_id: str | None = None,
        keep_history: bool = False,
        clock: Clock = utc_now,
    ) -> None:
        """An empty session; ``ToolInvoked``, ``SliceVersion`` (and each ``declare_default``
        type) are declared ``LOG``.

        ``keep_history``: keep each version of the ``STATE`` slices (see
        ``wink.runtime.history``), timed by ``clock`` (give it the executor's in tests).
        """
        self.session_id = session_id or uuid4().hex
        """Identifies the session in logs."""
        # None when no history is kept: the commit's one test.
        self._history_clock: Clock | None = clock if keep_history else None
        self._lock = threading.RLock()
        self._call_lock = CallLock(f"session {self.session_id}")
        self._observers = SessionObservers(self)
        # Replaced, never changed in place: snapshots share it.
        self._kinds: _Kinds = dict(_DEFAULT_KINDS)
        self._origin = object()  # marks the snapshots taken from this session
        self._current: Snapshot = _snapshot_of(_EMPTY, _EMPTY, self._kinds, self._origin)
        self._routes: dict[type[Any], tuple[_Route, ...]] = {}
        self._applying = False
        # Set on a fork only (``_fork``): what it changed, to be replayed by ``_merge``.
        self._ops: list[_Op] | None = None
        self._base: Snapshot = self._current
        self._marks: dict[int, tuple[int, Snapshot]] = {}
        # What was changed from outside the call tree holding the session (``_Outside``).
        self._outside: _Outside | None = None
        # Where committed calls are stored (``Session.open``); None for a session in memory.
        self._store: _StoreLink | None = None

    @staticmethod
    def declare_default(slice_type: type[Any], kind: SliceKind) -> None:
        """Make every session created from now on start with ``slice_type`` declared
        ``kind``, as ``ToolInvoked`` is ``LOG``.

        For event types that are history by nature (a library's events): declared
        from the start, a failed tool call's rollback never undoes their declaration.
        """
        if not isinstance(kind, SliceKind):
            raise TypeError(f"declare_default() takes a SliceKind, got {safe_repr(kind)}")
        _DEFAULT_KINDS[slice_type] = kind

    def __getitem__(self, slice_type: type[T]) -> SliceAccessor[T]:
        """The slice of ``slice_type``: query it, register reducers for it."""
        return SliceAccessor(self, slice_type)

    def dispatch(self, event: object, *, value_type: type[Any] | None = None) -> None:
        """Apply ``event`` to the slices it routes to, all or nothing.

        A successful ``ToolInvoked``'s value is routed too, as a ``value_type`` event
        when given: the executor passes the tool's declared result class, so that a
        value of a subclass joins the declared type's slice.
        """
        # What joins a slice depends on the event alone: decided before taking the lock,
        # so that no code but the session's own runs under it on the direct path.
        event_type = type(event)
        value: object = _NO_VALUE
        committed_call = False  # a successful ToolInvoked: a stored session stores the call
        if isinstance(event, ToolInvoked):
            result = event.result
            if result.success:
                committed_call = True
                candidate = result.value
                record = _RECORD_TYPES.get(type(candidate))
                if record is None:
                    record = _record_type(candidate)
                if record:
                    value = candidate
                    if value_type is None:
                        value_type = type(value)
        lock = self._lock
        lock.acquire()  # not ``with``: this runs at the end of every tool call
        try:
            if self._applying:
                self._enter("dispatch")  # raises: a reducer is running
            before = self._current
            routes = self._routes
            if (
                self._history_clock is None
                and event_type not in routes
                and (value is _NO_VALUE or value_type not in routes)
            ):
                # The common case: no reducer, each joins the slice of its type. Only
                # dicts keyed by classes and slice appends run here, so nothing can
                # call back into the session before the new maps are current.
                current = self._current
                kinds = self._kinds
                state = current._state
                log = current._log
                # ``SliceValues.append`` inlined for a tail with room (31 appends in 32).
                if kinds.get(event_type) is _LOG:
                    slices = log = log.copy()
                else:
                    slices = state = state.copy()
                values = slices.get(event_type, _NOTHING)
                tail = values._tail
                if len(tail) < _WIDTH:
                    added = _new(type(values))
                    added._trie = values._trie
                    added._tail = tail + (event,)  # noqa: RUF005  (concatenation is the cheaper)
                else:
                    added = values.append(event)
                slices[event_type] = added
                if value is not _NO_VALUE:
                    assert value_type is not None  # set with the value
                    if kinds.get(value_type) is _LOG:
                        if log is current._log:
                            log = log.copy()
                        slices = log
                    else:
                        if state is current._state:
                            state = state.copy()
                        slices = state
                    values = slices.get(value_type, _NOTHING)
                    tail = values._tail
                    if len(tail) < _WIDTH:
                        added = _new(type(values))
                        added._trie = values._trie
                        added._tail = tail + (value,)  # noqa: RUF005  (as above)
                    else:
                        added = values.append(value)
                    slices[value_type] = added
                made: _SessionSnapshot = _new(_SessionSnapshot)
                made._state = state
                made._log = log
                made._kinds = kinds
                made._origin = self._origin
                logged = log is not current._log
                if state is current._state or not logged:
                    _share_views(made, current)
                self._current = made
            else:
                self._applying = True
                try:
                    changes: dict[type[Any], SliceValues[Any]] = {}
                    self._route(event, changes)
                    if value is not _NO_VALUE:
                        self._route(value, changes, value_type)
                    self._commit(changes, event)
                finally:
                    self._applying = False
                logged = any(self._kinds.get(t) is _LOG for t in changes)
            if committed_call and self._store is not None:
                self._store_call(self._store, before)
            observed = self._observers.active
            if self._ops is not None:
                self._ops.append((_DISPATCH, event, value_type))
            else:
                # Read after applying: a tree that takes the session later snapshots this.
                owner = self._call_lock.owner
                if owner is not None and owner is not current_call_tree():
                    self._note_outside(owner, (_DISPATCH, event, (value, value_type)))
        finally:
            lock.release()
        if observed:
            self._observers.applied(event, logged=logged)

    @property
    def dispatcher(self) -> Session:
        """Where handlers publish events: the session itself (``dispatcher.dispatch(event)``)."""
        return self

    def subscribe(self, event_type: type[Any], observer: Observer) -> None:
        """Call ``observer`` with every committed event that is an ``event_type``.

        See ``wink.runtime.observers``: events of a tool call are delivered when the
        call ends, and those its rollback undoes never are.
        """
        self._observers.subscribe(event_type, observer)

    def unsubscribe(self, event_type: type[Any], observer: Observer) -> bool:
        """Stop calling ``observer`` for ``event_type``; ``False`` when it was not subscribed."""
        return self._observers.unsubscribe(event_type, observer)

    @property
    def call_lock(self) -> CallLock:
        """Taken by an executor's call tree for a whole tool call, so that call trees
        on one session take turns.

        It belongs to the call tree, not to a thread: the handler's sub-calls (on its
        thread, or on threads that run in its context) never wait for it.
        """
        return self._call_lock

    def append_event(self, event: object) -> None:
        """Append ``event`` to the slice of its own type, running no reducer.

        Keeps the record of an event whose reducers failed (the executor uses it so
        that a failed call's ``ToolInvoked`` is never lost).
        """
        lock = self._lock
        lock.acquire()  # not ``with``: every failed tool call's record comes here
        try:
            self._enter("append_event")
            try:
                event_type = type(event)
                self._commit({event_type: self._values(event_type).append(event)}, event)
                observed = self._observers.active
                if self._ops is not None:
                    self._ops.append((_APPEND, event, None))
                else:
                    self._note_if_outside((_APPEND, event, None))
            finally:
                self._applying = False
        finally:
            lock.release()
        if observed:
            self._observers.applied(event, logged=self._kinds.get(event_type) is _LOG)

    @property
    def keeps_history(self) -> bool:
        """Whether each version of the ``STATE`` slices is kept (``keep_history=True``)."""
        return self._history_clock is not None

    def snapshot(self) -> Snapshot:
        """The current slices; O(1), and unaffected by later updates."""
        current = self._current
        if self._outside is not None:
            # Where the outside changes stood: read with ``_current`` under the lock, so
            # that a restore to it applies again exactly the changes it does not hold.
            # (With no ``_Outside`` yet, none is noted, and the first one is noted only
            # after being applied: this snapshot then holds none of them.)
            with self._lock:
                current = self._current
                outside = self._outside
                if outside is not None:
                    outside.marks[id(current)] = (len(outside.changes), current)
        if self._observers.active:
            self._observers.snapshot_taken(current)
        if self._ops is not None:  # a fork: where its changes stood at this snapshot
            self._marks.setdefault(id(current), (len(self._ops), current))
        return current

    def to_html(self, *, title: str = "wink session", internal_slices: bool = False) -> str:
        """The session as a self-contained HTML page: its tool calls over time, and its
        state (each version of it with ``keep_history=True``; see
        ``wink.runtime.trace_html``); ``wink trace`` renders a saved one.

        wink's own slices (``PolicyState`` and the like) are shown only with
        ``internal_slices=True``. Raises ``SnapshotError`` when a slice cannot be
        written as JSON.
        """
        from wink.runtime.trace_html import render_snapshot_json

        return render_snapshot_json(
            self.snapshot().to_json(), title=title, internal_slices=internal_slices
        )

    def restore(
        self, snapshot: Snapshot, *, keep_log: bool = True, declarations: bool = False
    ) -> None:
        """Put back the ``STATE`` slices of ``snapshot``.

        For a snapshot taken from this session, ``LOG`` slices keep their history:
        each holds its values in ``snapshot`` followed by every value added since
        (values removed since, by ``reset()`` or ``clear()``, come back). Slice
        declarations made since stay, unless ``declarations`` is set: then the
        snapshot's declarations come back too, and a slice declared ``LOG`` since goes
        back to ``STATE`` with its values (a failed tool call's rollback does this).
        Any other snapshot (of another session, or loaded from JSON) leaves the
        ``LOG`` slices and declarations as they are. With ``keep_log=False`` the
        ``LOG`` slices and declarations become exactly the snapshot's. O(1) unless a
        ``LOG`` slice lost values or a slice was declared since.

        A session that keeps its history records a ``restore`` version of each ``STATE``
        slice the restore changed (or that changed since a snapshot taken here).
        """
        if not isinstance(snapshot, Snapshot):
            raise TypeError(f"restore() takes a Snapshot, got {type_label(snapshot)}")
        kinds: _Kinds | None = None  # the snapshot's declarations, when taken here
        if isinstance(snapshot, _SessionSnapshot) and snapshot._origin is self._origin:
            kinds = snapshot._kinds
        own = kinds is not None
        failures: list[tuple[_Op, Exception]] = []
        lock = self._lock
        lock.acquire()  # not ``with``: a failed tool call's rollback runs this
        try:
            self._enter("restore")
            try:
                current = self._current
                if kinds is self._kinds and keep_log and current._log is snapshot._log:
                    # Nothing logged or declared since: the common rollback, a swap.
                    self._current = snapshot
                else:
                    self._current = self._restored(
                        snapshot, own=own, keep_log=keep_log, declarations=declarations
                    )
                outside = self._outside
                if outside is not None and outside.tree is current_call_tree():
                    failures = self._reapply_outside(outside, snapshot)
                elif self._ops is None:
                    self._note_if_outside((_RESTORE, snapshot, None))
                if self._history_clock is not None:
                    self._record_restore(self._history_clock, current, snapshot if own else None)
                if self._ops is not None:
                    self._note_restore(snapshot, keep_log=keep_log, declarations=declarations)
            finally:
                self._applying = False
        finally:
            lock.release()
        if self._observers.active:
            self._observers.restored(snapshot)
        if failures:
            raise WinkError(_reapply_failure(failures))

    def _restored(
        self, snapshot: Snapshot, *, own: bool, keep_log: bool, declarations: bool
    ) -> _SessionSnapshot:
        if not keep_log:
            if own:
                self._kinds = cast(_SessionSnapshot, snapshot)._kinds
            else:
                self._adopt_kinds(snapshot)
            return _snapshot_of(snapshot._state, snapshot._log, self._kinds, self._origin, snapshot)
        current = self._current
        if not own:
            # Slices this session declares LOG keep their history, whatever the snapshot says.
            now = self._kinds
            state = {t: values for t, values in snapshot._state.items() if now.get(t) is not _LOG}
            return _snapshot_of(state, current._log, self._kinds, self._origin, current)
        kinds = cast(_SessionSnapshot, snapshot)._kinds
        if kinds is self._kinds:
            log = _kept_log(snapshot._log, current._log)
            return _snapshot_of(snapshot._state, log, self._kinds, self._origin, snapshot, current)
        if declarations:
            log = _kept_log(snapshot._log, self._log_slices_under(kinds))
            self._kinds = kinds
            return _snapshot_of(snapshot._state, log, self._kinds, self._origin, snapshot)
        # The declarations made since stay: each slice is restored as what it is now.
        now = self._kinds
        merged = _kept_log(snapshot._log, current._log)
        kept = {t: values for t, values in merged.items() if now.get(t) is _LOG}
        state = {t: values for t, values in snapshot._state.items() if now.get(t) is not _LOG}
        for slice_type, values in snapshot._log.items():
            if now.get(slice_type) is not _LOG:  # declared STATE since: back to its values
                state[slice_type] = values
        return _snapshot_of(state, kept, self._kinds, self._origin)

    def _record_restore(self, clock: Clock, before: Snapshot, own: Snapshot | None) -> None:
        """Add a ``restore`` version of each ``STATE`` slice the restore changed, or that a
        version since ``own`` (a snapshot taken here) changed."""
        after = self._current
        history = after._log.get(SliceVersion, _NOTHING)
        types = {_type_key(t): t for t in (*before._state, *after._state)}
        touched = {
            key for key, t in types.items() if before._state.get(t) is not after._state.get(t)
        }
        since = None if own is None else len(own.log.get(SliceVersion, _NOTHING))
        if since is not None:
            touched.update(
                key
                for position in range(since, len(history))
                if (key := history[position].slice_type) in types
            )
        if not touched:
            return
        at = clock()
        for key in sorted(touched):
            values = after._state.get(types[key], _NOTHING)
            history = history.append(SliceVersion(key, values, at, RESTORE, undoes_from=since))
        self._current = _snapshot_of(
            after._state, {**after._log, SliceVersion: history}, self._kinds, self._origin, after
        )

    def _log_slices_under(self, kinds: _Kinds) -> _SliceMap:
        """The current values of every slice that ``kinds`` declares ``LOG``."""
        current = self._current
        found = {
            slice_type: values
            for slices in (current._state, current._log)
            for slice_type, values in slices.items()
            if kinds.get(slice_type) is _LOG
        }
        return found

    def _adopt_kinds(self, snapshot: Snapshot) -> None:
        """Take the snapshot's slice kinds for undeclared types; refuse contradictions.

        A snapshot loaded into a fresh session (``Snapshot.from_json``) says which
        slices are LOG; without adopting that, those slices would be unreadable.
        """
        adopted = dict(self._kinds)
        for kind, slices in ((_STATE, snapshot.state), (_LOG, snapshot.log)):
            for slice_type in slices:
                declared = adopted.get(slice_type)
                if declared is None and kind is _LOG:
                    adopted[slice_type] = _LOG
                elif declared is not None and declared is not kind:
                    raise SnapshotError(
                        f"the snapshot holds {_qualname(slice_type)} as a {kind.value} slice, "
                        f"but this session declares it {declared.value}"
                    )
        self._kinds = adopted

    def reset(self) -> None:
        """Empty every slice; reducers and slice kinds stay registered.

        Restoring a snapshot taken before brings the ``LOG`` history back.
        """
        with self._lock:
            self._enter("reset")
            try:
                self._current = _snapshot_of(_EMPTY, _EMPTY, self._kinds, self._origin)
                if self._ops is not None:
                    self._ops.append((_RESET, None, None))
                else:
                    self._note_if_outside((_RESET, None, None))
            finally:
                self._applying = False

    # A stored session (``wink.store``): opened from a store, each committed call stored.

    @classmethod
    def open(
        cls,
        store: SessionStore,
        session_id: str,
        *,
        types: Iterable[type[Any]] | None = None,
        keep_history: bool = False,
        clock: Clock = utc_now,
    ) -> Session:
        """The session ``session_id`` of ``store``: created there when new, else loaded
        (its latest snapshot and the changes stored after it).

        From then on, each tool call committed on it is stored, with everything it
        changed, in one transaction, before the call counts as committed; a call the
        store refuses (``VersionConflict``: another writer stored a call first) is
        rolled back and recorded as failed. ``types``: the slice types, when they
        cannot be imported by name (as for ``Snapshot.from_json``). See the guide's
        "Sessions that outlive the process".
        """
        return store.open_session(session_id, types=types, keep_history=keep_history, clock=clock)

    @classmethod
    async def aopen(
        cls,
        store: SessionStore,
        session_id: str,
        *,
        types: Iterable[type[Any]] | None = None,
        keep_history: bool = False,
        clock: Clock = utc_now,
    ) -> Session:
        """``open``, reading the store in a worker thread (the event loop goes on)."""
        import asyncio

        return await asyncio.to_thread(
            cls.open, store, session_id, types=types, keep_history=keep_history, clock=clock
        )

    @property
    def store(self) -> SessionStore | None:
        """The store this session was opened from (``Session.open``), or ``None``."""
        link = self._store
        return None if link is None else link.store

    @property
    def stored_version(self) -> int | None:
        """The version stored last (one per stored call or ``persist``), or ``None``
        for a session that is not stored."""
        link = self._store
        return None if link is None else link.version

    def persist(self) -> int:
        """Store what changed since the last stored version (changes made outside tool
        calls: seeding, dispatching), and return the stored version; a no-op when
        nothing changed.

        Raises ``WinkError`` for a session not opened from a store, or while a tool call
        holds the session (its changes are stored when it commits), and
        ``VersionConflict`` when another writer stored a version first.
        """
        link = self._store
        if link is None:
            raise WinkError(
                f"session {bounded(self.session_id)!r} has no store; "
                "open it with Session.open(store, session_id)"
            )
        with self._lock:
            if self._call_lock.owner is not None:
                raise WinkError(
                    f"session {bounded(self.session_id)!r}: persist() was called while a "
                    "tool call holds the session; the call's changes are stored when it commits"
                )
            link.commit(self._current)
            return link.version

    async def apersist(self) -> int:
        """``persist``, writing in a worker thread (the event loop goes on)."""
        import asyncio

        return await asyncio.to_thread(self.persist)

    def _load_stored(self, snapshot: Snapshot) -> None:
        """Make a new session's slices those loaded from a store, their kinds adopted,
        recording no history (``SnapshotError`` for a kind this session declares otherwise)."""
        with self._lock:
            self._adopt_kinds(snapshot)
            self._current = _snapshot_of(
                snapshot._state, snapshot._log, self._kinds, self._origin, snapshot
            )
            self._base = self._current

    def _attach_store(self, link: _StoreLink) -> None:
        """Store this session's committed calls through ``link`` (``wink.store`` calls it)."""
        self._store = link

    def _store_call(self, link: _StoreLink, before: Snapshot) -> None:
        """Store the call whose ``ToolInvoked`` was just applied (under the lock); when
        the store refuses, put back ``before`` and raise, so that the executor rolls
        the call back and records it as failed.

        A sub-call's changes are stored with its top-level call: its parent's rollback
        may still undo them.
        """
        if _STORED_CALLS.get().count(self) > 1:
            return
        try:
            link.commit(self._current)
        except BaseException:
            self._current = before
            raise

    def __repr__(self) -> str:
        current = self._current
        return (
            f"Session(session_id={self.session_id!r}, state_slices={len(current._state)}, "
            f"log_slices={len(current._log)})"
        )

    # Forks: the private copy a call running alongside others works on.

    def _fork(self) -> Session:
        """A copy of this session for one call that runs alongside others; O(1).

        The call works on the fork as on the session (same id, reducers and slice
        declarations; snapshots of either restore in the other); ``_merge`` then
        applies what the call changed to this session.
        """
        fork: Session = object.__new__(Session)
        fork.session_id = self.session_id
        fork._lock = threading.RLock()
        fork._call_lock = CallLock(f"session {self.session_id}, as one call sees it")
        fork._kinds = self._kinds
        fork._origin = self._origin
        fork._routes = self._routes  # shared: a reducer registered by the call is kept
        fork._history_clock = self._history_clock
        fork._store = None  # a fork's changes are stored once merged (see ``_StoreLink``)
        # Observers see the call's events when they are merged here, not before.
        fork._observers = SessionObservers(fork)
        fork._applying = False
        with self._lock:
            fork._current = self._current
        fork._base = fork._current
        fork._ops = []
        # A fork is the call's own: whoever changes it works for the call.
        fork._outside = None
        fork._marks = {id(fork._current): (0, fork._current)}
        return fork

    def _merge(self, fork: Session) -> None:
        """Apply what ``fork``'s call changed, all or nothing.

        O(1) when nothing changed here since the fork was taken and nobody observes this
        session (the fork's slices are taken as they are); otherwise the fork's
        operations are replayed in order through this session's reducers, so that the
        changes of calls that ran alongside combine as if the calls had run one after
        the other. When a replay
        raises, nothing changes here and the error propagates.
        """
        ops = fork._ops
        if ops is None:
            raise ValueError("_merge() takes a fork made by _fork()")
        with self._lock:
            current, kinds = self._current, self._kinds
            if current is fork._base and not self._observers.active:
                self._kinds = fork._kinds
                self._current = fork._current
                if self._ops is not None:  # a fork itself (a call's sub-calls): note them
                    self._ops.extend(ops)
                return
            try:
                for op, first, second in ops:
                    self._replay(op, first, second)
            except BaseException:
                self._current, self._kinds = current, kinds
                raise

    def _merge_log(self, fork: Session, leave_out: object = None) -> None:
        """Add the ``LOG`` values ``fork`` added (except ``leave_out``): what a fork whose
        changes cannot be merged still keeps (its history)."""
        added = _log_added(fork._base._log, fork._current._log, fork._kinds)
        kept = {t: [v for v in values if v is not leave_out] for t, values in added.items()}
        self._extend_log(kept)

    def _replay(self, op: int, first: Any, second: Any) -> None:
        if op == _DISPATCH:
            self.dispatch(first, value_type=second)
        elif op == _APPEND:
            self.append_event(first)
        elif op == _UPDATE:
            self._update(first, second)
        elif op == _DECLARE:
            self._declare(first, second)
        elif op == _RESET:
            self.reset()
        elif op == _EXTEND:
            self._extend_log(first)
        else:
            snapshot, keep_log, declarations = first
            self.restore(snapshot, keep_log=keep_log, declarations=declarations)

    def _note_restore(self, snapshot: Snapshot, *, keep_log: bool, declarations: bool) -> None:
        """On a fork: forget the operations since ``snapshot`` was taken here, keeping
        the ``LOG`` values they added (a restore keeps them)."""
        ops = cast(list[_Op], self._ops)
        mark = self._marks.get(id(snapshot))
        if mark is None or mark[1] is not snapshot or not keep_log:
            ops.append((_RESTORE, (snapshot, keep_log, declarations), None))
            return
        del ops[mark[0] :]
        added = _log_added(snapshot._log, self._current._log, self._kinds)
        if added:
            ops.append((_EXTEND, added, None))

    # Changes made from outside the call tree that holds the session.

    def _note_if_outside(self, change: _Op) -> None:
        """Note ``change`` (just made, under the lock) when it comes from outside the call
        tree holding the session."""
        owner = self._call_lock.owner
        if owner is not None and owner is not current_call_tree():
            self._note_outside(owner, change)

    def _note_outside(self, owner: CallTree, change: _Op) -> None:
        """Note ``change``, made from outside ``owner`` while it held the session."""
        outside = self._outside
        if outside is None or outside.tree is not owner:
            outside = _Outside(owner)
            if not owner.when_ended(lambda: self._forget_outside(outside)):
                return  # the tree ended meanwhile: it restores nothing any more
            self._outside = outside
        outside.changes.append(change)

    def _forget_outside(self, outside: _Outside) -> None:
        """The tree ``outside`` noted changes for has ended: no restore of it can come."""
        with self._lock:
            if self._outside is outside:
                self._outside = None

    def _reapply_outside(
        self, outside: _Outside, snapshot: Snapshot
    ) -> list[tuple[_Op, Exception]]:
        """Apply again, on the restored ``STATE`` slices, the outside changes made since
        ``snapshot`` was taken; return those that raised (skipped).

        ``LOG`` slices are left as the restore left them: they kept every value added
        since, the outside ones included.
        """
        mark = outside.marks.get(id(snapshot))
        # A snapshot with no mark was taken before the first outside change was noted.
        start = mark[0] if mark is not None and mark[1] is snapshot else 0
        failures: list[tuple[_Op, Exception]] = []
        for change in outside.changes[start:]:
            try:
                self._reapply(change)
            except Exception as error:
                failures.append((change, error))
        return failures

    def _reapply(self, change: _Op) -> None:
        """Apply ``change``'s effect on ``STATE`` slices again (see ``_reapply_outside``)."""
        op, first, second = change
        current = self._current
        changes: dict[type[Any], SliceValues[Any]] = {}
        if op == _DISPATCH:
            value, value_type = second
            self._route(first, changes)
            if value is not _NO_VALUE:
                self._route(value, changes, value_type)
        elif op == _APPEND:
            changes[type(first)] = self._values(type(first)).append(first)
        elif op == _UPDATE:
            values = self._values(first)
            produced = second(values)
            if produced is not values:
                changes[first] = _as_values(produced, second, first)
        elif op == _RESET:
            self._current = _snapshot_of(_EMPTY, current._log, self._kinds, self._origin, current)
            return
        else:  # _RESTORE: an outside restore puts back that snapshot's STATE slices
            kinds = self._kinds
            state = {t: v for t, v in first._state.items() if kinds.get(t) is not _LOG}
            self._current = _snapshot_of(state, current._log, kinds, self._origin, current)
            return
        kinds = self._kinds
        state_changes = {t: v for t, v in changes.items() if kinds.get(t) is not _LOG}
        if state_changes:
            state = {**current._state, **state_changes}
            self._current = _snapshot_of(state, current._log, kinds, self._origin, current)

    def _extend_log(self, added: Mapping[type[Any], Sequence[Any]]) -> None:
        """Add ``added`` to the ``LOG`` slices, running no reducer."""
        with self._lock:
            self._enter("merge")
            try:
                self._commit(
                    {t: self._values(t).extend(values) for t, values in added.items() if values},
                    UPDATE,
                )
                if self._ops is not None:
                    self._ops.append((_EXTEND, added, None))
            finally:
                self._applying = False
        if self._observers.active:
            for values in added.values():
                for event in values:
                    self._observers.applied(event, logged=True)

    # What ``SliceAccessor`` builds on.

    def _values(self, slice_type: type[Any]) -> SliceValues[Any]:
        current = self._current
        slices = current._log if self._kinds.get(slice_type) is _LOG else current._state
        return slices.get(slice_type, _NOTHING)

    def _kind(self, slice_type: type[Any]) -> SliceKind:
        return self._kinds.get(slice_type, _STATE)

    def _declare(self, slice_type: type[Any], kind: SliceKind) -> None:
        with self._lock:
            self._enter("declare")
            try:
                values = self._values(slice_type)
                self._kinds = {**self._kinds, slice_type: kind}
                self._drop(slice_type)  # also gives the current snapshot the new declarations
                if values:
                    self._commit({slice_type: values}, UPDATE)
                if self._ops is not None:
                    self._ops.append((_DECLARE, slice_type, kind))
            finally:
                self._applying = False

    def _register(
        self, slice_type: type[Any], event_type: type[Any], reducer: Reducer[Any, Any]
    ) -> None:
        with self._lock:
            routes = self._routes.get(event_type, ())
            kept = tuple(route for route in routes if route[0] is not slice_type)
            self._routes[event_type] = (*kept, (slice_type, reducer))

    def _update(
        self, slice_type: type[Any], transform: Callable[[SliceValues[Any]], Iterable[Any]]
    ) -> None:
        with self._lock:
            self._enter("update")
            try:
                current = self._values(slice_type)
                produced = transform(current)
                if produced is not current:
                    self._commit({slice_type: _as_values(produced, transform, slice_type)}, UPDATE)
                if self._ops is not None:
                    self._ops.append((_UPDATE, slice_type, transform))
                else:
                    self._note_if_outside((_UPDATE, slice_type, transform))
            finally:
                self._applying = False

    # Internals.

    def _enter(self, operation: str) -> None:
        if self._applying:
            raise WinkError(
                f"session.{operation}() was called while a reducer was running; "
                "reducers must be pure functions of (values, event)"
            )
        self._applying = True

    def _route(
        self,
        event: object,
        changes: dict[type[Any], SliceValues[Any]],
        event_type: type[Any] | None = None,
    ) -> None:
        """Apply ``event`` as an event of ``event_type`` (by default its own type)."""
        if event_type is None:
            event_type = type(event)
        routes = self._routes.get(event_type)
        if routes is None:  # the common case, inlined: the event joins its own slice
            pending = changes.get(event_type)
            if pending is None:
                taken = self._current
                slices = taken._log if self._kinds.get(event_type) is _LOG else taken._state
                pending = slices.get(event_type, _NOTHING)
            changes[event_type] = pending.append(event)
            return
        if event_type is ToolInvoked and all(target is not ToolInvoked for target, _ in routes):
            # ToolInvoked is kept in its own slice even when reducers route it elsewhere.
            changes[event_type] = self._pending(event_type, changes).append(event)
        for slice_type, reducer in routes:
            current = self._pending(slice_type, changes)
            try:
                produced = reducer(current, event)
            except Exception as error:
                error.add_note(
                    f"while reducing {_qualname(event_type)} into the "
                    f"{_qualname(slice_type)} slice with {_name(reducer)}"
                )
                raise
            if produced is not current:
                changes[slice_type] = _as_values(produced, reducer, slice_type)

    def _pending(
        self, slice_type: type[Any], changes: dict[type[Any], SliceValues[Any]]
    ) -> SliceValues[Any]:
        if slice_type in changes:
            return changes[slice_type]
        return self._values(slice_type)

    def _commit(self, changes: dict[type[Any], SliceValues[Any]], cause: object) -> None:
        """Make ``changes`` current; ``cause``: the event (or ``UPDATE``) that made them."""
        if not changes:
            return
        current = self._current
        kinds = self._kinds
        state: dict[type[Any], SliceValues[Any]] | None = None
        log: dict[type[Any], SliceValues[Any]] | None = None
        for slice_type, values in changes.items():
            if kinds.get(slice_type) is _LOG:
                if log is None:
                    log = current._log.copy()
                log[slice_type] = values
            else:
                if state is None:
                    state = current._state.copy()
                state[slice_type] = values
        if self._history_clock is not None and state is not None:
            log = self._with_versions(changes, cause, current._log.copy() if log is None else log)
        self._current = _snapshot_of(
            current._state if state is None else state,
            current._log if log is None else log,
            kinds,
            self._origin,
            current,
        )

    def _with_versions(
        self,
        changes: dict[type[Any], SliceValues[Any]],
        cause: object,
        log: dict[type[Any], SliceValues[Any]],
    ) -> dict[type[Any], SliceValues[Any]]:
        """``log`` with a ``SliceVersion`` added for each ``STATE`` slice in ``changes``."""
        call_id = tool = None
        if isinstance(cause, ToolInvoked):
            call_id, tool = cause.call_id, cause.name
        label = cause if isinstance(cause, str) else _type_key(type(cause))
        at = cast(Clock, self._history_clock)()
        history = log.get(SliceVersion, _NOTHING)
        for slice_type, values in changes.items():
            if self._kinds.get(slice_type) is not _LOG:
                version = SliceVersion(_type_key(slice_type), values, at, label, call_id, tool)
                history = history.append(version)
        log[SliceVersion] = history
        return log

    def _drop(self, slice_type: type[Any]) -> None:
        current = self._current
        state = {key: value for key, value in current._state.items() if key is not slice_type}
        log = {key: value for key, value in current._log.items() if key is not slice_type}
        self._current = _snapshot_of(state, log, self._kinds, self._origin)


class _Outside:
    """The changes made from outside ``tree`` while it held a session, in order, and
    how many of them each snapshot the session gave out since held."""

    __slots__ = ("changes", "marks", "tree")

    def __init__(self, tree: CallTree) -> None:
        self.tree = tree
        self.changes: list[_Op] = []
        self.marks: dict[int, tuple[int, Snapshot]] = {}


def _reapply_failure(failures: list[tuple[_Op, Exception]]) -> str:
    """Why a restore could not apply the outside changes again (bounded)."""
    change, error = failures[0]
    what = change[1] if change[0] in (_DISPATCH, _APPEND) else None
    named = "" if what is None else f"{type_label(what)}, "
    count = len(failures)
    return (
        f"{count} change{'s' if count > 1 else ''} made from outside the call while it ran "
        f"could not be applied again on the restored state (the first: {named}"
        f"{describe_error(error)})"
    )


class SliceAccessor(Generic[T]):
    """One slice of a session: ``session[Plan]``."""

    __slots__ = ("_session", "_type")

    def __init__(self, session: Session, slice_type: type[T]) -> None:
        """The slice of ``slice_type`` in ``session``; prefer ``session[slice_type]``."""
        self._session = session
        self._type = slice_type

    @property
    def kind(self) -> SliceKind:
        """``STATE`` (the default) or ``LOG``."""
        return self._session._kind(self._type)

    def values(self) -> SliceValues[T]:
        """The values as an immutable sequence; O(1)."""
        return self._session._values(self._type)

    def all(self) -> tuple[T, ...]:
        """Every value, oldest first."""
        return tuple(self.values())

    def latest(self) -> T | None:
        """The most recent value, or ``None``."""
        return self.values().latest()

    def where(self, predicate: Callable[[T], bool]) -> tuple[T, ...]:
        """The values for which ``predicate`` holds, oldest first."""
        return tuple(value for value in self.values() if predicate(value))

    def __len__(self) -> int:
        return len(self.values())

    def __iter__(self) -> Iterator[T]:
        return iter(self.values())

    def declare(self, kind: SliceKind) -> None:
        """Make this slice ``STATE`` or ``LOG``; its values move with it."""
        if not isinstance(kind, SliceKind):
            raise TypeError(f"declare() takes a SliceKind, got {safe_repr(kind)}")
        self._session._declare(self._type, kind)

    def register(self, event_type: type[E], reducer: Reducer[T, E]) -> None:
        """Route events of ``event_type`` into this slice through ``reducer``.

        Once an event type has a reducer it is no longer appended to its own slice
        (register one for that slice too if you want both). Registering again for
        the same event type replaces this slice's reducer.
        """
        if not isinstance(event_type, type) or not callable(reducer):
            raise TypeError(
                "register() takes an event type and a reducer, got "
                f"{safe_repr(event_type)}, {safe_repr(reducer)}"
            )
        self._session._register(self._type, event_type, reducer)

    def update(self, transform: Callable[[SliceValues[T]], Iterable[T]]) -> None:
        """Replace the values by ``transform(values)``, atomically."""
        self._session._update(self._type, transform)

    def seed(self, values: Iterable[T]) -> None:
        """Replace the values, bypassing reducers."""
        seeded = SliceValues(values)
        self._session._update(self._type, lambda _: seeded)

    def clear(self, predicate: Callable[[T], bool] | None = None) -> None:
        """Remove every value, or those for which ``predicate`` holds."""
        if predicate is None:
            self.seed(())
        else:
            self.update(lambda values: [value for value in values if not predicate(value)])

    def __repr__(self) -> str:
        return f"SliceAccessor({self._type.__qualname__}, {self.kind.name}, {len(self)} values)"


def _is_record(value: object) -> bool:
    """Whether a tool result value is kept in the slice of its type."""
    return (
        hasattr(type(value), "__dataclass_fields__") and not isinstance(value, type)
    ) or isinstance(value, BaseModel)


_RECORD_TYPES: dict[type[Any], bool] = {}
"""``_is_record`` by the value's class, for ``dispatch``: a cache keyed by type."""


def _record_type(value: object) -> bool:
    """``_is_record(value)``, remembered for the class of ``value``."""
    record = _is_record(value)
    if len(_RECORD_TYPES) >= 4096:  # classes made on the fly must not pile up
        _RECORD_TYPES.clear()
    _RECORD_TYPES[type(value)] = record
    return record


def _as_values(produced: object, source: object, slice_type: type[Any]) -> SliceValues[Any]:
    if isinstance(produced, SliceValues):
        return produced
    if isinstance(produced, Iterable) and not isinstance(produced, str | bytes | dict):
        return SliceValues(produced)
    raise TypeError(
        f"{_name(source)} returned {type_label(produced)} for the "
        f"{_qualname(slice_type)} slice; a reducer returns the slice's new values "
        "(a tuple, or values.append(...))"
    )


def _kept_log(before: _SliceMap, now: _SliceMap) -> _SliceMap:
    """``LOG`` slices as a restore leaves them: ``before``'s values, then those added since."""
    if now is before:
        return now
    kept: dict[type[Any], SliceValues[Any]] = {}
    changed = False
    for slice_type in {**before, **now}:
        earlier, later = before.get(slice_type), now.get(slice_type)
        merged = _kept_values(earlier, later)
        changed = changed or merged is not later
        kept[slice_type] = merged
    return now if not changed else kept


def _kept_values(
    earlier: SliceValues[Any] | None, later: SliceValues[Any] | None
) -> SliceValues[Any]:
    if later is None:
        return _NOTHING if earlier is None else earlier
    if earlier is None or later is earlier or later._grew_from(earlier):
        return later  # only appended to: the common case, told without reading the values
    size = len(earlier)
    if len(later) >= size and all(map(operator.is_, islice(later, size), earlier)):
        return later  # built anew holding the same values first (a clear that removed none)
    seen = {id(value) for value in earlier}
    return earlier.extend(value for value in later if id(value) not in seen)


def _name(function: object) -> str:
    name = getattr(function, "__qualname__", None)
    return bounded(name) if isinstance(name, str) else safe_repr(function)


def _qualname(cls: type[Any]) -> str:
    """A class's name as messages show it: at most ``MAX_TEXT`` characters."""
    return bounded(cls.__qualname__)


class _StoreLink(Protocol):
    """What a stored session writes through (``wink.store`` makes it)."""

    @property
    def store(self) -> SessionStore:
        """The store the session was opened from."""
        ...

    @property
    def version(self) -> int:
        """The version stored last."""
        ...

    def commit(self, snapshot: Snapshot) -> None:
        """Store what ``snapshot`` changed since the version stored last, as the next
        version; raise (``VersionConflict`` and the like) when it cannot be stored."""
        ...


_STORED_CALLS: ContextVar[tuple[Session, ...]] = ContextVar("wink_stored_calls", default=())
"""The stored sessions whose tool calls are running in this context, one entry per call:
a session listed more than once is in a sub-call, whose commit is not stored alone."""


def entered_call(session: Session) -> Token[tuple[Session, ...]] | None:
    """Note that a tool call on ``session`` starts (executors call it; ``None`` and
    nothing noted for a session that is not stored)."""
    if session._store is None:
        return None
    return _STORED_CALLS.set((*_STORED_CALLS.get(), session))


def left_call(token: Token[tuple[Session, ...]] | None) -> None:
    """Note that the call ``entered_call`` noted has ended."""
    if token is not None:
        _STORED_CALLS.reset(token)
