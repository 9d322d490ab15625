"""Tool examples as prompt markdown: worked calls the model reads beside the section text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wink.tools import Tool, ToolExample, render_value

__all__ = ["examples_markdown"]


def examples_markdown(tools: Sequence[Tool[Any, Any]]) -> str:
    """One block per tool that has examples, blank-line separated; ``""`` when none has.

    Each block is a line ``Examples for `name`:`` and one bullet per example,
    ``- description: input {...} -> output ...``, in declaration order.
    """
    blocks = [
        "\n".join([f"Examples for `{tool.name}`:", *(_bullet(tool, e) for e in tool.examples)])
        for tool in tools
        if tool.examples
    ]
    return "\n\n".join(blocks)


def _bullet(tool: Tool[Any, Any], example: ToolExample[Any, Any]) -> str:
    # A tool without params is called with an empty object, so that is what it shows.
    arguments = "{}" if tool.params_type is None else tool.params_contract.dump_json(example.input)
    # The output as the executor would show it: the value's render(), else compact JSON.
    output = (
        "null" if example.output is None else render_value(example.output, tool.result_contract)
    )
    return f"- {example.description}: input {arguments} -> output {output}"
