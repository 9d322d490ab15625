"""Snapshot JSON: every recorded call saves and loads; what cannot come back exactly is refused."""

from __future__ import annotations

import base64
import enum
import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Any, Literal, NamedTuple
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    RootModel,
    computed_field,
    field_serializer,
)
from typing_extensions import TypedDict

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.adapters.events import PromptExecuted, PromptRendered
from wink.runtime import (
    Session,
    Snapshot,
    SnapshotError,
    TokenUsage,
    ToolCall,
    ToolExecutor,
    ToolInvoked,
)

HERE = __name__
MOMENT = datetime(2025, 1, 1, tzinfo=UTC)


def invoked(arguments: Any, *, name: str = "search", call_id: str | None = "c1") -> ToolInvoked:
    result = ToolResult[Any].error("refused")
    return ToolInvoked("p", name, call_id, None, arguments, result, "refused", MOMENT, MOMENT)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def round_trip(*events: object) -> Snapshot:
    """The session of ``events`` saved and loaded; loading and saving again gives the same text."""
    session = Session()
    for event in events:
        session.dispatch(event)
    text = session.snapshot().to_json()
    loaded = Snapshot.from_json(text)
    assert loaded.to_json() == text
    return loaded


def saved_items(*events: object) -> list[Any]:
    session = Session()
    for event in events:
        session.dispatch(event)
    items: list[Any] = json.loads(session.snapshot().to_json())["slices"][0]["items"]
    return items


def refusal(*events: object) -> str:
    session = Session()
    for event in events:
        session.dispatch(event)
    with pytest.raises(SnapshotError) as raised:
        session.snapshot().to_json()
    return str(raised.value)


# Recorded calls: raw arguments, names and ids as received


@dataclass(frozen=True)
class Query:
    query: str


def search(params: Query, *, context: ToolContext) -> ToolResult[Query]:
    return ToolResult.ok(params)


SEARCH = Tool[Query, Query](name="search", description="Search.", handler=search)


def executed(*calls: ToolCall) -> Session:
    template = PromptTemplate(
        ns="tests",
        key="snapshots",
        name="snapshots",
        sections=[MarkdownSection(title="Tools", template="Use them.", tools=[SEARCH])],
    )
    session = Session()
    executor = ToolExecutor(prompt=Prompt(template), session=session)
    for call in calls:
        executor.execute(call)
    return session


def test_rejected_calls_with_hostile_raw_arguments_save_and_load_with_the_good_ones() -> None:
    session = executed(
        ToolCall("search", '{"query": "\ud800"}', "c1"),
        ToolCall("search", b'{"query": "\xff\xfe"}', "c2"),
        ToolCall("search", '{"query": "tea"}', "c3"),
    )
    text = session.snapshot().to_json()
    loaded = Snapshot.from_json(text)
    events = loaded.log[ToolInvoked]
    assert [(e.arguments, e.success) for e in events] == [
        ('{"query": "\ud800"}', False),
        (b'{"query": "\xff\xfe"}', False),
        ('{"query": "tea"}', True),
    ]
    assert type(events[1].arguments) is bytes
    assert [e.result.message for e in events[:2]] == [
        "Invalid arguments for tool 'search':\nquery: string holds a lone UTF-16 surrogate "
        "(\\ud800-\\udfff without its pair), which is not Unicode text",
        "Invalid arguments for tool 'search':\nquery: string is not valid UTF-8 text",
    ]
    assert loaded.to_json() == text


