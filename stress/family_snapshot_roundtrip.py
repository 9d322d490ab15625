"""Sessions saved with ``Snapshot.to_json`` and loaded with ``from_json``, at random.

Each input is one of:

- a session built by a ``ToolExecutor`` running random calls of a tool whose
  params hold every value kind the contract layer accepts: valid calls (their
  value joins a STATE slice) and rejected ones with hostile raw arguments (lone
  surrogates, invalid UTF-8 bytes, NaN in mappings, mappings shaped like the
  escaped form, hostile tool names and call ids). It must save, and load back;
- a value JSON cannot keep (NaN, a lone surrogate, a named time zone, a
  sub-minute offset, nesting past the limit): ``to_json`` must refuse it;
- a saved document corrupted at random (truncated, a byte changed, a slice
  list replaced, deep nesting, a huge integer): ``from_json`` must refuse it.

Counted, all of which must be 0:

- ``uncaught``: ``to_json`` or ``from_json`` raised anything but ``SnapshotError``;
- ``lost_events``: a savable session was refused, or a ``ToolInvoked`` came back
  missing or different (name, call id, raw arguments with their type, outcome,
  message, times);
- ``state_leaks``: a STATE value came back different, or a value JSON cannot keep
  was written anyway.
"""

from __future__ import annotations

import enum
import json
import random
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from stress.report import FamilyReport
from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, Snapshot, SnapshotError, ToolCall, ToolExecutor, ToolInvoked

__all__ = ["run"]

_SESSIONS = 24
_CALLS_PER_SESSION = 6
_CORRUPTIONS = 60
_UNSAVABLE = 20


class Shade(enum.Enum):
    """A string enumeration."""

    LIGHT = "light"
    DARK = "dark"


class Part(BaseModel):
    """A nested model."""

    label: str
    weight: float | None = None


@dataclass(frozen=True)
class Record:
    """Params and result of the tool: one field of each value kind."""

    text: str
    number: int
    ratio: float
    flag: bool
    amount: Decimal
    moment: datetime
    day: date
    clock: time
    span: timedelta
    ident: uuid.UUID
    shade: Shade
    mode: Literal["a", "b", 3]
    blob: bytes
    numbers: list[int]
    pair: tuple[str, int]
    tags: frozenset[str]
    weights: dict[str, float]
    part: Part
    parts: tuple[Part, ...]
    choice: int | str | None


def _store(params: Record, *, context: ToolContext) -> ToolResult[Record]:
    return ToolResult.ok(params)


_TOOL = Tool[Record, Record](name="store", description="Store a record.", handler=_store)
_TEMPLATE = PromptTemplate(
    ns="stress",
    key="snapshots",
    name="snapshots",
    sections=[MarkdownSection(title="Tools", template="Store records.", tools=[_TOOL])],
)
_PROMPT = Prompt(_TEMPLATE)


def run(scale: float) -> FamilyReport:
    """Try about ``scale`` times the quick number of each kind of input."""
    report = FamilyReport("snapshot_roundtrip")
    rng = random.Random(8)
    saved_texts: list[str] = []
    for _ in range(max(1, round(_SESSIONS * scale))):
        with report.measure(memory=True):
            text = _save_and_load_a_session(rng, report)
        if text is not None:
            saved_texts.append(text)
    for _ in range(max(1, round(_UNSAVABLE * scale))):
        with report.measure(memory=True):
            _refuse_an_unsavable_value(rng, report)
    for _ in range(max(1, round(_CORRUPTIONS * scale))):
        with report.measure(memory=True):
            _load_a_corrupted_document(rng, rng.choice(saved_texts or ["{}"]), report)
    return report


# Sessions of recorded calls


