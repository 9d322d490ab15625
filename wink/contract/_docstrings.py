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
from typing import Any

from wink.contract.walk import JsonSchema

__all__ = ["describe_from_docstrings"]


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
