"""Specification of ``wink.prompt``: section trees, templates, rendering and overrides."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from wink.errors import PromptRenderError, PromptValidationError
from wink.prompt import (
    MarkdownSection,
    Prompt,
    PromptOverrides,
    PromptTemplate,
    Section,
    ToolBinding,
)
from wink.resources import Binding, BindingError, ResourceRegistry
from wink.tools import ParamHint, Tool, ToolExample


@dataclass
class Query:
    text: str = field(metadata={"description": "What to look for"})
    limit: int = 5


@dataclass
class Answer:
    text: str


def tool(name: str, *, accepts_overrides: bool = True) -> Tool[Query, Answer]:
    return Tool[Query, Answer](
        name=name, description=f"The {name} tool.", accepts_overrides=accepts_overrides
    )


@dataclass
class User:
    name: str
    expert: bool = False


class Topic(BaseModel):
    subject: str


@dataclass
class Policy:
    """A stand-in policy; sections carry policies without looking inside them."""

    label: str


def template(*sections: Section[Any], policies: tuple[Any, ...] = ()) -> PromptTemplate:
    return PromptTemplate(ns="tests", key="prompt", sections=sections, policies=policies)


def names(tools: tuple[Tool[Any, Any], ...]) -> list[str]:
    return [t.name for t in tools]


# --- sections --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "key"),
    [
        ("Guidance", "guidance"),
        ("Intro Part", "intro-part"),
        ("  Hello, World! 2 ", "hello-world-2"),
    ],
)
def test_the_key_is_derived_from_the_title_when_omitted(title: str, key: str) -> None:
    assert MarkdownSection(title=title).key == key


def test_an_explicit_key_is_kept() -> None:
    assert MarkdownSection(title="Guidance", key="guide_v2").key == "guide_v2"


def test_a_key_with_uppercase_or_spaces_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        MarkdownSection(title="Guidance", key="My Key")
    assert str(raised.value) == (
        "section 'Guidance': key 'My Key' must be lowercase letters, digits, '.', '_' or '-'"
    )


def test_a_title_that_gives_no_key_needs_an_explicit_one() -> None:
    with pytest.raises(PromptValidationError) as raised:
        MarkdownSection(title="!!!")
    assert str(raised.value) == "section title '!!!' gives no key; pass key=..."


def test_a_blank_title_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Section(title="  ")
    assert str(raised.value) == "section title must be a non-empty string, got '  '"


def test_a_template_with_an_invalid_placeholder_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        MarkdownSection(title="Bad", template="Cost: $ 5")
    assert str(raised.value) == (
        "section 'bad': template has an invalid placeholder: 'Cost: $ 5' "
        "(placeholders are $name or ${name}; write $$ for a literal dollar sign)"
    )


def test_a_non_tool_in_tools_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Section(title="Group", tools=["search"])  # type: ignore[list-item]  # wrong value under test
    assert str(raised.value) == "section 'group': 'search' is not a Tool"


def test_the_params_type_comes_from_the_subscript() -> None:
    assert MarkdownSection[User](title="Greeting").params is User
    assert MarkdownSection(title="Greeting").params is None


def test_a_grouping_section_without_text_carries_tools_and_renders_its_heading() -> None:
    rendered = Prompt(template(Section(title="Tools", tools=[tool("search")]))).render()
    assert rendered.text == "## Tools"
    assert names(rendered.tools) == ["search"]


# --- templates -------------------------------------------------------------------------


def test_template_binding_of_an_unknown_tool_names_it_and_the_known_tools() -> None:
    tree = template(Section(title="Tools", tools=[tool("search"), tool("fetch")]))
    with pytest.raises(PromptValidationError) as raised:
        tree.binding("nope")
    assert str(raised.value) == (
        "prompt template tests/prompt has no tool 'nope' (its tools: fetch, search)"
    )


def test_duplicate_tool_names_are_rejected_with_both_section_paths() -> None:
    with pytest.raises(PromptValidationError) as raised:
        template(
            MarkdownSection(title="First", tools=[tool("search")]),
            Section(title="Second", children=[Section(title="Inner", tools=[tool("search")])]),
        )
    assert str(raised.value) == ("duplicate tool name 'search' in sections first and second/inner")


def test_a_placeholder_without_a_params_type_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        template(MarkdownSection(title="Greeting", template="Hello ${name}."))
    assert str(raised.value) == (
        "section greeting: placeholders ${name} are not provided (no params type)"
    )


def test_a_placeholder_the_params_type_lacks_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        template(MarkdownSection[User](title="Greeting", template="Hello $name from $city, $zip."))
    assert str(raised.value) == (
        "section greeting: placeholders ${city}, ${zip} are not provided (params type User)"
    )


def test_a_child_inherits_the_params_type_of_its_parent() -> None:
    parent = MarkdownSection[User](
        title="Greeting", children=[MarkdownSection(title="Detail", template="For $name.")]
    )
    rendered = Prompt(template(parent)).bind(User("Ada")).render()
    assert rendered.text == "## Greeting\n\n### Detail\n\nFor Ada."


def test_two_children_with_the_same_key_are_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        template(Section(title="Root", children=[Section(title="A"), Section(title="A")]))
    assert str(raised.value) == "section root has two children with key 'a'"


def test_two_top_level_sections_with_the_same_key_are_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        template(Section(title="A"), Section(title="A"))
    assert str(raised.value) == "two top-level sections have key 'a'"


def test_a_non_section_child_is_rejected_naming_its_parent_path() -> None:
    inner = Section(title="Inner")
    inner.children = ("notes",)  # type: ignore[assignment]  # wrong value under test
    with pytest.raises(PromptValidationError) as raised:
        template(Section(title="Root", children=[inner]))
    assert str(raised.value) == "section root/inner: child 'notes' is not a Section"


def test_a_non_section_at_the_top_level_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        template(Section(title="Root"), "notes")  # type: ignore[arg-type]  # wrong value under test
    assert str(raised.value) == "top-level section 'notes' is not a Section"


def test_a_template_needs_a_namespace_and_a_key() -> None:
    with pytest.raises(PromptValidationError) as raised:
        PromptTemplate(ns="", key="k")
    assert str(raised.value) == "prompt template needs ns and key, got ''/'k'"


def test_template_tools_are_in_depth_first_declaration_order() -> None:
    tree = template(
        Section(
            title="A",
            tools=[tool("a1"), tool("a2")],
            children=[
                Section(title="B", tools=[tool("b1")]),
                Section(title="C", tools=[tool("c1")]),
            ],
        ),
        Section(title="D", tools=[tool("d1")]),
    )
    assert names(tree.tools) == ["a1", "a2", "b1", "c1", "d1"]
    assert names(Prompt(tree).render().tools) == ["a1", "a2", "b1", "c1", "d1"]


# --- rendering ---------------------------------------------------------------------------


def test_headings_follow_depth_and_stop_at_six_hashes() -> None:
    section: MarkdownSection[Any] = MarkdownSection(title="L5", template="five")
    for level in range(4, -1, -1):
        section = MarkdownSection(title=f"L{level}", template=str(level), children=[section])
    assert Prompt(template(section)).render().text == (
        "## L0\n\n0\n\n### L1\n\n1\n\n#### L2\n\n2\n\n##### L3\n\n3\n\n"
        "###### L4\n\n4\n\n###### L5\n\nfive"
    )


def test_placeholders_are_filled_from_dataclass_and_model_params() -> None:
    tree = template(
        MarkdownSection[User](title="Greeting", template="Hello $name."),
        MarkdownSection[Topic](title="Topic", template="About ${subject}."),
    )
    rendered = Prompt(tree).bind(User("Ada"), Topic(subject="maths")).render()
    assert rendered.text == "## Greeting\n\nHello Ada.\n\n## Topic\n\nAbout maths."


def test_a_disabled_section_hides_its_whole_subtree_text_and_tools() -> None:
    tree = template(
        MarkdownSection(
            title="Hidden",
            template="secret",
            enabled=False,
            tools=[tool("outer")],
            children=[MarkdownSection(title="Child", template="child", tools=[tool("inner")])],
        ),
        MarkdownSection(title="Shown", template="visible", tools=[tool("shown")]),
    )
    rendered = Prompt(tree).render()
    assert rendered.text == "## Shown\n\nvisible"
    assert names(rendered.tools) == ["shown"]
    assert rendered.binding("inner") is None
    assert set(rendered.tool_param_descriptions) == {"shown"}


def test_an_enabled_predicate_sees_the_bound_params() -> None:
    tree = template(
        MarkdownSection[User](
            title="Expert notes",
            template="Deep detail for $name.",
            enabled=lambda user: user.expert,
            tools=[tool("deep_search")],
        )
    )
    novice = Prompt(tree).bind(User("Bo")).render()
    expert = Prompt(tree).bind(User("Ada", expert=True)).render()
    assert (novice.text, names(novice.tools)) == ("", [])
    assert (expert.text, names(expert.tools)) == (
        "## Expert notes\n\nDeep detail for Ada.",
        ["deep_search"],
    )


def test_an_enabled_predicate_that_raises_is_a_render_error_naming_the_section() -> None:
    tree = template(
        Section(
            title="Root",
            children=[
                MarkdownSection[User](title="Hi", template="$name", enabled=lambda u: u.nope)
            ],
        )
    )
    with pytest.raises(PromptRenderError) as raised:
        Prompt(tree).bind(User("Ada")).render()
    assert str(raised.value) == (
        "section root/hi: the enabled predicate raised AttributeError: "
        "'User' object has no attribute 'nope'"
    )
    assert isinstance(raised.value.__cause__, AttributeError)


def test_a_section_switched_off_needs_no_params() -> None:
    tree = template(MarkdownSection[User](title="Off", template="Hi $name", enabled=False))
    assert Prompt(tree).render().text == ""


def test_missing_params_at_render_raise_prompt_render_error() -> None:
    tree = template(
        Section(title="Root", children=[MarkdownSection[User](title="Hi", template="$name")])
    )
    with pytest.raises(PromptRenderError) as raised:
        Prompt(tree).render()
    assert str(raised.value) == (
        "section root/hi needs params of type User; pass an instance to Prompt.bind()"
    )


def test_params_whose_fields_all_have_defaults_need_not_be_bound() -> None:
    @dataclass
    class Style:
        tone: str = "plain"

    tree = template(MarkdownSection[Style](title="Style", template="Tone: $tone"))
    assert Prompt(tree).render().text == "## Style\n\nTone: plain"


def test_rendered_bindings_name_the_section_path_and_policies_innermost_first() -> None:
    tree = template(
        Section(
            title="Outer",
            policies=[Policy("outer")],
            children=[Section(title="Inner", policies=[Policy("inner")], tools=[tool("search")])],
        ),
        policies=(Policy("prompt"),),
    )
    search = tree.tools[0]
    assert Prompt(tree).render().binding("search") == ToolBinding(
        search, "outer/inner", (Policy("inner"), Policy("outer"), Policy("prompt"))
    )


def test_tool_param_descriptions_map_tool_to_field_descriptions() -> None:
    rendered = Prompt(template(Section(title="T", tools=[tool("search")]))).render()
    assert dict(rendered.tool_param_descriptions) == {
        "search": {
            "text": ParamHint("What to look for", "string", required=True),
            "limit": ParamHint(None, "integer", required=False, has_default=True, default=5),
        }
    }


# --- binding -------------------------------------------------------------------------------


def test_bind_merges_params_and_leaves_the_original_prompt_unchanged() -> None:
    tree = template(
        MarkdownSection[User](title="Greeting", template="Hello $name."),
        MarkdownSection[Topic](title="Topic", template="About $subject."),
    )
    first = Prompt(tree).bind(User("Ada"))
    both = first.bind(Topic(subject="maths"))
    replaced = both.bind(User("Bo"))
    assert first.params == (User("Ada"),)
    assert both.params == (User("Ada"), Topic(subject="maths"))
    assert replaced.render().text == "## Greeting\n\nHello Bo.\n\n## Topic\n\nAbout maths."


def test_bind_rejects_two_params_of_one_type_and_classes() -> None:
    prompt = Prompt(template(MarkdownSection[User](title="Greeting", template="$name")))
    with pytest.raises(PromptValidationError) as raised:
        prompt.bind(User("Ada"), User("Bo"))
    assert str(raised.value) == "bind() got two params of type User"
    with pytest.raises(PromptValidationError) as raised:
        prompt.bind(User)
    assert str(raised.value) == f"bind() takes params instances, got {User!r}"


@dataclass
class Expert(User):
    field_of_work: str = "maths"


@dataclass
class Novice(User):
    pass


def test_a_subclass_instance_fills_a_section_taking_its_base_params_type() -> None:
    tree = template(MarkdownSection[User](title="Greeting", template="Hello $name."))
    assert Prompt(tree).bind(Expert("Ada")).render().text == "## Greeting\n\nHello Ada."


def test_params_of_the_exact_type_win_over_a_subclass_instance() -> None:
    tree = template(
        MarkdownSection[User](title="Greeting", template="Hello $name."),
        MarkdownSection[Expert](title="Field", template="$name works on $field_of_work."),
    )
    rendered = Prompt(tree).bind(Expert("Ada", field_of_work="logic"), User("Bo")).render()
    assert rendered.text == "## Greeting\n\nHello Bo.\n\n## Field\n\nAda works on logic."


def test_two_subclass_instances_fitting_one_section_are_ambiguous() -> None:
    prompt = Prompt(template(MarkdownSection[User](title="Greeting", template="Hello $name.")))
    with pytest.raises(PromptValidationError) as raised:
        prompt.bind(Expert("Ada")).bind(Novice("Bo"))
    assert str(raised.value) == (
        "bind(): params of types Expert and Novice could each fill sections taking User; "
        "bind a User too, or only one of them"
    )


def test_params_that_no_section_takes_are_rejected_naming_the_types_sections_take() -> None:
    prompt = Prompt(
        template(
            MarkdownSection[User](title="Greeting", template="Hello $name."),
            MarkdownSection[Topic](title="Topic", template="About $subject."),
        )
    )
    with pytest.raises(PromptValidationError) as raised:
        prompt.bind(Query("x"))
    assert str(raised.value) == (
        "bind() got params of type Query, which no section takes (sections take User, Topic); "
        "declare it with MarkdownSection[Query](...) or params=Query"
    )


def test_params_are_rejected_when_no_section_takes_any() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Prompt(template(Section(title="Plain")), params=[User("Ada")])
    assert str(raised.value) == (
        "bind() got params of type User, which no section takes (no section takes params); "
        "declare it with MarkdownSection[User](...) or params=User"
    )


def test_bind_refuses_a_resource_binding_keyed_by_another_type() -> None:
    prompt = Prompt(template(Section(title="Plain")))
    with pytest.raises(BindingError) as raised:
        prompt.bind(resources={Query: Binding(Answer, lambda _: Answer("a"))})
    assert str(raised.value) == (
        "resources mapping: key Query holds a Binding for Answer; key each binding by its own "
        "resource_type"
    )


def test_bind_sets_resources_and_keeps_them_when_only_params_change() -> None:
    prompt = Prompt(template(MarkdownSection[User](title="Greeting", template="$name")))
    registry = ResourceRegistry.from_mapping({str: "value"})
    with_resources = prompt.bind(resources=registry)
    assert with_resources.resources is registry
    assert with_resources.bind(User("Ada")).resources is registry
    assert prompt.resources.bound_types == ()


def test_a_prompt_needs_a_template() -> None:
    with pytest.raises(PromptValidationError) as raised:
        Prompt("not a template")  # type: ignore[arg-type]  # wrong value under test
    assert str(raised.value) == "Prompt needs a PromptTemplate, got 'not a template'"


# --- overrides -----------------------------------------------------------------------------


def overridden(overrides: PromptOverrides, *tools: Tool[Any, Any]) -> Prompt:
    return Prompt(template(Section(title="Tools", tools=tools)), overrides=overrides)


def test_a_tool_description_override_is_what_the_model_sees() -> None:
    prompt = overridden(
        PromptOverrides(tool_descriptions={"search": "Find things."}), tool("search")
    )
    assert prompt.render().tools[0].description == "Find things."
    assert prompt.template.tools[0].description == "The search tool."


def test_a_param_description_override_is_applied_to_the_params_schema() -> None:
    overrides = PromptOverrides(param_descriptions={"search": {"limit": "At most this many"}})
    rendered = overridden(overrides, tool("search")).render()
    assert rendered.tools[0].params_schema == {
        "properties": {
            "text": {"description": "What to look for", "type": "string"},
            "limit": {"default": 5, "type": "integer", "description": "At most this many"},
        },
        "required": ["text"],
        "type": "object",
        "additionalProperties": False,
    }
    assert dict(rendered.tool_param_descriptions) == {
        "search": {
            "text": ParamHint("What to look for", "string", required=True),
            "limit": ParamHint("At most this many", "integer", False, True, 5),
        }
    }


def test_a_strict_override_for_a_tool_that_refuses_overrides_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        overridden(
            PromptOverrides(tool_descriptions={"fixed": "Other."}, strict=True),
            tool("fixed", accepts_overrides=False),
        )
    assert str(raised.value) == "tool 'fixed' does not accept overrides"


def test_an_override_for_an_unknown_tool_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        overridden(PromptOverrides(tool_descriptions={"missing": "Other."}), tool("search"))
    assert str(raised.value) == "overrides name unknown tools ['missing'] (tools: search)"


def test_an_override_for_an_unknown_parameter_is_rejected() -> None:
    with pytest.raises(PromptValidationError) as raised:
        overridden(PromptOverrides(param_descriptions={"search": {"page": "Page"}}), tool("search"))
    assert str(raised.value) == (
        "tool 'search': override names unknown parameter 'page' (parameters: text, limit)"
    )


def test_an_override_description_is_validated_like_the_original() -> None:
    with pytest.raises(PromptValidationError) as raised:
        overridden(PromptOverrides(tool_descriptions={"search": "Trouvé é"}), tool("search"))
    assert str(raised.value) == "tool 'search': description must be ASCII: 'Trouvé é'"


class TreeQuery(BaseModel):
    label: str
    children: list[TreeQuery] = []


def test_a_param_override_on_recursive_params_changes_only_the_top_level() -> None:
    recursive = Tool[TreeQuery, Answer](name="tree", description="Walk a tree.")
    overrides = PromptOverrides(param_descriptions={"tree": {"label": "Root label"}})
    schema = overridden(overrides, recursive).render().tools[0].params_schema
    assert schema["properties"]["label"] == {"description": "Root label", "type": "string"}
    assert schema["$defs"]["TreeQuery"]["properties"]["label"] == {"type": "string"}
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeQuery"}


# --- tool examples ---------------------------------------------------------------------


@dataclass
class Listing:
    items: list[str]

    def render(self) -> str:
        return ", ".join(self.items)


def example_tools() -> tuple[Tool[Query, Answer], Tool[Query, Listing]]:
    search = Tool[Query, Answer](
        name="search",
        description="Search.",
        examples=(
            ToolExample("Find tea", Query("tea"), Answer("green tea")),
            ToolExample("Few results", Query("cake", limit=1), Answer("sponge")),
        ),
    )
    listing = Tool[Query, Listing](
        name="list",
        description="List.",
        examples=(ToolExample("List fruit", Query("fruit"), Listing(["apple", "pear"])),),
    )
    return search, listing


def test_tool_examples_render_after_the_body_of_the_section_holding_the_tool() -> None:
    search, listing = example_tools()
    tree = template(
        MarkdownSection(title="Search", template="Look things up.", tools=[search, tool("plain")]),
        MarkdownSection(title="Other", template="No examples here.", tools=[listing]),
    )
    assert Prompt(tree).render().text == (
        "## Search\n\nLook things up.\n\n"
        "Examples for `search`:\n"
        '- Find tea: input {"text":"tea","limit":5} -> output {"text":"green tea"}\n'
        '- Few results: input {"text":"cake","limit":1} -> output {"text":"sponge"}\n\n'
        "## Other\n\nNo examples here.\n\n"
        "Examples for `list`:\n"
        '- List fruit: input {"text":"fruit","limit":5} -> output apple, pear'
    )


def test_tool_examples_of_a_grouping_section_follow_its_heading() -> None:
    search, _ = example_tools()
    tree = template(Section(title="Tools", tools=[search]))
    assert Prompt(tree).render().text.split("\n")[:3] == ["## Tools", "", "Examples for `search`:"]


def test_tool_examples_of_a_disabled_section_are_not_rendered() -> None:
    search, _ = example_tools()
    tree = template(
        MarkdownSection(title="On", template="Shown."),
        MarkdownSection(title="Off", template="Hidden.", tools=[search], enabled=False),
    )
    assert Prompt(tree).render().text == "## On\n\nShown."
