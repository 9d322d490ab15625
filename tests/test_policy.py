"""Policies: decisions, the built-in policies, and policy state in the session."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from wink import (
    Filesystem,
    InMemoryFilesystem,
    MarkdownSection,
    Prompt,
    PromptTemplate,
    PromptValidationError,
    Tool,
    ToolContext,
    ToolResult,
)
from wink.policy import (
    PolicyDecision,
    PolicyState,
    ReadBeforeWritePolicy,
    SequentialDependencyPolicy,
    ToolPolicy,
    load_policy_state,
)
from wink.runtime import Session, SliceVersion, ToolCall, ToolExecutor


@dataclass(frozen=True)
class PathParams:
    path: str


@dataclass(frozen=True)
class WriteParams:
    path: str
    content: str = "new"


@dataclass(frozen=True)
class Done:
    tool: str


@dataclass(frozen=True)
class FileText:
    text: str


def step(params: None, *, context: ToolContext) -> ToolResult[Done]:
    return ToolResult.ok(Done("step"))


def fail(params: None, *, context: ToolContext) -> ToolResult[Done]:
    return ToolResult.error("failed on purpose")


def read_file(params: PathParams, *, context: ToolContext) -> ToolResult[FileText]:
    return ToolResult.ok(FileText(context.filesystem.read(params.path)))


def write_file(params: WriteParams, *, context: ToolContext) -> ToolResult[None]:
    context.filesystem.write(params.path, params.content)
    return ToolResult.ok(None)


def step_tool(name: str, handler: Any = step) -> Tool[None, Done]:
    return Tool[None, Done](name=name, description=f"The {name} step.", handler=handler)


FILE_TOOLS = (
    Tool[PathParams, FileText](name="read_file", description="Read a file.", handler=read_file),
    Tool[WriteParams, None](name="write_file", description="Write a file.", handler=write_file),
    Tool[WriteParams, None](name="edit_file", description="Edit a file.", handler=write_file),
    Tool[None, Done](name="status", description="No path.", handler=step),
)


def executor_for(
    tools: Sequence[Tool[Any, Any]],
    policy: Any,
    *,
    session: Session | None = None,
    fs: InMemoryFilesystem | None = None,
) -> ToolExecutor:
    template = PromptTemplate(
        ns="tests",
        key="policy",
        sections=[MarkdownSection(title="Tools", tools=tools, policies=[policy])],
    )
    resources = {Filesystem: fs} if fs is not None else None
    return ToolExecutor(prompt=Prompt(template, resources=resources), session=session or Session())


def message(executor: ToolExecutor, name: str, arguments: str | None = None) -> str | None:
    """``None`` when the call succeeded, else its failure message."""
    result = executor.execute(ToolCall(name, arguments))
    return None if result.success else result.message


# PolicyDecision


def test_allow_and_deny_build_decisions() -> None:
    assert PolicyDecision.allow() == PolicyDecision(allowed=True, reason=None)
    assert PolicyDecision.deny("no") == PolicyDecision(allowed=False, reason="no")


def test_built_in_policies_satisfy_the_protocol() -> None:
    sequential = SequentialDependencyPolicy(dependencies={})
    assert isinstance(sequential, ToolPolicy)
    assert isinstance(ReadBeforeWritePolicy(), ToolPolicy)


# SequentialDependencyPolicy

DEPLOY_TOOLS = (
    *(step_tool(name) for name in ("lint", "build", "test", "deploy")),
    step_tool("broken", fail),
)
DEPLOY_POLICY = SequentialDependencyPolicy(
    dependencies={"deploy": frozenset({"test", "build"}), "build": frozenset({"lint"})}
)


def test_tool_is_denied_until_its_prerequisites_succeeded() -> None:
    executor = executor_for(DEPLOY_TOOLS, DEPLOY_POLICY)
    assert message(executor, "deploy") == (
        "Tool 'deploy' cannot run yet: call build and test successfully first "
        "(policy 'sequential_dependency')."
    )
    assert message(executor, "lint") is None
    assert message(executor, "build") is None
    assert message(executor, "deploy") == (
        "Tool 'deploy' cannot run yet: call test successfully first "
        "(policy 'sequential_dependency')."
    )
    assert message(executor, "test") is None
    assert message(executor, "deploy") is None


def test_tool_without_dependencies_is_always_allowed() -> None:
    assert message(executor_for(DEPLOY_TOOLS, DEPLOY_POLICY), "lint") is None


def test_failed_prerequisite_does_not_count() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"broken"})})
    executor = executor_for(DEPLOY_TOOLS, policy)
    assert message(executor, "broken") == "failed on purpose"
    assert message(executor, "deploy") is not None


def test_successes_are_recorded_in_the_policy_state() -> None:
    session = Session()
    executor = executor_for(DEPLOY_TOOLS, DEPLOY_POLICY, session=session)
    message(executor, "lint")
    message(executor, "lint")
    assert session[PolicyState].all() == (
        PolicyState("sequential_dependency", invoked_tools=frozenset({"lint"})),
    )


def test_dependency_on_a_tool_the_prompt_lacks_is_rejected_when_the_executor_is_built() -> None:
    policy = SequentialDependencyPolicy(
        dependencies={"deploy": frozenset({"tset", "build"}), "relase": frozenset({"deploy"})}
    )
    with pytest.raises(PromptValidationError) as raised:
        executor_for(DEPLOY_TOOLS, policy)
    assert str(raised.value) == (
        "prompt 'policy', policy attached to section tools: SequentialDependencyPolicy "
        "'sequential_dependency': dependencies name tools the prompt does not have: 'relase', "
        "'tset' (its tools: broken, build, "
        "deploy, lint, test)"
    )


def test_prerequisite_the_render_does_not_enable_is_denied_as_unavailable() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    template = PromptTemplate(
        ns="tests",
        key="disabled",
        sections=[
            MarkdownSection(
                title="Work",
                policies=[policy],
                children=[
                    MarkdownSection(title="On", tools=[DEPLOY_TOOLS[3]]),
                    MarkdownSection(title="Off", tools=[DEPLOY_TOOLS[2]], enabled=False),
                ],
            )
        ],
    )
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    assert message(executor, "deploy") == (
        "Tool 'deploy' cannot run in this prompt: it needs test to succeed first, which is "
        "not available in this prompt; do not call 'deploy' again (policy "
        "'sequential_dependency')."
    )


def test_an_unavailable_prerequisite_is_named_apart_from_available_ones() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"lint", "test"})})
    template = PromptTemplate(
        ns="tests",
        key="partly",
        sections=[
            MarkdownSection(title="On", tools=[DEPLOY_TOOLS[0], DEPLOY_TOOLS[3]]),
            MarkdownSection(title="Off", tools=[DEPLOY_TOOLS[2]], enabled=False),
        ],
        policies=[policy],
    )
    executor = ToolExecutor(prompt=Prompt(template), session=Session())
    assert message(executor, "deploy") == (
        "Tool 'deploy' cannot run in this prompt: it needs test to succeed first, which is "
        "not available in this prompt; do not call 'deploy' again (policy "
        "'sequential_dependency')."
    )


def test_policy_on_a_section_without_the_dependent_tool_is_rejected_naming_both() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    template = PromptTemplate(
        ns="tests",
        key="misplaced",
        sections=[
            MarkdownSection(title="Checks", tools=[DEPLOY_TOOLS[2]], policies=[policy]),
            MarkdownSection(title="Release", tools=[DEPLOY_TOOLS[3]]),
        ],
    )
    with pytest.raises(PromptValidationError) as raised:
        ToolExecutor(prompt=Prompt(template), session=Session())
    assert str(raised.value) == (
        "prompt 'misplaced', policy attached to section checks: SequentialDependencyPolicy "
        "'sequential_dependency' would never be asked about 'deploy': a policy governs only "
        "the tools of the section it is attached to and of that section's children (it "
        "governs test); attach it to a section holding those tools, or to the prompt"
    )


def test_policy_on_a_section_without_tools_is_rejected_even_when_nothing_is_enabled() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    template = PromptTemplate(
        ns="tests",
        key="empty",
        sections=[
            MarkdownSection(title="Rules", template="Be careful.", policies=[policy]),
            MarkdownSection(title="Release", tools=DEPLOY_TOOLS[2:4], enabled=False),
        ],
    )
    with pytest.raises(PromptValidationError) as raised:
        ToolExecutor(prompt=Prompt(template), session=Session())
    assert "policy attached to section rules" in str(raised.value)
    assert "(it governs no tool)" in str(raised.value)


def test_policy_on_a_parent_section_or_the_prompt_governs_the_tools_below() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    child = MarkdownSection(title="Release", tools=DEPLOY_TOOLS[2:4])
    for sections, policies in (
        ([MarkdownSection(title="Work", children=[child], policies=[policy])], []),
        ([child], [policy]),
    ):
        template = PromptTemplate(ns="tests", key="p", sections=sections, policies=policies)
        executor = ToolExecutor(prompt=Prompt(template), session=Session())
        assert message(executor, "deploy") == (
            "Tool 'deploy' cannot run yet: call test successfully first "
            "(policy 'sequential_dependency')."
        )


def test_policy_validate_hook_receives_the_tool_names_and_the_governed_ones() -> None:
    seen: list[tuple[frozenset[str], frozenset[str]]] = []

    class Recording:
        name = "recording"

        def check_tools(self, tool_names: frozenset[str], governed: frozenset[str]) -> None:
            seen.append((tool_names, governed))

        def check(self, tool: Any, params: Any, *, context: Any) -> PolicyDecision:
            return PolicyDecision.allow()

        def on_result(self, *args: Any, **kwargs: Any) -> None:
            pass

    recording = Recording()
    template = PromptTemplate(
        ns="tests",
        key="hook",
        sections=[
            MarkdownSection(title="Lint", tools=DEPLOY_TOOLS[:1]),
            MarkdownSection(title="Build", tools=DEPLOY_TOOLS[1:2], policies=[recording]),
        ],
    )
    ToolExecutor(prompt=Prompt(template), session=Session())
    assert seen == [(frozenset({"lint", "build"}), frozenset({"build"}))]


def test_dependency_cycle_is_rejected_at_construction() -> None:
    with pytest.raises(PromptValidationError) as raised:
        SequentialDependencyPolicy(
            dependencies={"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"})}
        )
    assert str(raised.value) == (
        "SequentialDependencyPolicy: dependency cycle a -> b -> c -> a means none of these "
        "tools could ever run"
    )


# ReadBeforeWritePolicy


def files(**contents: str) -> InMemoryFilesystem:
    return InMemoryFilesystem(
        "/mnt", {name.replace("__", "/"): text for name, text in contents.items()}
    )


def test_new_file_may_be_written_without_reading() -> None:
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), fs=files())
    assert message(executor, "write_file", '{"path": "new.txt"}') is None


def test_existing_file_must_be_read_before_it_is_overwritten() -> None:
    fs = files(config="old")
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), fs=fs)
    assert message(executor, "write_file", '{"path": "config"}') == (
        "File 'config' already exists and has not been read: call read_file on it before "
        "overwriting it (policy 'read_before_write')."
    )
    assert fs.read("config") == "old"
    assert message(executor, "read_file", '{"path": "config"}') is None
    assert message(executor, "write_file", '{"path": "config"}') is None
    assert fs.read("config") == "new"


def test_edit_tool_is_governed_like_a_write() -> None:
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), fs=files(config="old"))
    assert message(executor, "edit_file", '{"path": "config"}') is not None


@pytest.mark.parametrize("written", ["a.txt", "./a.txt", "/mnt/a.txt", "docs/../a.txt"])
@pytest.mark.parametrize("read", ["a.txt", "./a.txt", "/mnt/a.txt"])
def test_paths_naming_the_same_file_are_one_file(read: str, written: str) -> None:
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), fs=files(**{"a.txt": "old"}))
    assert message(executor, "read_file", f'{{"path": "{read}"}}') is None
    assert message(executor, "write_file", f'{{"path": "{written}"}}') is None


def test_reading_another_file_does_not_unlock_a_write() -> None:
    fs = files(**{"a.txt": "a", "b.txt": "b"})
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), fs=fs)
    message(executor, "read_file", '{"path": "a.txt"}')
    assert message(executor, "write_file", '{"path": "b.txt"}') is not None


def test_a_file_written_in_the_session_may_be_written_again() -> None:
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), fs=files())
    assert message(executor, "write_file", '{"path": "draft.txt"}') is None
    assert message(executor, "write_file", '{"path": "draft.txt"}') is None


def test_without_remember_writes_only_reads_unlock_a_write() -> None:
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(remember_writes=False), fs=files())
    assert message(executor, "write_file", '{"path": "draft.txt"}') is None
    assert message(executor, "write_file", '{"path": "draft.txt"}') is not None


def refuse_to_read(params: PathParams, *, context: ToolContext) -> ToolResult[FileText]:
    return ToolResult.error("cannot read now")


def test_failed_read_does_not_unlock_a_write() -> None:
    failing_reader = Tool[PathParams, FileText](
        name="read_file", description="Fail to read.", handler=refuse_to_read
    )
    tools = (failing_reader, *FILE_TOOLS[1:])
    executor = executor_for(tools, ReadBeforeWritePolicy(), fs=files(config="old"))
    assert message(executor, "read_file", '{"path": "config"}') == "cannot read now"
    assert message(executor, "write_file", '{"path": "config"}') == (
        "File 'config' already exists and has not been read: call read_file on it before "
        "overwriting it (policy 'read_before_write')."
    )


def test_write_to_a_directory_is_left_to_the_tool_to_refuse() -> None:
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), fs=files(dir__inner="x"))
    assert message(executor, "write_file", '{"path": "dir"}') == (
        "Tool 'write_file' raised FilesystemError: is a directory, not a file: 'dir'"
    )


def test_calls_are_allowed_without_a_filesystem() -> None:
    tools = (
        *FILE_TOOLS[:1],
        Tool[WriteParams, None](
            name="write_file", description="W.", handler=lambda p, *, context: ToolResult.ok(None)
        ),
    )
    executor = executor_for(tools, ReadBeforeWritePolicy())
    assert message(executor, "write_file", '{"path": "config"}') is None


def test_tool_without_a_path_field_is_allowed() -> None:
    policy = ReadBeforeWritePolicy(write_tools=frozenset({"status"}))
    assert message(executor_for(FILE_TOOLS, policy, fs=files(status="x")), "status") is None


def test_custom_tool_names_and_path_field() -> None:
    @dataclass(frozen=True)
    class SaveParams:
        target: str

    tools = (
        Tool[SaveParams, FileText](
            name="open_doc",
            description="Open.",
            handler=lambda p, *, context: ToolResult.ok(
                FileText(context.filesystem.read(p.target))
            ),
        ),
        Tool[SaveParams, None](
            name="save_doc",
            description="Save.",
            handler=lambda p, *, context: ToolResult.ok(context.filesystem.write(p.target, "s")),
        ),
    )
    policy = ReadBeforeWritePolicy(
        read_tools=frozenset({"open_doc"}),
        write_tools=frozenset({"save_doc"}),
        path_fields=("target",),
    )
    executor = executor_for(tools, policy, fs=files(doc="d"))
    assert message(executor, "save_doc", '{"target": "doc"}') == (
        "File 'doc' already exists and has not been read: call open_doc on it before "
        "overwriting it (policy 'read_before_write')."
    )
    assert message(executor, "open_doc", '{"target": "doc"}') is None
    assert message(executor, "save_doc", '{"target": "doc"}') is None


# Policy state in the session


def test_snapshot_restore_and_reset_apply_to_policy_state() -> None:
    session = Session()
    executor = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), session=session, fs=files(c="x"))
    before_read = session.snapshot()
    message(executor, "read_file", '{"path": "c"}')
    after_read = session.snapshot()
    session.restore(before_read)
    assert message(executor, "write_file", '{"path": "c"}') is not None
    session.restore(after_read)
    assert message(executor, "write_file", '{"path": "c", "content": "y"}') is None
    session.reset()
    assert message(executor, "write_file", '{"path": "c"}') is not None


def test_sessions_keep_separate_policy_state() -> None:
    fs = files(c="x")
    first, second = Session(), Session()
    message(
        executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), session=first, fs=fs),
        "read_file",
        '{"path": "c"}',
    )
    other = executor_for(FILE_TOOLS, ReadBeforeWritePolicy(), session=second, fs=fs)
    assert message(other, "write_file", '{"path": "c"}') is not None


def test_policies_with_distinct_names_keep_separate_state() -> None:
    session = Session()
    first = SequentialDependencyPolicy(dependencies={}, name="first")
    second = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})}, name="second")
    template = PromptTemplate(
        ns="tests",
        key="two",
        sections=[
            MarkdownSection(title="A", tools=[DEPLOY_TOOLS[0]], policies=[first]),
            MarkdownSection(title="B", tools=DEPLOY_TOOLS[2:4], policies=[second]),
        ],
    )
    executor = ToolExecutor(prompt=Prompt(template), session=session)
    message(executor, "lint")
    assert load_policy_state(session, "first").invoked_tools == frozenset({"lint"})
    assert load_policy_state(session, "second") == PolicyState("second")
    assert message(executor, "deploy") is not None


# Policy state read on every call: the same state object while the slice is unchanged


def test_a_repeated_success_writes_no_new_version_of_the_policy_state() -> None:
    session = Session(keep_history=True)
    executor = executor_for(DEPLOY_TOOLS, DEPLOY_POLICY, session=session)
    assert message(executor, "lint") is None
    recorded = session[PolicyState].values()
    assert message(executor, "lint") is None
    assert message(executor, "lint") is None
    assert session[PolicyState].values() is recorded
    versions = [
        version.cause
        for version in session[SliceVersion].all()
        if version.slice_type == "wink.policy.state:PolicyState"
    ]
    assert versions == ["update"]


def test_one_policy_shared_by_two_sessions_keeps_each_sessions_state() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    first = executor_for(DEPLOY_TOOLS, policy, session=Session())
    second = executor_for(DEPLOY_TOOLS, policy, session=Session())
    denied = (
        "Tool 'deploy' cannot run yet: call test successfully first "
        "(policy 'sequential_dependency')."
    )
    assert message(first, "test") is None
    assert [message(first, "deploy"), message(second, "deploy"), message(first, "deploy")] == [
        None,
        denied,
        None,
    ]
    assert message(second, "test") is None
    assert message(second, "deploy") is None


def test_a_dependency_is_checked_against_the_restored_state_after_a_restore() -> None:
    session = Session()
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    executor = executor_for(DEPLOY_TOOLS, policy, session=session)
    before_test = session.snapshot()
    assert message(executor, "test") is None
    assert message(executor, "deploy") is None
    after_test = session.snapshot()
    denied = (
        "Tool 'deploy' cannot run yet: call test successfully first "
        "(policy 'sequential_dependency')."
    )
    session.restore(before_test)
    assert message(executor, "deploy") == denied
    session.restore(after_test)
    assert message(executor, "deploy") is None
    session.reset()
    assert message(executor, "deploy") == denied


class BreaksAfter:
    """Allows every call; its ``on_result`` raises for the tool ``breaking``."""

    name = "breaks_after"

    def __init__(self, breaking: str) -> None:
        self.breaking = breaking

    def check(self, tool: Any, params: Any, *, context: ToolContext) -> PolicyDecision:
        return PolicyDecision.allow()

    def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
        if tool.name == self.breaking:
            raise RuntimeError("cannot apply")


def test_a_success_recorded_by_a_call_that_is_rolled_back_is_gone() -> None:
    session = Session()
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"lint", "test"})})
    template = PromptTemplate(
        ns="tests",
        key="rolled_back",
        sections=[
            MarkdownSection(
                title="Tools", tools=DEPLOY_TOOLS, policies=[policy, BreaksAfter("test")]
            )
        ],
    )
    executor = ToolExecutor(prompt=Prompt(template), session=session)
    assert message(executor, "lint") is None
    assert message(executor, "test") == (
        "Tool 'test' succeeded but its result could not be applied, so its changes were "
        "rolled back: RuntimeError: cannot apply"
    )
    assert session[PolicyState].all() == (
        PolicyState("sequential_dependency", invoked_tools=frozenset({"lint"})),
    )
    assert message(executor, "deploy") == (
        "Tool 'deploy' cannot run yet: call test successfully first "
        "(policy 'sequential_dependency')."
    )


def test_a_read_rolled_back_with_its_call_does_not_unlock_a_write() -> None:
    session = Session()
    template = PromptTemplate(
        ns="tests",
        key="rolled_back_read",
        sections=[
            MarkdownSection(
                title="Files",
                tools=FILE_TOOLS,
                policies=[ReadBeforeWritePolicy(), BreaksAfter("read_file")],
            )
        ],
    )
    prompt = Prompt(template, resources={Filesystem: files(config="old")})
    executor = ToolExecutor(prompt=prompt, session=session)
    assert message(executor, "read_file", '{"path": "config"}') == (
        "Tool 'read_file' succeeded but its result could not be applied, so its changes were "
        "rolled back: RuntimeError: cannot apply"
    )
    assert session[PolicyState].all() == ()
    assert message(executor, "write_file", '{"path": "config"}') == (
        "File 'config' already exists and has not been read: call read_file on it before "
        "overwriting it (policy 'read_before_write')."
    )


def test_policy_state_without_a_session_is_empty() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    context = ToolContext(session=None)
    deploy = DEPLOY_TOOLS[3]
    assert policy.check(deploy, None, context=context) == PolicyDecision.deny(
        "Tool 'deploy' cannot run yet: call test successfully first "
        "(policy 'sequential_dependency')."
    )
    assert policy.check(DEPLOY_TOOLS[2], None, context=context) is PolicyDecision.allow()


def test_one_policy_checked_from_two_threads_reads_each_threads_own_session() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": frozenset({"test"})})
    ready, waiting = Session(), Session()
    executor_for(DEPLOY_TOOLS, policy, session=ready).execute(ToolCall("test"))
    deploy = DEPLOY_TOOLS[3]
    allowed: dict[str, int] = {}
    start = threading.Barrier(2)

    def count_allowed(label: str, session: Session) -> None:
        context = ToolContext(session=session)
        start.wait()
        allowed[label] = sum(
            policy.check(deploy, None, context=context).allowed for _ in range(20_000)
        )

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so that their reads interleave
    try:
        threads = [
            threading.Thread(target=count_allowed, args=("ready", ready)),
            threading.Thread(target=count_allowed, args=("waiting", waiting)),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert allowed == {"ready": 20_000, "waiting": 0}
