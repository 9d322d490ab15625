"""Prompt templates, bound prompts and rendered prompts."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Generic

from typing_extensions import TypeVar

from wink._error_text import bounded, describe_error
from wink._lazy_logging import LazyLogger
from wink.contract import Contract, compile_contract, type_name
from wink.errors import PromptRenderError, PromptValidationError
from wink.prompt.examples import examples_markdown
from wink.prompt.section import Section, params_field_names
from wink.resources import Binding, BindingError, Filesystem, ResourceRegistry
from wink.tools import ParamHint, Tool

logger = LazyLogger(__name__)

__all__ = [
    "OutputT",
    "Prompt",
    "PromptOverrides",
    "PromptTemplate",
    "RenderedPrompt",
    "ToolBinding",
]


OutputT = TypeVar("OutputT", default=None)
"""The structured output a template declares; ``None`` for a prompt answered with text."""


@dataclass(frozen=True, slots=True)
class _Node:
    """One section of a template, in the depth-first order of its tree."""

    section: Section[Any]
    path: tuple[str, ...]
    depth: int
    params_type: Any
    end: int
    """Index just past this node's subtree in the depth-first order."""

    @property
    def path_text(self) -> str:
        return "/".join(self.path)


@dataclass(frozen=True, slots=True)
class ToolBinding:
    """Where a tool sits in the tree and which policies govern it."""

    tool: Tool[Any, Any]
    section_path: str
    """Keys from the root to the tool's section, joined with ``/``."""
    policies: tuple[Any, ...]
    """Policies of the section and its ancestors (innermost first), then the prompt's."""


class PromptTemplate(Generic[OutputT]):
    """An immutable, validated tree of sections; walked once at construction.

    ``PromptTemplate[Answer](...)`` declares that the model answers with an
    ``Answer`` (a pydantic model, dataclass or ``TypedDict``: a JSON object), which
    an adapter asks the provider for and parses with ``output_contract``; a plain
    ``PromptTemplate(...)`` is answered with text.
    """

    _specialised: ClassVar[dict[Any, type[PromptTemplate[Any]]]] = {}
    _output_type: ClassVar[Any] = None

    def __class_getitem__(cls, item: Any) -> Any:
        if isinstance(item, TypeVar) or item is Any or isinstance(item, tuple):
            # Not concrete: a generic alias for annotations, such as PromptTemplate[OutputT].
            return super().__class_getitem__(item)  # type: ignore[misc]  # Generic provides it
        specialised = cls._specialised.get(item)
        if specialised is None:
            name = f"PromptTemplate[{type_name(item)}]"
            specialised = type(name, (cls,), {"_output_type": item})
            specialised.__module__ = cls.__module__
            cls._specialised[item] = specialised
        return specialised

    def __init__(
        self,
        *,
        ns: str,
        key: str,
        name: str | None = None,
        sections: Sequence[Section[Any]] = (),
        policies: Sequence[Any] = (),
        max_output_chars: int | None = None,
    ) -> None:
        if not ns or not key:
            raise PromptValidationError(f"prompt template needs ns and key, got {ns!r}/{key!r}")
        if max_output_chars is not None and (
            isinstance(max_output_chars, bool)
            or not isinstance(max_output_chars, int)
            or max_output_chars < 1
        ):
            raise PromptValidationError(
                f"prompt template {ns}/{key}: max_output_chars must be a positive integer or "
                f"None, got {max_output_chars!r}"
            )
        self.max_output_chars = max_output_chars
        """The most characters of a tool's rendered value the model is shown, for the
        tools that set no ``max_output_chars`` of their own (``None``: no limit)."""
        self.ns = ns
        self.key = key
        self.name = name or key
        self.sections = tuple(sections)
        self.policies = tuple(policies)
        self._nodes = _walk(self.sections)
        self._params_types = tuple(
            dict.fromkeys(node.params_type for node in self._nodes if node.params_type is not None)
        )
        _check_policy_names(self._nodes, self.policies)
        self._bindings = _bind_tools(self._nodes, self.policies)
        self.tools: tuple[Tool[Any, Any], ...] = tuple(b.tool for b in self._bindings.values())
        """Every tool of the tree in declaration order, enabled or not."""
        first: dict[type[Any], Binding[Any]] = {}
        for node in self._nodes:
            for binding in node.section.default_resources:
                first.setdefault(binding.resource_type, binding)
        self.default_resources: tuple[Binding[Any], ...] = tuple(first.values())
        """The sections' default bindings, the first in tree order for each type."""
        for node in self._nodes:
            _check_placeholders(node)
        self.refreshable: tuple[Section[Any], ...] = tuple(
            node.section
            for node in self._nodes
            if type(node.section).tools_changed is not Section.tools_changed
        )
        """The sections whose tools come from elsewhere and may change (``Section.refreshed``)."""
        self.output_type: Any = type(self)._output_type
        """The declared output type; ``None`` when the model answers with text."""
        self.output_contract: Contract[OutputT] | None = _output_contract(
            self.output_type, f"prompt template {ns}/{key}"
        )
        """The compiled output contract (strict, unknown keys rejected), or ``None``."""

    @property
    def nodes(self) -> tuple[_Node, ...]:
        return self._nodes

    @property
    def params_types(self) -> tuple[Any, ...]:
        """The params types sections take (declared or inherited), in tree order."""
        return self._params_types

    def binding(self, tool_name: str) -> ToolBinding:
        """Where ``tool_name`` sits and which policies govern it.

        Raises ``PromptValidationError`` for a name that is not a tool of the template.
        """
        binding = self._bindings.get(tool_name)
        if binding is None:
            known = ", ".join(sorted(self._bindings)) or "none"
            raise PromptValidationError(
                f"prompt template {self.ns}/{self.key} has no tool {tool_name!r} "
                f"(its tools: {known})"
            )
        return binding

    def __repr__(self) -> str:
        output = "" if self.output_type is None else f", output={type_name(self.output_type)}"
        return f"PromptTemplate(ns={self.ns!r}, key={self.key!r}, tools={len(self.tools)}{output})"


