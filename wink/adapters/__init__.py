"""Evaluating prompts: the ``ProviderAdapter`` protocol and the loop every adapter shares.

``wink.providers.openai.OpenAIAdapter``, ``wink.providers.anthropic.AnthropicAdapter``
and ``wink.providers.gemini.GeminiAdapter`` evaluate against a provider's SDK;
``wink.testing.FunctionAdapter`` evaluates with no provider at all.
"""

from wink.adapters.events import ModelExchange, PromptExecuted, PromptRendered, ProviderToolCall
from wink.adapters.loop import (
    Conversation,
    LoopAdapter,
    ModelRequest,
    ModelTurn,
    ProviderFailure,
    Step,
    ToolTurn,
    UnusableResponse,
    Wait,
    evaluation_steps,
    unexpected_failure,
)
from wink.adapters.protocol import DEFAULT_MAX_TURNS, DEFAULT_OUTPUT_RETRIES, ProviderAdapter
from wink.adapters.response import PromptResponse, StopReason

__all__ = [
    "DEFAULT_MAX_TURNS",
    "DEFAULT_OUTPUT_RETRIES",
    "Conversation",
    "LoopAdapter",
    "ModelExchange",
    "ModelRequest",
    "ModelTurn",
    "PromptExecuted",
    "PromptRendered",
    "PromptResponse",
    "ProviderAdapter",
    "ProviderFailure",
    "ProviderToolCall",
    "Step",
    "StopReason",
    "ToolTurn",
    "UnusableResponse",
    "Wait",
    "evaluation_steps",
    "unexpected_failure",
]