def _save_and_load_a_session(rng: random.Random, report: FamilyReport) -> str | None:
    session = Session()
    executor = ToolExecutor(prompt=_PROMPT, session=session)
    for index in range(_CALLS_PER_SESSION):
        if rng.random() < 0.5:
            call = ToolCall("store", json.dumps(_record_json(rng)), f"call-{index}")
        else:
            call = ToolCall(_hostile_name(rng), _hostile_arguments(rng), _hostile_text(rng))
        executor.execute(call)
    saved = session.snapshot()
    try:
        text = saved.to_json()
        loaded = Snapshot.from_json(text, types=[Record, ToolInvoked])
    except SnapshotError as error:
        report.note("lost_events", f"a savable session was refused: {error}")
        return None
    except Exception as error:  # the defect this family counts
        report.note("uncaught", f"saving or loading raised {type(error).__name__}: {error}")
        return None
    _compare_events(saved.log.get(ToolInvoked, ()), loaded.log.get(ToolInvoked, ()), report)
    if tuple(saved.state.get(Record, ())) != tuple(loaded.state.get(Record, ())):
        report.note("state_leaks", "a Record slice came back different")
    return text


def _compare_events(saved: Any, loaded: Any, report: FamilyReport) -> None:
    if len(saved) != len(loaded):
        report.note("lost_events", f"{len(saved)} ToolInvoked saved, {len(loaded)} loaded")
        return
    for before, after in zip(saved, loaded, strict=True):
        kept = (
            before.name == after.name
            and before.call_id == after.call_id
            and type(before.arguments) is type(after.arguments)
            and repr(before.arguments) == repr(after.arguments)
            and before.result.success == after.result.success
            and before.result.message == after.result.message
            and before.rendered_output == after.rendered_output
            and (before.started_at, before.finished_at) == (after.started_at, after.finished_at)
        )
        if not kept:
            report.note("lost_events", f"call {before.name!r} came back as {after!r:.200}")


def _record_json(rng: random.Random) -> dict[str, Any]:
    zone = timezone(timedelta(minutes=rng.randint(-23 * 60, 23 * 60)))
    moment = datetime(2000, 1, 1, tzinfo=UTC) + timedelta(seconds=rng.randint(0, 10**9))
    return {
        "text": _text(rng),
        "number": rng.randint(-(10**30), 10**30),
        "ratio": rng.uniform(-1e300, 1e300) if rng.random() < 0.5 else rng.random(),
        "flag": rng.random() < 0.5,
        "amount": str(Decimal(rng.randint(-(10**12), 10**12)).scaleb(-rng.randint(0, 8))),
        "moment": moment.astimezone(zone).isoformat(),
        "day": date.fromordinal(rng.randint(1, 800_000)).isoformat(),
        "clock": time(rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)).isoformat(),
        "span": f"PT{rng.randint(0, 10**6)}S",
        "ident": str(uuid.UUID(int=rng.getrandbits(128))),
        "shade": rng.choice(["light", "dark"]),
        "mode": rng.choice(["a", "b", 3]),
        "blob": _text(rng),
        "numbers": [rng.randint(-9, 9) for _ in range(rng.randint(0, 4))],
        "pair": [_text(rng), rng.randint(0, 9)],
        "tags": sorted({_text(rng) for _ in range(rng.randint(0, 3))}),
        "weights": {_text(rng): rng.random() for _ in range(rng.randint(0, 3))},
        "part": {"label": _text(rng)},
        "parts": [{"label": _text(rng), "weight": rng.random()} for _ in range(rng.randint(0, 2))],
        "choice": rng.choice([rng.randint(0, 9), _text(rng), None]),
    }


def _text(rng: random.Random) -> str:
    alphabet = 'aZ09 _-"\\\n\t\u00e9\u4e2d\U0001f600\u202e\x1b\x00'
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))


def _hostile_text(rng: random.Random) -> str:
    pieces = [_text(rng), chr(rng.randint(0xD800, 0xDFFF)), "\ud800\udc00", "\udfff\ud800"]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))


def _hostile_name(rng: random.Random) -> str:
    return rng.choice(["store", "store", "stor\ud800e", "\x1b[31m", "", "x" * 300])