def _output_contract(output_type: Any, owner: str) -> Contract[Any] | None:
    """The contract of a declared output type, whose JSON must be an object."""
    if output_type is None:
        return None
    try:
        contract = compile_contract(output_type)
    except PromptValidationError as error:
        raise PromptValidationError(f"{owner}: output type {error}") from None
    schema = contract.input_schema
    root = schema
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/$defs/"):
        root = schema.get("$defs", {}).get(reference.removeprefix("#/$defs/"), {})
    if root.get("type") != "object":
        raise PromptValidationError(
            f"{owner}: output type {type_name(output_type)} is not a JSON object; providers "
            "take an object schema for structured output: declare a pydantic model, a "
            "dataclass or a TypedDict (wrap a list or a scalar in one field)"
        )
    return contract


def _walk(sections: Sequence[Section[Any]]) -> tuple[_Node, ...]:
    nodes: list[_Node] = []

    def visit(section: Section[Any], parent: tuple[str, ...], depth: int, inherited: Any) -> None:
        path = (*parent, section.key)
        params_type = section.params if section.params is not None else inherited
        index = len(nodes)
        nodes.append(_Node(section, path, depth, params_type, end=-1))
        _check_children(section.children, path)
        for child in section.children:
            visit(child, path, depth + 1, params_type)
        nodes[index] = _Node(section, path, depth, params_type, end=len(nodes))

    _check_children(sections, ())
    for section in sections:
        visit(section, (), 0, None)
    return tuple(nodes)


def _check_children(children: Sequence[object], parent: tuple[str, ...]) -> None:
    """Children of the section at ``parent`` (``()``: the top level) are Sections, keys distinct."""
    seen: set[str] = set()
    for child in children:
        # Children are checked when a section is built, but ``children`` can be reassigned.
        if not isinstance(child, Section):
            where = f"section {'/'.join(parent)}: child" if parent else "top-level section"
            raise PromptValidationError(f"{where} {child!r} is not a Section")
        if child.key in seen:
            raise PromptValidationError(
                f"section {'/'.join(parent)} has two children with key {child.key!r}"
                if parent
                else f"two top-level sections have key {child.key!r}"
            )
        seen.add(child.key)


