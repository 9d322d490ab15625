"""``wink serve --store`` and ``server(store=...)``: sessions that outlive the client and
the server process, shared by servers on one store."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp_sdk = pytest.importorskip("mcp")

import httpx2  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from wink import Prompt, Session, ToolInvoked  # noqa: E402
from wink.cli import main  # noqa: E402
from wink.cli.targets import load_target  # noqa: E402
from wink.providers.mcp import server  # noqa: E402
from wink.store import SessionStore, SqliteStore, open_store  # noqa: E402

ROOT = Path(__file__).parent.parent
TARGET = "tests/mcp_store_target.py:prompt"
WINK = [sys.executable, "-c", "import sys; from wink.cli import main; sys.exit(main())"]
PROMPT: Prompt = load_target(TARGET, ROOT)  # type: ignore[assignment]  # the target is a Prompt
TOTAL: type[Any] = load_target("tests/mcp_store_target.py:Total", ROOT)  # type: ignore[assignment]


def conflict(session_id: str, expected: int, found: int) -> str:
    return (
        "Tool 'add' succeeded but its result could not be applied, so its changes were "
        f"rolled back: VersionConflict: session {session_id!r} was changed by another writer: "
        f"expected version {expected}, it is at version {found}; open it again (Session.open) "
        "to go on from there"
    )


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def outcome(result: types.CallToolResult) -> Any:
    """The total a call answered, else its failure message."""
    return text_of(result) if result.is_error else result.structured_content["amount"]  # type: ignore[index]


def stored(store: SessionStore, session_id: str) -> tuple[list[int], list[bool]]:
    """The totals a session holds in ``store``, and whether each recorded call succeeded."""
    loaded = Session.open(store, session_id, types=[TOTAL])
    return (
        [total.amount for total in loaded[TOTAL].all()],
        [event.success for event in loaded[ToolInvoked].all()],
    )


async def add(client: Any, amount: int) -> Any:
    return outcome(await client.call_tool("add", {"amount": amount}))


# --- in process: two servers on one SQLite file ----------------------------------------


def test_a_client_of_a_new_server_on_the_same_store_continues_the_session(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "sessions.db")

    async def run() -> list[Any]:
        with anyio.fail_after(30):
            async with mcp_sdk.Client(server(PROMPT, store=store, session_id="alice")) as first:
                answers = [await add(first, 5), await add(first, 7)]
            async with mcp_sdk.Client(server(PROMPT, store=store, session_id="alice")) as again:
                answers.append(await add(again, 1))
            async with mcp_sdk.Client(server(PROMPT, store=store, session_id="bob")) as other:
                answers.append(await add(other, 100))
            return answers

    assert anyio.run(run) == [5, 12, 13, 100]
    assert stored(store, "alice") == ([5, 12, 13], [True, True, True])
    assert stored(store, "bob") == ([100], [True])
    store.close()


def test_a_call_beaten_by_another_server_fails_with_version_conflict_then_the_session_is_reopened(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "sessions.db")

    async def run() -> list[Any]:
        with anyio.fail_after(30):
            async with (
                mcp_sdk.Client(server(PROMPT, store=store, session_id="s"), mode="legacy") as one,
                mcp_sdk.Client(server(PROMPT, store=store, session_id="s"), mode="legacy") as two,
            ):
                return [
                    await add(one, 1),
                    await add(two, 10),  # opened at its first call: it reads version 1
                    await add(one, 100),  # ``one`` read version 1, the store is at 2
                    await add(one, 1000),  # reopened: goes on from version 2
                    await add(two, 10000),  # beaten in turn, by ``one``
                ]

    assert anyio.run(run) == [1, 11, conflict("s", 1, 2), 1011, conflict("s", 2, 3)]
    # The refused calls were recorded on the session they lost with, which was reopened.
    assert stored(store, "s") == ([1, 11, 1011], [True, True, True])
    store.close()


def test_a_session_id_no_store_takes_is_a_jsonrpc_error_naming_it(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "sessions.db")

    async def run() -> tuple[int, str]:
        with anyio.fail_after(30):
            async with mcp_sdk.Client(server(PROMPT, store=store, session_id="a\x00b")) as client:
                try:
                    await client.call_tool("add", {"amount": 1})
                except MCPError as error:
                    return error.code, error.message
        raise AssertionError("the call was served")

    assert anyio.run(run) == (
        types.INVALID_REQUEST,
        "the stored session cannot be opened: session id 'a\\x00b' holds a NUL character",
    )
    store.close()


def test_server_refuses_an_empty_session_id(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as raised:
        server(PROMPT, store=SqliteStore(tmp_path / "s.db"), session_id="")
    assert str(raised.value) == "session_id must be a non-empty str, got ''"


# --- stdio: the server killed and started again --------------------------------------


def _initialize(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None and process.stdout is not None
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    process.stdin.write(json.dumps(hello).encode() + b"\n")
    process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 0


def _call(process: subprocess.Popen[bytes], request_id: int, amount: int) -> Any:
    assert process.stdin is not None and process.stdout is not None
    request = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"amount": amount}},
    }
    process.stdin.write(json.dumps(request).encode() + b"\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    assert answer["id"] == request_id, answer
    return answer["result"]["structuredContent"]["amount"]


def test_stdio_session_survives_the_server_being_killed_and_started_again(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    process = subprocess.Popen(
        [*WINK, "serve", TARGET, "--store", url, "--session-id", "alice"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        _initialize(process)
        before = [_call(process, 1, 5), _call(process, 2, 7)]
    finally:
        process.kill()  # no shutdown: what is stored was stored when each call committed
        process.wait()
    assert (before, process.returncode) == ([5, 12], -signal.SIGKILL)

    # Started again, the store named by the setting this time; a new client, the same id.
    parameters = StdioServerParameters(
        command=WINK[0],
        args=[*WINK[1:], "serve", TARGET, "--session-id", "alice"],
        env={**os.environ, "WINK_SERVE_STORE": url},
        cwd=ROOT,
    )

    async def run() -> list[Any]:
        with anyio.fail_after(30), open(os.devnull, "w") as errlog:
            async with mcp_sdk.Client(stdio_client(parameters, errlog=errlog)) as client:
                return [await add(client, 1)]

    assert anyio.run(run) == [13]
    with open_store(url) as store:
        assert stored(store, "alice") == ([5, 12, 13], [True, True, True])


# --- command-line errors ----------------------------------------------------------------


def test_a_store_url_of_an_unknown_scheme_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["serve", TARGET, "--store", "mysql://localhost/x"])
    assert (code, capsys.readouterr().err) == (
        2,
        "wink: serve --store: unknown store URL scheme 'mysql': expected sqlite:///path or "
        "postgresql://...\n",
    )


def test_a_store_that_cannot_be_opened_is_one_line_and_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "no" / "such" / "folder" / "s.db"
    code = main(["serve", TARGET, "--store", f"sqlite:///{missing}"])
    assert (code, capsys.readouterr().err) == (
        1,
        f"wink: serve --store: SQLite store '{missing}' cannot be opened: "
        "unable to open database file\n",
    )


# --- Streamable HTTP: two server processes on one PostgreSQL store ---------------------


def _start_http(url: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [*WINK, "serve", TARGET, "--transport", "http", "--port", "0", "--store", url],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    line = process.stderr.readline()  # the announcement, once listening
    found = re.fullmatch(r"wink serve: serving 1 tool of 'counter' on (http://\S+)\n", line)
    assert found, line
    return process, found.group(1)


@pytest.fixture
def two_http_servers(postgres_schema: tuple[str, str]) -> Iterator[tuple[str, str, str]]:
    """Two ``wink serve`` processes on one PostgreSQL store: their URLs and the store's."""
    url, schema = postgres_schema
    store_url = f"{url}?schema={schema}"
    started: list[subprocess.Popen[str]] = []
    try:
        first, first_url = _start_http(store_url)
        started.append(first)
        second, second_url = _start_http(store_url)
        started.append(second)
        yield first_url, second_url, store_url
    finally:
        for process in started:
            process.terminate()
            process.wait(timeout=10)


