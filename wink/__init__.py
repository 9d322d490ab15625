"""wink: a pydantic-centric, schema-first tool runtime for LLM applications."""

from wink.contract import Contract, ContractViolation, FieldProblem, compile_contract
from wink.errors import (
    DeadlineExceededError,
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ToolValidationError,
    VisibilityExpansionRequired,
    WinkError,
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
    HostFilesystem,
    InMemoryFilesystem,
    ResourceRegistry,
    Scope,
    UnboundResourceError,
)
from wink.tools import (
    Tool,
    ToolContext,
    ToolExample,
    ToolHandler,
    ToolRenderableResult,
    ToolResult,
)

__all__ = [
    "Binding",
    "CircularDependencyError",
    "Contract",
    "ContractViolation",
    "DeadlineExceededError",
    "FieldProblem",
    "Filesystem",
    "HostFilesystem",
    "InMemoryFilesystem",
    "MarkdownSection",
    "Prompt",
    "PromptEvaluationError",
    "PromptOverrides",
    "PromptRenderError",
    "PromptTemplate",
    "PromptValidationError",
    "RenderedPrompt",
    "ResourceRegistry",
    "Scope",
    "Section",
    "Tool",
    "ToolBinding",
    "ToolContext",
    "ToolExample",
    "ToolHandler",
    "ToolRenderableResult",
    "ToolResult",
    "ToolValidationError",
    "UnboundResourceError",
    "VisibilityExpansionRequired",
    "WinkError",
    "compile_contract",
]
