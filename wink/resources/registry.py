"""``ResourceRegistry``: typed, scoped, lazily built resources for tool handlers.

A registry maps a type to a ``Binding`` (how to build it, for how long it lives).
Factories receive a ``ResourceResolver`` (the registry, or a tool-call scope) and
ask it for their dependencies, so the dependency graph is discovered as it is built.
"""

from __future__ import annotations

import enum
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from wink._error_text import describe_error, safe_repr
from wink._lazy_logging import LazyLogger
from wink.errors import WinkError
from wink.resources._filesystem_protocol import Filesystem

__all__ = [
    "AmbiguousResourceError",
    "Binding",
    "BindingError",
    "CircularDependencyError",
    "ResourceBuildError",
    "ResourceRegistry",
    "ResourceResolver",
    "ResourceScopeError",
    "Scope",
    "Snapshotable",
    "ToolCallScope",
    "UnboundResourceError",
]

T = TypeVar("T")

logger = LazyLogger(__name__)


class UnboundResourceError(WinkError):
    """No binding exists for the requested type; the message lists the bound types."""


class AmbiguousResourceError(WinkError, LookupError):
    """Several bound resources could answer a request by a type none of them is bound
    under (two filesystems, for ``Filesystem``); the message names their keys."""


class CircularDependencyError(WinkError):
    """Resource factories depend on each other in a cycle, named ``A -> B -> A``."""


class ResourceScopeError(WinkError):
    """A resource was requested where its scope does not allow (tool-call outside a call)."""


class BindingError(WinkError, ValueError):
    """A binding or a set of bindings is invalid; raised at construction."""


class ResourceBuildError(WinkError):
    """A resource factory raised; names the type being built, the cause is chained."""


class Scope(enum.Enum):
    """How long a bound resource lives."""

    SINGLETON = "singleton"
    """Built once per session, on first use (once per registry outside sessions).

    An instance passed in (``Binding.instance``, ``resources={T: obj}``) is shared as
    given by every session.
    """
    TOOL_CALL = "tool_call"
    """Built once per tool call (``registry.tool_call_scope()``), closed when it ends."""
    PROTOTYPE = "prototype"
    """Built afresh on every ``get``."""


@runtime_checkable
class Snapshotable(Protocol):
    """A resource whose state the executor can snapshot before a call and restore after."""

    def snapshot(self) -> object:
        """An opaque token of the current state."""
        ...

    def restore(self, snapshot: object) -> None:
        """Return to the state captured by ``snapshot``."""
        ...


class ResourceResolver(Protocol):
    """What a factory (and a handler) may ask for: the registry or a tool-call scope."""

    def get(self, resource_type: type[T]) -> T:
        """The resource bound to ``resource_type``; raises when unbound."""
        ...

    def get_optional(self, resource_type: type[T]) -> T | None:
        """The resource bound to ``resource_type``, or ``None`` when unbound."""
        ...

    @property
    def filesystem(self) -> Filesystem | None:
        """The bound ``Filesystem``, or ``None``; raises ``AmbiguousResourceError`` when
        several are bound and none under ``Filesystem`` itself."""
        ...


@dataclass(frozen=True, slots=True)
class Binding(Generic[T]):
    """How to build the resource for one type, and how long it lives."""

    resource_type: type[T]
    """The type the resource is looked up by."""
    factory: Callable[[ResourceResolver], T]
    """Builds the resource; receives the resolver to ``get`` its dependencies from."""
    scope: Scope = Scope.SINGLETON
    """How long a built resource lives."""
    close: Callable[[T], None] | None = None
    """Releases a built resource; by default its own ``close()`` is called, if any."""
    prebuilt: bool = field(default=False, kw_only=True)
    """The resource was built by the caller (``Binding.instance``): it is never closed."""

    def __post_init__(self) -> None:
        if not isinstance(self.resource_type, type):
            raise BindingError(
                f"resource_type must be a class, got {safe_repr(self.resource_type)}"
            )
        if not callable(self.factory):
            raise BindingError(f"factory of {_name(self.resource_type)} is not callable")
        if not isinstance(self.scope, Scope):
            raise BindingError(f"scope of {_name(self.resource_type)} must be a Scope")
        if self.prebuilt and (self.scope is not Scope.SINGLETON or self.close is not None):
            raise BindingError("a prebuilt instance is a singleton that wink never closes")

    @classmethod
    def instance(cls, resource_type: type[T], obj: T) -> Binding[T]:
        """Bind an object built by the caller; it is shared and never closed by wink."""
        if not _is_instance(obj, resource_type):
            raise BindingError(f"{safe_repr(obj)} is not an instance of {_name(resource_type)}")
        return cls(resource_type, lambda _: obj, prebuilt=True)


