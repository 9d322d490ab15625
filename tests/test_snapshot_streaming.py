"""Snapshot.write_json and read_json: to_json's document, a block of values at a time."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel

from wink.runtime import (
    Session,
    SliceKind,
    Snapshot,
    SnapshotError,
    ToolInvoked,
    _snapshot_reader,
    _snapshot_writer,
)
from wink.tools import ToolResult

HERE = __name__
MOMENT = datetime(2025, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Note:
    text: str
    tags: tuple[str, ...] = ()


class Measure(BaseModel):
    x: float = 0.0


def invoked(index: int, arguments: Any) -> ToolInvoked:
    result = ToolResult[Any].error("refused")
    return ToolInvoked(
        "p", "search", f"c{index}", None, arguments, result, "refused", MOMENT, MOMENT
    )


def session_of(notes: int, calls: int) -> Session:
    session = Session()
    session[Note].seed([Note(f"note {n}", ("a", "b\n")) for n in range(notes)])
    session[ToolInvoked].seed(
        [invoked(n, b"\xff" if n % 3 == 0 else {"q": n}) for n in range(calls)]
    )
    session[Measure].declare(SliceKind.LOG)
    return session


def written(snapshot: Snapshot) -> bytes:
    file = io.BytesIO()
    snapshot.write_json(file)
    return file.getvalue()


class Trickle(io.RawIOBase):
    """A binary file that gives at most ``step`` bytes per read, counting what it holds."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.at = data, step, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        taken = self.data[self.at : self.at + min(self.step, size if size >= 0 else self.step)]
        self.at += len(taken)
        return taken


def test_write_json_writes_exactly_the_bytes_to_json_returns() -> None:
    snapshot = session_of(notes=3000, calls=700).snapshot()
    assert written(snapshot) == snapshot.to_json().encode()


def test_the_document_layout_is_unchanged() -> None:
    session = Session()
    session.dispatch(Note("hi", ("x",)))
    session.dispatch(invoked(1, "{}"))
    assert written(session.snapshot()).decode() == (
        '{"version":1,"slices":['
        f'{{"type":"{HERE}:Note","kind":"state","items":[{{"text":"hi","tags":["x"]}}]}},'
        '{"type":"wink.runtime.events:ToolInvoked","kind":"log","items":[{"prompt_name":"p",'
        '"name":"search","call_id":"c1","params":null,"arguments":"{}","result":{"message":'
        '"refused","value":null,"success":false,"exclude_value_from_context":false},'
        '"rendered_output":"refused","started_at":"2025-01-01T00:00:00Z","finished_at":'
        '"2025-01-01T00:00:00Z","denied":false,"rolled_back":false}]}]}'
    )


@pytest.mark.parametrize("step", [1, 7, 4096])
def test_read_json_reads_back_what_was_written_however_the_file_hands_out_bytes(
    step: int,
) -> None:
    snapshot = session_of(notes=300, calls=40).snapshot()
    loaded = Snapshot.read_json(Trickle(written(snapshot), step))
    assert loaded == snapshot
    assert loaded.log[ToolInvoked][0].arguments == b"\xff"


def test_read_json_reads_a_document_with_whitespace_wherever_json_allows_it() -> None:
    snapshot = session_of(notes=5, calls=4).snapshot()
    spaced = json.dumps(json.loads(snapshot.to_json()), indent=3).encode()
    assert Snapshot.read_json(io.BytesIO(spaced)) == snapshot


def test_read_json_reads_a_file_opened_as_text() -> None:
    snapshot = session_of(notes=50, calls=5).snapshot()
    assert Snapshot.read_json(io.StringIO(snapshot.to_json())) == snapshot  # type: ignore[arg-type]  # a text file, read as its UTF-8


def largest_held(monkeypatch: pytest.MonkeyPatch, document: bytes) -> int:
    """The most bytes of ``document`` the reader held at once, with 1 KiB reads and blocks."""
    monkeypatch.setattr(_snapshot_reader, "_READ_BYTES", 1024)
    monkeypatch.setattr(_snapshot_reader, "_BLOCK_BYTES", 1024)
    held = [0]
    more = _snapshot_reader._Source.more

    def counted(source: _snapshot_reader._Source, keep: int) -> bool:
        read = more(source, keep)
        held[0] = max(held[0], len(source.data))
        return read

    monkeypatch.setattr(_snapshot_reader._Source, "more", counted)
    Snapshot.read_json(io.BytesIO(document))
    return held[0]


