"""Raw call fields are written and described exactly as ``PlainSerializer(encode)`` would."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import PlainSerializer, TypeAdapter

from wink.runtime import _roundtrip
from wink.runtime._raw import RawArguments, RawText, WrittenByEncode, encode
from wink.runtime.events import ToolInvoked
from wink.runtime.history import SliceVersion

SAMPLES: dict[str, list[Any]] = {
    "RawArguments": [
        '{"q": "a"}',
        '{"q": "\ud800"}',
        b"\xff\xfe",
        {"x": float("nan")},
        {"a": [1, 2]},
        None,
    ],
    "RawText": ["lookup", "na\udc80me"],
}


def _with_plain_serializer(raw: Any) -> Any:
    *validators, marker = raw.__metadata__
    assert isinstance(marker, WrittenByEncode)
    serializer = PlainSerializer(encode, return_type=marker.return_type)
    return Annotated[(raw.__origin__, *validators, serializer)]


@pytest.mark.parametrize(("name", "raw"), [("RawArguments", RawArguments), ("RawText", RawText)])
def test_a_raw_field_is_written_and_described_as_with_plain_serializer(name: str, raw: Any) -> None:
    ours, reference = TypeAdapter(raw), TypeAdapter(_with_plain_serializer(raw))
    for mode in ("validation", "serialization"):
        assert ours.json_schema(mode=mode) == reference.json_schema(mode=mode)
    for value in SAMPLES[name]:
        assert ours.dump_json(value) == reference.dump_json(value)
        assert ours.dump_python(value) == reference.dump_python(value)


def test_snapshots_know_the_raw_fields_write_themselves() -> None:
    assert _roundtrip._self_serialized_fields(ToolInvoked) == frozenset(
        {"arguments", "call_id", "name", "rendered_output"}
    )
    assert _roundtrip._self_serialized_fields(SliceVersion) == frozenset({"call_id", "tool"})


def test_the_marker_shows_its_return_type() -> None:
    assert repr(WrittenByEncode(str)) == "WrittenByEncode(<class 'str'>)"
