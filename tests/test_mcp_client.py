"""``McpToolsSection``: another MCP server's tools as wink tools, on servers wink did not write."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp_client_servers import calls, crafted, demo

from wink import (
    ApprovalPolicy,
    PolicyDecision,
    Prompt,
    PromptTemplate,
    PromptValidationError,
    Session,
    Tool,
    ToolContext,
    ToolInvoked,
    ToolResult,
)
from wink.providers import openai
from wink.providers.mcp import (
    McpClients,
    McpConnectionError,
    McpServer,
    McpToolCall,
    McpToolsSection,
    is_destructive,
)
from wink.runtime import ToolCall, ToolExecutor
from wink.testing import ScriptedAdapter, ToolMessage, call

SERVERS = Path(__file__).parent / "mcp_client_servers.py"


def executor_for(section: McpToolsSection, *policies: Any) -> tuple[ToolExecutor, Prompt]:
    template = PromptTemplate(ns="test", key="mcp", sections=[section], policies=policies)
    prompt = Prompt(template)
    return ToolExecutor(prompt=prompt, session=Session()), prompt


@pytest.fixture
def demo_section() -> McpToolsSection:
    return McpToolsSection(McpServer.in_process(demo))


@pytest.fixture
def demo_executor(demo_section: McpToolsSection) -> Iterator[ToolExecutor]:
    executor, prompt = executor_for(demo_section)
    with prompt.resources:
        calls.clear()
        yield executor


def text_result(text: str, *, is_error: bool = False, structured: Any = None) -> Any:
    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            is_error=is_error,
            structured_content=structured,
        )

    return answer


def one_tool(input_schema: Any, **fields: Any) -> list[dict[str, Any]]:
    return [{"name": "probe", "description": "A probe.", "inputSchema": input_schema, **fields}]


HELLO = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))
OBJECT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


# --- import ---------------------------------------------------------------------------


def test_each_listed_tool_becomes_a_tool_in_listing_order(demo_section: McpToolsSection) -> None:
    assert [tool.name for tool in demo_section.tools] == [
        "add",
        "echo",
        "fail",
        "sleep",
        "crash",
        "pid",
    ]


def test_imported_params_schema_is_the_servers_with_objects_closed(
    demo_section: McpToolsSection,
) -> None:
    add = demo_section.tools[0]
    assert add.params_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert add.result_schema == {
        "type": "object",
        "properties": {"total": {"type": "integer"}},
        "required": ["total"],
        "additionalProperties": False,
    }


def test_description_is_the_first_paragraph_and_the_text_gives_the_full_one(
    demo_section: McpToolsSection,
) -> None:
    assert demo_section.tools[0].description == "Add two integers."
    assert demo_section.render_body(None) == (
        "Arithmetic and echoes.\n\n`add`: Add two integers.\n\n"
        "    The second paragraph is shown in the section's text only."
    )


def test_read_only_hint_lets_calls_overlap_and_others_run_in_order(
    demo_section: McpToolsSection,
) -> None:
    assert {tool.name: tool.sequential for tool in demo_section.tools[:3]} == {
        "add": True,
        "echo": False,
        "fail": True,
    }


def test_read_only_calls_of_a_model_turn_run_at_once_with_no_worker_thread() -> None:
    """Three read-only calls of one turn, each answered only once all three arrived (or
    failing after 5 s): they succeed only if they overlap."""
    server = MCPServer("barrier", log_level="WARNING")
    arrived: list[str] = []
    everyone = asyncio.Event()

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
    async def meet(name: str) -> str:
        arrived.append(name)
        if len(arrived) == 3:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 5)
        return f"{name} met {len(arrived)}"

    section = McpToolsSection(McpServer.in_process(server))
    turn = [call("meet", {"name": name}, name) for name in ("a", "b", "c")]
    adapter = ScriptedAdapter([turn, "done"])
    prompt = Prompt(PromptTemplate(ns="test", key="barrier", sections=[section]))
    session = Session()
    before = set(threading.enumerate())
    with prompt.resources:
        response = asyncio.run(adapter.aevaluate(prompt, session=session))
        # The connection's loop thread is the only thread the calls started.
        started = [thread.name for thread in set(threading.enumerate()) - before]
    assert response.text == "done"
    assert [(event.call_id, event.result.message) for event in session[ToolInvoked]] == [
        ("a", "a met 3"),
        ("b", "b met 3"),
        ("c", "c met 3"),
    ]
    assert started == ["mcp-barrier"]


def test_unbuilt_singletons_say_whether_a_call_could_still_build_one() -> None:
    section = McpToolsSection(McpServer.in_process(demo))
    prompt = Prompt(PromptTemplate(ns="test", key="built", sections=[section]))
    view = prompt.resources.for_session(Session())
    before = view.unbuilt_singletons
    view.get(McpClients)
    assert (
        before,
        view.unbuilt_singletons,
        Prompt(PromptTemplate(ns="t", key="k")).resources.unbuilt_singletons,
    ) == (
        True,
        False,
        False,
    )
    view.close()


def test_handler_records_that_the_call_cannot_be_rolled_back(
    demo_section: McpToolsSection,
) -> None:
    handler = demo_section.tools[1].handler
    assert isinstance(handler, McpToolCall)
    assert (handler.remote_name, handler.read_only, handler.can_roll_back) == ("echo", True, False)


def test_a_tool_is_destructive_unless_read_only_or_marked_otherwise() -> None:
    server = MCPServer("hints", log_level="WARNING")

    @server.tool()
    def erase(path: str) -> str:
        """Erase a file."""
        return path

    @server.tool(annotations=types.ToolAnnotations(destructive_hint=False))
    def append(path: str) -> str:
        """Append to a file."""
        return path

    @server.tool(annotations=types.ToolAnnotations(read_only_hint=True))
    def peek(path: str) -> str:
        """Read a file."""
        return path

    section = McpToolsSection(McpServer.in_process(server))
    assert {tool.name: is_destructive(tool, None) for tool in section.tools} == {
        "erase": True,
        "append": False,
        "peek": False,
    }


def test_approval_policy_defers_the_calls_of_destructive_imported_tools(
    demo_section: McpToolsSection,
) -> None:
    policy = ApprovalPolicy(when=is_destructive)
    add, echo = demo_section.tools[0], demo_section.tools[1]
    context = ToolContext(prompt=None, rendered_prompt=None, adapter=None, session=None)
    assert policy.check(add, None, context=context) == PolicyDecision.defer(
        "policy 'approval' asks a person to approve 'add'"
    )
    assert policy.check(echo, None, context=context).allowed


def test_prefix_and_allow_keep_the_named_tools_under_prefixed_names() -> None:
    section = McpToolsSection(McpServer.in_process(demo), prefix="calc_", allow=["add", "echo"])
    assert [tool.name for tool in section.tools] == ["calc_add", "calc_echo"]


def test_deny_drops_the_named_tools() -> None:
    section = McpToolsSection(McpServer.in_process(demo), deny=["crash", "sleep", "pid"])
    assert [tool.name for tool in section.tools] == ["add", "echo", "fail"]


def test_allow_naming_an_unlisted_tool_is_refused_with_the_listed_names() -> None:
    with pytest.raises(PromptValidationError) as raised:
        McpToolsSection(McpServer.in_process(demo), allow=["add", "ad"])
    assert str(raised.value) == (
        "McpToolsSection allow names tools MCP server 'demo' does not list: 'ad' "
        "(it lists: add, echo, fail, sleep, crash, pid)"
    )


def test_remote_names_are_lowercased_and_unnameable_characters_replaced() -> None:
    tools = [{"name": "Get.User", "inputSchema": {"type": "object"}}]
    section = McpToolsSection(McpServer.in_process(crafted(tools, text_result("x"))))
    handler = section.tools[0].handler
    assert isinstance(handler, McpToolCall)
    assert (section.tools[0].name, handler.remote_name) == ("get_user", "Get.User")
    assert section.tools[0].description == "Tool Get.User of MCP server crafted"


def test_invalid_input_schema_is_refused_naming_server_and_tool() -> None:
    server = crafted(
        one_tool({"type": "object", "properties": {"n": {"type": 5}}}), text_result("")
    )
    with pytest.raises(PromptValidationError) as raised:
        McpToolsSection(McpServer.in_process(server))
    assert str(raised.value).startswith(
        "MCP server 'crafted' tool 'probe' inputSchema: the schema is not valid Draft 2020-12 "
        "at properties/n/type: 5 is not valid under any of the given schemas"
    )


def test_reference_outside_the_schema_is_refused() -> None:
    schema = {"type": "object", "properties": {"n": {"$ref": "https://example.com/n.json"}}}
    server = crafted(one_tool(schema), text_result(""))
    with pytest.raises(PromptValidationError) as raised:
        McpToolsSection(McpServer.in_process(server))
    assert str(raised.value) == (
        "MCP server 'crafted' tool 'probe' inputSchema: /properties/n: $ref "
        '"https://example.com/n.json" points outside the schema; only references within it '
        '("#/...") are followed'
    )


def test_object_listing_properties_and_allowing_others_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "additionalProperties": True,
    }
    server = crafted(one_tool(schema), text_result(""))
    with pytest.raises(PromptValidationError) as raised:
        McpToolsSection(McpServer.in_process(server))
    assert str(raised.value) == (
        "MCP server 'crafted' tool 'probe' inputSchema: <root>: an object that lists its "
        "properties and allows others (additionalProperties: true) cannot be stated as wink "
        "states objects (closed to unlisted keys)"
    )


def test_invalid_output_schema_is_refused_naming_server_and_tool() -> None:
    tools = one_tool(OBJECT, outputSchema={"type": "object", "minProperties": -1})
    with pytest.raises(PromptValidationError) as raised:
        McpToolsSection(McpServer.in_process(crafted(tools, text_result(""))))
    assert str(raised.value).startswith(
        "MCP server 'crafted' tool 'probe' outputSchema: the schema is not valid Draft 2020-12"
    )


def test_unreachable_server_fails_the_import_after_the_attempts() -> None:
    server = McpServer.stdio(
        [sys.executable, "-c", "import sys; sys.exit(2)"],
        name="gone",
        connect_attempts=2,
        retry_delay=0.01,
        connect_timeout=10,
    )
    with pytest.raises(McpConnectionError) as raised:
        McpToolsSection(server)
    assert str(raised.value).startswith(
        "could not connect to MCP server 'gone' after 2 attempt(s): "
    )


# --- calls ----------------------------------------------------------------------------


def test_call_returns_structured_content_as_the_value(demo_executor: ToolExecutor) -> None:
    result = demo_executor.execute(ToolCall("add", '{"a": 2, "b": 3}', "c1"))
    assert (result.success, result.value, result.message, result.model_text()) == (
        True,
        {"total": 5},
        "",
        '{"total":5}',
    )


def test_arguments_are_checked_before_sending_with_located_messages(
    demo_executor: ToolExecutor,
) -> None:
    result = demo_executor.execute(ToolCall("add", '{"a": "2", "c": 1}', "c1"))
    assert (result.success, result.message) == (
        False,
        "Invalid arguments for tool 'add':\na: expected an integer (got \"2\")\n"
        "b: required field is missing\nc: unknown field (allowed: a, b)",
    )
    assert calls == []


def test_server_error_result_is_a_failed_call_with_its_message(
    demo_executor: ToolExecutor,
) -> None:
    result = demo_executor.execute(ToolCall("fail", {"reason": "no luck"}, "c1"))
    assert (result.success, result.message) == (False, "Error executing tool fail: no luck")


def test_each_call_is_recorded_as_tool_invoked(demo_section: McpToolsSection) -> None:
    executor, prompt = executor_for(demo_section)
    with prompt.resources:
        executor.execute(ToolCall("echo", {"text": "hi"}, "c1"))
        executor.execute(ToolCall("fail", {"reason": "no"}, "c2"))
    recorded = executor._session[ToolInvoked].all()
    assert [(event.name, event.success, event.rolled_back) for event in recorded] == [
        ("echo", True, False),
        ("fail", False, True),
    ]
    assert recorded[0].rendered_output == '{"result":"hi"}'


@dataclass(frozen=True)
class RefuseAll:
    name: str = "refuse_all"

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        return PolicyDecision.deny(f"{tool.name} is not allowed here")

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        return None


def test_a_policy_decides_before_anything_is_sent(demo_section: McpToolsSection) -> None:
    executor, prompt = executor_for(demo_section, RefuseAll())
    calls.clear()
    with prompt.resources:
        result = executor.execute(ToolCall("add", {"a": 1, "b": 1}, "c1"))
    assert (result.success, result.message, calls) == (False, "add is not allowed here", [])


def test_async_calls_of_a_turn_are_answered_in_call_order(demo_executor: ToolExecutor) -> None:
    turn = [
        ToolCall("echo", {"text": "one"}, "c1"),
        ToolCall("add", {"a": 1, "b": 1}, "c2"),
        ToolCall("echo", {"text": "two"}, "c3"),
    ]
    results = asyncio.run(demo_executor.aexecute_all(turn))
    assert [result.value for result in results] == [
        {"result": "one"},
        {"total": 2},
        {"result": "two"},
    ]


def test_structured_content_not_matching_the_output_schema_is_a_located_failure() -> None:
    tools = one_tool(OBJECT, outputSchema=OBJECT)
    server = crafted(tools, text_result("n is a word", structured={"n": "three"}))
    executor, prompt = executor_for(McpToolsSection(McpServer.in_process(server)))
    with prompt.resources:
        result = executor.execute(ToolCall("probe", {"n": 1}, "c1"))
    # The mcp client checks it first, with its own words; wink's check is the second.
    assert result.success is False
    assert "structured" in result.message and "'three' is not of type 'integer'" in result.message


def test_missing_structured_content_is_a_failure_naming_the_tool() -> None:
    tools = one_tool(OBJECT, outputSchema=OBJECT)
    executor, prompt = executor_for(
        McpToolsSection(McpServer.in_process(crafted(tools, text_result("plain"))))
    )
    with prompt.resources:
        result = executor.execute(ToolCall("probe", {"n": 1}, "c1"))
    assert result.success is False
    assert result.message.startswith("MCP server 'crafted' refused tools/call 'probe': ") or (
        "did not return structured content" in result.message
    )


def test_other_content_is_described_in_the_text_the_model_reads() -> None:
    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="Here:"),
                types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
                types.ResourceLink(type="resource_link", uri="file:///a.txt", name="a"),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(uri="file:///b.txt", text="inline text"),
                ),
            ]
        )

    executor, prompt = executor_for(
        McpToolsSection(McpServer.in_process(crafted(one_tool(OBJECT), answer)))
    )
    with prompt.resources:
        result = executor.execute(ToolCall("probe", {"n": 1}, "c1"))
    assert (result.success, result.message) == (
        True,
        "Here:\n\n[image image/png, about 3 bytes]\n\n[resource file:///a.txt]\n\ninline text",
    )


def test_a_call_over_its_timeout_fails_and_the_next_call_still_works() -> None:
    section = McpToolsSection(McpServer.in_process(demo, call_timeout=0.3), allow=["sleep", "echo"])
    executor, prompt = executor_for(section)
    with prompt.resources:
        slow = executor.execute(ToolCall("sleep", {"seconds": 2}, "c1"))
        after = executor.execute(ToolCall("echo", {"text": "still here"}, "c2"))
    assert (slow.success, slow.message) == (
        False,
        "MCP server 'demo' did not answer tools/call 'sleep' within 0.3 s",
    )
    assert after.value == {"result": "still here"}


@pytest.mark.filterwarnings("ignore:The sampling capability is deprecated")
def test_sampling_request_is_refused_clearly_without_a_handler() -> None:
    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            await ctx.session.create_message(
                [
                    types.SamplingMessage(
                        role="user", content=types.TextContent(type="text", text="hi")
                    )
                ],
                max_tokens=5,
            )
        except Exception as error:
            return types.CallToolResult(content=[types.TextContent(type="text", text=str(error))])
        return types.CallToolResult(content=[types.TextContent(type="text", text="sampled")])

    executor, prompt = executor_for(
        McpToolsSection(McpServer.in_process(crafted(one_tool(OBJECT), answer)))
    )
    with prompt.resources:
        result = executor.execute(ToolCall("probe", {"n": 1}, "c1"))
    assert result.message == (
        "this client does not answer sampling requests (pass sampling=... to McpServer "
        "'crafted' to answer them)"
    )


@pytest.mark.filterwarnings("ignore:The sampling capability is deprecated")
def test_sampling_request_is_answered_by_the_given_handler() -> None:
    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        sampled = await ctx.session.create_message([HELLO], max_tokens=5)
        return types.CallToolResult(content=[sampled.content])

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="hello"), model="fake"
        )

    server = McpServer.in_process(crafted(one_tool(OBJECT), answer), sampling=sampling)
    executor, prompt = executor_for(McpToolsSection(server))
    with prompt.resources:
        result = executor.execute(ToolCall("probe", {"n": 1}, "c1"))
    assert (result.success, result.message) == (True, "hello")


def test_a_tool_the_server_no_longer_lists_fails_without_being_sent() -> None:
    listed = [one_tool(OBJECT)[0], {**one_tool(OBJECT)[0], "name": "other"}]
    sent: list[str] = []

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in listed])

    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        sent.append(params.name)
        if params.name == "probe":
            del listed[0]
            await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    from mcp.server import Server

    server = Server("changing", on_list_tools=list_tools, on_call_tool=answer)
    executor, prompt = executor_for(McpToolsSection(McpServer.in_process(server)))
    with prompt.resources:
        first = executor.execute(ToolCall("probe", {"n": 1}, "c1"))
        second = executor.execute(ToolCall("probe", {"n": 2}, "c2"))
        other = executor.execute(ToolCall("other", {"n": 3}, "c3"))
    assert (first.success, second.success, other.success) == (True, False, True)
    assert second.message == (
        "MCP server 'changing' no longer lists tool 'probe'; import its tools again "
        "(McpToolsSection.refresh(), then a new template)"
    )
    assert sent == ["probe", "other"]


def changing_server(listed: list[dict[str, Any]], sent: list[str]) -> Any:
    """A server listing ``listed`` as it is at each ``tools/list``; it records the calls sent,
    and a call of ``change`` edits ``listed`` as its arguments say and notifies the client."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in listed])

    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        sent.append(params.name)
        arguments = params.arguments or {}
        if params.name == "change":
            listed[0] = {**listed[0], "inputSchema": {**OBJECT, "required": []}}
            listed.append({**listed[0], "name": "added"})
            await ctx.session.send_tool_list_changed()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"{params.name} {arguments}")]
        )

    from mcp.server import Server

    return Server("changing", on_list_tools=list_tools, on_call_tool=answer)


