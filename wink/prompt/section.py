"""Sections: the nodes of a prompt tree, each with text, tools and policies."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import fields as dataclass_fields
from dataclasses import is_dataclass
from typing import Any, ClassVar, Generic, TypeVar

from wink.errors import PromptRenderError, PromptValidationError
from wink.resources import Binding, ResourceRegistry
from wink.tools import Tool

__all__ = ["Enabled", "MarkdownSection", "Section", "params_field_names"]

ParamsT = TypeVar("ParamsT")

Enabled = bool | Callable[[Any], bool]
"""A section's ``enabled``: a bool, or a predicate over the section's bound params."""


def _derive_key(title: str) -> str:
    key = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    if not key:
        raise PromptValidationError(f"section title {title!r} gives no key; pass key=...")
    return key


class Section(Generic[ParamsT]):
    """A node of the prompt tree. Any section may carry tools and policies.

    ``enabled`` is a bool or a predicate over the section's bound params; a
    disabled section hides its whole subtree, text and tools. A section built with
    ``accepts_overrides=False`` keeps the descriptions of its tools, and of the tools
    of its children, as written: prompt overrides for them are skipped.
    ``default_resources`` are bindings the section installs in a prompt that binds
    nothing for their type (for ``Filesystem``: no filesystem at all), such as the
    workspace its tools need.
    """

    _params_argument: ClassVar[Any] = None
    _specialised: ClassVar[dict[Any, type[Any]]]

    def __init__(
        self,
        *,
        title: str,
        key: str | None = None,
        children: Sequence[Section[Any]] = (),
        tools: Sequence[Tool[Any, Any]] = (),
        policies: Sequence[Any] = (),
        enabled: Enabled = True,
        params: type[ParamsT] | None = None,
        accepts_overrides: bool = True,
        default_resources: Sequence[Binding[Any]] = (),
    ) -> None:
        if not isinstance(title, str) or not title.strip():
            raise PromptValidationError(f"section title must be a non-empty string, got {title!r}")
        self.title = title.strip()
        self.key = key if key is not None else _derive_key(self.title)
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", self.key):
            raise PromptValidationError(
                f"section {self.title!r}: key {self.key!r} must be lowercase letters, digits, "
                "'.', '_' or '-'"
            )
        self.children: tuple[Section[Any], ...] = tuple(children)
        self.tools: tuple[Tool[Any, Any], ...] = tuple(tools)
        self.policies: tuple[Any, ...] = tuple(policies)
        self.enabled = enabled
        self.accepts_overrides = accepts_overrides
        """Whether prompt overrides may change the descriptions of this subtree's tools."""
        self.default_resources: tuple[Binding[Any], ...] = tuple(default_resources)
        """Bindings installed in prompts that bind nothing for their type."""
        for binding in self.default_resources:
            if not isinstance(binding, Binding):
                raise PromptValidationError(
                    f"section {title.strip()!r}: default resource {binding!r} is not a Binding"
                )
        self.params: type[ParamsT] | None = params if params is not None else self._params_argument
        for child in self.children:
            if not isinstance(child, Section):
                raise PromptValidationError(
                    f"section {self.key!r}: child {child!r} is not a Section"
                )
        for tool in self.tools:
            if not isinstance(tool, Tool):
                raise PromptValidationError(f"section {self.key!r}: {tool!r} is not a Tool")

    def __class_getitem__(cls, item: Any) -> Any:
        if isinstance(item, TypeVar):
            return super().__class_getitem__(item)  # type: ignore[misc]  # generic alias for annotations
        cache = cls.__dict__.get("_specialised")
        if cache is None:
            cache = {}
            cls._specialised = cache
        specialised = cache.get(item)
        if specialised is None:
            specialised = type(
                f"{cls.__name__}[{getattr(item, '__qualname__', item)}]",
                (cls,),
                {"_params_argument": item, "__module__": cls.__module__},
            )
            cache[item] = specialised
        return specialised

    def placeholders(self) -> frozenset[str]:
        """Names this section's text refers to; empty for sections without text."""
        return frozenset()

    def is_enabled(self, params: ParamsT | None) -> bool:
        """Whether the section (and so its subtree) is shown for ``params``."""
        if callable(self.enabled):
            return bool(self.enabled(params))
        return bool(self.enabled)

    def render_body(self, params: ParamsT | None) -> str:
        """The section's text below its heading; grouping sections have none."""
        return ""

    def tools_changed(self, resources: ResourceRegistry) -> bool:
        """Whether the source of this section's tools said they changed since the section
        was built, as seen through a session's ``resources``; asked before every model
        request of an evaluation, so it must answer at once, without I/O.

        Sections whose tools come from elsewhere (``McpToolsSection``) override it and
        ``refreshed``; a section whose tools are written in code never changes.
        """
        return False

    def refreshed(self, resources: ResourceRegistry) -> Section[ParamsT] | None:
        """A new section with this one's tools as their source has them now, or ``None``
        when they are the same; asked, and allowed to block, when ``tools_changed``."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(key={self.key!r}, title={self.title!r})"


class MarkdownSection(Section[ParamsT]):
    """A section whose text is a ``string.Template`` filled from its params."""

    def __init__(
        self,
        *,
        title: str,
        template: str = "",
        key: str | None = None,
        children: Sequence[Section[Any]] = (),
        tools: Sequence[Tool[Any, Any]] = (),
        policies: Sequence[Any] = (),
        enabled: Enabled = True,
        params: type[ParamsT] | None = None,
        accepts_overrides: bool = True,
        default_resources: Sequence[Binding[Any]] = (),
    ) -> None:
        super().__init__(
            title=title,
            key=key,
            children=children,
            tools=tools,
            policies=policies,
            enabled=enabled,
            params=params,
            accepts_overrides=accepts_overrides,
            default_resources=default_resources,
        )
        # Imported with the first section, not with wink (compiling its pattern takes time).
        from string import Template

        self.template = Template(template)
        if not self.template.is_valid():
            raise PromptValidationError(
                f"section {self.key!r}: template has an invalid placeholder: {template!r} "
                "(placeholders are $name or ${name}; write $$ for a literal dollar sign)"
            )

    def placeholders(self) -> frozenset[str]:
        return frozenset(self.template.get_identifiers())

    def render_body(self, params: ParamsT | None) -> str:
        values = {} if params is None else _field_values(params)
        try:
            return self.template.substitute(values).strip()
        except KeyError as error:
            raise PromptRenderError(
                f"section {self.key!r}: no value for placeholder ${{{error.args[0]}}}"
            ) from None


def params_field_names(params_type: Any) -> frozenset[str]:
    """Field names a params type provides to templates."""
    if params_type is None:
        return frozenset()
    if is_dataclass(params_type):
        return frozenset(field.name for field in dataclass_fields(params_type))
    model_fields = getattr(params_type, "model_fields", None)
    if isinstance(model_fields, dict):
        return frozenset(model_fields)
    raise PromptValidationError(
        f"section params type {params_type!r} must be a dataclass or a pydantic model"
    )


def _field_values(params: Any) -> dict[str, Any]:
    if is_dataclass(params):
        return {field.name: getattr(params, field.name) for field in dataclass_fields(params)}
    return dict(getattr(params, "__dict__", {}))