def _bind_tools(nodes: Sequence[_Node], prompt_policies: tuple[Any, ...]) -> dict[str, ToolBinding]:
    bindings: dict[str, ToolBinding] = {}
    chain: list[tuple[Any, ...]] = []
    for node in nodes:
        del chain[node.depth :]
        chain.append(node.section.policies)
        policies = tuple(p for level in reversed(chain) for p in level) + prompt_policies
        for tool in node.section.tools:
            if tool.name in bindings:
                raise PromptValidationError(
                    f"duplicate tool name {tool.name!r} in sections "
                    f"{bindings[tool.name].section_path} and {node.path_text}"
                )
            bindings[tool.name] = ToolBinding(tool, node.path_text, policies)
    return bindings


def _check_policy_names(nodes: Sequence[_Node], prompt_policies: tuple[Any, ...]) -> None:
    """Refuse two different policies with one name: they would share their session state.

    One policy attached in several places is one policy; so are equal policies (same
    class and configuration), whose shared state means the same thing to both.
    """
    seen: dict[str, tuple[Any, str]] = {}
    attached = [*((node.section.policies, f"section {node.path_text}") for node in nodes)]
    attached.append((prompt_policies, "the prompt"))
    for policies, place in attached:
        for policy in policies:
            name = getattr(policy, "name", None)
            if not isinstance(name, str):
                continue  # not a policy: the executor names it
            first = seen.setdefault(name, (policy, place))
            if first[0] is policy or first[0] == policy:
                continue
            raise PromptValidationError(
                f"two different policies are named {name!r} ({type(first[0]).__name__} "
                f"attached to {first[1]}, {type(policy).__name__} attached to {place}); a "
                "policy's name keys its state in the session, so give each a distinct name"
            )


def _check_placeholders(node: _Node) -> None:
    wanted = node.section.placeholders()
    if not wanted:
        return
    provided = params_field_names(node.params_type)
    missing = sorted(wanted - provided)
    if missing:
        source = (
            f"params type {node.params_type.__qualname__}"
            if node.params_type is not None
            else "no params type"
        )
        raise PromptValidationError(
            f"section {node.path_text}: placeholders {', '.join('${' + m + '}' for m in missing)} "
            f"are not provided ({source})"
        )


@dataclass(frozen=True, slots=True)
class PromptOverrides:
    """Description overrides for tools that accept them.

    An override for a tool built with ``accepts_overrides=False``, or sitting in a
    section (or below a section) built so, is skipped with a warning in the log; with
    ``strict=True`` it raises ``PromptValidationError`` instead. Overrides naming a tool
    or a parameter the template does not have always raise.
    """

    tool_descriptions: Mapping[str, str] = field(default_factory=dict)
    """Tool name to its new description."""
    param_descriptions: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Tool name to field name to its new description (applied to the JSON Schema)."""
    strict: bool = False
    """Raise for an override that a tool or a section refuses, instead of skipping it."""


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The text and the tools of one render."""

    text: str
    """Markdown with headings by depth."""
    tools: tuple[Tool[Any, Any], ...]
    """Tools of enabled sections, in declaration order, overrides applied."""
    tool_param_descriptions: Mapping[str, Mapping[str, ParamHint]]
    """Tool name to field name to its description (after overrides), type and default,
    for every top-level field of the tool's params."""
    bindings: Mapping[str, ToolBinding] = field(repr=False)
    """Tool name to its binding (tool, section path, policies); built once per render."""

    def binding(self, tool_name: str) -> ToolBinding | None:
        """The binding of an enabled tool, or ``None``."""
        return self.bindings.get(tool_name)