CHANGED = (
    "MCP server 'changing' changed the inputSchema of tool 'probe' since it was imported, so "
    "the call was not sent; import its tools again (McpToolsSection.refresh(), then a new "
    "template)"
)


def test_a_changed_tool_fails_at_every_call_until_the_tools_are_imported_again() -> None:
    listed = [one_tool(OBJECT)[0], {**one_tool(OBJECT)[0], "name": "change"}]
    sent: list[str] = []
    executor, prompt = executor_for(
        McpToolsSection(McpServer.in_process(changing_server(listed, sent)))
    )
    with prompt.resources:
        executor.execute(ToolCall("change", {"n": 0}, "c1"))
        first = executor.execute(ToolCall("probe", {"n": 1}, "c2"))
        again = executor.execute(ToolCall("probe", {"n": 2}, "c3"))
    assert (first.success, first.message, again.success, again.message) == (
        False,
        CHANGED,
        False,
        CHANGED,
    )
    assert sent == ["change"]


def test_an_evaluation_offers_the_tools_as_listed_again_after_the_server_changed_them() -> None:
    listed = [one_tool(OBJECT)[0], {**one_tool(OBJECT)[0], "name": "change"}]
    sent: list[str] = []
    section = McpToolsSection(McpServer.in_process(changing_server(listed, sent)))
    template = PromptTemplate(ns="test", key="changing", sections=[section])
    adapter = ScriptedAdapter(
        [call("change", {"n": 0}, "c1"), call("probe", {}, "c2"), call("added", {}, "c3"), "done"]
    )
    prompt = Prompt(template)
    session = Session()
    with prompt.resources:
        response = adapter.evaluate(prompt, session=session)
    offered = [[tool.name for tool in model_input.tools] for model_input in adapter.inputs]
    assert offered == [
        ["probe", "change"],
        ["probe", "change", "added"],
        ["probe", "change", "added"],
        ["probe", "change", "added"],
    ]
    assert [tool.parameters["required"] for tool in adapter.inputs[1].tools] == [[], ["n"], []]
    assert adapter.inputs[3].tool_messages() == (ToolMessage("c3", "added", "added {}", True),)
    assert (response.text, sent) == ("done", ["change", "probe", "added"])
    # The template built with the section keeps the tools it was built with.
    assert [tool.name for tool in prompt.render().tools] == ["probe", "change"]
    assert [event.name for event in session[ToolInvoked].all()] == ["change", "probe", "added"]


