"""Prompts: section trees that render markdown and expose their tools."""

from wink.prompt.prompt import Prompt, PromptOverrides, PromptTemplate, RenderedPrompt, ToolBinding
from wink.prompt.section import Enabled, MarkdownSection, Section

__all__ = [
    "Enabled",
    "MarkdownSection",
    "Prompt",
    "PromptOverrides",
    "PromptTemplate",
    "RenderedPrompt",
    "Section",
    "ToolBinding",
]
