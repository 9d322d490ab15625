"""examples/triage_agent.py: four tools written as plain functions, evaluated end to end."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from wink import InMemoryFilesystem, Prompt, Session, ToolInvoked
from wink.testing import ScriptedAdapter, call

EXAMPLE = Path(__file__).parent.parent / "examples" / "triage_agent.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("triage_agent_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def model() -> ScriptedAdapter:
    """What a model answers for a checkout crash: one reply per request."""
    on_call = "notes/on-call.md"
    return ScriptedAdapter(
        [
            call("search", {"query": "checkout crashes"}),
            call(
                "create_ticket",
                {"title": "checkout crash", "body": "Paying fails.", "priority": "p0"},
            ),
            call("write_note", {"path": on_call, "text": "checkout crash: p0"}),  # not read yet
            call("read_note", {"path": on_call}),
            call("write_note", {"path": on_call, "text": "Page Ana.\ncheckout crash: p0"}),
            {"ticket": "tickets/checkout-crash.md", "priority": "p0"},
        ]
    )


def files() -> InMemoryFilesystem:
    return InMemoryFilesystem(files={"notes/on-call.md": "Page Ana.", "tickets/login-loop.md": ""})


def test_the_agent_answers_a_triage_and_keeps_the_note_it_read(example: ModuleType) -> None:
    folder = files()
    answer = example.triage(model(), "Checkout crashes when paying.", folder)
    assert answer == example.Triage(ticket="tickets/checkout-crash.md", priority="p0")
    assert folder.read("notes/on-call.md") == "Page Ana.\ncheckout crash: p0"
    assert folder.read("tickets/checkout-crash.md") == "p0: Paying fails."


def test_each_call_reaches_its_function_and_the_unread_write_is_denied(
    example: ModuleType,
) -> None:
    session = Session()
    prompt = Prompt(example.template).bind(
        example.Report("Checkout crashes."), resources={InMemoryFilesystem: files()}
    )
    model().evaluate(prompt, session=session)
    events = session[ToolInvoked].all()
    assert [(e.name, e.success, e.denied, e.result.message) for e in events] == [
        ("search", True, False, "ok"),
        ("create_ticket", True, False, "Opened."),
        (
            "write_note",
            False,
            True,
            "File 'notes/on-call.md' already exists and has not been read: call read_note on "
            "it before overwriting it (policy 'read_before_write').",
        ),
        ("read_note", True, False, "ok"),
        ("write_note", True, False, "Wrote notes/on-call.md."),
    ]
    assert events[1].params == example.create_ticket.params_type(
        title="checkout crash", body="Paying fails.", priority="p0"
    )


def test_the_tools_are_described_from_their_docstrings(example: ModuleType) -> None:
    assert example.create_ticket.param_descriptions() == {
        "title": "What is wrong, in a few lowercase words.",
        "body": "What happened and how to see it again.",
        "priority": "p0 stops everyone, p1 stops someone, p2 can wait.",
    }
    assert [t.params_type.__name__ for t in example.section.tools] == [
        "SearchParams",
        "CreateTicketParams",
        "ReadNoteParams",
        "WriteNoteParams",
    ]


def test_the_example_is_at_most_seventy_lines_of_code() -> None:
    lines = EXAMPLE.read_text().splitlines()
    code = [line for line in lines if line.strip() and not line.strip().startswith("#")]
    assert len(code) == 69
