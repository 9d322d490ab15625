"""The reference tools of the MCP conformance suite, written with wink's public API.

``make conformance`` serves ``prompt`` with::

    PYTHONPATH=examples wink serve mcp_conformance:prompt --transport http

and runs the official suite (``@modelcontextprotocol/conformance``) against it.
The prompts and resources the suite reads are offered by the prompt's ``McpCatalog``.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from wink import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext, ToolResult
from wink.providers.mcp import (
    McpCatalog,
    McpPrompt,
    McpResource,
    McpResourceTemplate,
    PromptMessage,
)
from wink.tools.client import ChoiceTitles
from wink.tools.content import Audio, Content, EmbeddedResource, Image, Text

# A 1x1 red PNG and a tiny silent WAV: the suite checks the blocks, not the media.
RED_PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
SILENCE = base64.b64decode("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=")


@dataclass(frozen=True)
class NoArguments:
    """No arguments."""


@dataclass(frozen=True)
class SamplingArguments:
    prompt: str
    """The prompt to send to the client's model."""


@dataclass(frozen=True)
class ElicitationArguments:
    message: str
    """The message to show the user."""


@dataclass(frozen=True)
class Contact:
    username: str
    """User's response"""
    email: str
    """User's email address"""


@dataclass(frozen=True)
class Profile:
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


@dataclass(frozen=True)
class Enums:
    untitledSingle: Literal["option1", "option2", "option3"]
    titledSingle: Annotated[
        Literal["value1", "value2", "value3"],
        ChoiceTitles(
            {"value1": "First Option", "value2": "Second Option", "value3": "Third Option"}
        ),
    ]
    legacyEnum: Annotated[
        Literal["opt1", "opt2", "opt3"],
        ChoiceTitles(
            {"opt1": "Option One", "opt2": "Option Two", "opt3": "Option Three"}, enum_names=True
        ),
    ]
    untitledMulti: tuple[Literal["option1", "option2", "option3"], ...]
    titledMulti: tuple[
        Annotated[
            Literal["value1", "value2", "value3"],
            ChoiceTitles(
                {"value1": "First Choice", "value2": "Second Choice", "value3": "Third Choice"}
            ),
        ],
        ...,
    ]


def simple_text(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="This is a simple text response for testing.")


def image_content(params: NoArguments, *, context: ToolContext) -> ToolResult[Image]:
    return ToolResult(message="", value=Image.of(RED_PIXEL, "image/png"))


def audio_content(params: NoArguments, *, context: ToolContext) -> ToolResult[Audio]:
    return ToolResult(message="", value=Audio.of(SILENCE, "audio/wav"))


def embedded_resource(params: NoArguments, *, context: ToolContext) -> ToolResult[EmbeddedResource]:
    resource = EmbeddedResource(
        uri="test://embedded-resource",
        mime_type="text/plain",
        text="This is an embedded resource content.",
    )
    return ToolResult(message="", value=resource)


def multiple_content_types(params: NoArguments, *, context: ToolContext) -> ToolResult[Content]:
    parts = (
        Text("Multiple content types test:"),
        Image.of(RED_PIXEL, "image/png"),
        EmbeddedResource(
            uri="test://mixed-content-resource",
            mime_type="application/json",
            text='{"test":"data","value":123}',
        ),
    )
    return ToolResult(message="", value=Content(parts))


