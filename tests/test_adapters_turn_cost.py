"""A turn's work does not grow with the conversation: each message is converted once,
when it joins, and a request hands over the messages without converting them again.

Pinned without timing: the conversions counted at turn 10 and at turn 1,000, the
earlier messages of a late request being the very objects an early request sent,
and the scripted model's transcripts reading one message list. The timed figure is
``bench_adapters`` (per-turn cost at turn 10 and at turn 1,000).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from adapter_prompts import notes_template

from wink import Prompt, Session, ToolResult
from wink.testing import (
    AssistantMessage,
    FunctionAdapter,
    Message,
    ModelInput,
    ScriptedAdapter,
    ToolMessage,
    Transcript,
    UserMessage,
    call,
)

NOTES_TEXT = "## Notes\n\nWhich notes mention e?"
SEARCH_OK = '2 hits.\n\n["bread","eggs"]'
LONG = 1_000
"""Requests answered with a tool call; request ``LONG + 1`` gets the final text."""


class Counter:
    """Counts calls of a wrapped function."""

    def __init__(self) -> None:
        self.calls = 0

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return function(*args, **kwargs)

        return counted


# --- the scripted model ----------------------------------------------------------------


def long_script() -> ScriptedAdapter:
    search = call("search", {"query": "e"}, "c1")
    return ScriptedAdapter([*[search] * LONG, "bread and eggs"])


def test_a_long_scripted_evaluation_converts_one_tool_result_per_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A tool message's content is the result's model_text(): one call is one conversion.
    counter = Counter()
    monkeypatch.setattr(ToolResult, "model_text", counter.wrap(ToolResult.model_text))
    seen: dict[int, int] = {}

    def model(model_input: ModelInput) -> Any:
        seen[model_input.turn] = counter.calls
        if model_input.turn > LONG:
            return "bread and eggs"
        return call("search", {"query": "e"}, "c1")

    FunctionAdapter(model).evaluate(Prompt(notes_template), session=Session(), max_turns=LONG + 1)
    assert (seen[10], seen[11], seen[1_000], seen[1_001]) == (9, 10, 999, 1_000)
    assert counter.calls == 1_000


def test_every_request_of_a_long_scripted_evaluation_reads_the_one_message_list() -> None:
    adapter = long_script()
    adapter.evaluate(Prompt(notes_template), session=Session(), max_turns=LONG + 1)
    early, late = adapter.inputs[9].messages, adapter.inputs[999].messages
    # The mechanism itself: a view of the conversation's list, never a copy of it.
    assert early._messages is late._messages
    assert (len(early), len(late)) == (19, 1_999)
    assert late[18] is early[18]


def test_an_early_transcript_keeps_its_messages_after_a_thousand_more_turns() -> None:
    adapter = long_script()
    adapter.evaluate(Prompt(notes_template), session=Session(), max_turns=LONG + 1)
    turn = (
        AssistantMessage(None, (call("search", {"query": "e"}, "c1"),)),
        ToolMessage("c1", "search", SEARCH_OK, True),
    )
    assert adapter.inputs[2].messages == (UserMessage(NOTES_TEXT), *turn, *turn)
    assert adapter.inputs[2].tool_messages() == (ToolMessage("c1", "search", SEARCH_OK, True),)
    assert adapter.inputs[2].last == ToolMessage("c1", "search", SEARCH_OK, True)


# --- the transcript reads as a tuple ---------------------------------------------------

FIRST = UserMessage("first")
SECOND = AssistantMessage("second")
THIRD = UserMessage("third")


def transcript_of_two() -> Transcript:
    """The first two of three messages, as an early request saw them."""
    return Transcript([FIRST, SECOND, THIRD], 2)


def test_a_transcript_holds_only_the_messages_of_its_request() -> None:
    transcript = transcript_of_two()
    assert len(transcript) == 2
    assert list(transcript) == [FIRST, SECOND]
    assert list(reversed(transcript)) == [SECOND, FIRST]
    assert THIRD not in transcript
    assert SECOND in transcript


def test_a_transcript_is_indexed_as_a_tuple_negative_indices_from_its_own_end() -> None:
    transcript = transcript_of_two()
    assert (transcript[0], transcript[1], transcript[-1], transcript[-2]) == (
        FIRST,
        SECOND,
        SECOND,
        FIRST,
    )


@pytest.mark.parametrize("index", [2, -3])
def test_a_transcript_index_past_its_own_messages_raises_index_error(index: int) -> None:
    with pytest.raises(IndexError, match=rf"transcript index {index} out of range \(2 messages\)"):
        transcript_of_two()[index]


def test_a_transcript_slice_is_a_tuple_of_its_own_messages() -> None:
    transcript = transcript_of_two()
    assert transcript[1:] == (SECOND,)
    assert transcript[::-1] == (SECOND, FIRST)
    assert transcript[:10] == (FIRST, SECOND)
    assert type(transcript[:]) is tuple


def test_a_transcript_equals_the_tuple_of_its_messages_both_ways_and_hashes_as_it() -> None:
    transcript = transcript_of_two()
    assert transcript == (FIRST, SECOND)
    assert (FIRST, SECOND) == transcript  # noqa: SIM300 - the tuple's side asks the transcript
    assert transcript != (FIRST, SECOND, THIRD)
    assert transcript != (FIRST, THIRD)
    assert transcript == Transcript([FIRST, SECOND], 2)
    assert transcript != [FIRST, SECOND]
    assert hash(transcript) == hash((FIRST, SECOND))
    assert repr(transcript) == f"Transcript({(FIRST, SECOND)!r})"


def test_a_transcript_is_a_sequence_of_messages_with_tuple_methods() -> None:
    transcript = transcript_of_two()
    assert transcript.index(SECOND) == 1
    assert transcript.count(FIRST) == 1
    messages: tuple[Message, ...] = (*transcript,)
    assert messages == (FIRST, SECOND)
