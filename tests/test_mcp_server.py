"""``wink.providers.mcp.server``: a prompt's tools served to the official MCP client, in process."""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import os
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

mcp_sdk = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp.client._memory import InMemoryTransport  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from sdk_mocks import RecordingTransport  # noqa: E402

from wink import (  # noqa: E402
    Binding,
    Filesystem,
    HostFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    PromptValidationError,
    ResourceRegistry,
    SequentialDependencyPolicy,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
)
from wink.providers import mcp  # noqa: E402

EXAMPLES = Path(__file__).parent.parent / "examples"


def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


notes = load_example("notes_agent")

UNREAD = (
    "File 'todo.md' already exists and has not been read: call read_file on it before "
    "overwriting it (policy 'read_before_write')."
)


def notes_server(folder: Path, **options: Any) -> mcp.PromptServer:
    (folder / "todo.md").write_text("bread")
    prompt = Prompt(notes.template).bind(resources={HostFilesystem: HostFilesystem(folder)})
    return mcp.server(prompt, **options)


def run_client(
    served: mcp.PromptServer, script: Callable[[Any], Awaitable[Any]], mode: str = "legacy"
) -> Any:
    async def main() -> Any:
        async with mcp_sdk.Client(served, mode=mode) as client:
            return await script(client)

    return anyio.run(main)


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


def test_tools_list_answers_the_rendered_prompts_specs(tmp_path: Path) -> None:
    served = notes_server(tmp_path)

    async def script(client: Any) -> Any:
        return await client.session.list_tools()

    listed = run_client(served, script)
    assert [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools] == (
        mcp.tool_specs(served.rendered_prompt)
    )


def test_server_identifies_itself_with_the_prompts_name_and_text(tmp_path: Path) -> None:
    served = notes_server(tmp_path, version="1.2")

    async def script(client: Any) -> Any:
        return client.server_info, client.session.initialize_result.instructions

    info, instructions = run_client(served, script)
    assert (info.name, info.version) == ("notes_agent", "1.2")
    assert instructions == (
        "## Notes\n\nKeep the user's notes tidy. Read a note before changing it."
    )


def test_a_successful_call_answers_text_and_structured_content(tmp_path: Path) -> None:
    served = notes_server(tmp_path)

    async def script(client: Any) -> Any:
        return await client.call_tool("read_file", {"path": "todo.md"})

    result = run_client(served, script)
    assert (result.is_error, text_of(result), result.structured_content) == (
        False,
        "Read todo.md.\n\ntodo.md:\nbread",
        {"path": "todo.md", "text": "bread"},
    )


def test_bad_arguments_answer_is_error_with_the_field_messages(tmp_path: Path) -> None:
    served = notes_server(tmp_path)

    async def script(client: Any) -> Any:
        return await client.call_tool("write_file", {"path": "todo.md", "txt": "oops"})

    result = run_client(served, script)
    assert (result.is_error, text_of(result), result.structured_content) == (
        True,
        "Invalid arguments for tool 'write_file':\ntext: required field is missing\n"
        "txt: unknown field (allowed: path, text, append)",
        None,
    )


def test_a_policy_denial_answers_is_error_with_the_reason(tmp_path: Path) -> None:
    served = notes_server(tmp_path)

    async def script(client: Any) -> Any:
        return await client.call_tool("write_file", {"path": "todo.md", "text": "milk"})

    result = run_client(served, script)
    assert (result.is_error, text_of(result)) == (True, UNREAD)
    assert (tmp_path / "todo.md").read_bytes() == b"bread"


