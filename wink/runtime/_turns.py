"""Call trees, and the turns they take on sessions and snapshotable resources.

A tool call and every sub-call its handler makes form one *call tree*. The tree
is found through a ``ContextVar``: a sub-call on the handler's thread, in an
asyncio task the handler starts, in ``asyncio.to_thread``, or in a thread that
runs ``contextvars.copy_context().run(...)`` belongs to the tree of the call that
started it.

A ``CallLock`` is owned by one tree at a time, whichever of its threads asks:
a handler's own sub-calls never wait for their parent. A call takes the locks of
its session and of the resources it snapshots together when they are free, else
one by one in the order the locks were created; its tree keeps every lock it
took until its top-level call ends (so a failed outer call can roll back what
its sub-calls did, with no other call slipping in between). When a wait would
close a cycle (two trees each waiting for a lock the other holds), the tree that
would close it gets
``TurnRefused`` instead of waiting forever. So does a sub-call that outlives
its top-level call (on a thread the handler did not wait for): the tree's locks
are released, and it may take no more.

Sub-calls of one tree that run at the same time (on several worker threads) do
not take turns with each other: they share each other's rollbacks, as code on
one handler's threads shares its state. (The calls of one model turn that
``ToolExecutor.aexecute_all`` overlaps are one tree too, but each works on its
own fork of the session, so they never share a rollback.)
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
import weakref
from collections.abc import Callable, Hashable
from contextvars import ContextVar

from wink._error_text import bounded
from wink._lazy_logging import LazyLogger
from wink.errors import WinkError

__all__ = [
    "CallLock",
    "CallTree",
    "TurnRefused",
    "current_call_tree",
    "lock_of",
    "reset_call_tree",
    "set_call_tree",
]

logger = LazyLogger("wink.runtime.executor")

_MUTEX = threading.Lock()
"""Protects every lock's owner and every tree's wait, so a cycle check sees one state."""
# The paths every call takes enter it through its bound methods, which cost half as
# much as a ``with`` block.
_enter = _MUTEX.acquire
_leave = _MUTEX.release
_GUARD = threading.Condition(_MUTEX)
"""Where trees wait for a lock (entered as ``_MUTEX``, which is cheaper to enter)."""
_RANKS = itertools.count()
_waiting = 0  # trees waiting on ``_GUARD``: releases notify only when there are some
_NONE_WAITED: tuple[CallLock, ...] = ()


class TurnRefused(WinkError):
    """A lock cannot be taken: waiting would deadlock (the holder waits, directly or
    not, for this tree), or the tree's top-level call has already ended."""


class CallLock:
    """A lock owned by a call tree rather than by a thread."""

    __slots__ = ("__weakref__", "_holds", "label", "owner", "rank")

    def __init__(self, label: str, holds: object = None) -> None:
        self.label = bounded(label)
        """Names what the lock guards, in error messages (bounded: it may quote a
        session id)."""
        self.rank = next(_RANKS)
        """Locks are taken in increasing rank: the order they were created."""
        self.owner: CallTree | None = None
        self._holds = holds  # keeps the guarded object (and so its ``id``) alive

    def __repr__(self) -> str:
        return f"CallLock({self.label})"


class CallTree:
    """One top-level tool call and its sub-calls: the owner of call locks."""

    __slots__ = ("_ended", "done", "held", "waiting")

    def __init__(self) -> None:
        self.held: list[CallLock] = []
        self.done = False
        # The locks its threads wait for (several when sub-calls wait side by side): a
        # list once one has waited. Most trees never wait, nor have callbacks.
        self.waiting: list[CallLock] | tuple[CallLock, ...] = _NONE_WAITED
        self._ended: list[Callable[[], None]] | None = None

    def acquire(self, lock: CallLock, timeout: float | None = None) -> None:
        """Take ``lock`` for this tree, waiting for the tree that holds it to end; after
        ``timeout`` seconds (``None``: no limit) of waiting for one tree, ``TurnRefused``."""
        if lock.owner is self:  # only this tree sets the owner to itself
            return
        give_up = None if timeout is None else time.monotonic() + timeout
        with _MUTEX:
            while True:
                # Checked again after each wait: a tree that ended meanwhile (its call
                # was cancelled while this thread waited for it) takes nothing.
                _refuse_if_ended(self)
                owner = lock.owner
                if owner is None:
                    lock.owner = self
                    self.held.append(lock)
                    return
                if owner is self:
                    return
                _refuse_cycle(self, lock, owner)
                waiting = self.waiting
                if not isinstance(waiting, list):
                    waiting = self.waiting = []
                global _waiting
                waiting.append(lock)
                _waiting += 1
                try:
                    patience = _PATIENCE
                    if give_up is not None:
                        patience = min(patience, give_up - time.monotonic())
                    if not _GUARD.wait(max(patience, 0.0)) and lock.owner is owner:
                        if give_up is not None and time.monotonic() >= give_up:
                            raise TurnRefused(_waited_too_long(lock, timeout))
                        _report_long_wait(lock)
                finally:
                    _waiting -= 1
                    waiting.remove(lock)

    def acquire_all(self, locks: list[CallLock], timeout: float | None = None) -> None:
        """Take ``locks`` in rank order (all at once when none is held by another tree);
        ``timeout`` as for ``acquire``, for each lock."""
        if self.try_acquire_all(locks):
            return
        for lock in sorted(locks, key=_rank):
            self.acquire(lock, timeout)  # or refused, saying why

    def when_ended(self, callback: Callable[[], None]) -> bool:
        """Call ``callback`` once the tree has ended and released its locks; ``False``
        (and ``callback`` dropped) when it has ended already.

        Sessions use it to deliver the events a call held back to observers, and to
        forget the changes made beside it; the callback must not raise.
        """
        with _MUTEX:
            if self.done:
                return False
            if self._ended is None:
                self._ended = [callback]
            else:
                self._ended.append(callback)
            return True

    def try_acquire_all(self, locks: list[CallLock]) -> bool:
        """Take ``locks`` when no other tree holds any of them; ``False`` (taking none)
        when one does. Never waits."""
        held = self.held
        if held:  # a tree that holds nothing (a new one) holds none of ``locks``
            for lock in locks:
                if lock.owner is not self:  # only this tree sets the owner to itself
                    break
            else:
                return True
        _enter()
        try:
            if self.done:
                return False  # ``acquire_all`` says why
            for lock in locks:
                owner = lock.owner
                if owner is not None and owner is not self:
                    return False
            # Only now: a thread of this tree reads ``owner`` without the mutex, so
            # no lock may name this tree for a moment and then be given back.
            for lock in locks:
                if lock.owner is None:
                    lock.owner = self
                    held.append(lock)
            return True
        finally:
            _leave()

    def release_all(self) -> None:
        """End the tree: release every lock it took, then run its ``when_ended`` callbacks."""
        _enter()
        try:
            self.done = True
            held = self.held
            for lock in held:
                lock.owner = None
            held.clear()
            if _waiting:
                _GUARD.notify_all()
            callbacks = self._ended
            if callbacks is not None:
                self._ended = None
        finally:
            _leave()
        if callbacks is not None:
            for callback in callbacks:
                callback()


