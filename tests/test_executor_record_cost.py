"""What a call costs to record: ``ToolInvoked`` and the returned result are built
through their slots (the public behaviour of a frozen record unchanged), and a plain
call leaves the garbage collector four objects to scan, whatever the session holds."""

from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.runtime import Session, ToolCall, ToolExecutor, ToolInvoked

START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
END = START + timedelta(seconds=2)


@dataclass(frozen=True)
class Lookup:
    entity_id: str


@dataclass(frozen=True)
class Entity:
    entity_id: str
    url: str


def lookup(params: Lookup, *, context: ToolContext) -> ToolResult[Entity]:
    return ToolResult(message=f"found {params.entity_id}", value=Entity(params.entity_id, "u"))


def lookup_executor(session: Session) -> ToolExecutor:
    tool = Tool[Lookup, Entity](name="lookup", description="d", handler=lookup)
    template = PromptTemplate(
        ns="tests", key="record-cost", sections=[MarkdownSection(title="T", tools=[tool])]
    )
    return ToolExecutor(prompt=Prompt(template), session=session)


def one_of_each_field() -> dict[str, Any]:
    """A distinct value for every field of ``ToolInvoked``, by name."""
    return {
        "prompt_name": "p",
        "name": "n",
        "call_id": "c",
        "params": Lookup("e"),
        "arguments": '{"entity_id": "e"}',
        "result": ToolResult(message="m", value=Entity("e", "u")),
        "rendered_output": '{"entity_id":"e","url":"u"}',
        "started_at": START,
        "finished_at": END,
        "denied": True,
        "rolled_back": True,
        "earlier_attempts": ("attempt 1 failed",),
    }


def field_values(event: ToolInvoked) -> dict[str, Any]:
    return {field.name: getattr(event, field.name) for field in dataclasses.fields(event)}


def test_tool_invoked_constructor_sets_every_field_by_position_and_by_keyword() -> None:
    values = one_of_each_field()
    assert list(values) == [field.name for field in dataclasses.fields(ToolInvoked)]
    by_keyword = ToolInvoked(**values)
    by_position = ToolInvoked(*values.values())
    assert field_values(by_keyword) == values
    assert field_values(by_position) == values
    for name, value in values.items():
        assert getattr(by_keyword, name) is value


def test_tool_invoked_is_neither_denied_nor_rolled_back_unless_told() -> None:
    values = one_of_each_field()
    del values["denied"], values["rolled_back"]
    event = ToolInvoked(**values)
    assert (event.denied, event.rolled_back) == (False, False)


def test_tool_invoked_refuses_assignment_and_deletion_of_any_field() -> None:
    event = ToolInvoked(**one_of_each_field())
    for field in dataclasses.fields(ToolInvoked):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(event, field.name, None)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(event, field.name)
    assert field_values(event) == one_of_each_field()


def test_tool_invoked_compares_hashes_copies_replaces_and_pickles_by_its_fields() -> None:
    event = ToolInvoked(**one_of_each_field())
    same = ToolInvoked(**one_of_each_field())
    assert event == same and hash(event) == hash(same)
    assert event != dataclasses.replace(event, call_id="other")
    assert dataclasses.replace(event, call_id="other").call_id == "other"
    assert copy.copy(event) == event and copy.deepcopy(event) == event
    assert pickle.loads(pickle.dumps(event)) == event
    assert hash(dataclasses.replace(event)) == hash(event)


def test_tool_invoked_repr_names_every_field_in_order() -> None:
    values = one_of_each_field()
    values["params"] = None
    values["result"] = ToolResult(message="m")
    assert repr(ToolInvoked(**values)) == (
        "ToolInvoked(prompt_name='p', name='n', call_id='c', params=None, "
        """arguments='{"entity_id": "e"}', result=ToolResult(message='m', value=None, """
        "success=True, exclude_value_from_context=False), "
        """rendered_output='{"entity_id":"e","url":"u"}', """
        "started_at=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc), "
        "finished_at=datetime.datetime(2026, 1, 2, 3, 4, 7, tzinfo=datetime.timezone.utc), "
        "denied=True, rolled_back=True, earlier_attempts=('attempt 1 failed',))"
    )


def test_a_rendered_copy_holds_the_same_field_values_and_carries_the_text() -> None:
    original = ToolResult(message="m", value=Entity("e", "u"), exclude_value_from_context=True)
    rendered = original.rendered_as("the text")
    assert rendered is not original and type(rendered) is ToolResult
    assert rendered == original
    assert dataclasses.astuple(rendered) == ("m", ("e", "u"), True, True)
    assert rendered.value is original.value
    assert rendered.render() == "the text"
    assert original.render() == '{"entity_id":"e","url":"u"}'  # its own value, unchanged


def test_a_rendered_copy_does_not_run_the_constructor_checks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = ToolResult(message="m", value=Entity("e", "u"))
    checked: list[ToolResult[Any]] = []
    monkeypatch.setattr(ToolResult, "__post_init__", checked.append)
    rendered = original.rendered_as("text")
    assert checked == []
    assert rendered == original and rendered.render() == "text"


@dataclass(frozen=True)
class Tagged(ToolResult[Entity]):
    tag: str = "t"


def test_a_rendered_copy_of_a_subclass_keeps_its_class_and_its_own_fields() -> None:
    original = Tagged(message="m", value=Entity("e", "u"), tag="mine")
    rendered = original.rendered_as("text")
    assert type(rendered) is Tagged and rendered is not original
    assert dataclasses.astuple(rendered) == ("m", ("e", "u"), True, False, "mine")
    assert rendered.render() == "text"


def test_a_rendered_copy_refuses_assignment() -> None:
    rendered = ToolResult(message="m").rendered_as("text")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rendered.message = "changed"  # type: ignore[misc]  # frozen, as the test shows


def tracked_objects_held(roots: list[object]) -> set[int]:
    """The ids of the GC-tracked objects reachable from ``roots`` (classes left out:
    they are shared by every call)."""
    found: set[int] = set()
    pending = list(roots)
    while pending:
        item = pending.pop()
        if isinstance(item, type) or id(item) in found:
            continue
        if gc.is_tracked(item):
            found.add(id(item))
        pending.extend(gc.get_referents(item))
    return found


@pytest.mark.usefixtures("executor_path")
def test_a_plain_call_adds_four_tracked_objects_record_result_params_and_value() -> None:
    session = Session()
    run = lookup_executor(session)
    calls = 40
    for index in range(calls):
        result = run.execute(ToolCall("lookup", f'{{"entity_id": "e{index}"}}', f"c{index}"))
        assert result.success and result.render() == f'{{"entity_id":"e{index}","url":"u"}}'
    gc.collect()
    events = list(session[ToolInvoked].values())
    assert len(events) == calls
    held = tracked_objects_held(list(events))
    assert len(held) == 4 * calls
    for event in events:
        assert {id(event), id(event.result), id(event.params), id(event.result.value)} <= held
        # Everything else a record holds is untracked: the collector never looks inside.
        leaves = (event.call_id, event.arguments, event.rendered_output, event.started_at)
        assert [gc.is_tracked(leaf) for leaf in leaves] == [False] * 4
    # The values joined their slice: the same objects, nothing added.
    assert tracked_objects_held(list(session[Entity].values())) <= held
