# ruff: noqa: E501, RUF001  (recorded wire data, each event verbatim)
"""Recorded streamed replies (server-sent events), each an ``(event, data)`` pair per
event as it came over the wire (``data`` is the JSON text verbatim); the comment above
each names the API and the recorded exchange. ``sse_body`` frames them back into the
HTTP body the provider sent."""

from __future__ import annotations

__all__ = ["sse_body"]


def sse_body(events: list[tuple[str | None, str]], *, done: bool = False) -> bytes:
    """The ``text/event-stream`` body of ``events``; ``done`` ends it with OpenAI Chat
    Completions' ``data: [DONE]``."""
    frames = [
        (f"event: {event}\n" if event is not None else "") + f"data: {data}\n\n"
        for event, data in events
    ]
    if done:
        frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


# OpenAI Chat Completions stream (an OpenAI-compatible router, kimi-k2): a call of the
# tool llm_version (no arguments), its id and name repeated in each delta, no finish_reason.
CHAT_TOOL_CALL: list[tuple[str | None, str]] = [
    (
        None,
        '{"id":"gen-1753242299-QZRAt5HJHd1ptY8sdS0s","provider":"Novita","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242299,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":""}',
    ),
    (
        None,
        '{"id":"gen-1753242299-QZRAt5HJHd1ptY8sdS0s","provider":"Novita","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242299,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":""}',
    ),
    (
        None,
        '{"id":"gen-1753242299-QZRAt5HJHd1ptY8sdS0s","provider":"Novita","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242299,"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"0","type":"function","function":{"name":"llm_version","arguments":""}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":""}',
    ),
    (
        None,
        '{"id":"gen-1753242299-QZRAt5HJHd1ptY8sdS0s","provider":"Novita","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242299,"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"0","type":"function","function":{"name":"llm_version","arguments":"{}"}}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":""}',
    ),
    (
        None,
        '{"id":"gen-1753242299-QZRAt5HJHd1ptY8sdS0s","provider":"Novita","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242299,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":57,"completion_tokens":17,"total_tokens":74,"cost":0.00007159,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0},"cost_details":{"upstream_inference_cost":null},"completion_tokens_details":{"reasoning_tokens":0}}}',
    ),
    (None, "[DONE]"),
]

# The answer after the llm_version result "0.fixed-version"; usage in the last chunk.
CHAT_ANSWER: list[tuple[str | None, str]] = [
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":"The"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":" current"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":" version"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":" of"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":" *"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":"ll"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":"m"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":"*"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":" is"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":" **"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":"0"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":"."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":"fixed-version"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":"**."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}],"system_fingerprint":"fpv0_170758dd"}',
    ),
    (
        None,
        '{"id":"gen-1753242300-j60LWi6MpN4lMZw1zTHK","provider":"Moonshot AI","model":"moonshotai/kimi-k2","object":"chat.completion.chunk","created":1753242300,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":107,"completion_tokens":15,"total_tokens":122,"cost":0.0001017,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0},"cost_details":{"upstream_inference_cost":null},"completion_tokens_details":{"reasoning_tokens":0}}}',
    ),
    (None, "[DONE]"),
]