def with_logging(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    context.log("info", "Tool execution started")
    time.sleep(0.05)
    context.log("info", "Tool processing data")
    time.sleep(0.05)
    context.log("info", "Tool execution completed")
    return ToolResult(message="Tool with logging executed successfully")


def error_handling(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.error("This tool intentionally returns an error for testing")


def with_progress(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    for done in (0, 50, 100):
        context.report_progress(done, 100)
        if done < 100:
            time.sleep(0.05)
    return ToolResult(message="Tool with progress executed successfully")


def sampling(params: SamplingArguments, *, context: ToolContext) -> ToolResult[None]:
    answer = context.sample(params.prompt, max_tokens=100)
    return ToolResult(message=f"LLM response: {answer}")


def elicitation(params: ElicitationArguments, *, context: ToolContext) -> ToolResult[None]:
    answer = context.elicit(params.message, Contact)
    return ToolResult(message=f"User response: action={answer.action}, content={answer.value}")


def elicitation_defaults(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    answer = context.elicit("Please review and update the form fields with defaults", Profile)
    return ToolResult(
        message=f"Elicitation completed: action={answer.action}, content={answer.value}"
    )


def elicitation_enums(params: NoArguments, *, context: ToolContext) -> ToolResult[None]:
    answer = context.elicit("Choose among titled and untitled options", Enums)
    return ToolResult(
        message=f"Elicitation completed: action={answer.action}, content={answer.value}"
    )


TOOLS: list[Tool[Any, Any]] = [
    Tool[NoArguments, None](
        name="test_simple_text", description="Returns simple text.", handler=simple_text
    ),
    Tool[NoArguments, Image](
        name="test_image_content", description="Returns an image.", handler=image_content
    ),
    Tool[NoArguments, Audio](
        name="test_audio_content", description="Returns audio.", handler=audio_content
    ),
    Tool[NoArguments, EmbeddedResource](
        name="test_embedded_resource",
        description="Returns an embedded resource.",
        handler=embedded_resource,
    ),
    Tool[NoArguments, Content](
        name="test_multiple_content_types",
        description="Returns text, an image and a resource.",
        handler=multiple_content_types,
    ),
    Tool[NoArguments, None](
        name="test_tool_with_logging", description="Logs while it runs.", handler=with_logging
    ),
    Tool[NoArguments, None](
        name="test_error_handling", description="Always fails.", handler=error_handling
    ),
    Tool[NoArguments, None](
        name="test_tool_with_progress", description="Reports progress.", handler=with_progress
    ),
    Tool[SamplingArguments, None](
        name="test_sampling", description="Asks the client's model.", handler=sampling
    ),
    Tool[ElicitationArguments, None](
        name="test_elicitation", description="Asks the user.", handler=elicitation
    ),
    Tool[NoArguments, None](
        name="test_elicitation_sep1034_defaults",
        description="Asks the user with defaults.",
        handler=elicitation_defaults,
    ),
    Tool[NoArguments, None](
        name="test_elicitation_sep1330_enums",
        description="Asks the user to choose among enums.",
        handler=elicitation_enums,
    ),
]


@dataclass(frozen=True)
class TwoArguments:
    arg1: str
    """First test argument"""
    arg2: str
    """Second test argument"""


@dataclass(frozen=True)
class ResourceArgument:
    resourceUri: str
    """URI of the resource to embed"""


def with_arguments(arguments: TwoArguments) -> list[PromptMessage | str]:
    return [f"Prompt with arguments: arg1='{arguments.arg1}', arg2='{arguments.arg2}'"]


def with_resource(arguments: ResourceArgument) -> list[PromptMessage | str]:
    resource = EmbeddedResource(
        uri=arguments.resourceUri,
        mime_type="text/plain",
        text="Embedded resource content for testing.",
    )
    return [PromptMessage(resource), "Please process the embedded resource above."]


def with_image(arguments: None) -> list[PromptMessage | str]:
    return [PromptMessage(Image.of(RED_PIXEL, "image/png")), "Please analyze the image above."]


def simple(arguments: None) -> list[PromptMessage | str]:
    return ["This is a simple prompt for testing."]


PROMPTS: list[McpPrompt[Any]] = [
    McpPrompt(
        name="test_simple_prompt", description="A prompt without arguments.", messages=simple
    ),
    McpPrompt(
        name="test_prompt_with_arguments",
        description="A prompt with two arguments.",
        arguments=TwoArguments,
        messages=with_arguments,
        completions={"arg1": ["paris", "park", "party"]},
    ),
    McpPrompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt embedding a resource.",
        arguments=ResourceArgument,
        messages=with_resource,
    ),
    McpPrompt(
        name="test_prompt_with_image", description="A prompt with an image.", messages=with_image
    ),
]


def template_data(variables: Mapping[str, str]) -> str:
    return json.dumps(
        {"id": variables["id"], "templateTest": True, "data": f"Data for ID: {variables['id']}"}
    )


RESOURCES: list[McpResource | McpResourceTemplate] = [
    McpResource(
        uri="test://static-text",
        name="static-text",
        description="A static text resource.",
        mime_type="text/plain",
        contents="This is the content of the static text resource.",
    ),
    McpResource(
        uri="test://static-binary",
        name="static-binary",
        description="A static binary resource.",
        mime_type="image/png",
        contents=RED_PIXEL,
    ),
    McpResource(
        uri="test://watched-resource",
        name="watched-resource",
        description="A resource clients subscribe to.",
        mime_type="text/plain",
        contents="Watched resource content.",
    ),
    McpResourceTemplate(
        uri_template="test://template/{id}/data",
        name="template",
        description="Data for an id.",
        mime_type="application/json",
        read=template_data,
    ),
]

prompt = Prompt(
    PromptTemplate(
        ns="conformance",
        key="mcp-conformance",
        sections=[
            MarkdownSection(title="Conformance", template="Reference tools.", tools=TOOLS),
            McpCatalog(prompts=PROMPTS, resources=RESOURCES),
        ],
    )
)
