"""``McpCatalog``: the prompts and resources an MCP server offers beside a prompt's tools.

The catalog is a section of the served prompt, so that the prompt carries it to
``server()`` and to ``wink serve``; it is never shown to the model (it renders
nothing and has no tools). A server answers ``prompts/*``, ``resources/*`` and
``completion/complete`` from the catalogs of its prompt, and announces those
capabilities only when a catalog offers something for them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError

from wink._error_text import safe_repr
from wink.errors import PromptValidationError
from wink.prompt import Prompt, Section
from wink.providers._mcp_prompts import McpPrompt
from wink.providers._mcp_resources import (
    DEFAULT_MAX_LISTED_FILES,
    Contents,
    McpResource,
    McpResourceTemplate,
    file_uri,
    files_template,
    listed_files,
    resource_contents,
)
from wink.resources import Filesystem
from wink.resources.filesystem import FilesystemError

__all__ = ["RESOURCE_NOT_FOUND", "McpCatalog", "Offer"]

RESOURCE_NOT_FOUND = -32002
"""The JSON-RPC error code MCP gives a read of a URI the server does not have."""


class McpCatalog(Section[None]):
    """Prompts and resources an MCP server offers; a section that the model never sees.

    ``prompts`` are ``McpPrompt``s; ``resources`` are ``McpResource``s and
    ``McpResourceTemplate``s; ``files=True`` offers the prompt's bound filesystem
    read-only (``file://<mount point>/<path>``, the first ``max_listed_files``
    listed). Raises ``PromptValidationError`` for two prompts of one name or two
    resources of one URI.
    """

    def __init__(
        self,
        *,
        prompts: Sequence[McpPrompt[Any]] = (),
        resources: Sequence[McpResource | McpResourceTemplate] = (),
        files: bool = False,
        max_listed_files: int = DEFAULT_MAX_LISTED_FILES,
        key: str = "mcp-catalog",
    ) -> None:
        # Disabled: a section is what a prompt carries, but this one is for clients.
        super().__init__(title="MCP catalog", key=key, enabled=False)
        self.prompts: tuple[McpPrompt[Any], ...] = tuple(prompts)
        """The prompts offered, in listing order."""
        self.resources: tuple[McpResource | McpResourceTemplate, ...] = tuple(resources)
        """The resources and resource templates offered, in listing order."""
        self.files = files
        """Whether the bound filesystem's files are offered, read-only."""
        self.max_listed_files = max_listed_files
        """Files ``resources/list`` names at most."""
        for prompt in self.prompts:
            if not isinstance(prompt, McpPrompt):
                raise PromptValidationError(f"McpCatalog: {prompt!r} is not an McpPrompt")
        for resource in self.resources:
            if not isinstance(resource, McpResource | McpResourceTemplate):
                raise PromptValidationError(
                    f"McpCatalog: {resource!r} is not an McpResource or McpResourceTemplate"
                )
        if max_listed_files < 0:
            raise PromptValidationError(
                f"McpCatalog: max_listed_files must be 0 or more, got {max_listed_files!r}"
            )


