"""Evaluating prompts: the ``ProviderAdapter`` protocol and the loop every adapter shares.

``wink.providers.openai.OpenAIAdapter``, ``wink.providers.anthropic.AnthropicAdapter``
and ``wink.providers.gemini.GeminiAdapter`` evaluate against a provider's SDK;
``wink.testing.FunctionAdapter`` evaluates with no provider at all. Each streams
too: ``adapter.stream(prompt, session=...)`` yields the events of
``wink.adapters.stream`` as the replies arrive.
"""

from wink.adapters.events import ModelExchange, PromptExecuted, PromptRendered, ProviderToolCall
from wink.adapters.loop import (
    END_OF_STREAM,
    NEXT_CHUNK,
    AsyncEvaluationStream,
    ChunkStream,
    Conversation,
    EvaluationStream,
    LoopAdapter,
    ModelRequest,
    ModelTurn,
    NextChunk,
    ProviderFailure,
    RefreshTools,
    Step,
    ToolTurn,
    UnusableResponse,
    Wait,
    evaluation_steps,
    unexpected_failure,
)
from wink.adapters.protocol import DEFAULT_MAX_TURNS, DEFAULT_OUTPUT_RETRIES, ProviderAdapter
from wink.adapters.response import PromptResponse, StopReason
from wink.adapters.stream import (
    AnswerRejected,
    EvaluationFinished,
    ReasoningDelta,
    StreamEvent,
    StreamReader,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    TurnEnded,
    TurnStarted,
)

__all__ = [
    "DEFAULT_MAX_TURNS",
    "DEFAULT_OUTPUT_RETRIES",
    "END_OF_STREAM",
    "NEXT_CHUNK",
    "AnswerRejected",
    "AsyncEvaluationStream",
    "ChunkStream",
    "Conversation",
    "EvaluationFinished",
    "EvaluationStream",
    "LoopAdapter",
    "ModelExchange",
    "ModelRequest",
    "ModelTurn",
    "NextChunk",
    "PromptExecuted",
    "PromptRendered",
    "PromptResponse",
    "ProviderAdapter",
    "ProviderFailure",
    "RefreshTools",
    "ProviderToolCall",
    "ReasoningDelta",
    "Step",
    "StopReason",
    "StreamEvent",
    "StreamReader",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallStarted",
    "ToolTurn",
    "TurnEnded",
    "TurnStarted",
    "UnusableResponse",
    "Wait",
    "evaluation_steps",
    "unexpected_failure",
]