_MISSING: Any = object()
_FILESYSTEM_METHODS = ("read", "write", "exists", "list", "delete", "normalize")


class ResourceRegistry:
    """Resources by type: built lazily, shared per scope, closed in reverse build order.

    ``with registry:`` closes, on exit, every resource the registry built (singletons,
    its sessions' singletons, and prototypes it handed out), latest first; instances
    passed in are left open. Singleton construction is thread-safe: concurrent first
    ``get`` calls build once.

    A lazily built singleton is one per session: ``registry.for_session(session)`` is
    the registry as that session sees it (an executor serves every call from it), so
    each session has its own workspace and its own snapshots. ``registry.get`` outside
    any session has singletons of its own. Instances passed in are shared as given.
    """

    __slots__ = (
        "_bindings",
        "_build_guard",
        "_build_log",
        "_build_marks",
        "_built",
        "_closers",
        "_filesystem_choices",
        "_filesystem_key",
        "_filesystems",
        "_lazy_singletons",
        "_local",
        "_lock",
        "_needs_call_scope",
        "_parent",
        "_saved",
        "_sessions",
    )

    def __init__(self, bindings: Iterable[Binding[Any]] = ()) -> None:
        """A registry of ``bindings``, at most one per type (filesystems included)."""
        by_type: dict[type[Any], Binding[Any]] = {}
        for binding in bindings:
            if binding.resource_type in by_type:
                raise BindingError(f"{_name(binding.resource_type)} is bound twice")
            by_type[binding.resource_type] = binding
        self._setup(by_type, None)

    def _setup(
        self, bindings: dict[type[Any], Binding[Any]], parent: ResourceRegistry | None
    ) -> None:
        self._bindings = bindings
        self._parent = parent
        # One reentrant lock for all singletons: a factory may build its dependencies
        # while holding it, and two threads can never deadlock on each other's locks.
        self._lock = threading.RLock()
        self._local = threading.local()
        self._built: dict[type[Any], object] = {}
        # A tuple, replaced on each (rare) build: callers get it without a copy.
        self._saved: tuple[Snapshotable, ...] = ()
        # Snapshotables built while a mark is open, with their state right after
        # construction: lets a failed call undo what it did to a resource that did
        # not exist yet when its snapshot was taken. Kept only while marks are open,
        # so no snapshot token (and no journal behind it) outlives the calls.
        self._build_log: list[tuple[Snapshotable, object]] = []
        self._build_marks = 0
        self._build_guard: Callable[[Snapshotable], None] | None = None
        self._closers: list[Callable[[], None]] = []
        self._sessions: weakref.WeakKeyDictionary[object, ResourceRegistry] = (
            weakref.WeakKeyDictionary()
        )
        self._add_instances()
        self._filesystems = self._find_filesystems()
        self._filesystem_choices = (
            (Filesystem,) if Filesystem in self._bindings else self._filesystems
        )
        # The key ``Filesystem`` resolves to; ``None`` when none or several could answer.
        self._filesystem_key = (
            self._filesystem_choices[0] if len(self._filesystem_choices) == 1 else None
        )
        self._needs_call_scope = any(
            binding.scope is not Scope.SINGLETON for binding in bindings.values()
        )
        self._lazy_singletons = any(
            binding.scope is Scope.SINGLETON and not binding.prebuilt
            for binding in bindings.values()
        )

    @classmethod
    def of(cls, *bindings: Binding[Any]) -> ResourceRegistry:
        """A registry of ``bindings``."""
        return cls(bindings)

    @classmethod
    def from_mapping(cls, mapping: Mapping[type[Any], object]) -> ResourceRegistry:
        """A registry from ``{type: Binding | instance}``; a binding's key is its own type."""
        return cls(_mapped_binding(key, value) for key, value in mapping.items())

    @property
    def bound_types(self) -> tuple[type[Any], ...]:
        """The bound types, in binding order."""
        return tuple(self._bindings)

    def for_session(self, session: object) -> ResourceRegistry:
        """The registry as ``session`` sees it: lazily built singletons of its own,
        instances passed in shared as given.

        Asked again for the same session, it returns the same view. The view's
        resources are closed with this registry, or when the session is
        garbage-collected. A registry without lazily built singletons is its own view.
        """
        root = self._parent or self
        if not root._lazy_singletons:
            return root
        with root._lock:
            view = root._sessions.get(session)
            if view is None:
                view = object.__new__(ResourceRegistry)
                view._setup(root._bindings, root)
                root._sessions[session] = view
                weakref.finalize(session, _close_quietly, view)
        return view

    def get(self, resource_type: type[T]) -> T:
        """The resource bound to ``resource_type``; raises ``UnboundResourceError``.

        A type bound under no key is answered by the bound filesystem that is one, if
        a single one is: ``get(Filesystem)`` returns the bound filesystem however it is
        bound (under ``Filesystem`` or its own class), the same object as ``filesystem``.
        When several could answer, it raises ``AmbiguousResourceError`` naming them.
        """
        return cast(T, self._resolve(resource_type, None))

    def get_optional(self, resource_type: type[T]) -> T | None:
        """The resource bound to ``resource_type``, or ``None`` when unbound.

        Several filesystems that could answer raise ``AmbiguousResourceError``, as in ``get``.
        """
        if resource_type not in self._bindings and not self._aliases(resource_type):
            return None
        return self.get(resource_type)

    @property
    def filesystem(self) -> Filesystem | None:
        """The filesystem ``get(Filesystem)`` returns, or ``None`` when none is bound.

        That is the one bound under ``Filesystem``, else the only one bound (under its
        own class or any key); with several and none under ``Filesystem``, it raises
        ``AmbiguousResourceError`` naming their keys.
        """
        return self._filesystem(None)

    @property
    def filesystem_choices(self) -> tuple[type[Any], ...]:
        """The keys a request for ``Filesystem`` could be answered by.

        ``(Filesystem,)`` when a filesystem is bound under ``Filesystem`` itself; else
        one key per bound filesystem (an instance bound under two keys counts once),
        in binding order; ``()`` when none is bound. More than one means ``filesystem``
        is ambiguous: each filesystem is then reached only by its own key.
        """
        return self._filesystem_choices

    def tool_call_scope(self, guard: Callable[[Snapshotable], None] | None = None) -> ToolCallScope:
        """A scope for one tool call: ``with registry.tool_call_scope() as resources:``.

        ``guard`` is called with each snapshotable the scope builds, before its state
        right after construction is noted (see ``ToolCallScope.built_during``).
        """
        return ToolCallScope(self, guard)

    @property
    def lazy_singletons(self) -> bool:
        """Whether some singleton is built on first use, so that a call may build one."""
        return self._lazy_singletons

    @property
    def unbuilt_singletons(self) -> bool:
        """Whether some singleton built on first use is not built yet, so that a call
        may still build one."""
        if not self._lazy_singletons:
            return False
        with self._lock:
            return any(
                binding.scope is Scope.SINGLETON
                and not binding.prebuilt
                and resource_type not in self._built
                for resource_type, binding in self._bindings.items()
            )

    @property
    def needs_call_scope(self) -> bool:
        """Whether a tool call needs its own scope: some binding is TOOL_CALL or PROTOTYPE.

        Without such bindings the registry itself serves a call, at no cost per call.
        """
        return self._needs_call_scope

    def open_build_mark(self, guard: Callable[[Snapshotable], None] | None = None) -> int:
        """Start noting singletons built from now on; pair with ``close_build_mark``.

        ``guard`` (that of the outermost mark) is called with each snapshotable built
        while a mark is open, before its state is noted (the executor takes the
        resource's lock there); if it raises, the resource is forgotten and closed,
        and the error propagates to whoever asked for the resource.
        """
        with self._lock:
            if self._build_marks == 0:
                self._build_guard = guard
            self._build_marks += 1
            return len(self._build_log)

    def built_since(self, mark: int) -> list[tuple[Snapshotable, object]]:
        """Snapshotables built after ``mark``, each with its state right after construction."""
        with self._lock:
            return self._build_log[mark:]

    def close_build_mark(self) -> None:
        """End a mark; the log is dropped when the outermost mark closes."""
        with self._lock:
            self._build_marks -= 1
            if self._build_marks == 0:
                self._build_log.clear()
                self._build_guard = None

    def snapshotables(self) -> tuple[Snapshotable, ...]:
        """Built singletons (and instances) that are ``Snapshotable``, in build order."""
        return self._saved

    def close(self) -> None:
        """Close every resource this registry built, latest first; forget the singletons.

        The sessions' views are closed first; they stay usable and build anew.
        """
        errors: list[Exception] = []
        for view in list(self._sessions.values()):
            try:
                view.close()
            except Exception as error:
                errors.append(error)
        with self._lock:
            closers, self._closers = self._closers, []
            self._built.clear()
            self._saved = ()
            self._add_instances()
        try:
            _close_all(closers)
        except Exception as error:
            errors.append(error)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup("several resources failed to close", errors)

    def __enter__(self) -> ResourceRegistry:
        """Open the registry; resources are still built on first use."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close every resource the registry built."""
        self.close()

    def _add_instances(self) -> None:
        for key, binding in self._bindings.items():
            if binding.prebuilt:
                self._remember(key, binding.factory(self))

    def _find_filesystems(self) -> tuple[type[Any], ...]:
        """One key per bound filesystem, in binding order."""
        keys: dict[int, type[Any]] = {}
        for key, binding in self._bindings.items():
            if self._is_filesystem(key, binding):
                # One instance bound under two keys is one filesystem; a lazy binding
                # is its own.
                keys.setdefault(id(self._built.get(key, key)), key)
        return tuple(keys.values())

    def _filesystem(self, scope: ToolCallScope | None) -> Filesystem | None:
        """``filesystem`` as ``scope`` (or the registry) sees it."""
        key = self._filesystem_key
        if key is not None:
            return cast(Filesystem, self._resolve(key, scope))
        if not self._filesystem_choices:
            return None
        raise AmbiguousResourceError(_ambiguous_message(Filesystem, self._filesystem_choices))

    def _is_filesystem(self, key: type[Any], binding: Binding[Any]) -> bool:
        if key is Filesystem:
            return True
        if binding.prebuilt:
            return isinstance(self._built.get(key), Filesystem)
        # Structural check on the class, so a lazy binding need not be built.
        return all(hasattr(key, method) for method in _FILESYSTEM_METHODS)

    def _aliases(self, key: type[Any]) -> tuple[type[Any], ...]:
        """The bound types that could serve ``key`` when ``key`` itself is unbound: those
        of the filesystems, for ``Filesystem`` or a class their bound instance belongs to."""
        if key in self._bindings:
            return ()
        if key is Filesystem:
            return self._filesystem_choices
        return tuple(
            found
            for found in self._filesystems
            if self._bindings[found].prebuilt and _is_instance(self._built.get(found), key)
        )

    def _resolve(self, key: type[Any], scope: ToolCallScope | None) -> object:
        built = self._built.get(key, _MISSING)
        if built is not _MISSING:
            return built
        binding = self._bindings.get(key)
        if binding is None:
            aliases = self._aliases(key)
            if not aliases:
                raise UnboundResourceError(self._unbound_message(key))
            if len(aliases) > 1:
                raise AmbiguousResourceError(_ambiguous_message(key, aliases))
            return self._resolve(aliases[0], scope)
        with self._resolving(key):
            if binding.scope is Scope.SINGLETON:
                return self._singleton(binding)
            if binding.scope is Scope.PROTOTYPE:
                return self._prototype(binding, scope)
            if scope is None:
                raise ResourceScopeError(self._outside_scope_message(key))
            return scope._tool_call_resource(binding)

    def _singleton(self, binding: Binding[Any]) -> object:
        with self._lock:
            built = self._built.get(binding.resource_type, _MISSING)
            if built is not _MISSING:
                return built
            # Built through the registry, never a scope: a singleton must not
            # capture a tool-call resource that is closed when the call ends.
            built, closer = _build(binding, self)
            self._remember(binding.resource_type, built)
            if closer is not None:
                self._closers.append(closer)
        # Outside the lock: the guard may wait for another call to end.
        self._note_built(built, lambda: self._forget(binding.resource_type, built, closer))
        return built

    def _prototype(self, binding: Binding[Any], scope: ToolCallScope | None) -> object:
        built, closer = _build(binding, scope or self)
        if closer is not None:
            if scope is None:
                with self._lock:
                    self._closers.append(closer)
            else:
                scope._adopt(closer)
        return built

    def _remember(self, key: type[Any], built: object) -> None:
        self._built[key] = built
        if isinstance(built, Snapshotable):
            self._saved = (*self._saved, built)

    def _forget(self, key: type[Any], built: object, closer: Callable[[], None] | None) -> None:
        with self._lock:
            if self._built.get(key) is built:
                del self._built[key]
                self._saved = tuple(saved for saved in self._saved if saved is not built)
            if closer is not None and closer in self._closers:
                self._closers.remove(closer)
        if closer is not None:
            _close_quietly_with(closer)

    def _note_built(self, built: object, forget: Callable[[], None]) -> None:
        """Note a snapshotable built while a mark is open, with its state after construction."""
        if not self._build_marks or not isinstance(built, Snapshotable):
            return
        token = _noted(built, self._build_guard, forget)
        with self._lock:
            self._build_log.append((built, token))

    def _resolving(self, key: type[Any]) -> _Resolving:
        chain: list[type[Any]] | None = getattr(self._local, "chain", None)
        if chain is None:
            chain = self._local.chain = []
        return _Resolving(chain, key)

    def _unbound_message(self, key: type[Any]) -> str:
        bound = ", ".join(sorted(_name(t) for t in self._bindings)) or "(none)"
        return f"no resource is bound for {_name(key)}; bound types: {bound}"

    def _outside_scope_message(self, key: type[Any]) -> str:
        chain = " -> ".join(_name(t) for t in self._local.chain)  # ends with ``key``
        return (
            f"{_name(key)} is TOOL_CALL-scoped and was requested outside a tool call "
            f"({chain}); resolve it inside registry.tool_call_scope(), and not from a singleton"
        )