def test_an_async_evaluation_lists_the_changed_tools_off_its_event_loop() -> None:
    listed = [one_tool(OBJECT)[0], {**one_tool(OBJECT)[0], "name": "change"}]
    sent: list[str] = []
    section = McpToolsSection(McpServer.in_process(changing_server(listed, sent)))
    adapter = ScriptedAdapter([call("change", {"n": 0}, "c1"), call("added", {}, "c2"), "done"])
    prompt = Prompt(PromptTemplate(ns="test", key="changing", sections=[section]))
    with prompt.resources:
        response = asyncio.run(adapter.aevaluate(prompt, session=Session()))
    offered = [[tool.name for tool in model_input.tools] for model_input in adapter.inputs]
    assert offered == [["probe", "change"], *[["probe", "change", "added"]] * 2]
    assert (response.text, sent) == ("done", ["change", "added"])


@pytest.mark.parametrize("streamed", ["stream", "astream"])
def test_a_streamed_evaluation_offers_the_changed_tools_too(streamed: str) -> None:
    from wink.adapters import EvaluationFinished

    listed = [one_tool(OBJECT)[0], {**one_tool(OBJECT)[0], "name": "change"}]
    sent: list[str] = []
    section = McpToolsSection(McpServer.in_process(changing_server(listed, sent)))
    adapter = ScriptedAdapter([call("change", {"n": 0}, "c1"), call("added", {}, "c2"), "done"])
    prompt = Prompt(PromptTemplate(ns="test", key="changing", sections=[section]))

    async def events_of_astream() -> list[Any]:
        async with adapter.astream(prompt, session=Session()) as stream:
            return [event async for event in stream]

    with prompt.resources:
        if streamed == "stream":
            with adapter.stream(prompt, session=Session()) as stream:
                events = list(stream)
        else:
            events = asyncio.run(events_of_astream())
    offered = [[tool.name for tool in model_input.tools] for model_input in adapter.inputs]
    assert offered == [["probe", "change"], *[["probe", "change", "added"]] * 2]
    assert isinstance(events[-1], EvaluationFinished)
    assert (events[-1].response.text, sent) == ("done", ["change", "added"])