class Prompt(Generic[OutputT]):
    """A template with its params, resources and overrides bound."""

    def __init__(
        self,
        template: PromptTemplate[OutputT],
        *,
        overrides: PromptOverrides | None = None,
        params: Sequence[Any] = (),
        resources: Mapping[type[Any], Any] | ResourceRegistry | None = None,
    ) -> None:
        if not isinstance(template, PromptTemplate):
            raise PromptValidationError(f"Prompt needs a PromptTemplate, got {template!r}")
        self.template = template
        self.overrides = overrides or PromptOverrides()
        self._params = _index_params(params, template.params_types)
        self._section_params = _params_by_section_type(template.params_types, self._params)
        self._registry = _registry_of(resources, template)
        tools = _apply_overrides(template, self.overrides)
        # Everything about tools that does not depend on params is settled once here,
        # so that a render only walks the enabled sections.
        self._section_bindings = tuple(
            tuple(
                _rebind(template.binding(tool.name), tools[tool.name])
                for tool in node.section.tools
            )
            for node in template.nodes
        )
        self._param_descriptions: dict[str, Mapping[str, ParamHint]] = {
            name: MappingProxyType(tool.param_hints()) for name, tool in tools.items()
        }
        self._section_examples = tuple(
            examples_markdown(node.section.tools) for node in template.nodes
        )

    @property
    def name(self) -> str:
        """The template's name."""
        return self.template.name

    @property
    def output_contract(self) -> Contract[OutputT] | None:
        """The template's output contract; ``None`` for a prompt answered with text."""
        return self.template.output_contract

    @property
    def resources(self) -> ResourceRegistry:
        """The resource registry; ``with prompt.resources:`` opens and closes them."""
        return self._registry

    @property
    def params(self) -> tuple[Any, ...]:
        """The bound params instances."""
        return tuple(self._params.values())

    def bind(
        self, *params: Any, resources: Mapping[type[Any], Any] | ResourceRegistry | None = None
    ) -> Prompt[OutputT]:
        """A prompt with ``params`` (and ``resources``) bound in addition to these.

        A params instance of a type already bound replaces the earlier one; ``resources``
        replace the bound resources as a whole. ``self`` is left unchanged.
        """
        bound = copy.copy(self)  # shares the settled tools; nothing here is mutated
        bound._params = {**self._params, **_index_params(params, self.template.params_types)}
        bound._section_params = _params_by_section_type(self.template.params_types, bound._params)
        if resources is not None:
            bound._registry = _registry_of(resources, self.template)
        return bound

    def tools_changed(self, session: object) -> bool:
        """Whether a section's tools changed at their source since the template was built,
        as ``session`` sees them (``Section.tools_changed``); answers at once."""
        sections = self.template.refreshable
        if not sections:
            return False
        resources = self._registry.for_session(session)
        return any(section.tools_changed(resources) for section in sections)

    def refreshed(self, session: object) -> Prompt[OutputT] | None:
        """This prompt over a new template whose sections have their tools as their sources
        have them now (``Section.refreshed``), its params, overrides and resources shared;
        ``None`` when no section's tools changed. May block while sources are asked."""
        sections = _refreshed_sections(self.template.sections, self._registry.for_session(session))
        if sections is None:
            return None
        old = self.template
        template = type(old)(
            ns=old.ns,
            key=old.key,
            name=old.name,
            sections=sections,
            policies=old.policies,
            max_output_chars=old.max_output_chars,
        )
        return Prompt(
            template, overrides=self.overrides, params=self.params, resources=self._registry
        )

    def render(self) -> RenderedPrompt:
        """Render the enabled sections to markdown and collect their tools."""
        blocks: list[str] = []
        tools: list[Tool[Any, Any]] = []
        bindings: dict[str, ToolBinding] = {}
        descriptions: dict[str, Mapping[str, ParamHint]] = {}
        nodes = self.template.nodes
        index = 0
        while index < len(nodes):
            node = nodes[index]
            # A section switched off outright needs no params to stay hidden.
            if node.section.enabled is False:
                index = node.end
                continue
            params = self._params_for(node)
            if not _is_enabled(node, params):
                index = node.end
                continue
            heading = "#" * min(node.depth + 2, 6) + " " + node.section.title
            parts = (node.section.render_body(params), self._section_examples[index])
            body = "\n\n".join(part for part in parts if part)
            blocks.append(f"{heading}\n\n{body}" if body else heading)
            for binding in self._section_bindings[index]:
                name = binding.tool.name
                tools.append(binding.tool)
                bindings[name] = binding
                descriptions[name] = self._param_descriptions[name]
            index += 1
        return RenderedPrompt(
            text="\n\n".join(blocks),
            tools=tuple(tools),
            tool_param_descriptions=MappingProxyType(descriptions),
            bindings=MappingProxyType(bindings),
        )

    def _params_for(self, node: _Node) -> Any:
        params_type = node.params_type
        if params_type is None:
            return None
        bound = self._section_params.get(params_type)
        if bound is not None:
            return bound
        try:
            return params_type()
        except Exception:
            raise PromptRenderError(
                f"section {node.path_text} needs params of type {params_type.__qualname__}; "
                "pass an instance to Prompt.bind()"
            ) from None

    def __repr__(self) -> str:
        return f"Prompt({self.template!r})"


