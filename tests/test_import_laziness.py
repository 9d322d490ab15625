"""``import wink`` loads only what a program uses; every public name still resolves."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import wink


def _modules_after(statement: str, prefixes: tuple[str, ...]) -> list[str]:
    code = (
        f"import sys\n{statement}\n"
        f"print('\\n'.join(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return output.split()


def test_import_wink_loads_only_the_package_its_errors_and_its_name_loader() -> None:
    loaded = _modules_after("import wink", ("wink", "jsonschema", "pydantic", "opentelemetry"))
    assert loaded == ["wink", "wink._lazy_exports", "wink.errors"]


def test_the_tools_layer_loads_neither_jsonschema_nor_the_cli_nor_the_providers() -> None:
    loaded = _modules_after(
        "from wink import Tool, Session, ToolExecutor, PromptTemplate",
        ("jsonschema", "wink.cli", "wink.providers", "opentelemetry", "wink.contrib", "asteval"),
    )
    assert loaded == []


COMMON_IMPORT = "from wink import Tool, Session, ToolExecutor, PromptTemplate"

LOADED_ONLY_WHEN_USED = (
    # jsonschema and what it imports: schema checks use the Rust validator.
    "jsonschema",
    "jsonschema_specifications",
    "referencing",
    "rpds",
    "attr",
    "attrs",
    # pydantic's plugin loader reads importlib.metadata when the first validator is built
    # (importing RootModel builds one); pydantic.fields loads with the first model or Field.
    "importlib.metadata",
    "pydantic.root_model",
    "pydantic.fields",
    "pydantic.functional_serializers",
    # Async execution, logging, escaped raw values, GitWorkspace, HostFilesystem.
    "asyncio",
    "logging",
    "base64",
    "subprocess",
    "shutil",
    "tempfile",
    "secrets",
    # string.Template: loaded with the first MarkdownSection.
    "string",
    # Writing and reading snapshots as JSON.
    "wink.runtime._roundtrip",
    "wink.runtime._json_path",
    # Filesystems, GitWorkspace and the built-in policies.
    "wink.resources.filesystem",
    "wink.resources.git_workspace",
    "wink.policy.read_before_write",
    "wink.policy.sequential",
    "wink.policy.state",
)


def test_the_common_import_loads_none_of_what_only_some_calls_need() -> None:
    loaded = set(_modules_after(COMMON_IMPORT, ("",)))
    assert "wink.runtime.executor" in loaded  # the statement did run
    assert sorted(loaded & set(LOADED_ONLY_WHEN_USED)) == []


FIRST_CALL = """
from dataclasses import dataclass

from wink import MarkdownSection, Prompt, ToolCall, ToolContext, ToolResult, tool


@dataclass
class Echo:
    text: str

    def render(self) -> str:
        return self.text


@tool
def echo(params: Echo, *, context: ToolContext) -> ToolResult[Echo]:
    \"\"\"Say the text back.\"\"\"
    return ToolResult.ok(params, message="Said.")


