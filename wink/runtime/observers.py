"""Observers of a session's events: ``session.subscribe(EventType, observer)``.

An observer is called with every event dispatched to the session (``ToolInvoked``,
the adapters' events, the application's own) once the event is applied and
committed:

- Outside a tool call, right after ``dispatch`` applied the event.
- During a tool call (while the call's tree holds the session's turn, see
  ``wink.runtime._turns``), the events the call and its sub-calls dispatch are held
  back, and delivered in order once the top-level call ends. When a call fails, the
  events dispatched before its rollback are dropped, unless the rollback keeps
  them: an event that went to a ``LOG`` slice (``ToolInvoked`` always does)
  survives a restore, so observers see it; an event that only changed ``STATE``
  slices is undone, so observers never see it. The failed call's own
  ``ToolInvoked``, recorded after the rollback, is delivered.

An observer subscribed to a class sees its subclasses' events too (``object`` sees
everything); observers of one event run in subscription order, outside the
session's locks, after the call has released its turns. An observer that raises is
logged and skipped: it never breaks a call, a dispatch or the other observers.
Observers should be quick; they run in the thread that dispatched (or that ended
the call).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wink._error_text import safe_repr
from wink._lazy_logging import LazyLogger
from wink.runtime._turns import CallTree, current_call_tree

if TYPE_CHECKING:
    from wink.runtime.session import Session

__all__ = ["Observer", "SessionObservers"]

logger = LazyLogger(__name__)

Observer = Callable[[Any], None]
"""Called with one committed event; its return value is ignored."""


class SessionObservers:
    """The observers of one session, and the events held back until their call ends."""

    __slots__ = (
        "_held",
        "_held_lock",
        "_session",
        "_subscriptions",
        "_subscriptions_lock",
        "active",
    )

    def __init__(self, session: Session) -> None:
        """No observers yet for ``session``."""
        self._session = session
        self._subscriptions: tuple[tuple[type[Any], Observer], ...] = ()
        self.active = False
        """Whether anyone observes: without observers, the hooks do nothing.

        A plain attribute, kept equal to ``bool(self._subscriptions)``: every dispatch
        reads it.
        """
        self._subscriptions_lock = threading.Lock()
        # Events held per call tree: one tree holds the session's turn at a time, but
        # the next may start before the last one's delivery ran; and a tree's sub-calls
        # may dispatch from several threads.
        self._held_lock = threading.Lock()
        self._held: dict[CallTree, _Held] = {}

    def subscribe(self, event_type: type[Any], observer: Observer) -> None:
        """Call ``observer`` with each committed event that is an ``event_type``."""
        if not isinstance(event_type, type):
            raise TypeError(f"subscribe() takes an event class, got {safe_repr(event_type)}")
        if not callable(observer):
            raise TypeError(f"subscribe() takes a callable observer, got {safe_repr(observer)}")
        with self._subscriptions_lock:
            self._subscriptions = (*self._subscriptions, (event_type, observer))
            self.active = True

    def unsubscribe(self, event_type: type[Any], observer: Observer) -> bool:
        """Stop calling ``observer`` for ``event_type``; ``False`` when it was not subscribed.

        Subscribed twice, it is removed once.
        """
        with self._subscriptions_lock:
            subscriptions = list(self._subscriptions)
            for index, (subscribed_type, subscribed) in enumerate(subscriptions):
                if subscribed_type is event_type and subscribed == observer:
                    del subscriptions[index]
                    self._subscriptions = tuple(subscriptions)
                    self.active = bool(subscriptions)
                    return True
        return False

    # Hooks the session calls; each is cheap when nobody observes.

    def applied(self, event: object, *, logged: bool) -> None:
        """``event`` was applied; ``logged``: it changed a ``LOG`` slice."""
        tree = self._calling_tree()
        if tree is None:
            self.deliver((event,))
            return
        with self._held_lock:
            held = self._held.get(tree)
            if held is None and tree.when_ended(lambda: self._call_ended(tree)):
                held = self._held[tree] = _Held()
            if held is not None:
                held.events.append((event, logged))
        if held is None:  # the call ended since this thread saw it hold the session
            self.deliver((event,))

    def snapshot_taken(self, snapshot: object) -> None:
        """Remember how many events were held when ``snapshot`` was taken."""
        tree = self._calling_tree()
        if tree is None:
            return
        with self._held_lock:
            held = self._held.get(tree)
            if held is not None:  # nothing held yet: a restore to it drops everything
                held.marks.append((snapshot, len(held.events)))

    def restored(self, snapshot: object) -> None:
        """Drop the held events that the restore of ``snapshot`` undid."""
        tree = self._calling_tree()
        if tree is None:
            return
        with self._held_lock:
            held = self._held.get(tree)
            if held is None:
                return
            position = 0  # a snapshot taken before anything was held
            for taken, count in reversed(held.marks):
                if taken is snapshot:
                    position = count
                    break
            kept = [entry for entry in held.events[position:] if entry[1]]
            del held.events[position:]
            held.events.extend(kept)
            held.marks = [(taken, min(count, position)) for taken, count in held.marks]

    def deliver(self, events: list[object] | tuple[object, ...]) -> None:
        """Call each observer of each event, in order; log and skip those that raise."""
        subscriptions = self._subscriptions
        for event in events:
            for event_type, observer in subscriptions:
                if not isinstance(event, event_type):
                    continue
                try:
                    observer(event)
                except Exception:
                    logger.warning(
                        "observer %s of %s raised; the event stays applied",
                        getattr(observer, "__qualname__", repr(observer)),
                        type(event).__qualname__,
                        exc_info=True,
                    )

    def _calling_tree(self) -> CallTree | None:
        """The call tree of this thread when it holds the session's turn, else ``None``."""
        tree = current_call_tree()
        if tree is None or self._session.call_lock.owner is not tree:
            return None
        return tree

    def _call_ended(self, tree: CallTree) -> None:
        """Deliver what ``tree`` held back (it has ended and released its turns)."""
        with self._held_lock:
            held = self._held.pop(tree, None)
        if held is not None:
            self.deliver([event for event, _ in held.events])


class _Held:
    """What one call tree dispatched on the session, until it ends."""

    __slots__ = ("events", "marks")

    def __init__(self) -> None:
        self.events: list[tuple[object, bool]] = []  # (event, kept by a rollback)
        self.marks: list[tuple[object, int]] = []  # (snapshot, events held when taken)