@pytest.mark.parametrize(
    ("arguments", "written"),
    [
        ('{"q": "\ud800"}', {"escaped": "text", "data": "eyJxIjogIu2ggCJ9"}),
        (b"\xff\xfe", {"escaped": "bytes", "data": "//4="}),
        (b"{}", {"escaped": "bytes", "data": "e30="}),
        ({"x": float("nan")}, {"escaped": "mapping", "data": b64(b'{"x": NaN}')}),
        ({"k\udc80": 1}, {"escaped": "mapping", "data": b64(b'{"k\xed\xb2\x80": 1}')}),
        (
            {"\ud800\udc00": 1},
            {"escaped": "mapping", "data": b64(b'{"\xed\xa0\x80\xed\xb0\x80": 1}')},
        ),
        (
            {"escaped": "bytes", "data": "x"},
            {"escaped": "mapping", "data": b64(b'{"escaped": "bytes", "data": "x"}')},
        ),
        ('{"q": "tea"}', '{"q": "tea"}'),
        ({"q": ["tea", 1, 2.5, None, True]}, {"q": ["tea", 1, 2.5, None, True]}),
        (None, None),
    ],
)
def test_raw_arguments_are_written_as_themselves_or_escaped_and_read_back_exactly(
    arguments: Any, written: Any
) -> None:
    assert saved_items(invoked(arguments))[0]["arguments"] == written
    loaded = round_trip(invoked(arguments)).log[ToolInvoked][0].arguments
    assert type(loaded) is type(arguments)
    assert repr(loaded) == repr(arguments)  # repr: NaN is not equal to itself


def test_a_tool_name_and_call_id_with_lone_surrogates_save_and_load() -> None:
    item = saved_items(invoked("{}", name="se\ud800", call_id="\udfff"))[0]
    assert item["name"] == {"escaped": "text", "data": b64(b"se\xed\xa0\x80")}
    event = round_trip(invoked("{}", name="se\ud800", call_id="\udfff")).log[ToolInvoked][0]
    assert (event.name, event.call_id) == ("se\ud800", "\udfff")


def test_a_mapping_argument_that_json_cannot_keep_exactly_is_refused_naming_the_call() -> None:
    assert refusal(invoked("{}"), invoked({"pair": (1, 2)})) == (
        "slice wink.runtime.events:ToolInvoked cannot be written as JSON: [1]: the mapping "
        "cannot be kept as JSON: it holds a tuple, a non-string key or another value JSON "
        "would change"
    )


def test_an_evaluation_whose_model_text_holds_a_lone_surrogate_saves_and_loads() -> None:
    executed = PromptExecuted("p", "openai", "hi \ud800", None, 1, 0, TokenUsage(), MOMENT, MOMENT)
    rendered = PromptRendered("p", "openai", "Say \udfff", ("search",), MOMENT)
    loaded = round_trip(executed, rendered)
    # Evaluation events are LOG slices in every session.
    assert loaded.log[PromptExecuted][0].text == "hi \ud800"
    assert loaded.log[PromptRendered][0].text == "Say \udfff"


def test_an_escaped_form_that_is_not_base64_is_refused_on_load_with_its_path() -> None:
    session = Session()
    session.dispatch(invoked(b"x"))
    text = session.snapshot().to_json().replace('"data":"eA=="', '"data":"!!"')
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(text)
    assert str(raised.value) == (
        "slices[0] (wink.runtime.events:ToolInvoked): items do not match the type: "
        "invalid list[wink.runtime.events.ToolInvoked]:\n[0].arguments: data: not valid base64 "
        'for escaped bytes (got {"escaped":"bytes","data":"!!"})'
    )


# Values that would save but not load back as they are are refused, naming slice and path


class Measure(BaseModel):
    x: float = 0.0


class Money(BaseModel):
    amount: Decimal = Decimal(0)


class Label(BaseModel):
    text: str = ""


class Node(BaseModel):
    child: Node | None = None


class Computed(BaseModel):
    a: int

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented usage
    @property
    def double(self) -> int:
        return 2 * self.a


class Serialized(BaseModel):
    a: int

    @field_serializer("a")
    def as_text(self, value: int) -> str:
        return str(value)


class SplitAlias(BaseModel):
    a: int = Field(validation_alias="in_a", serialization_alias="out_a")


