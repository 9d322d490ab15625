"""The examples of TOOLS.md and the tools guide, as written (imports from ``wink``).

Each test copies a spec example and supplies only what the spec leaves out (the
types and tools it assumes, a title where the spec elides it), then checks that it
does what the spec says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wink import (
    Binding,
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    Scope,
    SequentialDependencyPolicy,
    Session,
    Tool,
    ToolContext,
    ToolExample,
    ToolResult,
)
from wink.contrib.planning import AddStep, Plan, PlanningToolsSection, SetupPlan, UpdateStep
from wink.contrib.vfs import VfsToolsSection
from wink.runtime import ToolCall, ToolExecutor

# --- tools-guide "Tool Contracts" skeleton ---------------------------------------------


@dataclass(slots=True, frozen=True)
class MyParams:
    query: str


@dataclass(slots=True, frozen=True)
class MyResult:
    answer: str

    def render(self) -> str:
        return self.answer


def handler(params: MyParams, *, context: ToolContext) -> ToolResult[MyResult]:
    # Do work here (read files, call an API, etc.)
    return ToolResult.ok(MyResult(answer="42"), message="ok")


tool = Tool[MyParams, MyResult](
    name="my_tool",
    description="Do a thing.",
    handler=handler,
)


def executor_for(*sections: Any, resources: Any = None, policies: Any = ()) -> ToolExecutor:
    template = PromptTemplate(ns="spec", key="examples", sections=sections, policies=policies)
    return ToolExecutor(prompt=Prompt(template, resources=resources), session=Session())


def test_the_tool_skeleton_runs_and_renders_its_answer() -> None:
    executor = executor_for(MarkdownSection(title="Tools", tools=[tool]))
    result = executor.execute(ToolCall("my_tool", '{"query": "meaning"}'))
    assert (result.success, result.message, result.render()) == (True, "ok", "42")


def test_tool_result_factories_and_full_form() -> None:
    # Success with typed value (most common)
    done = ToolResult.ok(MyResult("x"), message="Done")
    # Failure with no value
    failed = ToolResult[MyResult].error("Something went wrong")
    # Full form (when exclude_value_from_context is needed)
    full = ToolResult(
        message="Human-readable status",
        value=MyResult("big"),
        success=True,
        exclude_value_from_context=False,
    )
    assert (done.success, done.value, failed.success, failed.value) == (
        True,
        MyResult("x"),
        False,
        None,
    )
    assert full.model_text() == "Human-readable status\n\nbig"


@dataclass(frozen=True)
class NowParams:
    tz: str


@dataclass(frozen=True)
class NowResult:
    iso: str


def now_handler(params: NowParams, *, context: ToolContext) -> ToolResult[NowResult]:
    return ToolResult.ok(NowResult("2025-01-01T00:00:00+00:00"))


def test_the_tool_example_example_is_accepted() -> None:
    now = Tool[NowParams, NowResult](
        name="now",
        description="Return UTC time.",
        handler=now_handler,
        examples=(
            ToolExample(
                description="Get UTC time",
                input=NowParams(tz="UTC"),
                output=NowResult(iso="2025-01-01T00:00:00+00:00"),
            ),
        ),
    )
    assert now.examples[0].output == NowResult("2025-01-01T00:00:00+00:00")


# --- TOOLS.md "Resource Access" --------------------------------------------------------


@dataclass(frozen=True)
class Params:
    path: str


@dataclass(frozen=True)
class Result:
    same: bool
    text: str


def my_handler(params: Params, *, context: ToolContext) -> ToolResult[Result]:
    fs = context.resources.get(Filesystem)
    # Or shorthand: fs = context.filesystem
    return ToolResult.ok(Result(fs is context.filesystem, fs.read(params.path)))


def test_resource_access_and_the_filesystem_shorthand_agree() -> None:
    reader = Tool[Params, Result](name="read", description="Read.", handler=my_handler)
    files = InMemoryFilesystem(files={"a.txt": "hello"})
    executor = executor_for(
        MarkdownSection(title="Files", tools=[reader]), resources={Filesystem: files}
    )
    result = executor.execute(ToolCall("read", '{"path": "a.txt"}'))
    assert result.value == Result(True, "hello")


# --- TOOLS.md "Section Integration" -----------------------------------------------------


def test_the_section_integration_example_builds() -> None:
    lookup_tool = Tool[MyParams, MyResult](name="lookup", description="Look up.", handler=handler)
    search_tool = Tool[MyParams, MyResult](name="search", description="Search.", handler=handler)
    section = MarkdownSection[Params](
        title="Guidance",
        key="guidance",
        template="Use tools when needed.",
        tools=[lookup_tool, search_tool],
        policies=[ReadBeforeWritePolicy()],
    )
    template = PromptTemplate(ns="spec", key="integration", sections=[section])
    rendered = Prompt(template).bind(Params("x")).render()
    assert rendered.text == "## Guidance\n\nUse tools when needed."
    assert [t.name for t in rendered.tools] == ["lookup", "search"]


# --- TOOLS.md "Built-in Policies" and "Policy Integration" -------------------------------


def step(params: None, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="ok")


def step_tool(name: str) -> Tool[None, None]:
    return Tool[None, None](name=name, description=f"Run {name}.", handler=step)


lint, test, build, deploy = (step_tool(name) for name in ("lint", "test", "build", "deploy"))


@dataclass(frozen=True)
class FilePath:
    path: str


@dataclass(frozen=True)
class FileWrite:
    path: str
    content: str = "new"


def read_handler(params: FilePath, *, context: ToolContext) -> ToolResult[None]:
    context.require_filesystem().read(params.path)
    return ToolResult(message="read")


def write_handler(params: FileWrite, *, context: ToolContext) -> ToolResult[None]:
    context.require_filesystem().write(params.path, params.content)
    return ToolResult(message="written")


read_file = Tool[FilePath, None](name="read_file", description="Read.", handler=read_handler)
write_file = Tool[FileWrite, None](name="write_file", description="Write.", handler=write_handler)


def test_the_policy_integration_example_enforces_both_policies() -> None:
    policy = SequentialDependencyPolicy(
        dependencies={
            "deploy": frozenset({"test", "build"}),
            "build": frozenset({"lint"}),
        }
    )
    files = InMemoryFilesystem(files={"config.yaml": "a: 1"})
    template = PromptTemplate(
        ns="spec",
        key="policies",
        sections=[
            MarkdownSection(
                title="Files",  # the spec elides the titles
                tools=[read_file, write_file],
                policies=[ReadBeforeWritePolicy()],
            ),
            MarkdownSection(
                title="Release",
                tools=[lint, test, build, deploy],
                policies=[policy],
            ),
        ],
        policies=[],  # Prompt-level policies
    )
    executor = ToolExecutor(
        prompt=Prompt(template, resources={Filesystem: files}), session=Session()
    )

    def ok(name: str, arguments: str | None = None) -> bool:
        return executor.execute(ToolCall(name, arguments)).success

    # write_file("new.txt")      -> OK (doesn't exist)
    assert ok("write_file", '{"path": "new.txt"}')
    # write_file("config.yaml")  -> DENIED (exists, not read)
    assert not ok("write_file", '{"path": "config.yaml"}')
    # read_file("config.yaml")   -> OK (records path)
    assert ok("read_file", '{"path": "config.yaml"}')
    # write_file("config.yaml")  -> OK (was read)
    assert ok("write_file", '{"path": "config.yaml"}')

    assert [ok(name) for name in ("deploy", "build", "lint", "build", "test", "deploy")] == [
        False,
        False,
        True,
        True,
        True,
        True,
    ]


def test_the_guide_deployment_section_example() -> None:
    # Require 'test' and 'build' before 'deploy'
    deploy_policy = SequentialDependencyPolicy(
        dependencies={
            "deploy": frozenset({"test", "build"}),
        }
    )
    section = MarkdownSection(
        title="Deployment",
        key="deployment",
        template="Deploy the application after testing.",
        tools=(deploy, test, build),
        policies=(deploy_policy,),
    )
    executor = executor_for(section)
    denied = executor.execute(ToolCall("deploy"))
    assert denied.message == (
        "Tool 'deploy' cannot run yet: call build and test successfully first "
        "(policy 'sequential_dependency')."
    )


def test_vfs_section_applies_read_before_write_by_default() -> None:
    assert [type(policy) for policy in VfsToolsSection().policies] == [ReadBeforeWritePolicy]


def test_the_vfs_suite_installs_a_filesystem_automatically() -> None:
    # "Many contributed tool suites install one automatically (VFS, Podman)."
    executor = executor_for(VfsToolsSection())
    write = ToolCall("write_file", '{"path": "a.txt", "content": "hi"}')
    assert executor.execute(write).success
    assert executor.execute(ToolCall("read_file", '{"path": "a.txt"}')).render() == "hi"


# --- tools-guide "Binding resources to prompts" ------------------------------------------


class HTTPClient:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url


@dataclass(frozen=True)
class Config:
    url: str

    @classmethod
    def from_env(cls) -> Config:
        return cls("https://api.example.com")


class Tracer:
    closed = False

    def close(self) -> None:
        self.closed = True


def test_the_resource_binding_examples() -> None:
    template = PromptTemplate(
        ns="spec", key="resources", sections=[MarkdownSection[Params](title="T")]
    )
    params = Params("x")
    registry = ResourceRegistry.of(
        Binding.instance(HTTPClient, HTTPClient("https://api.example.com")),
    )
    assert registry.get(HTTPClient).base_url == "https://api.example.com"

    # Simple case: pre-constructed instances
    http_client = HTTPClient(base_url="https://api.example.com")
    prompt = Prompt(template).bind(params, resources={HTTPClient: http_client})
    assert prompt.resources.get(HTTPClient) is http_client

    # Advanced: lazy construction with dependencies and scopes
    prompt = Prompt(template).bind(
        params,
        resources={
            Config: Binding(Config, lambda r: Config.from_env()),
            HTTPClient: Binding(HTTPClient, lambda r: HTTPClient(r.get(Config).url)),
            Tracer: Binding(Tracer, lambda r: Tracer(), scope=Scope.TOOL_CALL),
        },
    )
    # Use prompt.resources context manager for lifecycle management
    with prompt.resources:
        assert prompt.resources.get(HTTPClient).base_url == "https://api.example.com"
        with prompt.resources.tool_call_scope() as call:
            tracer = call.get(Tracer)
    assert tracer.closed


# --- TOOLS.md "Planning Tool Suite" --------------------------------------------------------


def test_the_planning_suite_tools_events_and_reducers_match_the_spec_tables() -> None:
    assert [t.name for t in PlanningToolsSection().tools] == [
        "planning_setup_plan",
        "planning_add_step",
        "planning_update_step",
        "planning_read_plan",
    ]
    session = Session()
    PlanningToolsSection(session=session)  # auto-registers the reducers
    session.dispatch(SetupPlan(objective="Ship", initial_steps=("build",)))
    session.dispatch(AddStep(steps=("test",)))
    session.dispatch(UpdateStep(step_id=1, title=None, status="done"))
    session.dispatch(UpdateStep(step_id=2, title=None, status="done"))
    plan = session[Plan].latest()
    assert plan is not None
    # All steps `done` -> plan `completed`; step ids are incrementing integers.
    assert (plan.status, [s.step_id for s in plan.steps]) == ("completed", [1, 2])
