"""The evaluated agent example (``make demo``) runs end to end with the scripted model."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLE = Path(__file__).parent.parent / "examples" / "evaluate_agent.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("evaluate_agent_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_without_api_keys_the_demo_evaluates_with_the_scripted_model(
    example: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    example.main()
    assert capsys.readouterr().out == (
        "# Evaluated 'tidy' with script in 5 turns\n"
        "ok  list_notes({}) -> 1 notes.\n"
        'ok  read_note({"path": "shopping.md"}) -> Read shopping.md.\n'
        'ok  categorise({"path": "shopping.md"}) -> Sorted.\n'
        'ERR write_note({"path": "shopping.md", "text": "milk\\nbread\\nsoap\\nTODO: eggs"}) '
        "-> Tool 'write_note' raised ValueError: notes must not contain TODO markers\n"
        'ok  write_note({"path": "shopping.md", "text": "milk\\nbread\\nsoap"}) '
        "-> Wrote shopping.md.\n"
        "\n# Report\n"
        "Report(changed=['shopping.md'], summary='Food first, duplicates removed.')\n"
        "\n# shopping.md\nmilk\nbread\nsoap\n"
        "\n# Evaluations in the session\n"
        "categorise: 1 turns, 0 tool calls\n"
        "tidy: 5 turns, 5 tool calls\n"
    )


def test_an_openai_key_selects_the_openai_adapter(
    example: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("WINK_DEMO_MODEL", "gpt-test")
    adapter = example.choose_adapter()
    assert (adapter.name, adapter.model, adapter.api) == ("openai", "gpt-test", "chat")


def test_an_anthropic_key_selects_the_anthropic_adapter(
    example: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("WINK_DEMO_MODEL", raising=False)
    adapter = example.choose_adapter()
    assert (adapter.name, adapter.model, adapter.max_tokens) == (
        "anthropic",
        "claude-sonnet-4-5",
        2048,
    )
