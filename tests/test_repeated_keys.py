"""The quick repeated-key pass answers as reading the whole document does.

Texts are generated with repeated and shared keys, names also written as values,
escapes that spell a name another way, and space around colons. Whatever the text,
a contract refuses it for a repeated key exactly when reading every object finds
one, naming the same key at the same place; the quick pass only ever says "no
repeat" when there is none.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import BaseModel

from wink.contract import ContractViolation, compile_contract, format_path
from wink.contract._json_text import KeyNames

NAMES = ["name", "note", "kids", "a/b", 'q"t', "é", "x y", "n:"]
"""Property names, some with characters JSON may escape or that look like structure."""

VALUES = ["name", "note", "kids", '"name":', '"note" :', "a:b", "x\\", 'say "name"', "/", "é", ""]
"""String values, some spelling a key."""

SPACES = st.sampled_from(["", " ", "\n", "\t "])


@st.composite
def written(draw: st.DrawFn, value: str) -> str:
    """``value`` as a JSON string, written plainly or with a character escaped another way."""
    plain = json.dumps(value, ensure_ascii=False)
    way = draw(st.sampled_from(["plain", "ascii", "unicode", "solidus"]))
    if way == "ascii":
        return json.dumps(value)
    if way == "unicode" and value:
        index = draw(st.integers(0, len(value) - 1))
        body = json.dumps(value[:index], ensure_ascii=False)[1:-1]
        rest = json.dumps(value[index + 1 :], ensure_ascii=False)[1:-1]
        return f'"{body}\\u{ord(value[index]):04x}{rest}"'
    if way == "solidus":
        return plain.replace("/", "\\/")
    return plain


@st.composite
def documents(draw: st.DrawFn, keys: list[str], depth: int = 0) -> str:
    """A JSON object over ``keys`` (repeats allowed), with ``kids`` holding more objects."""
    members = []
    for key in draw(st.lists(st.sampled_from(keys), max_size=4)):
        if key == "kids":
            kids = draw(st.lists(documents(keys, depth + 1), max_size=0 if depth > 1 else 2))
            value = "[" + ",".join(kids) + "]"
        else:
            value = draw(written(draw(st.sampled_from(VALUES))))
        before, after = draw(SPACES), draw(SPACES)
        members.append(f"{draw(written(key))}{before}:{after}{value}")
    return "{" + f",{draw(SPACES)}".join(members) + "}"


class _Pairs(list[tuple[str, Any]]):
    pass


def first_repeat(text: str) -> tuple[str, str] | None:
    """Where the first object (in document order) repeats a key, and the key."""

    def search(value: Any, path: list[int | str]) -> tuple[str, str] | None:
        if isinstance(value, _Pairs):
            keys = [key for key, _ in value]
            for index, key in enumerate(keys):
                if key in keys[:index]:
                    return format_path(path), key
            steps: list[tuple[int | str, Any]] = list(value)
        elif isinstance(value, list):
            steps = list(enumerate(value))
        else:
            return None
        for step, child in steps:
            found = search(child, [*path, step])
            if found is not None:
                return found
        return None

    return search(json.loads(text, object_pairs_hook=_Pairs), [])


class Tree(BaseModel):
    name: str = ""
    note: str = ""
    kids: list[Tree] = []


@given(documents(["name", "note", "kids"]), st.booleans())
@example(text='{"kids":[],"kids" :[]}', as_bytes=False)  # space before a colon
@example(text='{"name":"a","name"\t:"b"}', as_bytes=True)
@example(text='{"name":"name","\\u006eame":"name"}', as_bytes=False)  # a name spelled by an escape
@example(text='{"note":"a","n\\u006fte":"b"}', as_bytes=True)
@example(text='{"name":"note","note":"name"}', as_bytes=False)  # names as values: no repeat
@example(text='{"kids":[{"name":"a"},{"name":"b"}]}', as_bytes=False)  # shared by siblings
def test_a_repeated_key_is_refused_exactly_when_reading_every_object_finds_one(
    text: str, as_bytes: bool
) -> None:
    payload = text.encode() if as_bytes else text
    expected = first_repeat(text)
    try:
        compile_contract(Tree).parse(payload)
    except ContractViolation as violation:
        assert expected is not None
        path, key = expected
        assert [str(problem) for problem in violation.problems] == [
            f"{path}: key {json.dumps(key, ensure_ascii=False)} appears more than once; "
            "send each key once (a repeated key is ambiguous)"
        ]
    else:
        assert expected is None


@given(documents(NAMES), st.booleans())
def test_the_quick_pass_says_no_repeat_only_of_documents_without_one(
    text: str, as_bytes: bool
) -> None:
    names = KeyNames(NAMES)
    if names.unique_in(text.encode() if as_bytes else text):
        assert first_repeat(text) is None


@given(documents(NAMES))
def test_the_quick_pass_answers_the_same_for_a_text_and_its_utf8(text: str) -> None:
    names = KeyNames(NAMES)
    assert names.unique_in(text) is names.unique_in(text.encode())