def test_the_reader_holds_a_block_and_a_value_whatever_the_document_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    small = written(session_of(notes=200, calls=0).snapshot())
    large = written(session_of(notes=20_000, calls=0).snapshot())
    assert len(large) > 100 * len(small) > 100 * 4096
    # A block ends at the first value past 1 KiB; a read adds at least 1 KiB more.
    assert largest_held(monkeypatch, small) <= 4096
    assert largest_held(monkeypatch, large) <= 4096


def test_the_reader_holds_one_large_value_whole_and_no_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = session_of(notes=2000, calls=0)
    session[Note].update(lambda notes: (*notes, Note("x" * 100_000), *notes))
    held = largest_held(monkeypatch, written(session.snapshot()))
    assert 100_000 < held <= 2 * 100_000 + 4096


def test_the_writer_writes_blocks_of_bounded_size_whatever_the_slice_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_snapshot_writer, "_BLOCK_BYTES", 1024)

    def largest_write(notes: int) -> int:
        sizes: list[int] = []

        class Counted(io.BytesIO):
            def write(self, data: Any) -> int:
                sizes.append(len(data))
                return len(data)

        session_of(notes=notes, calls=0).snapshot().write_json(Counted())
        return max(sizes)

    # The first block is 64 values (~38 bytes each); later ones aim at 1 KiB of text.
    assert largest_write(200) == largest_write(20_000) <= 64 * 40


def test_a_value_that_cannot_be_saved_in_a_later_block_is_named_by_its_place_in_the_slice() -> None:
    values = [Measure(x=n) for n in range(5000)]
    values[4321] = Measure(x=float("nan"))
    with pytest.raises(SnapshotError) as raised:
        written(Snapshot(state={Measure: tuple(values)}))
    assert str(raised.value) == (
        f"slice {HERE}:Measure cannot be written as JSON: [4321].x: nan cannot be written as "
        "JSON (it has no NaN or Infinity)"
    )


def test_a_value_that_does_not_match_its_type_in_a_later_block_is_named_by_its_place() -> None:
    items = ",".join('{"x":%s}' % ('"no"' if n == 4321 else n) for n in range(5000))
    text = (
        f'{{"version":1,"slices":[{{"type":"{HERE}:Measure","kind":"state","items":[{items}]}}]}}'
    )
    with pytest.raises(SnapshotError) as raised:
        Snapshot.read_json(Trickle(text.encode(), 333))
    assert str(raised.value) == (
        f"slices[0] ({HERE}:Measure): items do not match the type: invalid "
        f'list[{HERE}.Measure]:\n[4321].x: input should be a valid number (got "no")'
    )


def test_broken_json_far_into_the_document_is_reported_by_path_line_and_column() -> None:
    items = ",".join('{"x":%s}' % ("1.5e" if n == 4321 else n) for n in range(5000))
    text = (
        f'{{"version":1,\n"slices":[{{"type":"{HERE}:Measure","kind":"state","items":[{items}]}}]}}'
    )
    with pytest.raises(SnapshotError) as trickled:
        Snapshot.read_json(Trickle(text.encode(), 333))
    with pytest.raises(SnapshotError) as whole:
        Snapshot.from_json(text)
    # pydantic's reader points at the last byte it read: the "}" after "1.5e".
    column = text.index("1.5e") + 4 - text.index("\n")
    expected = (
        "snapshot is not valid JSON: invalid number at slices[0].items[4321].x "
        f"(line 2 column {column})"
    )
    assert str(trickled.value) == str(whole.value) == expected


def test_a_truncated_document_is_refused_saying_where_it_ends() -> None:
    text = session_of(notes=100, calls=0).snapshot().to_json()
    cut = text.index('"items":[') + 917  # in the key "text" of items[24]
    with pytest.raises(SnapshotError) as raised:
        Snapshot.read_json(Trickle(text[:cut].encode(), 64))
    assert str(raised.value) == (
        "snapshot is not valid JSON: EOF while parsing a string at slices[0].items[24].tex "
        f"(line 1 column {cut})"
    )