def test_a_pause_after_the_tools_were_refreshed_resumes_with_the_prompt_as_given() -> None:
    from wink import Approval, ApprovalPending

    listed = [one_tool(OBJECT)[0], {**one_tool(OBJECT)[0], "name": "change"}]
    sent: list[str] = []
    section = McpToolsSection(McpServer.in_process(changing_server(listed, sent)))
    template = PromptTemplate(
        ns="test",
        key="approved",
        sections=[section],
        policies=[ApprovalPolicy(when=is_destructive)],
    )
    adapter = ScriptedAdapter([call("change", {"n": 0}, "c1"), call("added", {}, "c2"), "done"])
    prompt = Prompt(template)
    session = Session()
    awaiting: list[tuple[str, ...]] = []
    with prompt.resources:
        with pytest.raises(ApprovalPending) as first:
            adapter.evaluate(prompt, session=session)
        awaiting.append(tuple(request.call_id for request in first.value.requests))
        with pytest.raises(ApprovalPending) as second:
            adapter.resume(prompt, session=session, decisions={"c1": Approval.approve()})
        awaiting.append(tuple(request.call_id for request in second.value.requests))
        response = adapter.resume(prompt, session=session, decisions={"c2": Approval.approve()})
    assert (awaiting, response.text, sent) == ([("c1",), ("c2",)], "done", ["change", "added"])