# OpenAI Responses API stream (gpt-5.5): a call of multiply(a=1231, b=2331); the
# response.in_progress events, copies of response.created, left out.
RESPONSES_TOOL_CALL: list[tuple[str | None, str]] = [
    (
        "response.created",
        '{"type":"response.created","response":{"id":"resp_00d64fa806f333310169fab1be69d081a08f8285661855594c","object":"response","created_at":1778037182,"status":"in_progress","background":false,"completed_at":null,"error":null,"frequency_penalty":0.0,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"gpt-5.5-2026-04-23","moderation":null,"output":[],"parallel_tool_calls":true,"presence_penalty":0.0,"previous_response_id":null,"prompt_cache_key":null,"prompt_cache_retention":"24h","reasoning":{"effort":"low","summary":null},"safety_identifier":null,"service_tier":"auto","store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[{"type":"function","description":"Multiply two numbers.","name":"multiply","parameters":{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object","additionalProperties":false},"strict":true}],"top_logprobs":0,"top_p":0.98,"truncation":"disabled","usage":null,"user":null,"metadata":{}},"sequence_number":0}',
    ),
    (
        "response.output_item.added",
        '{"type":"response.output_item.added","item":{"id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","type":"function_call","status":"in_progress","arguments":"","call_id":"call_sVidsfFJ6zlzRpelrPkTPlpd","name":"multiply"},"output_index":0,"sequence_number":2}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"{\\"","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"ReLAoBL6oNRsXA","output_index":0,"sequence_number":3}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"a","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"oZA1PK3x65X0w51","output_index":0,"sequence_number":4}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"\\":","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"WFzXP9CAvnsSdE","output_index":0,"sequence_number":5}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"123","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"3bk9yszS1TEHx","output_index":0,"sequence_number":6}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"1","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"ckqcfb2NtXm34XT","output_index":0,"sequence_number":7}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":",\\"","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"cspustnrzHoiSV","output_index":0,"sequence_number":8}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"b","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"HhO4w36skjtIxaU","output_index":0,"sequence_number":9}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"\\":","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"SnDoVlFiXfYxtl","output_index":0,"sequence_number":10}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"233","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"arziGMMxMM5qo","output_index":0,"sequence_number":11}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"1","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"obhmaTA5ZilaAQc","output_index":0,"sequence_number":12}',
    ),
    (
        "response.function_call_arguments.delta",
        '{"type":"response.function_call_arguments.delta","delta":"}","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","obfuscation":"Mezf0KdDroRLDUI","output_index":0,"sequence_number":13}',
    ),
    (
        "response.function_call_arguments.done",
        '{"type":"response.function_call_arguments.done","arguments":"{\\"a\\":1231,\\"b\\":2331}","item_id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","output_index":0,"sequence_number":14}',
    ),
    (
        "response.output_item.done",
        '{"type":"response.output_item.done","item":{"id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","type":"function_call","status":"completed","arguments":"{\\"a\\":1231,\\"b\\":2331}","call_id":"call_sVidsfFJ6zlzRpelrPkTPlpd","name":"multiply"},"output_index":0,"sequence_number":15}',
    ),
    (
        "response.completed",
        '{"type":"response.completed","response":{"id":"resp_00d64fa806f333310169fab1be69d081a08f8285661855594c","object":"response","created_at":1778037182,"status":"completed","background":false,"completed_at":1778037183,"error":null,"frequency_penalty":0.0,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"gpt-5.5-2026-04-23","moderation":null,"output":[{"id":"fc_00d64fa806f333310169fab1bf324481a0852cda3180856290","type":"function_call","status":"completed","arguments":"{\\"a\\":1231,\\"b\\":2331}","call_id":"call_sVidsfFJ6zlzRpelrPkTPlpd","name":"multiply"}],"parallel_tool_calls":true,"presence_penalty":0.0,"previous_response_id":null,"prompt_cache_key":null,"prompt_cache_retention":"24h","reasoning":{"effort":"low","summary":null},"safety_identifier":null,"service_tier":"default","store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[{"type":"function","description":"Multiply two numbers.","name":"multiply","parameters":{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object","additionalProperties":false},"strict":true}],"top_logprobs":0,"top_p":0.98,"truncation":"disabled","usage":{"input_tokens":58,"input_tokens_details":{"cached_tokens":0},"output_tokens":23,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":81},"user":null,"metadata":{}},"sequence_number":16}',
    ),
]

