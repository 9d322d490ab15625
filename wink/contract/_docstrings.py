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
import textwrap
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
    try:
        lines, _ = inspect.getsourcelines(cls)
    except (OSError, TypeError):  # no source: built in the REPL, by exec, or compiled
        return {}
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        # A class body indented less than its first line (a multi-line string at
        # column 0): parse it inside a function, where any indentation is valid.
        try:
            tree = ast.parse("def _():\n" + textwrap.indent(source, " "))
        except SyntaxError:
            return {}
        tree = tree.body[0]  # type: ignore[assignment]  # the wrapping function
    statement = tree.body[0] if tree.body else None
    if not isinstance(statement, ast.ClassDef):
        return {}
    docstrings: dict[str, str] = {}
    body = statement.body
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