def test_a_notice_without_a_change_keeps_the_template_and_is_not_listed_again() -> None:
    listed = [one_tool(OBJECT)[0]]
    listings: list[int] = []

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        listings.append(1)
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in listed])

    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(type="text", text="same")])

    from mcp.server import Server

    server = Server("renotifying", on_list_tools=list_tools, on_call_tool=answer)
    section = McpToolsSection(McpServer.in_process(server))
    prompt = Prompt(PromptTemplate(ns="test", key="same", sections=[section]))
    session = Session()
    resources = prompt.resources.for_session(session)
    with prompt.resources:
        executor = ToolExecutor(prompt=prompt, session=session)
        assert executor.execute(ToolCall("probe", {"n": 1}, "c1")).success
        changed_after_call = prompt.tools_changed(session)
        before = len(listings)
        refreshed = prompt.refreshed(session)
        changed_after_refresh = section.tools_changed(resources)
        again = prompt.refreshed(session)
    assert (changed_after_call, refreshed, changed_after_refresh, again) == (
        True,
        None,
        False,
        None,
    )
    assert len(listings) - before == 1  # listed once after the notice, then not again


def test_a_refreshed_section_nested_in_a_grouping_section_is_replaced_in_a_copy() -> None:
    from wink import MarkdownSection

    listed = [one_tool(OBJECT)[0], {**one_tool(OBJECT)[0], "name": "change"}]
    sent: list[str] = []
    section = McpToolsSection(McpServer.in_process(changing_server(listed, sent)), key="remote")
    parent = MarkdownSection(title="Tools", template="Use the tools.", children=[section])
    prompt = Prompt(PromptTemplate(ns="test", key="nested", sections=[parent]))
    session = Session()
    with prompt.resources:
        assert prompt.refreshed(session) is None
        ToolExecutor(prompt=prompt, session=session).execute(ToolCall("change", {"n": 0}, "c1"))
        fresh = prompt.refreshed(session)
    assert fresh is not None
    (fresh_parent,) = fresh.template.sections
    assert (fresh_parent is not parent, parent.children, fresh.resources) == (
        True,
        (section,),
        prompt.resources,
    )
    assert [tool.name for tool in fresh.render().tools] == ["probe", "change", "added"]
    assert fresh.render().text == prompt.render().text
    assert [tool.name for tool in prompt.render().tools] == ["probe", "change"]


