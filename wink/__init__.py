"""wink: a pydantic-centric, schema-first tool runtime for LLM applications.

Names are imported on first use (``wink.Tool`` loads the tools layer, not the CLI
or the providers), so ``import wink`` stays cheap for programs that use a part of it.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from wink._lazy_exports import exported
from wink.errors import (
    DeadlineExceededError,
    EvaluationPhase,
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ToolValidationError,
    VisibilityExpansionRequired,
    WinkError,
)

if TYPE_CHECKING:
    from wink import telemetry
    from wink.adapters import (
        ModelExchange,
        PromptExecuted,
        PromptRendered,
        PromptResponse,
        ProviderAdapter,
    )
    from wink.contract import Contract, ContractViolation, FieldProblem, compile_contract
    from wink.policy import (
        PolicyDecision,
        PolicyState,
        ReadBeforeWritePolicy,
        SequentialDependencyPolicy,
        ToolPolicy,
    )
    from wink.prompt import (
        MarkdownSection,
        Prompt,
        PromptOverrides,
        PromptTemplate,
        RenderedPrompt,
        Section,
        ToolBinding,
    )
    from wink.resources import (
        Binding,
        CircularDependencyError,
        Filesystem,
        GitWorkspace,
        HostFilesystem,
        InMemoryFilesystem,
        ResourceBuildError,
        ResourceRegistry,
        Scope,
        UnboundResourceError,
    )
    from wink.runtime import (
        Budget,
        BudgetExceededError,
        BudgetTracker,
        Deadline,
        Session,
        SliceKind,
        SliceValues,
        SliceVersion,
        Snapshot,
        SnapshotError,
        TokenUsage,
        ToolCall,
        ToolExecutor,
        ToolInvoked,
    )
    from wink.store import (
        PostgresStore,
        SessionInfo,
        SessionStore,
        SqliteStore,
        StoreError,
        VersionConflict,
        open_store,
    )
    from wink.tools import (
        AsyncToolHandler,
        ParamHint,
        Tool,
        ToolContext,
        ToolExample,
        ToolHandler,
        ToolRenderableResult,
        ToolResult,
    )
    from wink.tools.decorator import tool

__all__ = [
    "AsyncToolHandler",
    "Binding",
    "Budget",
    "BudgetExceededError",
    "BudgetTracker",
    "CircularDependencyError",
    "Contract",
    "ContractViolation",
    "Deadline",
    "DeadlineExceededError",
    "EvaluationPhase",
    "FieldProblem",
    "Filesystem",
    "GitWorkspace",
    "HostFilesystem",
    "InMemoryFilesystem",
    "MarkdownSection",
    "ModelExchange",
    "ParamHint",
    "PolicyDecision",
    "PolicyState",
    "PostgresStore",
    "Prompt",
    "PromptEvaluationError",
    "PromptExecuted",
    "PromptOverrides",
    "PromptRenderError",
    "PromptRendered",
    "PromptResponse",
    "PromptTemplate",
    "PromptValidationError",
    "ProviderAdapter",
    "ReadBeforeWritePolicy",
    "RenderedPrompt",
    "ResourceBuildError",
    "ResourceRegistry",
    "Scope",
    "Section",
    "SequentialDependencyPolicy",
    "Session",
    "SessionInfo",
    "SessionStore",
    "SliceKind",
    "SliceValues",
    "SliceVersion",
    "Snapshot",
    "SnapshotError",
    "SqliteStore",
    "StoreError",
    "TokenUsage",
    "Tool",
    "ToolBinding",
    "ToolCall",
    "ToolContext",
    "ToolExample",
    "ToolExecutor",
    "ToolHandler",
    "ToolInvoked",
    "ToolPolicy",
    "ToolRenderableResult",
    "ToolResult",
    "ToolValidationError",
    "UnboundResourceError",
    "VersionConflict",
    "VisibilityExpansionRequired",
    "WinkError",
    "compile_contract",
    "open_store",
    "telemetry",
    "tool",
]

# Where each public name lives; read by ``__getattr__`` on first access.
_HOMES: dict[str, str] = {
    "ModelExchange": "wink.adapters",
    "PromptExecuted": "wink.adapters",
    "PromptRendered": "wink.adapters",
    "PromptResponse": "wink.adapters",
    "ProviderAdapter": "wink.adapters",
    "Contract": "wink.contract",
    "ContractViolation": "wink.contract",
    "FieldProblem": "wink.contract",
    "compile_contract": "wink.contract",
    "PolicyDecision": "wink.policy",
    "PolicyState": "wink.policy",
    "ReadBeforeWritePolicy": "wink.policy",
    "SequentialDependencyPolicy": "wink.policy",
    "ToolPolicy": "wink.policy",
    "MarkdownSection": "wink.prompt",
    "Prompt": "wink.prompt",
    "PromptOverrides": "wink.prompt",
    "PromptTemplate": "wink.prompt",
    "RenderedPrompt": "wink.prompt",
    "Section": "wink.prompt",
    "ToolBinding": "wink.prompt",
    "Binding": "wink.resources",
    "CircularDependencyError": "wink.resources",
    "Filesystem": "wink.resources",
    "GitWorkspace": "wink.resources",
    "HostFilesystem": "wink.resources",
    "InMemoryFilesystem": "wink.resources",
    "ResourceBuildError": "wink.resources",
    "ResourceRegistry": "wink.resources",
    "Scope": "wink.resources",
    "UnboundResourceError": "wink.resources",
    "Budget": "wink.runtime",
    "BudgetExceededError": "wink.runtime",
    "BudgetTracker": "wink.runtime",
    "Deadline": "wink.runtime",
    "Session": "wink.runtime",
    "SliceKind": "wink.runtime",
    "SliceValues": "wink.runtime",
    "SliceVersion": "wink.runtime",
    "Snapshot": "wink.runtime",
    "SnapshotError": "wink.runtime",
    "TokenUsage": "wink.runtime",
    "ToolCall": "wink.runtime",
    "ToolExecutor": "wink.runtime",
    "ToolInvoked": "wink.runtime",
    "AsyncToolHandler": "wink.tools",
    "ParamHint": "wink.tools",
    "Tool": "wink.tools",
    "ToolContext": "wink.tools",
    "ToolExample": "wink.tools",
    "ToolHandler": "wink.tools",
    "ToolRenderableResult": "wink.tools",
    "ToolResult": "wink.tools",
    "tool": "wink.tools.decorator",
    "PostgresStore": "wink.store",
    "SessionInfo": "wink.store",
    "SessionStore": "wink.store",
    "SqliteStore": "wink.store",
    "StoreError": "wink.store",
    "VersionConflict": "wink.store",
    "open_store": "wink.store",
}


def __getattr__(name: str) -> Any:
    if name == "telemetry":
        return import_module("wink.telemetry")
    return exported(__name__, globals(), _HOMES, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
