"""Handler bugs reach the developer: a WARNING with the traceback, or an exception in tests."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import pytest

from wink import (
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    Session,
    Tool,
    ToolCall,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolResult,
)

LOGGER = "wink.runtime.executor"


@dataclass(frozen=True)
class Params:
    mode: str


@dataclass(frozen=True)
class Written:
    text: str


def write_then(params: Params, *, context: ToolContext) -> ToolResult[Written]:
    context.require_filesystem().write("notes.md", "changed")
    if context.session is not None:
        context.session.dispatch(Written("changed"))
    if params.mode == "raise":
        raise KeyError("missing-key")
    if params.mode == "dict":
        returned: Any = {"text": "not a result"}
        return returned  # type: ignore[no-any-return]  # the bug under test
    if params.mode == "error":
        return ToolResult.error("No such note.")
    return ToolResult.ok(Written("ok"))


TOOL = Tool[Params, Written](name="write", description="Write a note.", handler=write_then)


def make_executor(**options: Any) -> tuple[ToolExecutor, Session, InMemoryFilesystem]:
    template = PromptTemplate(
        ns="tests", key="bugs", sections=[MarkdownSection(title="Notes", tools=[TOOL])]
    )
    filesystem = InMemoryFilesystem(files={"notes.md": "original"})
    session = Session()
    prompt = Prompt(template).bind(resources={InMemoryFilesystem: filesystem})
    return ToolExecutor(prompt=prompt, session=session, **options), session, filesystem


def test_a_raising_handler_is_logged_at_warning_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    executor, _, _ = make_executor()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = executor.execute(ToolCall("write", '{"mode": "raise"}'))
    assert result.message == "Tool 'write' raised KeyError: 'missing-key'"
    [record] = caplog.records
    assert (record.name, record.levelno, record.getMessage()) == (
        LOGGER,
        logging.WARNING,
        "tool 'write' raised",
    )
    assert record.exc_info is not None and record.exc_info[0] is KeyError
    assert 'raise KeyError("missing-key")' in caplog.text  # the traceback names the line


def test_a_handler_returning_no_tool_result_is_logged_at_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    executor, _, _ = make_executor()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = executor.execute(ToolCall("write", '{"mode": "dict"}'))
    assert result.message == "Tool 'write' returned dict, not a ToolResult."
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        (LOGGER, logging.WARNING, "Tool 'write' returned dict, not a ToolResult.")
    ]


def test_raise_handler_errors_reraises_after_rollback_and_recording() -> None:
    executor, session, filesystem = make_executor(raise_handler_errors=True)
    with pytest.raises(KeyError) as raised:
        executor.execute(ToolCall("write", '{"mode": "raise"}', call_id="c1"))
    assert raised.value.args == ("missing-key",)
    assert filesystem.read("notes.md") == "original"
    assert session[Written].all() == ()
    [event] = session[ToolInvoked].all()
    assert (event.call_id, event.success, event.result.message) == (
        "c1",
        False,
        "Tool 'write' raised KeyError: 'missing-key'",
    )


def test_raise_handler_errors_turns_a_wrong_return_into_a_type_error() -> None:
    executor, session, filesystem = make_executor(raise_handler_errors=True)
    with pytest.raises(TypeError) as raised:
        executor.execute(ToolCall("write", '{"mode": "dict"}'))
    assert str(raised.value) == "Tool 'write' returned dict, not a ToolResult."
    assert filesystem.read("notes.md") == "original"
    assert session[Written].all() == ()
    assert [(e.success, e.result.message) for e in session[ToolInvoked].all()] == [
        (False, "Tool 'write' returned dict, not a ToolResult.")
    ]


def test_raise_handler_errors_leaves_successes_and_model_errors_alone() -> None:
    executor, session, filesystem = make_executor(raise_handler_errors=True)
    assert executor.execute(ToolCall("write", '{"mode": "ok"}')).value == Written("ok")
    invalid = executor.execute(ToolCall("write", '{"mode": 3}'))
    assert invalid.message == (
        "Invalid arguments for tool 'write':\nmode: input should be a valid string (got 3)"
    )
    refused = executor.execute(ToolCall("write", '{"mode": "error"}'))
    assert (refused.success, refused.message) == (False, "No such note.")
    assert [e.success for e in session[ToolInvoked].all()] == [True, False, False]
    assert filesystem.read("notes.md") == "changed"


def test_by_default_a_raising_handler_does_not_propagate() -> None:
    executor, session, filesystem = make_executor()
    result = executor.execute(ToolCall("write", '{"mode": "raise"}'))
    assert (result.success, filesystem.read("notes.md")) == (False, "original")
    assert len(session[ToolInvoked]) == 1


# Every test above runs on both of the executor's paths (see ``executor_path``).
pytestmark = pytest.mark.usefixtures("executor_path")