_PATIENCE = 10.0
"""Seconds a call waits for another call tree before a warning says what it waits for."""


def _waited_too_long(lock: CallLock, timeout: float | None) -> str:
    return (
        f"waited {timeout:g} s for {lock.label}, held by another call. If a handler runs "
        "this call on a thread of its own (threading.Thread, or a pool that does not copy "
        "the context) and waits for it, it can never start: run it in the handler's "
        "context (contextvars.copy_context().run(...), asyncio.to_thread, or a pool whose "
        "tasks run in a copy of the context) so that it belongs to the handler's call. "
        "If another call simply runs that long, raise ToolExecutor(turn_timeout=...)"
    )


def _report_long_wait(lock: CallLock) -> None:
    logger.warning(
        "a tool call has waited %.0f s for %s, held by another call; if a handler runs "
        "sub-calls on a thread of its own and waits for them, start that thread in the "
        "call's context (contextvars.copy_context().run, or asyncio.to_thread) so that "
        "they belong to its call",
        _PATIENCE,
        lock.label,
    )


def _rank(lock: CallLock) -> int:
    return lock.rank


def _refuse_if_ended(tree: CallTree) -> None:
    if tree.done:
        raise TurnRefused(
            "the call this sub-call belongs to has already ended; a handler must wait "
            "for the sub-calls it starts"
        )


def _refuse_cycle(tree: CallTree, lock: CallLock, owner: CallTree) -> None:
    """Raise when ``owner`` waits, through a chain of trees, for ``tree``."""
    seen: set[int] = set()
    pending = [owner]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for waited in current.waiting:
            holder = waited.owner
            if holder is tree:
                raise TurnRefused(
                    f"waiting for {lock.label} would deadlock: the call holding it waits, "
                    f"directly or through other calls, for {waited.label}, held by this call"
                )
            if holder is not None:
                pending.append(holder)


_CURRENT: ContextVar[CallTree | None] = ContextVar("wink_call_tree", default=None)
current_call_tree = _CURRENT.get
"""The call tree of the running call, if any (``None`` outside calls)."""
set_call_tree = _CURRENT.set
"""Make a tree current; returns the token for ``reset_call_tree``."""
reset_call_tree = _CURRENT.reset
"""Put back the tree that was current before ``set_call_tree``."""


_RESOURCE_LOCKS: weakref.WeakValueDictionary[Hashable, CallLock] = weakref.WeakValueDictionary()


def lock_of(resource: object) -> CallLock:
    """The one lock of ``resource``, wherever it is bound; kept alive by its users.

    Resources whose state lives in one place share a lock: two ``HostFilesystem``
    objects over the same directory are one resource.
    """
    key = _key_of(resource)
    lock = _RESOURCE_LOCKS.get(key)
    if lock is not None:
        return lock
    with _MUTEX:
        lock = _RESOURCE_LOCKS.get(key)
        if lock is None:
            lock = CallLock(f"resource {type(resource).__qualname__}", resource)
            _RESOURCE_LOCKS[key] = lock
        return lock


def _key_of(resource: object) -> Hashable:
    # A HostFilesystem exists only once its module is loaded: asking does not load it.
    filesystems = sys.modules.get("wink.resources.filesystem")
    if filesystems is not None and isinstance(resource, filesystems.HostFilesystem):
        return ("host directory", resource.root)
    return id(resource)  # the lock holds the resource, so the id is not reused meanwhile
