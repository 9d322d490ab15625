"""``ToolContext``: the immutable bundle handed to every handler call."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from wink.errors import WinkError
from wink.tools.client import (
    Elicitation,
    LogLevel,
    client_channel,
    elicitation_schema,
    no_client,
)

__all__ = ["ResourceAccess", "ToolContext", "idempotency_key_set", "idempotency_key_unset"]

T = TypeVar("T")

if TYPE_CHECKING:
    # Type names only: tools sit below prompt, resources, runtime and adapters.
    from wink.adapters.protocol import ProviderAdapter
    from wink.contract import Contract
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

# Per call, while one context serves every call of an executor: set around the call by
# a durable evaluation (``wink.contrib.dbos``).
_IDEMPOTENCY_KEY: ContextVar[str | None] = ContextVar("wink_idempotency_key", default=None)


def idempotency_key_set(key: str) -> Token[str | None]:
    """Make ``key`` the idempotency key of the calls run in this context until reset."""
    return _IDEMPOTENCY_KEY.set(key)


def idempotency_key_unset(token: Token[str | None]) -> None:
    """Put back the key ``idempotency_key_set`` replaced."""
    _IDEMPOTENCY_KEY.reset(token)


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
    def idempotency_key(self) -> str | None:
        """The same on every run of this call (a durable evaluation's workflow id and the
        call's id), so that a handler with outside effects can tell a retry from a new
        call; ``None`` outside a durable evaluation."""
        return _IDEMPOTENCY_KEY.get()

    @property
    def event_bus(self) -> Session | None:
        """Where handlers publish events: the session's dispatcher."""
        return self.session

    def beat(self) -> None:
        """Report liveness during long operations."""
        if self.heartbeat is not None:
            self.heartbeat()

    # --- talking back to the client (see wink.tools.client) ---------------------------

    def log(self, level: LogLevel, message: Any, *, logger: str | None = None) -> None:
        """Log to the client (MCP ``notifications/message``), else to Python's logging."""
        channel = client_channel()
        if channel is None:
            _log_locally(level, message, logger)
        else:
            channel.log(level, message, logger)

    async def alog(self, level: LogLevel, message: Any, *, logger: str | None = None) -> None:
        """``log`` for an async handler."""
        channel = client_channel()
        if channel is None:
            _log_locally(level, message, logger)
        else:
            await channel.alog(level, message, logger)

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress to a client that asked for it; elsewhere a debug log line."""
        channel = client_channel()
        if channel is None:
            _log_progress(progress, total, message)
        else:
            channel.progress(progress, total, message)

    async def areport_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """``report_progress`` for an async handler."""
        channel = client_channel()
        if channel is None:
            _log_progress(progress, total, message)
        else:
            await channel.aprogress(progress, total, message)

    def sample(self, text: str, *, max_tokens: int = 1000, system_prompt: str | None = None) -> str:
        """The client's model's answer to ``text`` (MCP ``sampling/createMessage``).

        Raises ``ClientUnavailableError`` outside an MCP server.
        """
        channel = client_channel()
        if channel is None:
            raise no_client("sample")
        return channel.sample(text, max_tokens, system_prompt)

    async def asample(
        self, text: str, *, max_tokens: int = 1000, system_prompt: str | None = None
    ) -> str:
        """``sample`` for an async handler."""
        channel = client_channel()
        if channel is None:
            raise no_client("asample")
        return await channel.asample(text, max_tokens, system_prompt)

    def elicit(self, message: str, response_type: type[T]) -> Elicitation[T]:
        """Ask the user for a ``response_type`` (a flat dataclass or model) through the
        client (MCP ``elicitation/create``); its fields' defaults and enums are shown,
        titled by ``ChoiceTitles`` (``wink.tools.client``).

        Raises ``ClientUnavailableError`` outside an MCP server.
        """
        channel = client_channel()
        if channel is None:
            raise no_client("elicit")
        from wink.contract import compile_contract

        contract = compile_contract(response_type)
        action, content = channel.elicit(
            message, elicitation_schema(response_type, contract.input_schema)
        )
        return _elicitation(contract, action, content)

    async def aelicit(self, message: str, response_type: type[T]) -> Elicitation[T]:
        """``elicit`` for an async handler."""
        channel = client_channel()
        if channel is None:
            raise no_client("aelicit")
        from wink.contract import compile_contract

        contract = compile_contract(response_type)
        action, content = await channel.aelicit(
            message, elicitation_schema(response_type, contract.input_schema)
        )
        return _elicitation(contract, action, content)


# Python's logging levels by MCP level (syslog's), as numbers: logging itself is
# imported only when a handler logs, so that `import wink` stays light.
_LEVELS = {
    "debug": 10,
    "info": 20,
    "notice": 20,
    "warning": 30,
    "error": 40,
    "critical": 50,
    "alert": 50,
    "emergency": 50,
}


def _log_progress(progress: float, total: float | None, message: str | None) -> None:
    import logging

    logging.getLogger("wink.tools.progress").debug(
        "progress %s of %s %s", progress, total, message or ""
    )


def _log_locally(level: LogLevel, message: Any, logger: str | None) -> None:
    import logging

    logging.getLogger(logger or "wink.tools.handler").log(_LEVELS.get(level, 20), "%s", message)


def _elicitation(
    contract: Contract[T], action: str, content: dict[str, Any] | None
) -> Elicitation[T]:
    if action == "accept":
        return Elicitation("accept", contract.parse(content or {}))
    return Elicitation("decline" if action == "decline" else "cancel")