class Excluded(BaseModel):
    a: int = 1
    secret: str = Field("default", exclude=True)


class Count(BaseModel):
    n: int = 0


class Stamp(BaseModel):
    at: datetime


class Clock(BaseModel):
    at: time


class Weights(BaseModel):
    by_name: dict[str, int]


class Blob(BaseModel):
    data: bytes = b""


class Base64Blob(BaseModel):
    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")
    data: bytes = b""


def chain(depth: int) -> Node:
    node = Node()
    for _ in range(depth - 1):
        node = Node(child=node)
    return node


def huge_int() -> int:
    return int(Decimal("9" * 5000))


def test_a_chain_196_levels_deep_saves_and_loads() -> None:
    assert round_trip(chain(196)).state[Node][0] == chain(196)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            Measure(x=float("nan")),
            "[0].x: nan cannot be written as JSON (it has no NaN or Infinity)",
        ),
        (
            Measure(x=float("-inf")),
            "[0].x: -inf cannot be written as JSON (it has no NaN or Infinity)",
        ),
        (
            Money.model_construct(amount=Decimal("NaN")),
            "[0].amount: NaN cannot be written as JSON (it has no NaN or Infinity)",
        ),
        (
            Label(text="ab\ud800"),
            "[0].text: a string holding a lone surrogate ('\\ud800' at index 2) cannot be "
            "written as JSON",
        ),
        (
            Weights(by_name={"k\udc80": 1}),
            '[0].by_name["k\\\\udc80"]: a key holding a lone surrogate cannot be written as JSON',
        ),
        (
            chain(197),
            "[0].child.child.child.child.child.child.child... (197 levels deep): it nests "
            "more than 196 objects and arrays deep",
        ),
        (
            chain(5000),
            "[0].child.child.child.child.child.child.child... (197 levels deep): it nests "
            "more than 196 objects and arrays deep",
        ),
        (
            Computed(a=1),
            "it would not be read back: [0].double: unknown field (allowed: a)",
        ),
        (
            Serialized(a=1),
            'it would not be read back: [0].a: input should be a valid integer (got "1")',
        ),
        (
            SplitAlias(in_a=1),
            "it would not be read back: [0].in_a: required field is missing; "
            "[0].out_a: unknown field (allowed: in_a)",
        ),
        (Excluded(secret="s"), '[0].secret: it would be read back as "default", not "s"'),
        (
            Blob(data=b"ok\xff"),
            "[0].data: bytes that are not UTF-8 (at byte 2) cannot be written as a JSON string; "
            "a model with ser_json_bytes and val_json_bytes set to 'base64' keeps any",
        ),
        (
            Count(n=huge_int()),
            "[0].n: an integer of more than 4300 digits cannot be read back from JSON",
        ),
    ],
)
def test_to_json_refuses_what_would_not_load_back_naming_slice_and_path(
    value: BaseModel, message: str
) -> None:
    assert refusal(value) == (
        f"slice {HERE}:{type(value).__qualname__} cannot be written as JSON: {message}"
    )


def test_bytes_of_a_base64_model_save_and_load_whatever_they_hold() -> None:
    assert round_trip(Base64Blob(data=b"\xff\x00")).state[Base64Blob][0].data == b"\xff\x00"


def test_an_excluded_field_holding_its_default_saves_and_loads() -> None:
    assert round_trip(Excluded(a=2)).state[Excluded][0] == Excluded(a=2)


# Time zones


@pytest.mark.parametrize(
    "zone",
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-9, minutes=-30))],
    ids=["utc", "plus-05:30", "minus-09:30"],
)
def test_fixed_utc_offsets_round_trip_to_the_same_instant_and_offset(zone: timezone) -> None:
    saved = Stamp(at=datetime(2025, 3, 1, 12, 30, 15, 250, tzinfo=zone))
    loaded = round_trip(saved).state[Stamp][0].at
    assert (loaded, loaded.utcoffset()) == (saved.at, saved.at.utcoffset())