def test_a_failing_handler_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    served = notes_server(tmp_path)

    async def script(client: Any) -> Any:
        await client.call_tool("read_file", {"path": "todo.md"})
        return await client.call_tool(
            "write_file", {"path": "todo.md", "text": "\nTODO: eggs", "append": True}
        )

    result = run_client(served, script)
    assert (result.is_error, text_of(result)) == (
        True,
        "Tool 'write_file' raised ValueError: notes must not contain TODO markers",
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["todo.md"]
    assert (tmp_path / "todo.md").read_bytes() == b"bread"


def test_an_unknown_tool_is_a_jsonrpc_invalid_params_error_naming_the_tools(
    tmp_path: Path,
) -> None:
    sessions: list[Session] = []

    def factory() -> Session:
        sessions.append(Session())
        return sessions[-1]

    served = notes_server(tmp_path, session_factory=factory)

    async def script(client: Any) -> Any:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("delete_file", {"path": "todo.md"})
        return raised.value

    error = run_client(served, script)
    assert (error.code, error.message) == (
        types.INVALID_PARAMS,
        "Unknown tool 'delete_file'. Available tools: read_file, write_file.",
    )
    assert [session[ToolInvoked].all() for session in sessions] == [()]


def test_server_version_defaults_to_winks_own(tmp_path: Path) -> None:
    async def script(client: Any) -> Any:
        return client.server_info.version

    assert run_client(notes_server(tmp_path), script) == importlib.metadata.version("wink")


def test_each_call_is_recorded_in_the_clients_session_with_the_request_id(
    tmp_path: Path,
) -> None:
    sessions: list[Session] = []

    def factory() -> Session:
        sessions.append(Session())
        return sessions[-1]

    transport = RecordingTransport(notes_server(tmp_path, session_factory=factory))

    async def main() -> None:
        async with mcp_sdk.Client(transport, mode="legacy") as client:
            await client.call_tool("read_file", {"path": "todo.md"})
            await client.call_tool("write_file", {"path": "todo.md", "text": "milk"})

    anyio.run(main)
    sent = [m["id"] for m in transport.sent_json() if m.get("method") == "tools/call"]
    (session,) = sessions
    events = session[ToolInvoked].all()
    assert [(event.name, event.success) for event in events] == [
        ("read_file", True),
        ("write_file", True),
    ]
    assert [event.call_id for event in events] == [str(request_id) for request_id in sent]
    assert len(set(sent)) == 2
    assert (tmp_path / "todo.md").read_bytes() == b"milk"


def test_a_clients_session_is_released_when_it_disconnects(tmp_path: Path) -> None:
    served = notes_server(tmp_path)
    seen: list[int] = []

    async def script(client: Any) -> Any:
        await client.call_tool("read_file", {"path": "todo.md"})
        seen.append(len(served.sessions))

    run_client(served, script)
    assert (seen, served.sessions) == ([1], ())


def test_a_handshake_free_client_keeps_one_session_for_its_connection(tmp_path: Path) -> None:
    served = notes_server(tmp_path)

    async def script(client: Any) -> Any:
        await client.call_tool("read_file", {"path": "todo.md"})
        return client.protocol_version, await client.call_tool(
            "write_file", {"path": "todo.md", "text": "milk"}
        )

    version, result = run_client(served, script, mode="auto")
    assert (version, result.is_error, served.sessions) == ("2026-07-28", False, ())
    assert (tmp_path / "todo.md").read_bytes() == b"milk"


def test_a_handshake_free_client_over_a_stream_keeps_one_session(tmp_path: Path) -> None:
    # The stream transport stdio uses too: a 2026-07-28 client, one client per stream.
    served = notes_server(tmp_path)

    async def main() -> Any:
        async with mcp_sdk.Client(InMemoryTransport(served)) as client:
            await client.call_tool("read_file", {"path": "todo.md"})
            written = await client.call_tool("write_file", {"path": "todo.md", "text": "milk"})
            return client.protocol_version, written.is_error, len(served.sessions)

    assert anyio.run(main) == ("2026-07-28", False, 1)
    assert served.sessions == ()
    assert (tmp_path / "todo.md").read_bytes() == b"milk"


def test_two_clients_keep_separate_policy_state(tmp_path: Path) -> None:
    served = notes_server(tmp_path)

    async def main() -> Any:
        async with (
            mcp_sdk.Client(served, mode="legacy") as reader,
            mcp_sdk.Client(served, mode="legacy") as other,
        ):
            await reader.call_tool("read_file", {"path": "todo.md"})
            denied = await other.call_tool("write_file", {"path": "todo.md", "text": "x"})
            allowed = await reader.call_tool("write_file", {"path": "todo.md", "text": "y"})
            return denied, allowed, len(served.sessions)

    denied, allowed, open_sessions = anyio.run(main)
    assert (denied.is_error, text_of(denied), allowed.is_error, open_sessions) == (
        True,
        UNREAD,
        False,
        2,
    )


# --- a handler that waits, resources, notifications, deadlines -----------------------


@dataclass(frozen=True)
class Wait:
    name: str


@dataclass(frozen=True)
class Counter:
    """A shared resource: counts its builds and closes."""

    builds: list[int]
    closes: list[int]

    def close(self) -> None:
        self.closes.append(1)


RELEASE = threading.Event()


def wait_for_release(params: Wait, *, context: ToolContext) -> ToolResult[str]:
    if params.name == "waits":
        assert RELEASE.wait(timeout=5), "the other call never ran"
    else:
        RELEASE.set()
    return ToolResult.ok(params.name)


def count_builds(params: Wait, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok(f"{params.name} {len(context.resources.get(Counter).builds)}")


wait_tool = Tool[Wait, str](name="wait", description="Wait or release.", handler=wait_for_release)
count_tool = Tool[Wait, str](name="count", description="Count builds.", handler=count_builds)


def waiting_prompt() -> Prompt:
    """No resources: calls of different sessions need not take turns."""
    template = PromptTemplate(
        ns="tests", key="waits", sections=[MarkdownSection(title="Waits", tools=[wait_tool])]
    )
    return Prompt(template)


def counter_prompt(builds: list[int], closes: list[int]) -> Prompt:
    def build(_: Any) -> Counter:
        builds.append(1)
        return Counter(builds, closes)

    template = PromptTemplate(
        ns="tests", key="counts", sections=[MarkdownSection(title="Counts", tools=[count_tool])]
    )
    return Prompt(template, resources=ResourceRegistry.of(Binding(Counter, build)))


def test_a_running_call_does_not_stop_other_clients_calls() -> None:
    RELEASE.clear()
    served = mcp.server(waiting_prompt())
    answers: list[str] = []

    async def call(name: str) -> None:
        async with mcp_sdk.Client(served, mode="legacy") as client:
            result = await client.call_tool("wait", {"name": name})
            answers.append(result.structured_content["result"])

    async def main() -> None:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(call, "waits")
                await anyio.sleep(0.05)
                group.start_soon(call, "releases")

    anyio.run(main)
    # Had the blocked call held the event loop, the releasing call could never run.
    assert sorted(answers) == ["releases", "waits"]


def test_lazily_built_resources_are_each_clients_own_and_closed_when_serving_stops() -> None:
    builds: list[int] = []
    closes: list[int] = []
    served = mcp.server(counter_prompt(builds, closes))

    async def main() -> Any:
        async with (
            mcp_sdk.Client(served, mode="legacy") as first,
            mcp_sdk.Client(served, mode="legacy") as second,
        ):
            answers = [
                (await first.call_tool("count", {"name": "a"})).structured_content,
                (await second.call_tool("count", {"name": "b"})).structured_content,
            ]
            return answers, len(closes)

    # A lazily built singleton is one per session, so one per client.
    assert anyio.run(main) == ([{"result": "a 1"}, {"result": "b 2"}], 0)
    assert (len(builds), len(closes)) == (2, 2)


@dataclass(frozen=True)
class Mode:
    admin: bool = False


def admin_prompt() -> Prompt:
    def nothing(params: Wait, *, context: ToolContext) -> ToolResult[str]:
        return ToolResult.ok(params.name)

    public = Tool[Wait, str](name="echo", description="Echo.", handler=nothing)
    admin = Tool[Wait, str](name="purge", description="Purge.", handler=nothing)
    template = PromptTemplate(
        ns="tests",
        key="admin",
        sections=[
            MarkdownSection[Mode](title="Public", tools=[public]),
            MarkdownSection[Mode](title="Admin", tools=[admin], enabled=lambda mode: mode.admin),
        ],
    )
    return Prompt(template)


def test_update_re_renders_and_notifies_clients_that_the_tools_changed() -> None:
    served = mcp.server(admin_prompt())
    notices: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            notices.append(message.method)

    async def main() -> Any:
        async with mcp_sdk.Client(served, mode="legacy", message_handler=on_message) as client:
            before = [tool.name for tool in (await client.list_tools()).tools]
            changed = await served.update(served.prompt.bind(Mode(admin=True)))
            unchanged = await served.update(served.prompt.bind(Mode(admin=True)))
            after = [tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools]
            called = await client.call_tool("purge", {"name": "all"})
            await anyio.sleep(0.05)
            return before, changed, unchanged, after, called.is_error, client.server_capabilities

    before, changed, unchanged, after, failed, capabilities = anyio.run(main)
    assert (before, changed, unchanged, after, failed) == (
        ["echo"],
        True,
        False,
        ["echo", "purge"],
        False,
    )
    assert notices == ["notifications/tools/list_changed"]
    assert capabilities.tools.list_changed is True


def test_update_refuses_a_prompt_with_other_resources() -> None:
    served = mcp.server(admin_prompt())
    with pytest.raises(ValueError) as raised:
        anyio.run(served.update, Prompt(served.prompt.template))
    assert str(raised.value) == (
        "update() needs a prompt with the served prompt's resources: "
        "bind new params with served.prompt.bind(...)"
    )


def test_a_call_timeout_that_passed_answers_the_stopped_call() -> None:
    served = mcp.server(admin_prompt(), call_timeout=-1.0)

    async def script(client: Any) -> Any:
        return await client.call_tool("echo", {"name": "x"})

    result = run_client(served, script)
    assert result.is_error is True
    assert re.fullmatch(
        r"Tool 'echo' was stopped: deadline \S+ passed before tool 'echo' could start "
        r"\(now \S+\)",
        text_of(result),
    )


def test_server_needs_a_prompt() -> None:
    with pytest.raises(TypeError) as raised:
        mcp.server(admin_prompt().template)  # type: ignore[arg-type]
    assert str(raised.value) == "server() needs a Prompt, got PromptTemplate"


def test_served_notes_example_prints_what_the_client_sees(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES))
    load_example("served_notes").main()
    assert capsys.readouterr().out == (
        "tools: read_file, write_file\n"
        f"ERR write_file -> {UNREAD!r}\n"
        "ok  read_file -> 'Read todo.md.\\n\\ntodo.md:\\nbread'\n"
        "ok  write_file -> 'Wrote todo.md.\\n\\ntodo.md:\\nbread\\nmilk'\n"
        "ERR write_file -> \"Tool 'write_file' raised ValueError: notes must not contain "
        'TODO markers"\n'
        "ERR write_file -> \"Invalid arguments for tool 'write_file':\\ntext: required field "
        'is missing\\ntxt: unknown field (allowed: path, text, append)"\n'
        "todo.md on disk = 'bread\\nmilk'\n"
    )


def test_a_prompt_its_policies_refuse_fails_when_the_server_is_built() -> None:
    template = PromptTemplate(
        ns="tests",
        key="typo",
        sections=[MarkdownSection(title="Waits", tools=[wait_tool])],
        policies=[SequentialDependencyPolicy(dependencies={"wait": frozenset({"tset"})})],
    )
    with pytest.raises(PromptValidationError) as raised:
        mcp.server(Prompt(template))
    assert str(raised.value) == (
        "prompt 'typo', policy attached to the prompt: SequentialDependencyPolicy "
        "'sequential_dependency': dependencies name tools the prompt does not have: 'tset' "
        "(its tools: wait)"
    )


def test_protocol_stdout_sends_everything_else_to_stderr_and_restores_stdout(
    capfd: pytest.CaptureFixture[str],
) -> None:
    original = sys.stdout
    with mcp.protocol_stdout() as stream:
        print("a stray print")
        os.write(1, b"a stray write to fd 1\n")
        stream.write(b'{"jsonrpc": "2.0"}\n')
        stream.flush()
    print("printed after serving")
    assert sys.stdout is original
    assert capfd.readouterr() == (
        '{"jsonrpc": "2.0"}\nprinted after serving\n',
        "a stray print\na stray write to fd 1\n",
    )


def test_protocol_stdout_is_restored_when_serving_fails(
    capfd: pytest.CaptureFixture[str],
) -> None:
    original = sys.stdout
    with pytest.raises(RuntimeError), mcp.protocol_stdout():
        raise RuntimeError("serving failed")
    os.write(1, b"stdout again\n")
    assert (sys.stdout is original, capfd.readouterr()) == (True, ("stdout again\n", ""))


# --- async tools: awaited on the server's event loop ---------------------------------


@dataclass(frozen=True)
class Nap:
    seconds: float


@dataclass(frozen=True)
class Note:
    text: str
    pause: float = 0.0
    fail: bool = False


@dataclass(frozen=True)
class Noted:
    text: str


SERVING: list[tuple[asyncio.AbstractEventLoop, int]] = []
"""The event loop and thread each async handler ran on."""


async def nap(params: Nap, *, context: ToolContext) -> ToolResult[str]:
    SERVING.append((asyncio.get_running_loop(), threading.get_ident()))
    await asyncio.sleep(params.seconds)
    return ToolResult.ok("rested")


async def take_note(params: Note, *, context: ToolContext) -> ToolResult[str]:
    context.session.dispatch(Noted(params.text))
    context.resources.get(Filesystem).write("note.md", params.text)
    await asyncio.sleep(params.pause)
    if params.fail:
        raise RuntimeError("disk full")
    return ToolResult.ok(params.text)


def async_prompt(tool: Tool[Any, Any], folder: Path | None = None) -> Prompt:
    template = PromptTemplate(
        ns="tests", key="async", sections=[MarkdownSection(title="Async", tools=[tool])]
    )
    if folder is None:
        return Prompt(template)
    return Prompt(template).bind(resources={Filesystem: HostFilesystem(folder)})


nap_tool = Tool[Nap, str](name="nap", description="Sleep.", handler=nap)
note_tool = Tool[Note, str](name="take_note", description="Write a note.", handler=take_note)


def test_async_tools_run_on_the_servers_event_loop_and_overlap() -> None:
    SERVING.clear()
    served = mcp.server(async_prompt(nap_tool))

    async def call() -> None:
        async with mcp_sdk.Client(served, mode="legacy") as client:
            result = await client.call_tool("nap", {"seconds": 0.2})
            assert result.structured_content == {"result": "rested"}

    async def main() -> tuple[asyncio.AbstractEventLoop, float]:
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            group.start_soon(call)
        return asyncio.get_running_loop(), time.perf_counter() - started

    loop, elapsed = anyio.run(main)
    # The in-process client runs the server on the test's loop, in this thread.
    assert (len(SERVING), set(SERVING)) == (2, {(loop, threading.get_ident())})
    assert elapsed < 0.35


def test_a_failing_async_tool_is_rolled_back_and_recorded_once(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text("kept")
    sessions: list[Session] = []

    def factory() -> Session:
        sessions.append(Session())
        return sessions[-1]

    served = mcp.server(async_prompt(note_tool, tmp_path), session_factory=factory)

    async def script(client: Any) -> Any:
        return await client.call_tool("take_note", {"text": "lost", "fail": True})

    result = run_client(served, script)
    assert (result.is_error, text_of(result)) == (
        True,
        "Tool 'take_note' raised RuntimeError: disk full",
    )
    assert (tmp_path / "note.md").read_bytes() == b"kept"
    (session,) = sessions
    assert session[Noted].all() == ()
    assert [(event.name, event.success) for event in session[ToolInvoked].all()] == [
        ("take_note", False)
    ]


def test_a_cancelled_requests_async_call_still_completes_whole(tmp_path: Path) -> None:
    sessions: list[Session] = []

    def factory() -> Session:
        sessions.append(Session())
        return sessions[-1]

    transport = RecordingTransport(
        mcp.server(async_prompt(note_tool, tmp_path), session_factory=factory)
    )

    async def main() -> tuple[bool, bool]:
        async with mcp_sdk.Client(transport, mode="legacy") as client:
            with anyio.move_on_after(0.05) as waited:
                await client.call_tool("take_note", {"text": "first", "pause": 0.3})
            # Same client, same session: this call takes its turn after the first.
            second = await client.call_tool("take_note", {"text": "second"})
            return waited.cancelled_caught, second.is_error

    assert anyio.run(main) == (True, False)
    cancels = [m for m in transport.sent_json() if m.get("method") == "notifications/cancelled"]
    assert len(cancels) == 1
    (session,) = sessions
    assert [(event.name, event.success) for event in session[ToolInvoked].all()] == [
        ("take_note", True),
        ("take_note", True),
    ]
    assert session[Noted].all() == (Noted("first"), Noted("second"))
    assert (tmp_path / "note.md").read_bytes() == b"second"


def test_an_async_call_that_outlives_its_call_timeout_is_stopped_and_rolled_back(
    tmp_path: Path,
) -> None:
    (tmp_path / "note.md").write_text("kept")
    served = mcp.server(async_prompt(note_tool, tmp_path), call_timeout=0.05)

    async def script(client: Any) -> Any:
        return await client.call_tool("take_note", {"text": "late", "pause": 0.15})

    result = run_client(served, script)
    assert result.is_error is True
    assert re.fullmatch(
        r"Tool 'take_note' was stopped: deadline \S+ passed before tool 'take_note' "
        r"returned \(now \S+\)",
        text_of(result),
    ), text_of(result)
    assert (tmp_path / "note.md").read_bytes() == b"kept"


@dataclass(frozen=True)
class Greeting:
    name: str


async def greet(params: Greeting, *, context: ToolContext) -> ToolResult[str]:
    await anyio.sleep(0)
    return ToolResult.ok(f"hello {params.name}")


def test_an_async_tool_is_served_like_a_sync_one() -> None:
    greeter = Tool[Greeting, str](name="greet", description="Greet.", handler=greet)
    prompt = Prompt(
        PromptTemplate(
            ns="tests", key="greeter", sections=[MarkdownSection(title="G", tools=[greeter])]
        )
    )

    async def script(client: Any) -> Any:
        return await client.call_tool("greet", {"name": "Ada"})

    result = run_client(mcp.server(prompt), script)
    assert (result.is_error, result.structured_content) == (False, {"result": "hello Ada"})


@dataclass(frozen=True)
class OrderFilter:
    status: str
    limit: int = 10


@dataclass(frozen=True)
class OrderSearch:
    filters: OrderFilter


def search_orders(params: OrderSearch, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult.ok(f"{params.filters.status} x{params.filters.limit}")


def test_a_nested_model_parameter_is_listed_as_an_object_and_called_with_one() -> None:
    tool = Tool[OrderSearch, str](name="search", description="Search.", handler=search_orders)
    section = MarkdownSection(title="Orders", key="orders", tools=[tool])
    served = mcp.server(Prompt(PromptTemplate(ns="tests", key="orders", sections=[section])))

    async def script(client: Any) -> Any:
        listed = await client.list_tools()
        called = await client.call_tool("search", {"filters": {"status": "open", "limit": None}})
        return listed.tools[0].input_schema["properties"]["filters"], called

    filters, called = run_client(served, script)
    assert filters == {
        "properties": {
            "status": {"type": "string"},
            "limit": {"default": 10, "type": ["integer", "null"]},
        },
        "required": ["status"],
        "type": "object",
        "additionalProperties": False,
    }
    assert (called.is_error, called.structured_content) == (False, {"result": "open x10"})


def test_a_served_prompt_relays_another_servers_tools_awaited_on_its_loop() -> None:
    """A prompt holding an ``McpToolsSection`` served over MCP: the served call awaits the
    imported tool (its ``async_handler``) on the server's loop, with no worker thread."""
    upstream = mcp_sdk.server.mcpserver.MCPServer("upstream", log_level="WARNING")

    @upstream.tool()
    def shout(text: str) -> str:
        return text.upper()

    section = mcp.McpToolsSection(mcp.McpServer.in_process(upstream), prefix="up_")
    assert section.tools[0].awaited_handler is not None
    prompt = Prompt(PromptTemplate(ns="tests", key="relay", sections=[section]))
    served = mcp.server(prompt)

    async def main() -> tuple[str, Any, bool]:
        async with mcp_sdk.Client(served, mode="legacy") as client:
            result = await client.call_tool("up_shout", {"text": "hi"})
        return text_of(result), result.structured_content, bool(result.is_error)

    with prompt.resources:
        # The upstream's text, then the value it gave as structured content.
        assert anyio.run(main) == ('HI\n\n{"result":"HI"}', {"result": "HI"}, False)
