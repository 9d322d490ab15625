"""Tools: typed contracts, results and the context handed to handlers."""

from wink.tools.client import ChoiceTitles, ClientUnavailableError, Elicitation
from wink.tools.context import ResourceAccess, ToolContext
from wink.tools.controls import Retries, ToolRetry
from wink.tools.param_hints import ParamHint
from wink.tools.result import ToolRenderableResult, ToolResult, render_value
from wink.tools.tool import AsyncToolHandler, Tool, ToolExample, ToolHandler

__all__ = [
    "ParamHint",
    "AsyncToolHandler",
    "ChoiceTitles",
    "ClientUnavailableError",
    "Elicitation",
    "ResourceAccess",
    "Retries",
    "Tool",
    "ToolContext",
    "ToolExample",
    "ToolHandler",
    "ToolRenderableResult",
    "ToolResult",
    "ToolRetry",
    "render_value",
]