def test_a_naive_datetime_stays_naive() -> None:
    assert round_trip(Stamp(at=datetime(2025, 1, 1))).state[Stamp][0].at.tzinfo is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            Stamp(at=datetime(2025, 1, 1, tzinfo=timezone(timedelta(seconds=30)))),
            "[0].at: the UTC offset +00:00:30 has seconds, which a JSON date-time (RFC 3339) "
            "cannot carry; it would be read back as another instant",
        ),
        (
            Clock(at=time(9, tzinfo=timezone(-timedelta(hours=1, seconds=5)))),
            "[0].at: the UTC offset -01:00:05 has seconds, which a JSON date-time (RFC 3339) "
            "cannot carry; it would be read back as another instant",
        ),
        (
            Stamp(at=datetime(2025, 1, 1, tzinfo=ZoneInfo("Europe/Paris"))),
            "[0].at: the time zone 'Europe/Paris' would be saved as its offset at that moment "
            "(+01:00) and read back without its name; save UTC or a fixed offset, and the "
            "zone name in a field of its own",
        ),
        (
            Clock(at=time(9, tzinfo=ZoneInfo("Europe/Paris"))),
            "[0].at: the time zone 'Europe/Paris' gives this value no UTC offset, so it would "
            "be read back without a zone",
        ),
        (
            Stamp(at=datetime(2025, 1, 1, tzinfo=timezone(timedelta(hours=1), "CET"))),
            "[0].at: the fixed offset named 'CET' would be read back as +01:00 without its name",
        ),
    ],
)
def test_time_zones_that_json_cannot_keep_are_refused(value: BaseModel, message: str) -> None:
    assert refusal(value) == (
        f"slice {HERE}:{type(value).__qualname__} cannot be written as JSON: {message}"
    )


# from_json on malformed input: always SnapshotError, with where


def slice_text(items: str, type_name: str = f"{HERE}:Count") -> str:
    return f'{{"version":1,"slices":[{{"type":"{type_name}","kind":"state","items":{items}}}]}}'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"version":1,"slices":5}', "slices: expected a list, got a number"),
        ('{"version":1,"slices":null}', "slices: expected a list, got null"),
        ('{"version":1}', "slices: missing (expected a list of slices)"),
        ("null", "snapshot: expected an object with version and slices, got null"),
        ("[]", "snapshot: expected an object with version and slices, got a list"),
        ('{"version":"1","slices":[]}', "snapshot version must be 1, got '1'"),
        (
            '{"version":1,"slices":[],"extra":1}',
            "snapshot: unknown key 'extra' (expected version and slices)",
        ),
        (
            '{"version":1,"slices":[7]}',
            "slices[0]: expected an object with type, kind and items, got a number",
        ),
        (
            '{"version":1,"slices":[{"type":"x","kind":"state"}]}',
            "slices[0]: expected an object with type, kind and items, got ['kind', 'type']",
        ),
        (slice_text("{}"), "slices[0].items: expected a list, got an object"),
        (
            '{"version":1,"slices":[{"type":5,"kind":"state","items":[]}]}',
            "slices[0].type: expected a string, got a number",
        ),
        (
            '{"version":1,"slices":[{"type":"x","kind":"both","items":[]}]}',
            "slices[0].kind: must be 'state' or 'log', got 'both'",
        ),
        (
            slice_text("[" + "[" * 300 + "]" * 300 + "]"),
            "snapshot is not valid JSON: nested more than 200 objects and arrays deep at "
            "slices[0].items[0][0][0][0][0]... (201 levels deep) (line 1 column 280)",
        ),
        (
            slice_text('[{"n":' + "9" * 5000 + "}]"),
            "snapshot is not valid JSON: a number too large to read (integers have at most "
            "4300 digits) at slices[0].items[0].n (line 1 column 4389)",
        ),
        (
            slice_text('[{"n":"\\ud800"}]'),
            "snapshot is not valid JSON: an invalid or unpaired \\u escape (JSON text is "
            "Unicode) at slices[0].items[0].n (line 1 column 95)",
        ),
        (
            '{"version":1,"slices":['
            + slice_text("[]")[23:-2]
            + ","
            + slice_text("[]")[23:-2]
            + "]}",
            f"slices[1]: slice type {HERE}:Count appears twice (also slices[0])",
        ),
        (
            slice_text("[]", "no_such_module_here:Thing"),
            "slices[0]: cannot find slice type no_such_module_here:Thing; pass it in types=[...]",
        ),
    ],
)
def test_from_json_on_malformed_input_raises_snapshot_error_saying_where(
    text: str, message: str
) -> None:
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(text)
    assert str(raised.value) == message