def test_refresh_is_a_new_section_or_none_and_templates_built_earlier_keep_their_tools() -> None:
    listed = [one_tool(OBJECT)[0], {**one_tool(OBJECT)[0], "name": "change"}]
    sent: list[str] = []
    section = McpToolsSection(McpServer.in_process(changing_server(listed, sent)), prefix="s_")
    earlier = PromptTemplate(ns="test", key="earlier", sections=[section])
    unchanged = section.refresh()
    executor, prompt = executor_for(section)
    with prompt.resources:
        executor.execute(ToolCall("s_change", {"n": 0}, "c1"))
    fresh = section.refresh()
    assert unchanged is None and fresh is not None
    later = PromptTemplate(ns="test", key="later", sections=[fresh])
    assert [tool.name for tool in Prompt(earlier).render().tools] == ["s_probe", "s_change"]
    assert [tool.name for tool in Prompt(later).render().tools] == [
        "s_probe",
        "s_change",
        "s_added",
    ]
    assert (
        fresh.tools[0].params_schema["required"],
        section.tools[0].params_schema["required"],
    ) == ([], ["n"])
    assert fresh.refresh() is None
    executor, prompt = executor_for(fresh)
    with prompt.resources:
        result = executor.execute(ToolCall("s_probe", {}, "c2"))
    assert (result.success, result.message, sent) == (True, "probe {}", ["change", "probe"])