# The answer after the multiply result.
RESPONSES_ANSWER: list[tuple[str | None, str]] = [
    (
        "response.created",
        '{"type":"response.created","response":{"id":"resp_0dacb603de1c9e6b0169fab1c2314081a3b1df3cc5c09e0c60","object":"response","created_at":1778037186,"status":"in_progress","background":false,"completed_at":null,"error":null,"frequency_penalty":0.0,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"gpt-5.5-2026-04-23","moderation":null,"output":[],"parallel_tool_calls":true,"presence_penalty":0.0,"previous_response_id":null,"prompt_cache_key":null,"prompt_cache_retention":"24h","reasoning":{"effort":"low","summary":null},"safety_identifier":null,"service_tier":"auto","store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[{"type":"function","description":"Multiply two numbers.","name":"multiply","parameters":{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object","additionalProperties":false},"strict":true}],"top_logprobs":0,"top_p":0.98,"truncation":"disabled","usage":null,"user":null,"metadata":{}},"sequence_number":0}',
    ),
    (
        "response.output_item.added",
        '{"type":"response.output_item.added","item":{"id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","type":"message","status":"in_progress","content":[],"phase":"final_answer","role":"assistant"},"output_index":0,"sequence_number":2}',
    ),
    (
        "response.content_part.added",
        '{"type":"response.content_part.added","content_index":0,"item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","output_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""},"sequence_number":3}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":"123","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"yJXGKTBmb2UOz","output_index":0,"sequence_number":4}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":"1","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"0bPnrPoF6d7HddV","output_index":0,"sequence_number":5}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":" ×","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"ft7PFRXyUN31Dr","output_index":0,"sequence_number":6}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":" ","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"HWsKMbb1JWpQBGo","output_index":0,"sequence_number":7}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":"233","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"OyardqgvtiISP","output_index":0,"sequence_number":8}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":"1","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"M5u2aOAAbIF9HaL","output_index":0,"sequence_number":9}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":" =","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"DblLLi7wbRu7Yj","output_index":0,"sequence_number":10}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":" **","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"iiojCebBdYGkO","output_index":0,"sequence_number":11}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":"2","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"eJPGA9ScIqJTAvj","output_index":0,"sequence_number":12}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":",","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"pkBo5DcWhNmQVlb","output_index":0,"sequence_number":13}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":"869","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"6Z8oUB1RMn3DD","output_index":0,"sequence_number":14}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":",","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"Bf7uSiaON5ThxbH","output_index":0,"sequence_number":15}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":"461","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"qqwxt4JuKvQU6","output_index":0,"sequence_number":16}',
    ),
    (
        "response.output_text.delta",
        '{"type":"response.output_text.delta","content_index":0,"delta":"**","item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"obfuscation":"XM0rK6J7j52uLE","output_index":0,"sequence_number":17}',
    ),
    (
        "response.output_text.done",
        '{"type":"response.output_text.done","content_index":0,"item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","logprobs":[],"output_index":0,"sequence_number":18,"text":"1231 × 2331 = **2,869,461**"}',
    ),
    (
        "response.content_part.done",
        '{"type":"response.content_part.done","content_index":0,"item_id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","output_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"1231 × 2331 = **2,869,461**"},"sequence_number":19}',
    ),
    (
        "response.output_item.done",
        '{"type":"response.output_item.done","item":{"id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"1231 × 2331 = **2,869,461**"}],"phase":"final_answer","role":"assistant"},"output_index":0,"sequence_number":20}',
    ),
    (
        "response.completed",
        '{"type":"response.completed","response":{"id":"resp_0dacb603de1c9e6b0169fab1c2314081a3b1df3cc5c09e0c60","object":"response","created_at":1778037186,"status":"completed","background":false,"completed_at":1778037187,"error":null,"frequency_penalty":0.0,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"gpt-5.5-2026-04-23","moderation":null,"output":[{"id":"msg_0dacb603de1c9e6b0169fab1c2e40081a3857ad788023cb7ea","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"1231 × 2331 = **2,869,461**"}],"phase":"final_answer","role":"assistant"}],"parallel_tool_calls":true,"presence_penalty":0.0,"previous_response_id":null,"prompt_cache_key":null,"prompt_cache_retention":"24h","reasoning":{"effort":"low","summary":null},"safety_identifier":null,"service_tier":"default","store":false,"temperature":1.0,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[{"type":"function","description":"Multiply two numbers.","name":"multiply","parameters":{"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object","additionalProperties":false},"strict":true}],"top_logprobs":0,"top_p":0.98,"truncation":"disabled","usage":{"input_tokens":94,"input_tokens_details":{"cached_tokens":0},"output_tokens":18,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":112},"user":null,"metadata":{}},"sequence_number":21}',
    ),
]