def test_from_json_refuses_text_holding_a_lone_surrogate_saying_where() -> None:
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json('{"version":1,"slices":[{"type":"a\ud800"}]}')
    assert str(raised.value) == (
        "snapshot is not valid JSON: a lone surrogate ('\\ud800') at slices[0].type (character 33)"
    )


def test_a_type_held_as_both_state_and_log_is_refused_by_to_json() -> None:
    holder = Snapshot(state={Count: (Count(n=1),)}, log={Count: (Count(n=2),)})
    with pytest.raises(SnapshotError) as raised:
        holder.to_json()
    assert str(raised.value) == (
        f"slice {HERE}:Count cannot be written as JSON: it is both a state and a log slice"
    )


def test_two_slice_types_with_one_name_are_refused_by_to_json() -> None:
    def make() -> type[Any]:
        @dataclass(frozen=True)
        class Twin:
            n: int

        return Twin

    first, second = make(), make()
    holder = Snapshot(state={first: (first(1),), second: (second(2),)})
    with pytest.raises(SnapshotError) as raised:
        holder.to_json()
    assert str(raised.value) == (
        f"slice {HERE}:test_two_slice_types_with_one_name_are_refused_by_to_json.<locals>."
        "make.<locals>.Twin cannot be written as JSON: another slice type has the same module "
        "and name"
    )


def test_from_json_types_must_be_classes() -> None:
    with pytest.raises(TypeError) as raised:
        Snapshot.from_json('{"version":1,"slices":[]}', types=["Note"])  # type: ignore[list-item]  # the mistake under test
    assert str(raised.value) == "from_json(types=...) takes classes, got 'Note'"


def test_from_json_refuses_bytes_that_are_not_utf8_saying_where() -> None:
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(b'{"version":1,"slices":[{"type":"\xff"}]}')
    assert (
        str(raised.value) == "snapshot is not valid JSON: not UTF-8 at byte 32, in slices[0].type"
    )


def test_from_json_refuses_what_is_not_text() -> None:
    with pytest.raises(SnapshotError) as raised:
        Snapshot.from_json(5)  # type: ignore[arg-type]  # the mistake under test
    assert str(raised.value) == "from_json takes the JSON text (str or bytes), got int"


# Every value kind the contract layer accepts round-trips


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass(frozen=True)
class Point:
    x: float
    y: float


class Leaf(BaseModel):
    name: str
    weight: int | None = None


class Branch(BaseModel):
    leaves: list[Leaf] = []
    children: list[Branch] = []


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool = True


class Span(TypedDict):
    start: int
    label: str


class Corner(NamedTuple):
    x: int
    y: str


class Labels(RootModel[list[str]]):
    pass