def _refreshed_sections(
    sections: Sequence[Section[Any]], resources: ResourceRegistry
) -> tuple[Section[Any], ...] | None:
    """``sections`` with each one whose tools changed replaced by its refreshed self (a
    parent copied around a replaced child); ``None`` when none changed."""
    changed = False
    result: list[Section[Any]] = []
    for section in sections:
        fresh = section.refreshed(resources) if section.tools_changed(resources) else None
        current = section if fresh is None else fresh
        children = _refreshed_sections(current.children, resources)
        if children is not None:
            current = copy.copy(current)
            current.children = children
        changed = changed or current is not section
        result.append(current)
    return tuple(result) if changed else None


def _is_enabled(node: _Node, params: Any) -> bool:
    """Whether the section at ``node`` shows; a predicate that raises is a render error."""
    try:
        return node.section.is_enabled(params)
    except Exception as error:
        raise PromptRenderError(
            f"section {node.path_text}: the enabled predicate raised {describe_error(error)}"
        ) from error


def _rebind(binding: ToolBinding, tool: Tool[Any, Any]) -> ToolBinding:
    return ToolBinding(tool, binding.section_path, binding.policies)


def _index_params(params: Sequence[Any], taken: tuple[Any, ...]) -> dict[type[Any], Any]:
    """Params instances by their type; each must fit a params type some section takes."""
    indexed: dict[type[Any], Any] = {}
    for value in params:
        if value is None or isinstance(value, type):
            raise PromptValidationError(f"bind() takes params instances, got {value!r}")
        if type(value) in indexed:
            raise PromptValidationError(f"bind() got two params of type {type(value).__qualname__}")
        if not any(_fits(value, params_type) for params_type in taken):
            sections_take = (
                f"sections take {', '.join(_type_name(t) for t in taken)}"
                if taken
                else "no section takes params"
            )
            name = type(value).__qualname__
            raise PromptValidationError(
                f"bind() got params of type {name}, which no section takes ({sections_take}); "
                f"declare it with MarkdownSection[{name}](...) or params={name}"
            )
        indexed[type(value)] = value
    return indexed


def _params_by_section_type(
    taken: tuple[Any, ...], bound: Mapping[type[Any], Any]
) -> dict[Any, Any]:
    """The bound instance for each params type: of exactly that type, else of a subtype."""
    chosen: dict[Any, Any] = {}
    for params_type in taken:
        if params_type in bound:
            chosen[params_type] = bound[params_type]
            continue
        fitting = [value for value in bound.values() if _fits(value, params_type)]
        if len(fitting) > 1:
            names = " and ".join(type(value).__qualname__ for value in fitting)
            raise PromptValidationError(
                f"bind(): params of types {names} could each fill sections taking "
                f"{_type_name(params_type)}; bind a {_type_name(params_type)} too, or only "
                "one of them"
            )
        if fitting:
            chosen[params_type] = fitting[0]
    return chosen


def _fits(value: Any, params_type: Any) -> bool:
    return isinstance(params_type, type) and isinstance(value, params_type)


def _type_name(params_type: Any) -> str:
    return str(getattr(params_type, "__qualname__", params_type))