def _hostile_arguments(rng: random.Random) -> Any:
    choice = rng.randrange(8)
    if choice == 0:
        return None
    if choice == 1:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
    if choice == 2:
        return json.dumps({"text": _hostile_text(rng)}, ensure_ascii=False)
    if choice == 3:
        return {"text": _hostile_text(rng), _hostile_text(rng): float("nan")}
    if choice == 4:
        return {"escaped": rng.choice(["bytes", "text", "mapping"]), "data": _text(rng)}
    if choice == 5:
        nested: Any = {"leaf": rng.random()}
        for _ in range(rng.randint(60, 120)):
            nested = {"down": [nested]}
        return nested
    if choice == 6:
        return {"inf": float("inf"), "neg": float("-inf"), "big": 10**100}
    return _hostile_text(rng)


# Values JSON cannot keep


class _Chain(BaseModel):
    child: _Chain | None = None
    at: datetime | None = None
    text: str = ""
    ratio: float = 0.0
    amount: Decimal = Decimal(0)


def _unsavable(rng: random.Random) -> _Chain:
    choice = rng.randrange(6)
    if choice == 0:
        return _Chain(ratio=rng.choice([float("nan"), float("inf"), float("-inf")]))
    if choice == 1:
        return _Chain.model_construct(amount=Decimal(rng.choice(["NaN", "Infinity", "-sNaN"])))
    if choice == 2:
        return _Chain(text="ok" + chr(rng.randint(0xD800, 0xDFFF)))
    if choice == 3:
        zone = ZoneInfo(rng.choice(["Europe/Paris", "America/New_York", "Asia/Tokyo"]))
        return _Chain(at=datetime(2025, 6, 1, tzinfo=zone))
    if choice == 4:
        offset = timedelta(minutes=rng.randint(-600, 600), seconds=rng.randint(1, 59))
        return _Chain(at=datetime(2025, 6, 1, tzinfo=timezone(offset)))
    chain = _Chain()
    for _ in range(rng.randint(197, 400)):
        chain = _Chain(child=chain)
    return chain


def _refuse_an_unsavable_value(rng: random.Random, report: FamilyReport) -> None:
    session = Session()
    value = _unsavable(rng)
    session.dispatch(value)
    try:
        session.snapshot().to_json()
    except SnapshotError:
        return
    except Exception as error:  # the defect this family counts
        report.note("uncaught", f"to_json raised {type(error).__name__}: {error}")
        return
    report.note("state_leaks", f"a value JSON cannot keep was written: {value!r:.120}")


# Corrupted documents


def _corrupted(rng: random.Random, text: str) -> str | bytes:
    choice = rng.randrange(7)
    if choice == 0:
        return text[: rng.randint(0, len(text))]
    if choice == 1:
        data = bytearray(text.encode())
        if data:
            data[rng.randrange(len(data))] = rng.getrandbits(8)
        return bytes(data)
    if choice == 2:
        return text.replace('"slices":[', f'"slices":{rng.choice(["5", "null", "{}", "[5]"])},[', 1)
    if choice == 3:
        depth = rng.randint(150, 100_000)
        return '{"version":1,"slices":' + "[" * depth + "]" * depth + "}"
    if choice == 4:
        return text.replace('"items":[', '"items":[' + "9" * rng.randint(4000, 6000) + ",", 1)
    if choice == 5:
        return rng.choice(["null", "5", '"x"', "[]", '{"version":1}', "", "\ud800"])
    return text.replace('"data":"', '"data":"!', 1)


def _load_a_corrupted_document(rng: random.Random, text: str, report: FamilyReport) -> None:
    corrupted = _corrupted(rng, text)
    try:
        Snapshot.from_json(corrupted, types=[Record, ToolInvoked])
    except SnapshotError:
        return
    except Exception as error:  # the defect this family counts
        report.note("uncaught", f"from_json raised {type(error).__name__}: {error!s:.200}")