def test_null_for_a_defaulted_argument_is_left_out_for_the_server_to_default() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "limit": {"type": "integer", "default": 10},
            "page": {"type": "object", "properties": {"size": {"type": "integer", "default": 5}}},
            "tag": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "new"},
        },
        "required": ["n"],
    }
    received: list[Any] = []

    async def answer(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        received.append(params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])

    executor, prompt = executor_for(
        McpToolsSection(McpServer.in_process(crafted(one_tool(schema), answer)))
    )
    with prompt.resources:
        result = executor.execute(
            ToolCall("probe", '{"n": 1, "limit": null, "page": {"size": null}, "tag": null}', "c1")
        )
        refused = executor.execute(ToolCall("probe", '{"n": null}', "c2"))
    # A property whose own type takes null keeps it: there null is a value, not the default.
    assert (result.success, received) == (True, [{"n": 1, "page": {}, "tag": None}])
    assert (refused.success, refused.message) == (
        False,
        "Invalid arguments for tool 'probe':\nn: expected an integer (got null)",
    )


# --- provider dialects ----------------------------------------------------------------


def test_imported_tool_goes_to_openai_strict(demo_section: McpToolsSection) -> None:
    (spec,) = openai.tool_specs([demo_section.tools[0]])
    assert spec == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


# --- subprocesses: stdio and Streamable HTTP ------------------------------------------


def test_stdio_server_is_imported_called_and_ended_with_the_resources(tmp_path: Path) -> None:
    server = McpServer.stdio([sys.executable, str(SERVERS)], name="demo-stdio")
    section = McpToolsSection(server, allow=["add", "pid"])
    executor, prompt = executor_for(section)
    with prompt.resources:
        added = executor.execute(ToolCall("add", {"a": 20, "b": 22}, "c1"))
        pid = executor.execute(ToolCall("pid", {}, "c2")).value
    assert added.value == {"total": 42}
    assert isinstance(pid, dict)
    assert _process_ended(pid["result"])


