"""Recorded reply bodies, each trimmed to what its test reads; the comment above each
names the public API response shape it is."""

from __future__ import annotations

from typing import Any

# Gemini API, models.generateContent response: an answer cut by maxOutputTokens.
GEMINI_MAX_TOKENS: dict[str, Any] = {
    "candidates": [
        {
            "content": {"parts": [{"text": "The capital of France is"}], "role": "model"},
            "finishReason": "MAX_TOKENS",
            "index": 0,
        }
    ],
    "modelVersion": "gemini-2.5-flash",
    "responseId": "R5MoavWNNp_8qtsP2fWD2A0",
    "usageMetadata": {
        "candidatesTokenCount": 5,
        "promptTokenCount": 15,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 15}],
        "serviceTier": "standard",
        "totalTokenCount": 20,
    },
}

# OpenAI Chat Completions response (an OpenAI-compatible server, DeepSeek-R1 through the
# Hugging Face router) cut by max_tokens: finish_reason "length".
CHAT_LENGTH: dict[str, Any] = {
    "choices": [
        {
            "finish_reason": "length",
            "index": 0,
            "logprobs": None,
            "message": {
                "content": '<think>\nHmm, the user just said "hello". Such a simple greeting',
                "role": "assistant",
                "tool_calls": [],
            },
            "seed": 14836394043272784000,
        }
    ],
    "created": 1771167110,
    "id": "oXUyQTv-28Eivz-9ce5a0296c7de93c",
    "model": "deepseek-ai/DeepSeek-R1",
    "object": "chat.completion",
    "prompt": [],
    "usage": {
        "cached_tokens": 0,
        "completion_tokens": 100,
        "prompt_tokens": 4,
        "total_tokens": 104,
    },
}

# Anthropic Messages API response: the max_tokens budget spent on thinking, no text.
ANTHROPIC_MAX_TOKENS: dict[str, Any] = {
    "model": "claude-sonnet-5",
    "id": "msg_011CdPt7Pro2EKHRPvJrdHka",
    "type": "message",
    "role": "assistant",
    "content": [
        {
            "type": "thinking",
            "thinking": "",
            "signature": "EvQBCokBCBAYAipA072s7SF3R2MEF7V6RjWZjqAyf1pvJ0UhG0E/yloUS36ysANfS3Ks",
        }
    ],
    "stop_reason": "max_tokens",
    "stop_sequence": None,
    "stop_details": None,
    "usage": {
        "input_tokens": 8,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 4,
        "service_tier": "standard",
    },
}

# OpenAI Responses API response, status "incomplete" (max_output_tokens reached).
RESPONSES_INCOMPLETE: dict[str, Any] = {
    "id": "resp_onyx_incomplete",
    "object": "response",
    "created_at": 1787500000,
    "status": "incomplete",
    "error": None,
    "incomplete_details": {"reason": "max_output_tokens"},
    "instructions": None,
    "max_output_tokens": 8,
    "model": "fixture-incomplete-model",
    "output": [
        {
            "id": "msg_onyx_partial",
            "type": "message",
            "status": "incomplete",
            "role": "assistant",
            "content": [
                {
                    "type": "output_text",
                    "text": "ONYX_PARTIAL_BEFORE_OUTPUT_LIMIT",
                    "annotations": [],
                }
            ],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 8,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 20,
    },
}

# Anthropic Messages API responses with the web_search server tool: a turn the API
# paused (stop_reason "pause_turn"), then its continuation. Search results and
# citations trimmed to one each.
ANTHROPIC_PAUSED: dict[str, Any] = {
    "content": [
        {
            "signature": "Es4DCkYICxgCKkB5MhEEIPtdNWk9yXaAfT8RsjJkikctY6zbHKDkHBUoETEAbz/wTSlw",
            "thinking": "The user wants me to run 15 separate web searches, one at a time.",
            "type": "thinking",
        },
        {"text": "I'll run these searches for you one at a time. Let me begin:", "type": "text"},
        {
            "id": "srvtoolu_015V9Q8YNSkSyaVE5jFgZPhy",
            "input": {"query": "San Francisco weather today"},
            "name": "web_search",
            "type": "server_tool_use",
        },
        {
            "content": [
                {
                    "encrypted_content": (
                        "ErgBCioIDBgCIiQ5MGZjMWI5Mi1iYzIyLTQzNTMtYWExZi1iNjI2NjI0MDkzZDgSDL9f"
                    ),
                    "page_age": "December 25, 2025",
                    "title": "National Weather Service",
                    "type": "web_search_result",
                    "url": "https://forecast.weather.gov/MapClick.php?lat=37.7771&lon=-122.4196",
                }
            ],
            "tool_use_id": "srvtoolu_015V9Q8YNSkSyaVE5jFgZPhy",
            "type": "web_search_tool_result",
        },
    ],
    "id": "msg_01WUxwtx6NsdkWnEyL8BMy1q",
    "model": "claude-sonnet-4-5-20250929",
    "role": "assistant",
    "stop_reason": "pause_turn",
    "stop_sequence": None,
    "type": "message",
    "usage": {
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "input_tokens": 401468,
        "output_tokens": 792,
        "server_tool_use": {"web_search_requests": 10},
        "service_tier": "standard",
    },
}
ANTHROPIC_CONTINUED: dict[str, Any] = {
    "content": [
        {"text": ".\n\n**Stock Market (Today):** ", "type": "text"},
        {
            "citations": [
                {
                    "cited_text": "The Nasdaq 100 slid 2.4%, set for its worst day since November.",
                    "encrypted_index": (
                        "EpIBCioIDBgCIiQ5MGZjMWI5Mi1iYzIyLTQzNTMtYWExZi1iNjI2NjI0MDkzZDgSDEC7"
                    ),
                    "title": "Stock Market Today: Dow, S&P Live Updates for February 4 - Bloomberg",
                    "type": "web_search_result_location",
                    "url": (
                        "https://www.bloomberg.com/news/articles/2026-02-03/"
                        "stock-market-today-dow-s-p-live-updates"
                    ),
                }
            ],
            "text": "The Nasdaq 100 slid 2.4%, set for its worst day since November",
            "type": "text",
        },
    ],
    "id": "msg_01B8TcC6Ns8V46ZRAgLzKenY",
    "model": "claude-sonnet-4-5-20250929",
    "role": "assistant",
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "type": "message",
    "usage": {
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "input_tokens": 494549,
        "output_tokens": 1245,
        "server_tool_use": {"web_search_requests": 5},
        "service_tier": "standard",
    },
}
