"""Field descriptions from attribute docstrings: a string literal right under a field.

```python
@dataclass
class SearchParams:
    query: str
    \"\"\"What to search for.\"\"\"
```

gives ``query`` the description "What to search for." in the schema, for pydantic
models, dataclasses and ``TypedDict``s alike, with no configuration. A description
written explicitly (``Field(description=...)``, dataclass field metadata, pydantic's
own ``use_attribute_docstrings``) wins. Inherited fields take the docstring written
where they are declared; a subclass may document them again.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import linecache
import re
from typing import Any

from wink.contract.walk import JsonSchema

__all__ = ["argument_descriptions", "describe_from_docstrings", "summary"]


def describe_from_docstrings(json_schema: JsonSchema, cls: type[Any]) -> None:
    """Give each property of ``json_schema`` (the object schema of ``cls``) that has no
    description the docstring written under its field, in place."""
    properties = json_schema.get("properties")
    if not isinstance(properties, dict):
        return
    for name, text in _docstrings(cls).items():
        for key in _property_names(cls, name):
            prop = properties.get(key)
            if isinstance(prop, dict):
                prop.setdefault("description", text)
                break


def _docstrings(cls: type[Any]) -> dict[str, str]:
    """Field name to attribute docstring, over ``cls`` and its bases (nearest wins)."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass.__module__ in ("builtins", "typing") or klass.__module__.startswith("pydantic"):
            continue
        found.update(_own_docstrings(klass))
    return found


def _own_docstrings(cls: type[Any]) -> dict[str, str]:
    """The attribute docstrings written in ``cls``'s own body.

    The class is found in its module's source the way ``inspect.getsource`` finds
    it (the first class statement with its qualified name), but each source file is
    parsed once, not once per class.
    """
    try:
        file = inspect.getsourcefile(cls)
        if file:
            linecache.checkcache(file)
        else:
            file = inspect.getfile(cls)
            # Only a source registered with ``linecache`` (doctest, a notebook) has no file.
            if not (file.startswith("<") and file.endswith(">")):
                return {}
    except (OSError, TypeError):  # built in, or defined where no file is known
        return {}
    module = inspect.getmodule(cls, file)
    lines = linecache.getlines(file, module.__dict__ if module else None)
    if not lines:  # built in the REPL or by exec
        return {}
    cached = _by_file.get(file)
    if cached is None or cached[0] is not lines:
        cached = (lines, _docstrings_by_class(lines))
        _by_file[file] = cached
    return cached[1].get(cls.__qualname__, {})


# File name to (the source lines it was read from, qualified class name to the
# class's attribute docstrings); ``linecache`` hands out new lines when a file changes.
_by_file: dict[str, tuple[list[str], dict[str, dict[str, str]]]] = {}


def _docstrings_by_class(lines: list[str]) -> dict[str, dict[str, str]]:
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return {}
    finder = _ClassBodies()
    finder.visit(tree)
    return {name: _attribute_docstrings(body) for name, body in finder.bodies.items()}