class Offer:
    """What the catalogs of one served prompt offer, and the handlers answering for it."""

    def __init__(self, prompt: Prompt[Any]) -> None:
        catalogs = [
            node.section for node in prompt.template.nodes if isinstance(node.section, McpCatalog)
        ]
        self._registry = prompt.resources
        self.prompts = _unique(
            ((served.name, served) for catalog in catalogs for served in catalog.prompts),
            "prompt",
        )
        self.resources = _unique(
            (
                (resource.uri, resource)
                for catalog in catalogs
                for resource in catalog.resources
                if isinstance(resource, McpResource)
            ),
            "resource",
        )
        self.templates = _unique(
            (
                (resource.uri_template, resource)
                for catalog in catalogs
                for resource in catalog.resources
                if isinstance(resource, McpResourceTemplate)
            ),
            "resource template",
        )
        offering_files = [catalog for catalog in catalogs if catalog.files]
        self.files = bool(offering_files)
        self.max_listed_files = max(
            (catalog.max_listed_files for catalog in offering_files), default=0
        )

    @property
    def offers_resources(self) -> bool:
        """Whether anything answers ``resources/*``."""
        return bool(self.resources or self.templates or self.files)

    @property
    def completes(self) -> bool:
        """Whether anything answers ``completion/complete``."""
        return bool(self.prompts or self.templates)

    # --- prompts ------------------------------------------------------------------------

    async def list_prompts(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        """``prompts/list``."""
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=served.name,
                    description=served.description,
                    arguments=[
                        types.PromptArgument(name=name, description=description, required=required)
                        for name, (description, required) in served.arguments.items()
                    ],
                )
                for served in self.prompts.values()
            ]
        )

    async def get_prompt(
        self, ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        """``prompts/get``: an unknown name or bad arguments are invalid params."""
        served = self.prompts.get(params.name)
        if served is None:
            known = ", ".join(self.prompts) or "none"
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown prompt {safe_repr(params.name)}. Available prompts: {known}.",
            )
        try:
            messages = await anyio.to_thread.run_sync(served.messages, params.arguments)
        except ValueError as error:
            raise MCPError(types.INVALID_PARAMS, str(error)) from None
        from wink.providers.mcp import content_block

        return types.GetPromptResult.model_validate(
            {
                "description": served.description,
                "messages": [
                    {"role": message.role, "content": content_block(message.content)}
                    for message in messages
                ],
            }
        )

    async def complete(self, ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        """``completion/complete`` for a prompt's argument or a template's variable."""
        ref = params.ref
        argument, prefix = params.argument.name, params.argument.value
        if isinstance(ref, types.PromptReference):
            served = self.prompts.get(ref.name)
            if served is None:
                raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {safe_repr(ref.name)}.")
            values, total = served.complete(argument, prefix)
        else:
            template = self.templates.get(ref.uri)
            if template is None:
                raise MCPError(
                    types.INVALID_PARAMS, f"Unknown resource template {safe_repr(ref.uri)}."
                )
            values, total = template.complete(argument, prefix)
        return types.CompleteResult(
            completion=types.Completion(values=values, total=total, has_more=total > len(values))
        )

    # --- resources ----------------------------------------------------------------------

    async def list_resources(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        """``resources/list``: the fixed resources, then the first files."""
        listed = [
            types.Resource(
                uri=resource.uri,
                name=resource.name,
                description=resource.description or None,
                mime_type=resource.mime_type,
            )
            for resource in self.resources.values()
        ]
        filesystem = self._filesystem()
        if filesystem is not None:
            paths = await anyio.to_thread.run_sync(listed_files, filesystem, self.max_listed_files)
            listed.extend(
                types.Resource(uri=file_uri(filesystem, path), name=path) for path in paths
            )
        return types.ListResourcesResult(resources=listed)

    async def list_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        """``resources/templates/list``."""
        templates = list(self.templates.values())
        filesystem = self._filesystem()
        if filesystem is not None:
            templates.append(files_template(filesystem))
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=template.uri_template,
                    name=template.name,
                    description=template.description or None,
                    mime_type=template.mime_type,
                )
                for template in templates
            ]
        )

    async def read_resource(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """``resources/read``: a URI nothing offers is error -32002."""
        uri = str(params.uri)
        contents, mime_type = await anyio.to_thread.run_sync(self.read, uri)
        return types.ReadResourceResult.model_validate(
            {"contents": [resource_contents(uri, contents, mime_type)]}
        )

    def read(self, uri: str) -> tuple[Contents, str | None]:
        """The contents of ``uri`` and their MIME type; raises ``MCPError`` when not found."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource.read(), resource.mime_type
        templates = list(self.templates.values())
        filesystem = self._filesystem()
        if filesystem is not None:
            templates.append(files_template(filesystem))
        for template in templates:
            variables = template.match(uri)
            if variables is None:
                continue
            try:
                return template.read(variables), template.mime_type
            except (FilesystemError, FileNotFoundError, LookupError) as error:
                raise MCPError(
                    RESOURCE_NOT_FOUND, f"Resource not found: {safe_repr(uri)} ({error})"
                ) from None
        raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {safe_repr(uri)}")

    def knows(self, uri: str) -> bool:
        """Whether ``uri`` is a resource offered, or matches a template offered."""
        if uri in self.resources:
            return True
        if any(template.match(uri) is not None for template in self.templates.values()):
            return True
        filesystem = self._filesystem()
        return filesystem is not None and files_template(filesystem).match(uri) is not None

    def _filesystem(self) -> Filesystem | None:
        return self._registry.filesystem if self.files else None


def _unique(pairs: Iterable[tuple[str, Any]], what: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise PromptValidationError(f"the prompt's catalogs offer two of {what} {key!r}")
        found[key] = value
    return found