section = MarkdownSection(title="Echo", template="Echo what you are asked to.", tools=[echo])
prompt = Prompt(PromptTemplate(ns="demo", key="echo", sections=[section]))
executor = ToolExecutor(prompt=prompt, session=Session())
result = executor.execute(ToolCall(name="echo", arguments='{"text": "hi"}'))
assert (result.success, result.value) == (True, Echo("hi")), result
"""


def test_a_first_tool_call_loads_neither_the_filesystems_nor_asyncio_nor_logging() -> None:
    loaded = set(_modules_after(COMMON_IMPORT + "\n" + FIRST_CALL, ("",)))
    deferred = {"asyncio", "logging", "wink.resources.filesystem", "wink.policy.sequential"}
    assert sorted(loaded & deferred) == []


def test_a_resource_or_policy_name_loads_its_module_on_first_access() -> None:
    loaded = _modules_after(
        "from wink.resources import InMemoryFilesystem\n"
        "from wink.policy import SequentialDependencyPolicy\n"
        "import wink.resources.filesystem as filesystems, wink.policy.sequential as sequential\n"
        "assert InMemoryFilesystem is filesystems.InMemoryFilesystem\n"
        "assert SequentialDependencyPolicy is sequential.SequentialDependencyPolicy",
        ("wink.resources.", "wink.policy."),
    )
    assert loaded == [
        "wink.policy.decision",
        "wink.policy.sequential",
        "wink.policy.state",
        "wink.resources._filesystem_paths",
        "wink.resources._filesystem_protocol",
        "wink.resources.filesystem",
    ]


@pytest.mark.parametrize("package", ["wink.resources", "wink.policy"])
def test_every_name_a_lazy_package_exports_resolves_to_its_home_modules_object(
    package: str,
) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        home = importlib.import_module(module._HOMES[name])
        assert value is getattr(home, name), name
    assert set(module.__all__) == set(module._HOMES)
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("package", ["wink.resources", "wink.policy"])
def test_an_unknown_name_of_a_lazy_package_is_an_attribute_error_naming_it(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError) as raised:
        module.NoSuchThing  # noqa: B018  # the access is what is tested
    assert str(raised.value) == f"module {package!r} has no attribute 'NoSuchThing'"


def test_compiling_a_contract_checks_its_schema_without_the_python_validator() -> None:
    loaded = _modules_after(
        "from dataclasses import dataclass\n"
        "from wink import Tool\n"
        "@dataclass\nclass P:\n    q: str\n"
        "Tool[P, P](name='t', description='d.')",
        ("jsonschema", "wink.cli"),
    )
    assert {name.split(".")[0] for name in loaded} == {"jsonschema_rs"}


def test_every_public_name_resolves_to_the_object_its_module_defines() -> None:
    from wink.runtime.executor import ToolExecutor
    from wink.tools import Tool
    from wink.tools.decorator import tool

    resolved = {name: getattr(wink, name) for name in wink.__all__}
    assert resolved["Tool"] is Tool
    assert resolved["ToolExecutor"] is ToolExecutor
    assert resolved["tool"] is tool
    assert resolved["telemetry"] is sys.modules["wink.telemetry"]
    assert set(wink.__all__) <= set(dir(wink))


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    try:
        wink.NoSuchThing  # noqa: B018  # the access is what is tested
    except AttributeError as error:
        assert str(error) == "module 'wink' has no attribute 'NoSuchThing'"
    else:
        raise AssertionError("wink.NoSuchThing resolved")


def test_a_text_format_pattern_is_compiled_only_once_a_value_of_that_format_is_checked() -> None:
    code = (
        "from dataclasses import dataclass\n"
        "from datetime import date\n"
        "from wink import compile_contract\n"
        "from wink.contract._formats import TEXT_FORMATS, TextFormat\n"
        "def compiled():\n"
        "    names = []\n"
        "    for name, text_format in TEXT_FORMATS.items():\n"
        "        try:\n"
        "            TextFormat.pattern.__get__(text_format, TextFormat)  # the slot only\n"
        "        except AttributeError:\n"
        "            continue\n"
        "        names.append(name)\n"
        "    return names\n"
        "@dataclass\nclass When:\n    day: date\n"
        "contract = compile_contract(When)\n"
        "print(compiled())\n"
        'print(contract.parse(\'{"day": "2024-05-01"}\'))\n'
        "print(compiled())\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.splitlines() == [
        "[]",
        "When(day=datetime.date(2024, 5, 1))",
        "['date']",
    ]


def test_an_unknown_attribute_of_a_text_format_is_an_attribute_error_naming_it() -> None:
    from wink.contract._formats import TextFormat

    with pytest.raises(AttributeError) as raised:
        TextFormat("a date", r"^x$", "x").nope  # noqa: B018  # the access is what is tested
    assert str(raised.value) == "'TextFormat' object has no attribute 'nope'"


def test_the_filesystem_protocol_and_errors_keep_their_public_module_name() -> None:
    import pickle

    import wink.resources.filesystem as filesystems
    from wink.resources import FileNotFoundInFilesystemError, Filesystem, FilesystemError

    assert (filesystems.Filesystem, filesystems.FilesystemError) == (Filesystem, FilesystemError)
    assert [kind.__module__ for kind in (Filesystem, FilesystemError)] == [
        "wink.resources.filesystem",
        "wink.resources.filesystem",
    ]
    assert repr(FileNotFoundInFilesystemError) == (
        "<class 'wink.resources.filesystem.FileNotFoundInFilesystemError'>"
    )
    error = FileNotFoundInFilesystemError("notes.md: no such file")
    copied = pickle.loads(pickle.dumps(error))
    assert (type(copied), str(copied)) == (FileNotFoundInFilesystemError, "notes.md: no such file")
