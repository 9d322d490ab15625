"""``wink replay``: a recorded evaluation against tools changed since, call by call."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from wink import Session, SqliteStore
from wink.cli import main
from wink.testing import ScriptedAdapter, call

FIXTURES = Path(__file__).parent / "replay_fixtures"
SCRIPT = [
    call("add_item", {"sku": "tea"}, "c1"),
    call("add_item", {"sku": "cup", "quantity": 2}, "c2"),
    call("total", {}, "c3"),
    call("note", {"text": "gift"}, "c4"),
    call("checkout", {}, "c5"),
    "Done.",
]
LEFT_OUT = (
    "  note: state[shop:Total] is left out from here on: the current types cannot read it: "
    "slices[0] (shop:Total): items do not match the type: invalid list[shop.Total]: "
    "[0].amount: required field is missing; [0].total: unknown field (allowed: amount)"
)


def _record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, keep_history: bool = True) -> Path:
    """Run the script on the shop's first version, save the session, and leave the current
    directory holding both versions (shop.py is the second), the first unloaded."""
    spec = importlib.util.spec_from_file_location("shop", FIXTURES / "shop_v1.py")
    assert spec is not None and spec.loader is not None
    shop = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "shop", shop)
    spec.loader.exec_module(shop)
    session = Session(keep_history=keep_history)
    ScriptedAdapter(SCRIPT).evaluate(shop.prompt, session=session)
    saved = tmp_path / "session.json"
    saved.write_text(session.snapshot().to_json())
    monkeypatch.delitem(sys.modules, "shop")
    for version in ("v1", "v2"):
        (tmp_path / version).mkdir()
        shutil.copy(FIXTURES / f"shop_{version}.py", tmp_path / version / "shop.py")
    monkeypatch.chdir(tmp_path / "v2")
    return saved


def test_without_run_only_the_call_a_now_required_field_refuses_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)

    status = main(["replay", "../session.json", "--target", "shop.py:prompt"])

    captured = capsys.readouterr()
    assert status == 1
    assert captured.out.splitlines() == [
        "checked the arguments of 5 calls of ../session.json against shop.py:prompt: "
        "4 unchanged, 1 refused, 0 denied, 0 changed-result, 0 changed-state, 0 accepted; "
        "--run also compares results and state",
        "call-1 add_item (c1): refused: quantity: required field is missing",
        "call-2 add_item (c2): unchanged",
        "call-3 total (c3): unchanged",
        "call-4 note (c4): unchanged",
        "call-5 checkout (c5): unchanged",
    ]
    assert captured.err == (
        "wink: 1 call at or above --fail-on refused (first: call-1 add_item (c1) refused)\n"
    )


def test_run_shows_a_refusal_a_renamed_result_field_a_state_change_and_a_denial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)

    status = main(["replay", "../session.json", "--target", "shop.py:prompt", "--run"])

    captured = capsys.readouterr()
    assert status == 1
    assert captured.out.splitlines() == [
        "replayed 5 calls of ../session.json against shop.py:prompt: 1 unchanged, 1 refused, "
        "1 denied, 1 changed-result, 1 changed-state, 0 accepted; "
        "state before each call from the recorded history",
        "call-1 add_item (c1): refused: quantity: required field is missing",
        "call-2 add_item (c2): unchanged",
        "call-3 total (c3): changed-result",
        "  result.value.total: recorded 3, now absent",
        "  result.value.amount: recorded absent, now 3",
        "call-4 note (c4): changed-state",
        '  state[shop:Note][0].text: recorded "gift", now "GIFT"',
        LEFT_OUT,
        "call-5 checkout (c5): denied: checkout is closed at night; try again tomorrow",
    ]
    assert captured.err == (
        "wink: 2 calls at or above --fail-on refused (first: call-1 add_item (c1) refused)\n"
    )


def test_run_report_as_json_names_each_outcome_and_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)

    status = main(
        [
            *("replay", "../session.json", "--target", "shop.py:prompt", "--run"),
            *("--format", "json", "--fail-on", "changed"),
        ]
    )

    report = json.loads(capsys.readouterr().out)
    assert status == 1

    def entry(number: int, tool: str, outcome: str, **fields: Any) -> dict[str, Any]:
        return {
            "call": number,
            "tool": tool,
            "call_id": f"c{number}",
            "outcome": outcome,
            "reason": "",
            "differences": [],
            "more_differences": 0,
            "notes": [],
        } | fields

    assert report == {
        "session": "../session.json",
        "target": "shop.py:prompt",
        "run": True,
        "state": "history",
        "counts": {
            "unchanged": 1,
            "refused": 1,
            "denied": 1,
            "changed-result": 1,
            "changed-state": 1,
            "accepted": 0,
        },
        "fail_on": "changed",
        "failing": 4,
        "calls": [
            entry(1, "add_item", "refused", reason="quantity: required field is missing"),
            entry(2, "add_item", "unchanged"),
            entry(
                3,
                "total",
                "changed-result",
                differences=[
                    {"path": "result.value.total", "recorded": 3},
                    {"path": "result.value.amount", "now": 3},
                ],
            ),
            entry(
                4,
                "note",
                "changed-state",
                differences=[
                    {"path": "state[shop:Note][0].text", "recorded": "gift", "now": "GIFT"}
                ],
                notes=[LEFT_OUT.removeprefix("  note: ")],
            ),
            entry(
                5,
                "checkout",
                "denied",
                reason="checkout is closed at night; try again tomorrow",
            ),
        ],
    }


def test_replay_against_the_recorded_code_finds_every_call_unchanged_and_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path / "v1")

    status = main(
        ["replay", "../session.json", "--target", "shop.py:prompt", "--run", "--fail-on", "any"]
    )

    assert status == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "replayed 5 calls of ../session.json against shop.py:prompt: 5 unchanged, 0 refused, "
        "0 denied, 0 changed-result, 0 changed-state, 0 accepted; "
        "state before each call from the recorded history"
    )


def test_fail_on_changed_passes_a_denial_free_refusal_free_replay_only_when_nothing_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)

    # Only the checks of arguments: no result or state is compared, so "changed" finds
    # the one refusal alone.
    status = main(
        ["replay", "../session.json", "--target", "shop.py:prompt", "--fail-on", "changed"]
    )

    assert status == 1
    assert capsys.readouterr().err == (
        "wink: 1 call at or above --fail-on changed (first: call-1 add_item (c1) refused)\n"
    )


def test_a_session_saved_before_denied_rolled_back_and_history_still_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = _record(tmp_path, monkeypatch, keep_history=False)
    document = json.loads(saved.read_text())
    for entry in document["slices"]:
        for item in entry["items"]:
            for newer in ("denied", "rolled_back", "exchanges", "provider_tools"):
                item.pop(newer, None)
    saved.write_text(json.dumps(document))
    monkeypatch.chdir(tmp_path / "v1")

    status = main(["replay", "../session.json", "--target", "shop.py:prompt", "--run"])

    assert status == 0
    assert capsys.readouterr().out.splitlines() == [
        "replayed 5 calls of ../session.json against shop.py:prompt: 5 unchanged, 0 refused, "
        "0 denied, 0 changed-result, 0 changed-state, 0 accepted; no history saved: state "
        "replayed call by call from an empty session, state changes not compared",
        "call-1 add_item (c1): unchanged",
        "call-2 add_item (c2): unchanged",
        "call-3 total (c3): unchanged",
        "call-4 note (c4): unchanged",
        "call-5 checkout (c5): unchanged",
    ]


def test_the_html_page_has_one_closed_entry_per_call_and_no_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)

    status = main(
        ["replay", "../session.json", "--target", "shop.py:prompt", "--run", "--html", "r.html"]
    )

    page = Path("r.html").read_text()
    assert status == 1
    assert "<script" not in page and "<details open" not in page
    assert page.count("<details>") == 5
    assert (
        '<li class="call differs"><details><summary><span class="tool">call-3 total (c3)'
        '</span> <span class="outcome">changed-result</span></summary><table><tr><th>where'
        "</th><th>recorded</th><th>now</th></tr><tr><td>result.value.total</td><td>3</td>"
        '<td><span class="note">absent</span></td></tr>'
    ) in page
    assert "state[shop:Note][0].text</td><td>&quot;gift&quot;</td><td>&quot;GIFT&quot;" in page
    assert capsys.readouterr().out.splitlines()[0].startswith("replayed 5 calls")


def test_a_session_file_that_is_not_json_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)
    Path("broken.json").write_text("{not json")

    status = main(["replay", "broken.json", "--target", "shop.py:prompt", "--run"])

    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert captured.err == (
        "wink: broken.json: snapshot is not valid JSON: key must be a string at <root> "
        "(line 1 column 2)\n"
    )


def test_a_target_that_does_not_exist_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)

    status = main(["replay", "../session.json", "--target", "nowhere.py:prompt"])

    captured = capsys.readouterr()
    assert (status, captured.out) == (2, "")
    assert captured.err == "wink: target 'nowhere.py:prompt': no such file 'nowhere.py'\n"


def test_a_session_item_that_is_not_a_recorded_call_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)
    Path("odd.json").write_text(
        json.dumps(
            {
                "version": 1,
                "slices": [
                    {"type": "wink.runtime.events:ToolInvoked", "kind": "log", "items": [7]}
                ],
            }
        )
    )

    status = main(["replay", "odd.json", "--target", "shop.py:prompt"])

    assert status == 2
    assert capsys.readouterr().err == (
        "wink: odd.json: slices[0].items[0]: expected a recorded ToolInvoked (an object)\n"
    )


def test_naming_no_session_or_both_kinds_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _record(tmp_path, monkeypatch)

    neither = main(["replay", "--target", "shop.py:prompt"])
    both = main(
        ["replay", "../session.json", "--target", "shop.py:prompt", "--store", "sqlite:///s.db"]
    )

    assert (neither, both) == (2, 2)
    assert capsys.readouterr().err.splitlines() == [
        "wink: name the session: a file saved with session.snapshot().to_json(), "
        "or --store URL and --session ID",
        "wink: give either a session file or --store and --session, not both",
    ]


def test_a_session_in_a_sqlite_store_replays_like_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("shop", FIXTURES / "shop_v1.py")
    assert spec is not None and spec.loader is not None
    shop = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "shop", shop)
    spec.loader.exec_module(shop)
    store = SqliteStore(tmp_path / "sessions.db")
    session = Session.open(store, "alice", keep_history=True)
    ScriptedAdapter([*SCRIPT[:3], "Done."]).evaluate(shop.prompt, session=session)
    store.close()
    monkeypatch.delitem(sys.modules, "shop")
    (tmp_path / "v2").mkdir()
    shutil.copy(FIXTURES / "shop_v2.py", tmp_path / "v2" / "shop.py")
    monkeypatch.chdir(tmp_path / "v2")
    url = f"sqlite:///{tmp_path / 'sessions.db'}"

    status = main(["replay", "--store", url, "--session", "alice", "--target", "shop.py:prompt"])
    missing = main(["replay", "--store", url, "--session", "bob", "--target", "shop.py:prompt"])

    captured = capsys.readouterr()
    assert (status, missing) == (1, 2)
    assert captured.out.splitlines() == [
        f"checked the arguments of 3 calls of {url}#alice against shop.py:prompt: 2 unchanged, "
        "1 refused, 0 denied, 0 changed-result, 0 changed-state, 0 accepted; "
        "--run also compares results and state",
        "call-1 add_item (c1): refused: quantity: required field is missing",
        "call-2 add_item (c2): unchanged",
        "call-3 total (c3): unchanged",
    ]
    assert captured.err.splitlines() == [
        "wink: 1 call at or above --fail-on refused (first: call-1 add_item (c1) refused)",
        f"wink: session 'bob' is not stored in {url!r}",
    ]
