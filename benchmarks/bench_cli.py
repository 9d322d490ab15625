"""``wink validate`` throughput on a generated 200,000-line JSONL file of recorded calls.

Floors, on the same file in the same run: pydantic alone (``validate_json`` of each
line by one ``TypeAdapter`` of both recorded shapes, its arguments as
``Json[LookupParams]``, strict and closed, with no report and no JSON Schema check),
and reading plus ``json.loads`` of every line. The ratios say what checking each
payload against its contract and its JSON Schema, and reporting, cost on top.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Json, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass as pydantic_dataclass

from wink.cli import main as wink_main
from wink.cli.targets import load_target, tools_of
from wink.cli.validate import CallChecker, validate_lines

LINES = 200_000


@pydantic_dataclass(config=ConfigDict(extra="forbid", strict=True))
class _StrictParams:
    entity_id: str
    include_related: bool = False


EXAMPLE = "examples/lookup_entity.py:template"


def write_calls(path: Path, lines: int) -> None:
    """Plain and OpenAI-style calls; one in ten is invalid."""
    chooser = random.Random(7)
    with path.open("w", encoding="utf-8") as file:
        for index in range(lines):
            arguments: dict[str, object] = {"entity_id": f"e-{index}"}
            if index % 3 == 0:
                arguments["include_related"] = chooser.random() < 0.5
            if index % 10 == 9:
                arguments["entity_id"] = index  # wrong type: reported
            if index % 2:
                document: object = {"name": "lookup_entity", "arguments": arguments}
            else:
                document = {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": f"call_{index}",
                            "type": "function",
                            "function": {
                                "name": "lookup_entity",
                                "arguments": json.dumps(arguments),
                            },
                        }
                    ],
                }
            file.write(json.dumps(document) + "\n")


def seconds(function: Callable[[], object]) -> float:
    """Best of three wall times."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def parse_only(path: Path) -> None:
    """The floor: every line read and decoded, nothing checked."""
    with path.open("rb") as file:
        for line in file:
            json.loads(line)


class _PlainCall(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: Literal["lookup_entity"]
    arguments: _StrictParams


class _Function(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: Literal["lookup_entity"]
    arguments: Json[_StrictParams]


class _OpenAICall(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str
    type: Literal["function"]
    function: _Function


class _AssistantMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    role: Literal["assistant"]
    tool_calls: list[_OpenAICall]


_LINE = TypeAdapter(_PlainCall | _AssistantMessage)


def pydantic_only(path: Path) -> None:
    """The pydantic floor: each line validated by one strict adapter; errors counted only."""
    invalid = 0
    validate_json = _LINE.validate_json
    with path.open("rb") as file:
        for line in file:
            try:
                validate_json(line)
            except ValidationError:
                invalid += 1
    if invalid != LINES // 10:
        raise SystemExit(f"the pydantic floor found {invalid} invalid lines")


def validate(path: Path) -> None:
    """``wink validate`` end to end, findings sent to /dev/null."""
    with (
        open(os.devnull, "w") as sink,
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
    ):
        status = wink_main(["validate", EXAMPLE, str(path)])
    if status != 1:
        raise SystemExit(f"expected the invalid payloads to be reported, got exit {status}")


def peak_kib(path: Path) -> float:
    """Peak Python memory of validating ``path`` (streaming: independent of its length)."""
    tools = tools_of(load_target(EXAMPLE), EXAMPLE)
    checker = CallChecker(tools)
    tracemalloc.start()
    with path.open("rb") as file:
        validate_lines(file, str(path), checker, lambda line: None)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1024


def main() -> None:
    """Print payloads per second for ``wink validate`` and for the parse-only floor."""
    root = Path(__file__).resolve().parents[1]
    previous = Path.cwd()
    os.chdir(root)  # the target is a path relative to the repository
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "calls.jsonl"
            write_calls(path, LINES)
            size_mb = path.stat().st_size / 1e6
            floor = seconds(lambda: parse_only(path))
            pydantic_floor = seconds(lambda: pydantic_only(path))
            took = seconds(lambda: validate(path))
            # Half the lines is already past the fill of pydantic-core's bounded JSON string
            # cache, so equal peaks show memory does not grow with the file.
            small = Path(folder) / "small.jsonl"
            write_calls(small, LINES // 2)
            peaks = (peak_kib(small), peak_kib(path))
    finally:
        os.chdir(previous)
    print(f"file: {LINES:,} lines, {size_mb:.1f} MB, 1 in 10 payloads invalid")
    print(
        f"wink validate (contract + JSON Schema) {LINES / took:>10,.0f} payloads/s  ({took:.2f} s)"
    )
    print(
        f"floor pydantic validate_json alone     {LINES / pydantic_floor:>10,.0f} payloads/s"
        f"  ({pydantic_floor:.2f} s)"
    )
    print(
        f"floor json.loads only                  {LINES / floor:>10,.0f} payloads/s"
        f"  ({floor:.2f} s)"
    )
    print(f"ratio validate / pydantic floor        {took / pydantic_floor:>10.2f}x")
    print(f"ratio validate / json.loads floor      {took / floor:>10.2f}x")
    print(
        f"peak memory: {peaks[0]:,.0f} KiB for {LINES // 2:,} lines, "
        f"{peaks[1]:,.0f} KiB for {LINES:,} lines"
    )
    sys.stdout.flush()