@dataclass(frozen=True)
class Everything:
    text: str
    number: int
    ratio: float
    flag: bool
    nothing: None
    amount: Decimal
    moment: datetime
    day: date
    clock: time
    span: timedelta
    ident: uuid.UUID
    colour: Colour
    level: Level
    mode: Literal["a", "b", 3]
    raw: bytes
    items: list[int]
    pair: tuple[str, int]
    many: tuple[float, ...]
    tags: set[str]
    frozen: frozenset[int]
    weights: dict[str, float]
    point: Point
    maybe: Point | None
    choice: int | str
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]
    tree: Branch
    span_dict: Span
    corner: Corner
    labels: Labels
    link: HttpUrl
    pattern: re.Pattern[str]
    extra: dict[str, Any] = field(default_factory=dict)


TEXT = st.text(max_size=8)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
ZONES = st.none() | st.builds(
    lambda minutes: timezone(timedelta(minutes=minutes)), st.integers(-23 * 60 - 59, 23 * 60 + 59)
)
JSON_DATA = st.recursive(
    st.none() | st.booleans() | st.integers() | FLOATS | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
BRANCHES = st.recursive(
    st.builds(Branch, leaves=st.lists(st.builds(Leaf, name=TEXT), max_size=2)),
    lambda inner: st.builds(Branch, children=st.lists(inner, max_size=2)),
    max_leaves=5,
)
EVERYTHING = st.builds(
    Everything,
    text=TEXT,
    number=st.integers(),
    ratio=FLOATS,
    flag=st.booleans(),
    nothing=st.none(),
    amount=st.decimals(allow_nan=False, allow_infinity=False),
    moment=st.datetimes(timezones=ZONES),
    day=st.dates(),
    clock=st.times(),
    span=st.timedeltas(),
    ident=st.uuids(),
    colour=st.sampled_from(Colour),
    level=st.sampled_from(Level),
    mode=st.sampled_from(["a", "b", 3]),
    raw=TEXT.map(str.encode),
    items=st.lists(st.integers(), max_size=3),
    pair=st.tuples(TEXT, st.integers()),
    many=st.lists(FLOATS, max_size=3).map(tuple),
    tags=st.sets(TEXT, max_size=3),
    frozen=st.frozensets(st.integers(), max_size=3),
    weights=st.dictionaries(TEXT, FLOATS, max_size=3),
    point=st.builds(Point, FLOATS, FLOATS),
    maybe=st.none() | st.builds(Point, FLOATS, FLOATS),
    choice=st.integers() | TEXT,
    pet=st.builds(Cat, lives=st.integers(0, 9)) | st.builds(Dog, good=st.booleans()),
    tree=BRANCHES,
    span_dict=st.fixed_dictionaries({"start": st.integers(), "label": TEXT}),
    corner=st.builds(Corner, st.integers(), TEXT),
    labels=st.lists(TEXT, max_size=3).map(Labels),
    link=st.sampled_from(["https://example.com/a?b=1", "http://x.org/"]).map(HttpUrl),
    pattern=st.sampled_from(["a+", "^[0-9]{2}$", ""]).map(re.compile),
    extra=st.dictionaries(TEXT, JSON_DATA, max_size=3),
)
HOSTILE_TEXT = st.lists(st.characters() | st.characters(categories=["Cs"]), max_size=8).map("".join)
RAW_ARGUMENTS = (
    st.none()
    | HOSTILE_TEXT
    | st.binary(max_size=12)
    | st.dictionaries(HOSTILE_TEXT, JSON_DATA | FLOATS | HOSTILE_TEXT, max_size=3)
)


@given(EVERYTHING, RAW_ARGUMENTS, HOSTILE_TEXT)
def test_every_value_kind_the_contract_accepts_saves_and_loads_exactly(
    value: Everything, arguments: Any, name: str
) -> None:
    session = Session()
    session.dispatch(value)
    session.dispatch(invoked(arguments, name=name or "t"))
    loaded = Snapshot.from_json(session.snapshot().to_json())
    assert loaded.state[Everything][0] == value
    event = loaded.log[ToolInvoked][0]
    assert type(event.arguments) is type(arguments)
    assert repr(event.arguments) == repr(arguments)
    assert event.name == (name or "t")
