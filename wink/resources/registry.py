"""``ResourceRegistry``: typed, scoped, lazily built resources for tool handlers.

A registry maps a type to a ``Binding`` (how to build it, for how long it lives).
Factories receive a ``ResourceResolver`` (the registry, or a tool-call scope) and
ask it for their dependencies, so the dependency graph is discovered as it is built.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from wink.errors import WinkError
from wink.resources.filesystem import Filesystem

__all__ = [
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


class UnboundResourceError(WinkError):
    """No binding exists for the requested type; the message lists the bound types."""


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
    """Built once per registry, on first use."""
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
        """The bound ``Filesystem``, or ``None``."""
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
            raise BindingError(f"resource_type must be a class, got {self.resource_type!r}")
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
            raise BindingError(f"{obj!r} is not an instance of {_name(resource_type)}")
        return cls(resource_type, lambda _: obj, prebuilt=True)


_MISSING: Any = object()
_FILESYSTEM_METHODS = ("read", "write", "exists", "list", "delete", "normalize")


class ResourceRegistry:
    """Resources by type: built lazily, shared per scope, closed in reverse build order.

    ``with registry:`` closes, on exit, every resource the registry built (singletons
    and prototypes it handed out), latest first; instances passed in are left open.
    Singleton construction is thread-safe: concurrent first ``get`` calls build once.
    """

    __slots__ = (
        "_bindings",
        "_build_log",
        "_build_marks",
        "_built",
        "_call_lock",
        "_closers",
        "_filesystem_key",
        "_local",
        "_lock",
        "_needs_call_scope",
        "_saved",
    )

    def __init__(self, bindings: Iterable[Binding[Any]] = ()) -> None:
        """A registry of ``bindings``; at most one per type."""
        self._bindings: dict[type[Any], Binding[Any]] = {}
        for binding in bindings:
            if binding.resource_type in self._bindings:
                raise BindingError(f"{_name(binding.resource_type)} is bound twice")
            self._bindings[binding.resource_type] = binding
        # One reentrant lock for all singletons: a factory may build its dependencies
        # while holding it, and two threads can never deadlock on each other's locks.
        self._lock = threading.RLock()
        self._call_lock = threading.RLock()
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
        self._closers: list[Callable[[], None]] = []
        self._add_instances()
        self._filesystem_key = self._find_filesystem_key()
        self._needs_call_scope = any(
            binding.scope is not Scope.SINGLETON for binding in self._bindings.values()
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

    def get(self, resource_type: type[T]) -> T:
        """The resource bound to ``resource_type``; raises ``UnboundResourceError``."""
        return cast(T, self._resolve(resource_type, None))

    def get_optional(self, resource_type: type[T]) -> T | None:
        """The resource bound to ``resource_type``, or ``None`` when unbound."""
        if resource_type not in self._bindings:
            return None
        return self.get(resource_type)

    @property
    def filesystem(self) -> Filesystem | None:
        """The bound ``Filesystem`` (bound by that protocol, else any bound filesystem)."""
        if self._filesystem_key is None:
            return None
        return cast(Filesystem, self._resolve(self._filesystem_key, None))

    def tool_call_scope(self) -> ToolCallScope:
        """A scope for one tool call: ``with registry.tool_call_scope() as resources:``."""
        return ToolCallScope(self)

    @property
    def needs_call_scope(self) -> bool:
        """Whether a tool call needs its own scope: some binding is TOOL_CALL or PROTOTYPE.

        Without such bindings the registry itself serves a call, at no cost per call.
        """
        return self._needs_call_scope

    @property
    def call_lock(self) -> threading.RLock:
        """Held by an executor for a whole tool call, so calls on one registry take turns.

        Calls in different sessions share this registry's resources (a filesystem, for
        one): a failed call restores them, which must not undo another session's call
        that succeeded meanwhile. Reentrant, for nested calls.
        """
        return self._call_lock

    def open_build_mark(self) -> int:
        """Start noting snapshotables built from now on; pair with ``close_build_mark``."""
        with self._lock:
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

    def snapshotables(self) -> tuple[Snapshotable, ...]:
        """Built singletons (and instances) that are ``Snapshotable``, in build order."""
        return self._saved

    def close(self) -> None:
        """Close every resource this registry built, latest first; forget the singletons."""
        with self._lock:
            closers, self._closers = self._closers, []
            self._built.clear()
            self._saved = ()
            self._add_instances()
        _close_all(closers)

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

    def _find_filesystem_key(self) -> type[Any] | None:
        if Filesystem in self._bindings:
            return Filesystem
        for key, binding in self._bindings.items():
            built = self._built.get(key, _MISSING)
            if binding.prebuilt and isinstance(built, Filesystem):
                return key
            # Structural check on the class, so a lazy binding need not be built.
            if not binding.prebuilt and all(hasattr(key, m) for m in _FILESYSTEM_METHODS):
                return key
        return None

    def _resolve(self, key: type[Any], scope: ToolCallScope | None) -> object:
        built = self._built.get(key, _MISSING)
        if built is not _MISSING:
            return built
        binding = self._bindings.get(key)
        if binding is None:
            raise UnboundResourceError(self._unbound_message(key))
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
            if built is _MISSING:
                # Built through the registry, never a scope: a singleton must not
                # capture a tool-call resource that is closed when the call ends.
                built, closer = _build(binding, self)
                self._remember(binding.resource_type, built)
                if closer is not None:
                    self._closers.append(closer)
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
            self._note_built(built)

    def _note_built(self, built: Snapshotable) -> None:
        if self._build_marks:
            self._build_log.append((built, built.snapshot()))

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


class ToolCallScope:
    """The registry as seen by one tool call: TOOL_CALL resources built once, then closed.

    Use as ``with registry.tool_call_scope() as resources:``; on exit every resource
    built for the call (TOOL_CALL and PROTOTYPE) is closed, latest first.
    """

    __slots__ = ("_built", "_closed", "_closers", "_lock", "_registry", "_saved")

    def __init__(self, registry: ResourceRegistry) -> None:
        """A scope over ``registry``; prefer ``registry.tool_call_scope()``."""
        self._registry = registry
        self._lock = threading.RLock()  # a handler may hand the scope to its own threads
        self._built: dict[type[Any], object] = {}
        self._saved: list[Snapshotable] = []
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
        if resource_type not in self._registry._bindings:
            return None
        return self.get(resource_type)

    @property
    def filesystem(self) -> Filesystem | None:
        """The bound ``Filesystem`` (bound by that protocol, else any bound filesystem)."""
        key = self._registry._filesystem_key
        if key is None:
            return None
        return cast(Filesystem, self._registry._resolve(key, self))

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
            if built is _MISSING:
                built, closer = _build(binding, self)
                self._built[binding.resource_type] = built
                if isinstance(built, Snapshotable):
                    self._saved.append(built)
                    with self._registry._lock:
                        self._registry._note_built(built)
                if closer is not None:
                    self._closers.append(closer)
            return built

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
            f"{type(error).__name__}: {error}"
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
            f"resources mapping: {value!r} under key {_name(key)} is not an instance of "
            f"{_name(key)}; wrap factories in Binding(Type, factory)"
        )
    return Binding.instance(key, value)


def _closer(binding: Binding[Any], built: object) -> Callable[[], None] | None:
    if binding.prebuilt:
        return None  # the caller built it, so the caller closes it
    close = binding.close
    if close is not None:
        return lambda: close(built)
    method = getattr(built, "close", None)
    return method if callable(method) else None


def _close_all(closers: list[Callable[[], None]]) -> None:
    """Call every closer, latest first; one failure must not leave the rest open."""
    errors: list[Exception] = []
    for closer in reversed(closers):
        try:
            closer()
        except Exception as error:
            errors.append(error)
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
    return getattr(resource_type, "__name__", None) or repr(resource_type)