# Anthropic Messages stream (claude-haiku-4-5): two calls of
# pelican_name_generator (no arguments).
ANTHROPIC_TOOL_CALLS: list[tuple[str | None, str]] = [
    (
        "message_start",
        '{"type":"message_start","message":{"model":"claude-haiku-4-5-20251001","id":"msg_01V2noLbAb2NgKnjaNw6Cn3w","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"stop_details":null,"usage":{"input_tokens":542,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":62,"service_tier":"standard","inference_geo":"not_available"}}  }',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01LtHJmixrs9NcWQkK8hu8hj","name":"pelican_name_generator","input":{},"caller":{"type":"direct"}}     }',
    ),
    ("ping", '{"type": "ping"}'),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}               }',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0       }'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01N8a4jWyf116qKTMqKKmjyt","name":"pelican_name_generator","input":{},"caller":{"type":"direct"}}         }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}  }',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":1   }'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null,"stop_details":null},"usage":{"input_tokens":542,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":62}               }',
    ),
    ("message_stop", '{"type":"message_stop"     }'),
]

# The answer after the two results "Charles" and "Sammy".
ANTHROPIC_ANSWER: list[tuple[str | None, str]] = [
    (
        "message_start",
        '{"type":"message_start","message":{"model":"claude-haiku-4-5-20251001","id":"msg_01XMATm4UFnjP841TckVuNF4","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"stop_details":null,"usage":{"input_tokens":678,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard","inference_geo":"not_available"}}     }',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}             }',
    ),
    ("ping", '{"type": "ping"}'),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Here"}    }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" are two great names for your pet pelican:\\n\\n1. **Charles** - A sophisticated and dignified name, perfect for a pelican with personality"}            }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"!\\n2. **Sammy** - A friendly and playful name that gives off warm, approachable vibes."}        }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\n\\nEither of these would make an excellent name for your feathered friend! 🦅"}      }',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null,"stop_details":null},"usage":{"input_tokens":678,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":82}               }',
    ),
    ("message_stop", '{"type":"message_stop"     }'),
]

# Anthropic Messages stream (claude-sonnet-4-5) with extended thinking: a thinking
# block whose signature arrives as a signature_delta, then the text.
ANTHROPIC_THINKING: list[tuple[str | None, str]] = [
    (
        "message_start",
        '{"type":"message_start","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01RTjjePNDCQNgHXg3KeDPfv","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":46,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":3,"service_tier":"standard","inference_geo":"not_available"}}               }',
    ),
    (
        "content_block_start",
        '{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}      }',
    ),
    ("ping", '{"type": "ping"}'),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants"}             }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" two names for a pet pelican,"}          }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" and"}  }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" wants"}       }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" me"}    }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" to be brief. I"}    }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\'ll"}        }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" give"}            }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" two"}         }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" simple"}   }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":", fitting"}  }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" names."}              }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\\n\\nSome"}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" options:\\n-"}               }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" Pete"}       }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\\n- Percy"}            }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\\n- Captain"}       }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\\n- Sc"}    }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"oop"}      }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\\n- Bill"}      }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\\n- G"}  }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"ully"} }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"\\n\\nI\'ll"} }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" pick"}         }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" two good"}      }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" ones and"} }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" keep it very"}     }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" short"}              }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"."}               }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EvoCCkYICxgCKkCY593DZILKPT3+cK6Py3Hcu8WYGSW2vk6yge13JAuAYlQFzUC2c6UlsIWiBMvJjtDc6zfh73EOpWqxYB+pOh5zEgxoquY58aQkL5YJ9YUaDJpBRqMUVxU6SPYLRCIwcxSHXlhIWQw0QhiPV+lrMXgTdk4SuJnWVpHc+uTSxYmxetnHugsdCo6xWShRJaQLKuEBsfQzKHid0WmA8hdgz0mVpI+nAPvnhpHFIZbnGl2HQi7cc87o/HZzCod2tF8mEuqdyNtPHgx+H+Zyr/Pi0kmJF6hOoylmR5nGrXeqR1ttWFzzPF7XpmIr+vw3y/rNCDQVRWxmG/IDyHVLKXtALaFnDpNfvSGv6L3udrgkeWuV2VEzfGPclEIaailiMsxesYC/LJGUcPlqZ9kL18GQ16lr15u6kOUMlyYKA7AoeL6K7U3qCvpSdfGpMfgkasK5ugj0FL3UgFpUrrFbPlpLAdLsNeG2G+XBiOY0TtfokCiI1P7LGAE="}      }',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":0}'),
    (
        "content_block_start",
        '{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"-"}       }',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" Captain"}}',
    ),
    (
        "content_block_delta",
        '{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"\\n- Scoop"}          }',
    ),
    ("content_block_stop", '{"type":"content_block_stop","index":1         }'),
    (
        "message_delta",
        '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":46,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":84}            }',
    ),
    ("message_stop", '{"type":"message_stop"    }'),
]