class _ClassBodies(ast.NodeVisitor):
    """Every class statement's body by qualified name, the first one written winning."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[ast.stmt]] = {}
        self._names: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._names += [node.name, "<locals>"]
        self.generic_visit(node)
        del self._names[-2:]

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._names.append(node.name)
        self.bodies.setdefault(".".join(self._names), node.body)
        self.generic_visit(node)
        self._names.pop()


def _attribute_docstrings(body: list[ast.stmt]) -> dict[str, str]:
    docstrings: dict[str, str] = {}
    for field, after in itertools.pairwise(body):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docstrings[field.target.id] = inspect.cleandoc(after.value.value)
    return docstrings


def _property_names(cls: type[Any], name: str) -> list[str]:
    """The keys a field may have in a schema: its aliases, then its own name."""
    fields = getattr(cls, "__pydantic_fields__", None)
    info = fields.get(name) if isinstance(fields, dict) else None
    names = [
        alias
        for alias in (
            getattr(info, "validation_alias", None),
            getattr(info, "serialization_alias", None),
            getattr(info, "alias", None),
        )
        if isinstance(alias, str)
    ]
    return [*names, name]


# Headers of the Google-style sections that list parameters, lowercased.
_ARGUMENT_HEADERS = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
)
# Headers that end the summary paragraph too: the other common Google-style sections.
_SECTION_HEADERS = _ARGUMENT_HEADERS | {
    "returns",
    "return",
    "yields",
    "raises",
    "examples",
    "example",
    "notes",
    "note",
}
_GOOGLE_ENTRY = re.compile(r"(\w+)\s*(?:\([^)]*\))?\s*:(?:\s+(.*))?")  # name (type): text
_SPHINX_ENTRY = re.compile(r":param\s+(?:[^:]*\s)?(\w+)\s*:(?:\s+(.*))?")  # :param type name: text
_SPHINX_FIELD = re.compile(r":\w+")


def summary(docstring: str) -> str | None:
    """The first paragraph of a cleaned docstring (``inspect.getdoc``), its lines
    joined by spaces, stopping at a section such as ``Args:`` or ``:param x:``."""
    lines: list[str] = []
    for line in docstring.strip().splitlines():
        stripped = line.strip()
        if not stripped or _is_section_header(stripped) or _SPHINX_FIELD.match(stripped):
            break
        lines.append(stripped)
    return " ".join(lines) or None


def argument_descriptions(docstring: str) -> dict[str, str]:
    """Parameter name to description, from the ``Args:`` sections and ``:param name:``
    lines of a cleaned docstring (``inspect.getdoc``). An entry's continuation lines
    are kept as written, less their common indentation; an empty entry is left out."""
    lines = docstring.splitlines()
    found: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if _is_section_header(stripped) and stripped[:-1].strip().lower() in _ARGUMENT_HEADERS:
            index = _read_google_section(lines, index, found)
        elif _SPHINX_ENTRY.match(stripped):
            index = _read_sphinx_entry(lines, index, found)
        else:
            index += 1
    return found


def _is_section_header(stripped: str) -> bool:
    return stripped.endswith(":") and stripped[:-1].strip().lower() in _SECTION_HEADERS


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _read_google_section(lines: list[str], header: int, found: dict[str, str]) -> int:
    """Read the entries under the header at ``lines[header]``; the index after them."""
    outer = _indent(lines[header])
    index = header + 1
    entry_indent: int | None = None
    name: str | None = None
    text: list[str] = []
    while index < len(lines):
        line = lines[index]
        if line.strip() and _indent(line) <= outer:
            break
        if line.strip() and entry_indent is None:
            entry_indent = _indent(line)
        entry = _GOOGLE_ENTRY.fullmatch(line.strip())
        if line.strip() and _indent(line) == entry_indent and entry:
            _keep(found, name, text)
            name, text = entry[1], [entry[2] or ""]
        elif name is not None:
            text.append(line)
        index += 1
    _keep(found, name, text)
    return index


def _read_sphinx_entry(lines: list[str], start: int, found: dict[str, str]) -> int:
    """Read the ``:param name:`` entry at ``lines[start]``; the index after it."""
    entry = _SPHINX_ENTRY.match(lines[start].strip())
    assert entry is not None  # the caller matched it
    outer = _indent(lines[start])
    text = [entry[2] or ""]
    index = start + 1
    while index < len(lines) and lines[index].strip() and _indent(lines[index]) > outer:
        text.append(lines[index])
        index += 1
    _keep(found, entry[1], text)
    return index


def _keep(found: dict[str, str], name: str | None, text: list[str]) -> None:
    if name is None:
        return
    # The first line follows the name; ``cleandoc`` takes the rest's common indentation.
    description = inspect.cleandoc("\n".join(text)).strip()
    if description:
        found[name] = description