def _noted(
    built: Snapshotable, guard: Callable[[Snapshotable], None] | None, forget: Callable[[], None]
) -> object:
    """Pass ``built`` to ``guard``, then snapshot it; on any failure ``forget`` it and raise."""
    try:
        if guard is not None:
            guard(built)
        try:
            return built.snapshot()
        except Exception as error:
            raise ResourceBuildError(
                f"resource {_name(type(built))} was built but its snapshot() raised "
                f"{describe_error(error)}"
            ) from error
    except BaseException:
        forget()
        raise


def _close_quietly(registry: ResourceRegistry) -> None:
    """Close a collected session's view; a failure is logged, as nobody is there to catch it."""
    try:
        registry.close()
    except Exception:
        logger.warning("closing the resources of a collected session failed", exc_info=True)


def _close_quietly_with(closer: Callable[[], None]) -> None:
    try:
        closer()
    except Exception:
        logger.warning("closing a resource that could not be used failed", exc_info=True)


class ToolCallScope:
    """The registry as seen by one tool call: TOOL_CALL resources built once, then closed.

    Use as ``with registry.tool_call_scope() as resources:``; on exit every resource
    built for the call (TOOL_CALL and PROTOTYPE) is closed, latest first.
    """

    __slots__ = (
        "_build_log",
        "_built",
        "_closed",
        "_closers",
        "_guard",
        "_lock",
        "_registry",
        "_saved",
    )

    def __init__(
        self, registry: ResourceRegistry, guard: Callable[[Snapshotable], None] | None = None
    ) -> None:
        """A scope over ``registry``; prefer ``registry.tool_call_scope()``."""
        self._registry = registry
        self._guard = guard
        self._lock = threading.RLock()  # a handler may hand the scope to its own threads
        self._built: dict[type[Any], object] = {}
        self._saved: list[Snapshotable] = []
        self._build_log: list[tuple[Snapshotable, object]] = []
        self._closers: list[Callable[[], None]] = []
        self._closed = False

    @property
    def registry(self) -> ResourceRegistry:
        """The registry this scope belongs to."""
        return self._registry

    def get(self, resource_type: type[T]) -> T:
        """The resource bound to ``resource_type``; raises ``UnboundResourceError``."""
        return cast(T, self._registry._resolve(resource_type, self))

    def get_optional(self, resource_type: type[T]) -> T | None:
        """The resource bound to ``resource_type``, or ``None`` when unbound."""
        registry = self._registry
        if resource_type not in registry._bindings and not registry._aliases(resource_type):
            return None
        return self.get(resource_type)

    def built_during(self) -> list[tuple[Snapshotable, object]]:
        """The snapshotables this scope built, each with its state right after construction."""
        with self._lock:
            return list(self._build_log)

    @property
    def filesystem(self) -> Filesystem | None:
        """The registry's ``filesystem``, as this call sees it (``None`` when none is bound;
        raises ``AmbiguousResourceError`` when several could answer)."""
        return self._registry._filesystem(self)

    def snapshotables(self) -> tuple[Snapshotable, ...]:
        """The registry's snapshotables, then this call's built ones, in build order."""
        shared = self._registry.snapshotables()
        return (*shared, *self._saved) if self._saved else shared

    def close(self) -> None:
        """Close every resource built for this call, latest first."""
        with self._lock:
            self._closed = True
            closers, self._closers = self._closers, []
            self._built.clear()
            self._saved.clear()
            self._build_log.clear()
        _close_all(closers)

    def __enter__(self) -> ToolCallScope:
        """Enter the call."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """End the call: close its resources."""
        self.close()

    def _tool_call_resource(self, binding: Binding[Any]) -> object:
        with self._lock:
            if self._closed:
                raise ResourceScopeError(
                    f"{_name(binding.resource_type)} requested from a tool-call scope that ended"
                )
            built = self._built.get(binding.resource_type, _MISSING)
            if built is not _MISSING:
                return built
            built, closer = _build(binding, self)
            self._built[binding.resource_type] = built
            if closer is not None:
                self._closers.append(closer)
            if isinstance(built, Snapshotable):
                self._saved.append(built)
                token = _noted(
                    built, self._guard, lambda: self._forget(binding.resource_type, built, closer)
                )
                self._build_log.append((built, token))
            return built

    def _forget(self, key: type[Any], built: object, closer: Callable[[], None] | None) -> None:
        with self._lock:
            self._built.pop(key, None)
            if built in self._saved:
                self._saved.remove(built)
            if closer is not None and closer in self._closers:
                self._closers.remove(closer)
        if closer is not None:
            _close_quietly_with(closer)

    def _adopt(self, closer: Callable[[], None]) -> None:
        with self._lock:
            self._closers.append(closer)


class _Resolving:
    """Tracks the chain of types being built in this thread, to name any cycle."""

    __slots__ = ("_chain", "_key")

    def __init__(self, chain: list[type[Any]], key: type[Any]) -> None:
        self._chain = chain
        self._key = key

    def __enter__(self) -> None:
        if self._key in self._chain:
            cycle = [*self._chain[self._chain.index(self._key) :], self._key]
            raise CircularDependencyError(
                "circular dependency between resources: " + " -> ".join(_name(t) for t in cycle)
            )
        self._chain.append(self._key)

    def __exit__(self, *exc_info: object) -> None:
        self._chain.pop()


# Raised by the registry itself while a factory resolves its dependencies: they
# already name the resource at fault, so they pass through a factory unwrapped.
_REGISTRY_ERRORS = (
    UnboundResourceError,
    CircularDependencyError,
    ResourceScopeError,
    ResourceBuildError,
)


def _build(
    binding: Binding[Any], resolver: ResourceResolver
) -> tuple[object, Callable[[], None] | None]:
    try:
        built = binding.factory(resolver)
    except _REGISTRY_ERRORS:
        raise
    except Exception as error:
        raise ResourceBuildError(
            f"building resource {_name(binding.resource_type)} failed: the factory raised "
            f"{describe_error(error)}"
        ) from error
    return built, _closer(binding, built)


def _mapped_binding(key: type[Any], value: object) -> Binding[Any]:
    """The binding for ``{key: value}`` in a resources mapping."""
    if isinstance(value, Binding):
        if value.resource_type is not key:
            raise BindingError(
                f"resources mapping: key {_name(key)} holds a Binding for "
                f"{_name(value.resource_type)}; key each binding by its own resource_type"
            )
        return value
    if callable(value) and not _is_instance(value, key):
        raise BindingError(
            f"resources mapping: {safe_repr(value)} under key {_name(key)} is not an instance of "
            f"{_name(key)}; wrap factories in Binding(Type, factory)"
        )
    return Binding.instance(key, value)


_NAMES_SHOWN = 4


def _ambiguous_message(requested: type[Any], keys: tuple[type[Any], ...]) -> str:
    """Why ``requested`` has no single answer among the filesystems bound under ``keys``."""
    names = [_name(key) for key in keys[:_NAMES_SHOWN]]
    if len(keys) > _NAMES_SHOWN:
        listed = ", ".join(names) + f" and {len(keys) - _NAMES_SHOWN} more"
    else:
        listed = ", ".join(names[:-1]) + " and " + names[-1]
    subject = _name(requested)
    if requested is Filesystem:
        subject += " (context.filesystem)"
    return (
        f"{subject} is ambiguous: {len(keys)} bound filesystems could answer, under {listed}, "
        f"and none is bound under {_name(requested)} itself; ask for one by its key, as in "
        f"context.resources.get({names[0]}), or bind the one meant under {_name(requested)}"
    )


def _closer(binding: Binding[Any], built: object) -> Callable[[], None] | None:
    if binding.prebuilt:
        return None  # the caller built it, so the caller closes it
    close = binding.close
    if close is not None:
        return lambda: close(built)
    method = getattr(built, "close", None)
    return method if callable(method) else None


def _close_all(closers: list[Callable[[], None]]) -> None:
    """Call every closer, latest first; one failure must not leave the rest open.

    A ``BaseException`` (``KeyboardInterrupt``) is re-raised once every closer ran.
    """
    errors: list[Exception] = []
    interrupted: BaseException | None = None
    for closer in reversed(closers):
        try:
            closer()
        except Exception as error:
            errors.append(error)
        except BaseException as error:
            interrupted = interrupted or error
    if interrupted is not None:
        raise interrupted
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ExceptionGroup("several resources failed to close", errors)


def _is_instance(obj: object, resource_type: type[Any]) -> bool:
    try:
        return isinstance(obj, resource_type)
    except TypeError:
        return True  # a protocol that is not runtime-checkable cannot be checked


def _name(resource_type: object) -> str:
    name = getattr(resource_type, "__name__", None)
    return name if isinstance(name, str) else safe_repr(resource_type)
