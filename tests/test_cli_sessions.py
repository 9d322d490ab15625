"""``wink sessions``: list, show, export, delete and prune a store's sessions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from wink import Prompt
from wink.cli import main
from wink.cli.targets import load_target
from wink.runtime import Session, ToolCall, ToolExecutor
from wink.runtime.trace_html import render_snapshot_json
from wink.store import SessionStore, SqliteStore, open_store

BANK = Path(__file__).parent / "test_cli_fixtures" / "bank.py"
TARGET = f"{BANK}:template"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _deposits(store: SessionStore, session_id: str, *amounts: object) -> Session:
    """Run a deposit per amount on the stored session (an amount that is not an int
    makes an invalid call, recorded as failed)."""
    session = Session.open(store, session_id)
    executor = ToolExecutor(prompt=Prompt(load_target(TARGET)), session=session)  # type: ignore[arg-type]  # the fixture's template
    for index, amount in enumerate(amounts, 1):
        executor.execute(ToolCall("deposit", json.dumps({"amount": amount}), call_id=f"c{index}"))
    return session


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite store holding ``alice`` (3 calls, one invalid) and ``bob`` (none)."""
    path = tmp_path / "sessions.db"
    with SqliteStore(path, snapshot_every=2) as store:
        _deposits(store, "alice", 5, "x", 7)
        Session.open(store, "bob")
    return f"sqlite:///{path}"


