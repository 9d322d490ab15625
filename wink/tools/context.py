"""``ToolContext``: the immutable bundle handed to every handler call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from wink.errors import WinkError

__all__ = ["ResourceAccess", "ToolContext"]

T = TypeVar("T")

if TYPE_CHECKING:
    # Type names only: tools sit below prompt, resources, runtime and adapters.
    from wink.adapters.protocol import ProviderAdapter
    from wink.prompt import Prompt, RenderedPrompt
    from wink.resources import Filesystem
    from wink.runtime.budget import BudgetTracker
    from wink.runtime.deadline import Deadline
    from wink.runtime.session import Session


class ResourceAccess(Protocol):
    """What a handler may ask of the resources bound to its prompt."""

    def get(self, resource_type: type[T]) -> T:
        """The resource bound to ``resource_type``; raises when unbound."""
        ...

    def get_optional(self, resource_type: type[T]) -> T | None:
        """The resource bound to ``resource_type``, or ``None``."""
        ...

    @property
    def filesystem(self) -> Filesystem | None:
        """The bound ``Filesystem``, or ``None``; raises when several could answer."""
        ...


class _NoResources:
    """Resource access for a context built without any resources."""

    def get(self, resource_type: type[T]) -> T:
        raise WinkError(f"no resources are bound; {resource_type.__qualname__} is unavailable")

    def get_optional(self, resource_type: type[T]) -> T | None:
        return None

    @property
    def filesystem(self) -> Filesystem | None:
        return None


NO_RESOURCES: ResourceAccess = _NoResources()


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a handler may use besides its params; immutable, built by the executor
    (one serves every call of an executor whose resources need no per-call scope)."""

    prompt: Prompt | None = None
    """The prompt being evaluated."""
    rendered_prompt: RenderedPrompt | None = None
    """The rendered prompt whose tools the model was shown."""
    adapter: ProviderAdapter | None = None
    """The adapter running the evaluation, if any: a handler delegates to a sub-prompt
    with ``context.adapter.evaluate(sub_prompt, session=context.session)``."""
    session: Session | None = None
    """The session whose state the call may change."""
    deadline: Deadline | None = None
    """The evaluation's ``Deadline``, if any."""
    budget_tracker: BudgetTracker | None = None
    """The evaluation's ``BudgetTracker``, if any."""
    resources: ResourceAccess = NO_RESOURCES
    """Typed access to the prompt's resources."""
    heartbeat: Callable[[], None] | None = None
    """Called by ``beat()``; ``None`` makes ``beat()`` a no-op."""

    @property
    def filesystem(self) -> Filesystem | None:
        """The bound filesystem (``None`` when unbound): the same object as
        ``resources.get(Filesystem)``, whether it is bound under ``Filesystem`` or its
        own class.

        With several filesystems bound, it is the one bound under ``Filesystem``; when
        none is, asking raises ``AmbiguousResourceError`` naming the bound keys, and each
        filesystem is reached by its own key with ``resources.get(Key)``.
        """
        return self.resources.filesystem

    def require_filesystem(self) -> Filesystem:
        """The bound ``Filesystem``; raises ``WinkError`` naming the fix when none is bound
        (and ``AmbiguousResourceError``, as ``filesystem`` does, when several could be)."""
        filesystem = self.resources.filesystem
        if filesystem is None:
            raise WinkError(
                "this tool needs a Filesystem, but none is bound to the prompt; bind one with "
                "prompt.bind(resources={Filesystem: InMemoryFilesystem()}) or a HostFilesystem"
            )
        return filesystem

    @property
    def event_bus(self) -> Session | None:
        """Where handlers publish events: the session's dispatcher."""
        return self.session

    def beat(self) -> None:
        """Report liveness during long operations."""
        if self.heartbeat is not None:
            self.heartbeat()
