"""Testing without a provider: adapters whose model is a Python function or a script.

``ScriptedAdapter([call("search", {"query": "milk"}), "Found it."])`` plays one
reply per request; ``FunctionAdapter(function)`` asks ``function(model_input)``,
which sees the conversation, the tool specs and the output schema. Both run the
same loop as the provider adapters: tools, policies, rollback, limits and events
behave exactly as they would against a real model.
"""

from wink.testing._function_adapter import (
    AssistantMessage,
    FunctionAdapter,
    Message,
    ModelInput,
    ModelReply,
    ProviderError,
    Reply,
    ScriptedAdapter,
    SystemMessage,
    ToolMessage,
    ToolSpec,
    Transcript,
    UserMessage,
    call,
)

__all__ = [
    "AssistantMessage",
    "FunctionAdapter",
    "Message",
    "ModelInput",
    "ModelReply",
    "ProviderError",
    "Reply",
    "ScriptedAdapter",
    "SystemMessage",
    "ToolMessage",
    "ToolSpec",
    "Transcript",
    "UserMessage",
    "call",
]