def _client(url: str, session_id: str, mode: str = "legacy") -> Any:
    http = httpx2.AsyncClient(headers={"Wink-Session-Id": session_id}, timeout=30)
    return mcp_sdk.Client(streamable_http_client(url, http_client=http), mode=mode)


def test_http_servers_on_one_postgres_store_land_each_call_once_or_refuse_it(
    two_http_servers: tuple[str, str, str],
) -> None:
    first_url, second_url, store_url = two_http_servers

    async def run() -> list[Any]:
        with anyio.fail_after(60):
            async with (
                _client(first_url, "shared") as one,
                _client(second_url, "shared") as two,
                _client(second_url, "other") as other,
            ):
                answers = [
                    await add(one, 1),
                    await add(two, 10),
                    await add(one, 100),  # beaten by ``two``
                    await add(one, 1000),  # reopened
                    await add(other, 7),  # another client's own session
                ]
            # A 2026-07-28 client is stateless; its header still names the session.
            async with _client(second_url, "shared", mode="2026-07-28") as stateless:
                answers.append(await add(stateless, 10000))
            return answers

    assert anyio.run(run) == [1, 11, conflict("shared", 1, 2), 1011, 7, 11011]
    with open_store(store_url) as store:
        assert stored(store, "shared") == ([1, 11, 1011, 11011], [True, True, True, True])
        assert stored(store, "other") == ([7], [True])


def test_concurrent_calls_from_two_servers_each_land_once_or_fail_with_version_conflict(
    two_http_servers: tuple[str, str, str],
) -> None:
    first_url, second_url, store_url = two_http_servers
    answers: dict[int, Any] = {}

    async def calls(url: str, amounts: range) -> None:
        async with _client(url, "raced") as client:
            for amount in amounts:
                answers[amount] = await add(client, amount)

    async def run() -> None:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(calls, first_url, range(1, 11))
                group.start_soon(calls, second_url, range(101, 111))

    anyio.run(run)
    landed = sorted(amount for amount, answer in answers.items() if isinstance(answer, int))
    refused = [answer for answer in answers.values() if not isinstance(answer, int)]
    assert len(landed) + len(refused) == 20
    refusal = re.escape(conflict("raced", 1, 2)).replace("1", r"\d+").replace("2", r"\d+")
    assert all(re.fullmatch(refusal, answer) for answer in refused), refused
    with open_store(store_url) as store:
        totals, successes = stored(store, "raced")
    # Every call answered with a total is stored once, and nothing else is.
    assert (totals[-1], len(totals), successes) == (sum(landed), len(landed), [True] * len(landed))