def _run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    status = main(list(arguments))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _moment(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_list_prints_id_created_updated_version_and_events(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    alice, bob = open_store(sqlite_url).sessions()
    status, out, err = _run(capsys, "sessions", "list", "--store", sqlite_url)
    assert (status, err) == (0, "")
    assert out == (
        "ID     CREATED               UPDATED               VERSION  EVENTS\n"
        f"alice  {_moment(alice.created_at)}  {_moment(alice.updated_at)}        2       5\n"
        f"bob    {_moment(bob.created_at)}  {_moment(bob.updated_at)}        0       0\n"
    )


def test_list_as_json_gives_every_field(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    alice, bob = open_store(sqlite_url).sessions()
    status, out, _ = _run(capsys, "sessions", "list", "--store", sqlite_url, "--format", "json")
    assert status == 0
    assert json.loads(out) == [
        {
            "session_id": "alice",
            "created_at": alice.created_at.isoformat(),
            "updated_at": alice.updated_at.isoformat(),
            "version": 2,
            "event_count": 5,
            "snapshot_version": 2,
        },
        {
            "session_id": "bob",
            "created_at": bob.created_at.isoformat(),
            "updated_at": bob.updated_at.isoformat(),
            "version": 0,
            "event_count": 0,
            "snapshot_version": 0,
        },
    ]


def test_list_reads_a_postgres_store(
    postgres_schema: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    url, schema = postgres_schema
    with open_store(url, schema=schema) as store:  # type: ignore[attr-defined]  # a StoreBase
        _deposits(store, "carol", 1, 2)
    dsn = f"{url}?schema={schema}"
    status, out, err = _run(capsys, "sessions", "list", "--store", dsn, "--format", "json")
    assert (status, err) == (0, "")
    assert [(row["session_id"], row["version"], row["event_count"]) for row in json.loads(out)] == [
        ("carol", 2, 4)
    ]


def test_show_prints_versions_slices_and_the_last_calls(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    [alice, _] = open_store(sqlite_url).sessions()
    status, out, err = _run(capsys, "sessions", "show", "alice", "--store", sqlite_url)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    started = [line.rsplit(" ", 1)[1] for line in lines[-3:]]
    assert lines == [
        "session alice",
        f"  created   {_moment(alice.created_at)}",
        f"  updated   {_moment(alice.updated_at)}",
        "  version   2 (snapshot at 2)",
        "  events    5",
        "slices (2)",
        "  state  bank:Balance                     2",
        "  log    wink.runtime.events:ToolInvoked  3",
        "last calls (3 of 3)",
        f"  deposit (c1) ok {started[0]}",
        f"  deposit (c2) failed {started[1]}",
        f"  deposit (c3) ok {started[2]}",
    ]
    assert all(moment.endswith("Z") and len(moment) == 27 for moment in started)


def test_export_writes_what_trace_and_validate_read(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = _run(
        capsys, "sessions", "export", "alice", "--store", sqlite_url, "--out", "exported"
    )
    assert (status, err) == (0, "")
    assert out == "wrote exported/session.json and exported/calls.jsonl (3 calls)\n"

    # session.json is the loaded session's to_json, merged from the snapshot and a change.
    with open_store(sqlite_url) as store:  # type: ignore[attr-defined]  # a StoreBase
        loaded = Session.open(store, "alice").snapshot().to_json()
    exported = (tmp_path / "exported" / "session.json").read_text()
    assert json.loads(exported) == json.loads(loaded)
    assert render_snapshot_json(exported, title="alice") == render_snapshot_json(
        loaded, title="alice"
    )
    status, out, err = _run(
        capsys, "trace", "exported/session.json", "--html", "alice.html", "--title", "alice"
    )
    assert (status, out, err) == (0, "wrote alice.html\n", "")
    assert (tmp_path / "alice.html").read_text() == render_snapshot_json(loaded, title="alice")

    calls = (tmp_path / "exported" / "calls.jsonl").read_text().splitlines()
    assert [(json.loads(c)["call_id"], json.loads(c)["arguments"]) for c in calls] == [
        ("c1", '{"amount": 5}'),
        ("c2", '{"amount": "x"}'),
        ("c3", '{"amount": 7}'),
    ]
    status, out, err = _run(capsys, "validate", TARGET, "exported/calls.jsonl")
    assert status == 1
    assert out == "checked 3 tool calls in 1 file: 1 invalid, 0 unknown tools, 0 malformed lines\n"
    assert err == (
        'exported/calls.jsonl:2: deposit: amount: input should be a valid integer (got "x")\n'
    )


def test_export_of_a_session_without_calls_writes_an_empty_calls_file(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _run(capsys, "sessions", "export", "bob", "--store", sqlite_url, "--out", "b")
    assert (status, out) == (0, "wrote b/session.json and b/calls.jsonl (0 calls)\n")
    assert json.loads((tmp_path / "b" / "session.json").read_text()) == {
        "version": 1,
        "slices": [],
    }
    assert (tmp_path / "b" / "calls.jsonl").read_text() == ""


def test_export_follows_replaced_and_dropped_slices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_store_conformance import Note

    url = f"sqlite:///{tmp_path / 'notes.db'}"
    with open_store(url) as store:  # type: ignore[attr-defined]  # a StoreBase
        session = Session.open(store, "notes")
        session[Note].seed([Note("a"), Note("b")])
        session.persist()
        session[Note].seed([Note("c")])  # replaces the slice
        session.persist()
        session.dispatch(Note("d"))
        session.persist()
        expected = json.loads(session.snapshot().to_json())
    assert main(["sessions", "export", "notes", "--store", url, "--out", "n"]) == 0
    assert json.loads((tmp_path / "n" / "session.json").read_text()) == expected
    assert expected["slices"][0]["items"] == [{"text": "c"}, {"text": "d"}]


def test_delete_removes_the_session_and_a_second_delete_fails(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "sessions", "delete", "bob", "--store", sqlite_url) == (
        0,
        "deleted bob\n",
        "",
    )
    assert [info.session_id for info in open_store(sqlite_url).sessions()] == ["alice"]
    assert _run(capsys, "sessions", "delete", "bob", "--store", sqlite_url) == (
        1,
        "",
        "wink: session 'bob' is not in the store\n",
    )


@pytest.mark.parametrize("command", ["show", "export"])
def test_an_unknown_session_is_one_line_and_status_1(
    command: str, sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--out", "x"] if command == "export" else []
    assert _run(capsys, "sessions", command, "carol", "--store", sqlite_url, *extra) == (
        1,
        "",
        "wink: session 'carol' is not in the store\n",
    )


def test_prune_drops_history_before_the_latest_snapshot(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "sessions", "prune", "--store", sqlite_url) == (
        0,
        "pruned 0 sessions, 2 changes, 0 snapshots\n",
        "",
    )
    with open_store(sqlite_url) as store:  # type: ignore[attr-defined]  # a StoreBase
        history = store.read("alice")
        assert (history.snapshot_version, history.changes) == (2, ())
        balances = Session.open(store, "alice")[load_target(f"{BANK}:Balance")].all()  # type: ignore[index]
        assert [balance.amount for balance in balances] == [5, 12]


def test_prune_updated_before_deletes_older_sessions_only(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    past = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert _run(
        capsys, "sessions", "prune", "--store", sqlite_url, "--no-history", "--updated-before", past
    ) == (0, "pruned 0 sessions, 0 changes, 0 snapshots\n", "")
    future = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert _run(
        capsys,
        "sessions",
        "prune",
        "--store",
        sqlite_url,
        "--no-history",
        "--updated-before",
        future,
    ) == (0, "pruned 2 sessions, 0 changes, 0 snapshots\n", "")
    assert open_store(sqlite_url).sessions() == []


def test_prune_refuses_a_moment_without_a_time_zone(
    sqlite_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(
        capsys, "sessions", "prune", "--store", sqlite_url, "--updated-before", "2025-01-01"
    ) == (
        2,
        "",
        "wink: sessions prune --updated-before: input should have timezone info "
        "(got '2025-01-01')\n",
    )


@pytest.mark.parametrize(
    ("url", "status", "message"),
    [
        ("sqlite:///missing.db", 1, "wink: --store: no SQLite store at 'missing.db'\n"),
        (
            "mysql://db/x",
            2,
            "wink: --store: unknown store URL scheme 'mysql': "
            "expected sqlite:///path or postgresql://...\n",
        ),
    ],
)
def test_a_store_that_cannot_be_opened_is_one_line(
    url: str, status: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(capsys, "sessions", "list", "--store", url) == (status, "", message)
    assert not (tmp_path / "missing.db").exists()


def test_an_unreachable_postgres_store_names_it_without_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("psycopg_pool")
    url = "postgresql://wink:s3cret-word@127.0.0.1:1/somedb?connect_timeout=1"
    status, out, err = _run(capsys, "sessions", "list", "--store", url)
    assert (status, out) == (1, "")
    assert err.startswith("wink: PostgreSQL store 127.0.0.1:1/somedb cannot be reached: ")
    assert err.count("\n") == 1
    assert "s3cret" not in err


def test_sessions_without_a_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "sessions") == (
        2,
        "",
        "wink: sessions needs a command: list, show, export, delete or prune "
        "(see wink sessions --help)\n",
    )


def test_store_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "sessions", "list") == (
        2,
        "",
        "wink: the following arguments are required: --store\n",
    )