def _apply_overrides(
    template: PromptTemplate[Any], overrides: PromptOverrides
) -> dict[str, Tool[Any, Any]]:
    names = {tool.name for tool in template.tools}
    unknown = sorted((set(overrides.tool_descriptions) | set(overrides.param_descriptions)) - names)
    if unknown:
        raise PromptValidationError(
            f"overrides name unknown tools {unknown} (tools: {', '.join(sorted(names))})"
        )
    refusals = _override_refusals(template)
    tools: dict[str, Tool[Any, Any]] = {}
    for tool in template.tools:
        description = overrides.tool_descriptions.get(tool.name)
        params = overrides.param_descriptions.get(tool.name)
        refusal = refusals.get(tool.name)
        if description is None and not params:
            tools[tool.name] = tool
        elif refusal is not None:
            if overrides.strict:
                raise PromptValidationError(refusal)
            logger.warning("override skipped: %s", refusal)
            tools[tool.name] = tool
        else:
            tools[tool.name] = tool.with_descriptions(description, dict(params or {}))
    return tools


def _override_refusals(template: PromptTemplate) -> dict[str, str]:
    """Why overrides are refused, for each tool that refuses them (itself or a section)."""
    refusals: dict[str, str] = {}
    refusing: list[str | None] = []  # by depth: the path of the refusing section, if any
    for node in template.nodes:
        del refusing[node.depth :]
        inherited = refusing[-1] if refusing else None
        own = None if node.section.accepts_overrides else node.path_text
        refusing.append(inherited or own)
        for tool in node.section.tools:
            if not tool.accepts_overrides:
                refusals[tool.name] = f"tool {tool.name!r} does not accept overrides"
            elif refusing[-1] is not None:
                refusals[tool.name] = (
                    f"tool {tool.name!r} sits in section {refusing[-1]}, which does not accept "
                    "overrides"
                )
    return refusals


def _registry_of(
    resources: Mapping[type[Any], Any] | ResourceRegistry | None,
    template: PromptTemplate[Any],
) -> ResourceRegistry:
    """The prompt's registry: ``resources``, plus the sections' defaults they leave unbound.

    A ``ResourceRegistry`` passed in is used as it is, defaults and all: it is the
    caller's, and may already have built its resources.
    """
    if isinstance(resources, ResourceRegistry):
        registry = resources
    else:
        mapping: dict[type[Any], Any] = dict(resources or {})
        for binding in template.default_resources:
            if binding.resource_type in mapping:
                continue
            if binding.resource_type is Filesystem and _binds_a_filesystem(mapping):
                continue
            mapping[binding.resource_type] = binding
        registry = ResourceRegistry.from_mapping(mapping)
    _check_filesystem_is_clear(registry, template)
    return registry


def _check_filesystem_is_clear(registry: ResourceRegistry, template: PromptTemplate[Any]) -> None:
    """Refuse, at bind time, a registry whose ``Filesystem`` is ambiguous when a section
    relies on it: one that binds a default ``Filesystem`` works on ``context.filesystem``,
    and its tools would otherwise fail only when the model calls them."""
    choices = registry.filesystem_choices
    if len(choices) < 2:
        return
    for node in template.nodes:
        if any(binding.resource_type is Filesystem for binding in node.section.default_resources):
            names = ", ".join(choice.__name__ for choice in choices[:-1])
            raise BindingError(
                bounded(
                    f"section {node.path_text!r} works on context.filesystem, but "
                    f"{len(choices)} filesystems are bound, under {names} and "
                    f"{choices[-1].__name__}, and none under Filesystem; bind the one its "
                    "tools should use under Filesystem (resources={Filesystem: workspace, ...})"
                )
            )


_FILESYSTEM_METHODS = ("read", "write", "exists", "list", "delete", "normalize")


def _binds_a_filesystem(mapping: Mapping[type[Any], Any]) -> bool:
    """Whether ``mapping`` binds a filesystem under any key (an instance, or a class
    with the ``Filesystem`` methods)."""
    for key, value in mapping.items():
        if isinstance(value, Binding):
            key = value.resource_type
        elif isinstance(value, Filesystem):
            return True
        if key is Filesystem or all(hasattr(key, method) for method in _FILESYSTEM_METHODS):
            return True
    return False
