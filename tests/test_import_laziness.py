"""``import wink`` loads only what a program uses; every public name still resolves."""

from __future__ import annotations

import subprocess
import sys

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


def test_import_wink_loads_only_the_package_and_its_errors() -> None:
    loaded = _modules_after("import wink", ("wink", "jsonschema", "pydantic", "opentelemetry"))
    assert loaded == ["wink", "wink.errors"]


def test_the_tools_layer_loads_neither_jsonschema_nor_the_cli_nor_the_providers() -> None:
    loaded = _modules_after(
        "from wink import Tool, Session, ToolExecutor, PromptTemplate",
        ("jsonschema", "wink.cli", "wink.providers", "opentelemetry", "wink.contrib", "asteval"),
    )
    assert loaded == []


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