def _process_ended(pid: int) -> bool:
    import time

    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_server_that_died_is_a_failed_call_and_the_next_call_reconnects() -> None:
    server = McpServer.stdio([sys.executable, str(SERVERS)], name="demo-stdio", retry_delay=0.05)
    executor, prompt = executor_for(McpToolsSection(server, allow=["crash", "pid"]))
    with prompt.resources:
        first = executor.execute(ToolCall("pid", {}, "c1")).value
        crashed = executor.execute(ToolCall("crash", {}, "c2"))
        second = executor.execute(ToolCall("pid", {}, "c3")).value
    assert crashed.success is False
    assert crashed.message.startswith("the connection to MCP server 'demo-stdio' was lost")
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["result"] != second["result"]


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_streamable_http_server_is_imported_and_called() -> None:
    import subprocess

    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        server = McpServer.http(
            f"http://127.0.0.1:{port}/mcp", name="demo-http", connect_attempts=8, retry_delay=0.1
        )
        executor, prompt = executor_for(McpToolsSection(server, allow=["add"]))
        with prompt.resources:
            result = executor.execute(ToolCall("add", {"a": 1, "b": 2}, "c1"))
        assert result.value == {"total": 3}
    finally:
        process.terminate()
        process.wait(10)


def test_server_everything_from_npm_when_npx_is_available() -> None:
    import shutil

    if shutil.which("npx") is None:
        pytest.skip("npx is not installed: @modelcontextprotocol/server-everything needs it")
    if os.environ.get("CI"):
        pytest.skip("not run in CI: it fetches @modelcontextprotocol/server-everything from npm")
    server = McpServer.stdio(
        ["npx", "-y", "@modelcontextprotocol/server-everything"], name="everything"
    )
    executor, prompt = executor_for(McpToolsSection(server, allow=["echo"]))
    with prompt.resources:
        result = executor.execute(ToolCall("echo", {"message": "hi"}, "c1"))
    assert (result.success, result.message) == (True, "Echo: hi")


def test_clients_resource_closes_every_connection() -> None:
    clients = McpClients()
    server = McpServer.in_process(demo)
    connection = clients.connection(server)
    assert clients.connection(server) is connection
    clients.close()
    with pytest.raises(McpConnectionError) as raised:
        connection.list_tools()
    assert str(raised.value) == "the connection to MCP server 'demo' is closed"


# --- wink serve, imported by another wink prompt --------------------------------------

ROOT = Path(__file__).parent.parent
WINK = [sys.executable, "-c", "import sys; from wink.cli import main; sys.exit(main())"]


def test_a_prompt_served_by_wink_serve_is_called_through_an_adapter(tmp_path: Path) -> None:
    (tmp_path / "todo.md").write_text("bread")
    server = McpServer.stdio(
        [*WINK, "serve", "examples/served_notes.py:prompt"],
        name="notes",
        env={**os.environ, "WINK_NOTES_DIR": str(tmp_path)},
        cwd=str(ROOT),
    )
    section = McpToolsSection(server, prefix="notes_")
    template = PromptTemplate(ns="test", key="importer", sections=[section])
    adapter = ScriptedAdapter(
        [
            call("notes_write_file", {"path": "todo.md", "text": "milk"}, "c1"),
            call("notes_read_file", {"path": "todo.md"}, "c2"),
            "The list says bread.",
        ]
    )
    prompt = Prompt(template)
    session = Session()
    with prompt.resources:
        response = adapter.evaluate(prompt, session=session)
    assert [tool.name for tool in section.tools] == ["notes_read_file", "notes_write_file"]
    # The served prompt's own policy (read before write) answers through the import.
    assert adapter.inputs[1].tool_messages() == (
        ToolMessage(
            "c1",
            "notes_write_file",
            "File 'todo.md' already exists and has not been read: call read_file on it before "
            "overwriting it (policy 'read_before_write').",
            False,
        ),
    )
    assert adapter.inputs[2].tool_messages() == (
        ToolMessage(
            "c2",
            "notes_read_file",
            'Read todo.md.\n\ntodo.md:\nbread\n\n{"path":"todo.md","text":"bread"}',
            True,
        ),
    )
    assert response.text == "The list says bread."
    recorded = session[ToolInvoked].all()
    assert [(event.name, event.success) for event in recorded] == [
        ("notes_write_file", False),
        ("notes_read_file", True),
    ]
    assert (tmp_path / "todo.md").read_text() == "bread"