# Gemini API streamGenerateContent (gemini-3-flash-preview): a call of multiply(x=5, y=3)
# with its thought signature, then an empty text part that finishes (STOP). Recorded as
# a JSON array; each element is one chunk, framed here as the SSE data lines the SDK
# asks for (alt=sse).
GEMINI_TOOL_CALL: list[tuple[str | None, str]] = [
    (
        None,
        '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"multiply","args":{"y":3,"x":5}},"thoughtSignature":"Et0BCtoBAXLI2nwMB4momyXTj+K3OPELPDi5Mq6bA5ZHuiKVF9m94gyxd+zdlC+s73nWxHx1ImnA9wPRG1sKMAvENS5i0Bef0VxMS31QE4PbbJw81tSto0OCC+AJdHF0i7x3uHqBuj91gBPwmy3rhAQM+8kxmaF4FeJ0rvICgjIIjG7rBgCE8vOD9Glt/sy3WPKo//jOukERM0rVGAPpMogXNtQbJWUQ8469alaZN67hbYJNaL5XSNcsbsu4ub04B2aFPc6NJld2EWK/enYFPnarMNwobDsSstlzuMygTHQ="}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":60,"candidatesTokenCount":16,"totalTokenCount":108,"promptTokensDetails":[{"modality":"TEXT","tokenCount":60}],"thoughtsTokenCount":32},"modelVersion":"gemini-3-flash-preview","responseId":"6XJFadi3PJOx-sAPgJ3S6Qs"}',
    ),
    (
        None,
        '{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":60,"candidatesTokenCount":16,"totalTokenCount":108,"promptTokensDetails":[{"modality":"TEXT","tokenCount":60}],"thoughtsTokenCount":32},"modelVersion":"gemini-3-flash-preview","responseId":"6XJFadi3PJOx-sAPgJ3S6Qs"}',
    ),
]

# The answer after the multiply result 15, in three chunks.
GEMINI_ANSWER: list[tuple[str | None, str]] = [
    (
        None,
        '{"candidates":[{"content":{"parts":[{"text":"5 times 3"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":89,"candidatesTokenCount":4,"totalTokenCount":93,"promptTokensDetails":[{"modality":"TEXT","tokenCount":89}]},"modelVersion":"gemini-3-flash-preview","responseId":"6nJFaZPBLriWjMcPkf_q8Ac"}',
    ),
    (
        None,
        '{"candidates":[{"content":{"parts":[{"text":" is 15."}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":89,"candidatesTokenCount":9,"totalTokenCount":98,"promptTokensDetails":[{"modality":"TEXT","tokenCount":89}]},"modelVersion":"gemini-3-flash-preview","responseId":"6nJFaZPBLriWjMcPkf_q8Ac"}',
    ),
    (
        None,
        '{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":121,"candidatesTokenCount":9,"totalTokenCount":130,"promptTokensDetails":[{"modality":"TEXT","tokenCount":121}]},"modelVersion":"gemini-3-flash-preview","responseId":"6nJFaZPBLriWjMcPkf_q8Ac"}',
    ),
]
