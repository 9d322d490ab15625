"""The asteval sandbox suite: values, output, symbols kept in the session, limits, refusals."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import pytest

from wink import Prompt, PromptTemplate, Session, Snapshot, ToolInvoked, ToolResult
from wink.contrib.asteval import AstevalSection, AstevalSymbols, Evaluation, KeptSymbol
from wink.runtime import ToolCall, ToolExecutor


@pytest.fixture(autouse=True)
def workers_end_with_their_sections() -> Iterator[None]:
    yield
    gc.collect()  # a section no longer referenced ends its worker processes


def executor_for(session: Session, section: AstevalSection | None = None) -> ToolExecutor:
    template = PromptTemplate(ns="tests", key="sandbox", sections=[section or AstevalSection()])
    return ToolExecutor(prompt=Prompt(template), session=session)


def run(executor: ToolExecutor, code: str) -> ToolResult[Any]:
    return executor.execute(ToolCall("evaluate_python", json.dumps({"code": code})))


PROGRAM = 'total = 0\nfor n in range(5):\n    total += n\nprint("sum", total)\ntotal * 2'


def test_a_program_returns_its_last_value_its_output_and_the_names_it_defined() -> None:
    result = run(executor_for(Session()), PROGRAM)
    assert (result.success, result.message) == (True, "Evaluated.")
    assert result.value == Evaluation(value="20", output="sum 10\n", defined=("n", "total"))
    assert result.render() == "sum 10\n=> 20\nDefined: n, total"


def test_symbols_are_kept_in_the_session_for_later_calls() -> None:
    session = Session()
    executor = executor_for(session)
    assert run(executor, "def double(x):\n    return 2 * x\nitems = [1, 2]").success
    result = run(executor, "items.append(double(21))\nitems")
    assert result.value == Evaluation(value="[1, 2, 42]", output="", defined=("items",))
    assert session[AstevalSymbols].all() == (
        AstevalSymbols(
            (
                KeptSymbol("double", "function", "def double(x):\n    return 2 * x"),
                KeptSymbol("items", "value", "[1, 2, 42]"),
            )
        ),
    )


def test_a_failed_call_rolls_back_every_symbol_change_and_reports_its_output() -> None:
    session = Session()
    executor = executor_for(session)
    run(executor, "items = [1]\ncount = 1")
    failed = run(executor, 'items.append(2)\ncount = 5\nprint("before")\n1 / 0')
    assert (failed.success, failed.message) == (
        False,
        "evaluate_python failed: ZeroDivisionError: division by zero (in: 1 / 0)\n"
        "Output before the failure:\nbefore",
    )
    assert run(executor, "(items, count)").value == Evaluation("([1], 1)", "", ())
    assert [event.success for event in session[ToolInvoked]] == [True, False, True]


def test_sessions_have_separate_symbols() -> None:
    first, second = Session(), Session()
    template = PromptTemplate(ns="tests", key="sandbox", sections=[AstevalSection()])
    run(ToolExecutor(prompt=Prompt(template), session=first), "secret = 1")
    result = run(ToolExecutor(prompt=Prompt(template), session=second), "secret")
    assert result.message == (
        "evaluate_python failed: NameError: name 'secret' is not defined (in: secret)"
    )


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("import os", "NotImplementedError: Import not supported (in: import os)"),
        (
            "from os import path",
            "NotImplementedError: ImportFrom not supported (in: from os import path)",
        ),
        (
            'open("/etc/passwd")',
            "NameError: name 'open' is not defined (in: open(\"/etc/passwd\"))",
        ),
        (
            "(1).__class__",
            "AttributeError: no safe attribute '__class__' for 1 (in: (1).__class__)",
        ),
        ("eval('1')", "NameError: name 'eval' is not defined (in: eval('1'))"),
        (
            '"a" * 10**6',
            'RuntimeError: String length exceeded, max string length is 262144 (in: "a" * 10**6)',
        ),
    ],
)
def test_what_the_sandbox_refuses_is_a_failure_naming_it(code: str, message: str) -> None:
    result = run(executor_for(Session()), code)
    assert (result.success, result.message) == (False, f"evaluate_python failed: {message}")


def test_range_over_the_limit_is_refused() -> None:
    result = run(executor_for(Session(), AstevalSection(max_range=100)), "sum(range(101))")
    assert result.success is False
    assert result.message.startswith(
        "evaluate_python failed: ValueError: Error running function 'range'"
    )
    assert "range of 101 items is over the sandbox's limit of 100" in result.message


def test_code_over_the_length_limit_is_refused_before_it_runs() -> None:
    result = run(executor_for(Session(), AstevalSection(max_code_chars=10)), "x = 1234567890")
    assert result.message == (
        "evaluate_python refused the code: it has 14 characters, more than the limit of 10; "
        "split it into smaller calls."
    )


def test_code_running_past_the_time_limit_is_stopped_and_rolled_back() -> None:
    section = AstevalSection(timeout_seconds=0.3)
    session = Session()
    executor = executor_for(session, section)
    result = run(executor, 'spins = 0\nprint("start")\nwhile True:\n    spins += 1')
    assert (result.success, result.message) == (
        False,
        "evaluate_python stopped the code after 0.3 seconds, its time limit; make it do less "
        "work per call.\nOutput before the failure:\nstart",
    )
    assert session[AstevalSymbols].all() == ()


def test_long_output_and_values_are_cut_with_a_note() -> None:
    section = AstevalSection(max_output_chars=10)
    result = run(executor_for(Session(), section), 'print("x" * 25)\n"y" * 12')
    assert result.value == Evaluation(
        value="'yyyyyyyyy\n[value cut: 4 more characters]",
        output="xxxxxxxxxx\n[output cut: 16 more characters]",
        defined=(),
    )


def test_values_that_are_not_literals_are_not_kept_and_the_result_says_so() -> None:
    executor = executor_for(Session())
    result = run(executor, 'keys = {"a": 1}.keys()\nsize = len(keys)')
    assert result.value == Evaluation(None, "", defined=("size",), not_kept=("keys",))
    assert result.render() == (
        "Defined: size\nNot kept for later calls (not a literal or a def): keys"
    )
    assert run(executor, "keys").message == (
        "evaluate_python failed: NameError: name 'keys' is not defined (in: keys)"
    )


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError) as raised:
        AstevalSection(timeout_seconds=0)
    assert str(raised.value) == "AstevalSection: timeout_seconds must be positive, got 0"


def test_the_section_states_the_limits_to_the_model() -> None:
    template = PromptTemplate(ns="tests", key="sandbox", sections=[AstevalSection()])
    text = Prompt(template).render().text
    assert text.endswith(
        "Limits: at most 10000 characters of code, 5 seconds per call, `range` of at most "
        "1000000 items; output longer than 4000 characters is cut."
    )


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("class A:\n    pass", "NotImplementedError: 'classdef' (in: class A: / pass)"),
        (
            "async def f():\n    pass",
            "NotImplementedError: 'asyncfunctiondef' (in: async def f(): / pass)",
        ),
        ("globals()", "NameError: name 'globals' is not defined (in: globals())"),
        (
            'getattr(1, "__class__")',
            "NameError: name 'getattr' is not defined (in: getattr(1, \"__class__\"))",
        ),
        ("2**100000", "RuntimeError: Invalid exponent, max exponent is 10000 (in: 2**100000)"),
    ],
)
def test_the_documented_refusals_hold(code: str, message: str) -> None:
    result = run(executor_for(Session()), code)
    assert (result.success, result.message) == (False, f"evaluate_python failed: {message}")


def test_lambdas_aliases_and_values_that_do_not_read_back_are_not_kept() -> None:
    executor = executor_for(Session())
    code = 'def f(x):\n    return x\ng = f\nsq = lambda x: x * x\nbad = float("nan")\nr = range(3)'
    result = run(executor, code)
    assert result.value == Evaluation(None, "", defined=("f",), not_kept=("bad", "g", "r", "sq"))


def test_the_symbols_are_saved_and_loaded_with_the_session() -> None:
    session = Session()
    run(executor_for(session), 'def greet(who):\n    return "hi " + who\nnames = {"a": (1, 2.5)}')
    loaded = Session()
    loaded.restore(Snapshot.from_json(session.snapshot().to_json()), keep_log=False)
    result = run(executor_for(loaded), 'greet("ada"), names["a"]')
    assert result.value == Evaluation("('hi ada', (1, 2.5))", "", ())
