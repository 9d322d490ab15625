"""Prompts offered to MCP clients: ``prompts/list``, ``prompts/get``, ``completion/complete``.

An ``McpPrompt`` is a name, a description, the type of its arguments (a dataclass
or model of string fields: MCP sends every argument as a string) and what its
messages are for given arguments: a wink ``PromptTemplate`` rendered with them
(``McpPrompt.of``), or a function returning messages of text, images, audio and
embedded resources (the parts of ``wink.tools.content``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from wink.contract import Contract, ContractViolation, compile_contract
from wink.errors import PromptValidationError
from wink.prompt import Prompt, PromptTemplate
from wink.tools.content import Audio, EmbeddedResource, Image, Text

__all__ = ["MAX_COMPLETIONS", "McpPrompt", "PromptMessage", "matching"]

ArgumentsT = TypeVar("ArgumentsT")

MAX_COMPLETIONS = 100
"""Values a ``completion/complete`` answer holds at most (MCP's limit)."""


@dataclass(frozen=True, slots=True)
class PromptMessage:
    """One message of a served prompt."""

    content: Text | Image | Audio | EmbeddedResource
    """What the message holds."""
    role: Literal["user", "assistant"] = "user"
    """Who says it."""


@dataclass(frozen=True, slots=True)
class _Argument:
    name: str
    description: str | None
    required: bool
    choices: tuple[str, ...]


class McpPrompt(Generic[ArgumentsT]):
    """A prompt an MCP client lists and gets with arguments; see the module docstring.

    ``messages`` maps the parsed arguments (an ``arguments`` instance; ``None``
    without an arguments type) to the messages; a ``str`` is a user text message.
    ``completions`` gives, by argument name, values ``completion/complete``
    suggests for it, after the choices of a ``Literal`` field. Raises
    ``PromptValidationError`` for an arguments type with a field that is not a string.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        messages: Callable[[ArgumentsT], Sequence[PromptMessage | str]],
        arguments: type[ArgumentsT] | None = None,
        completions: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        contracts = () if arguments is None else (compile_contract(arguments),)

        def build(parsed: tuple[Any, ...]) -> Sequence[PromptMessage | str]:
            return messages(parsed[0] if parsed else None)  # type: ignore[arg-type]  # None only without an arguments type

        self._setup(name, description, build, contracts, completions or {})

    def _setup(
        self,
        name: str,
        description: str,
        build: Callable[[tuple[Any, ...]], Sequence[PromptMessage | str]],
        contracts: tuple[Contract[Any], ...],
        completions: Mapping[str, Sequence[str]],
    ) -> None:
        if not name:
            raise PromptValidationError("an McpPrompt needs a name")
        self.name = name
        """The name clients get the prompt by."""
        self.description = description
        """What the prompt is for, as clients list it."""
        self._build = build
        self._contracts = contracts
        self._arguments = _arguments_of(name, contracts, completions)

    @classmethod
    def of(
        cls,
        template: PromptTemplate[Any],
        *,
        description: str | None = None,
        name: str | None = None,
        completions: Mapping[str, Sequence[str]] | None = None,
    ) -> McpPrompt[Any]:
        """``template`` rendered with the params built from the arguments, as one user
        text message. Its arguments are the fields of its sections' params types (each
        name once); ``name`` defaults to the template's name, ``description`` to its
        ``ns/key``.
        """
        contracts = tuple(compile_contract(params_type) for params_type in template.params_types)

        def render(parsed: tuple[Any, ...]) -> Sequence[PromptMessage | str]:
            return [Prompt(template, params=parsed).render().text]

        served: McpPrompt[Any] = cls.__new__(cls)
        served._setup(
            name or template.name,
            description or f"{template.ns}/{template.key}",
            render,
            contracts,
            completions or {},
        )
        return served

    @property
    def arguments(self) -> Mapping[str, tuple[str | None, bool]]:
        """Each argument's description and whether it is required, in order."""
        return {
            argument.name: (argument.description, argument.required) for argument in self._arguments
        }

    def messages(self, arguments: Mapping[str, str] | None) -> list[PromptMessage]:
        """The messages for ``arguments``; raises ``ValueError`` naming what is wrong."""
        given = dict(arguments or {})
        unknown = sorted(set(given) - {argument.name for argument in self._arguments})
        if unknown:
            known = ", ".join(argument.name for argument in self._arguments) or "none"
            raise ValueError(
                f"prompt {self.name!r} has no argument {unknown[0]!r} (its arguments: {known})"
            )
        parsed: list[Any] = []
        for contract in self._contracts:
            names = contract.input_schema.get("properties", {})
            try:
                parsed.append(contract.parse({k: v for k, v in given.items() if k in names}))
            except ContractViolation as error:
                raise ValueError(f"prompt {self.name!r}: {error}") from None
        return [
            PromptMessage(Text(message)) if isinstance(message, str) else message
            for message in self._build(tuple(parsed))
        ]

    def complete(self, argument: str, prefix: str) -> tuple[list[str], int]:
        """The suggested values of ``argument`` starting with ``prefix`` (at most
        ``MAX_COMPLETIONS``) and how many match in all."""
        for candidate in self._arguments:
            if candidate.name == argument:
                return matching(candidate.choices, prefix)
        return [], 0


def matching(choices: Sequence[str], prefix: str) -> tuple[list[str], int]:
    """The ``choices`` starting with ``prefix`` (case aside), at most ``MAX_COMPLETIONS``,
    and how many match in all."""
    lowered = prefix.lower()
    found = [choice for choice in choices if choice.lower().startswith(lowered)]
    return found[:MAX_COMPLETIONS], len(found)


def _arguments_of(
    prompt: str, contracts: Sequence[Contract[Any]], completions: Mapping[str, Sequence[str]]
) -> tuple[_Argument, ...]:
    found: dict[str, _Argument] = {}
    for contract in contracts:
        schema = contract.input_schema
        required = set(schema.get("required", ()))
        for name, prop in schema.get("properties", {}).items():
            if name in found:
                raise PromptValidationError(
                    f"prompt {prompt!r}: two params types have a field {name!r}; "
                    "MCP arguments are one flat set of names"
                )
            if prop.get("type") != "string":
                raise PromptValidationError(
                    f"prompt {prompt!r}: argument {name!r} must be a string field "
                    f"(MCP sends arguments as strings), got {_shown(prop)}"
                )
            choices = tuple(str(value) for value in prop.get("enum", ()))
            found[name] = _Argument(
                name,
                prop.get("description"),
                name in required,
                choices + tuple(completions.get(name, ())),
            )
    unknown = sorted(set(completions) - set(found))
    if unknown:
        raise PromptValidationError(
            f"prompt {prompt!r}: completions for {unknown[0]!r}, which is no argument"
        )
    return tuple(found.values())


def _shown(prop: Mapping[str, Any]) -> str:
    text = repr(dict(prop))
    return text if len(text) <= 120 else text[:117] + "..."
