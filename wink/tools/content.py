"""Rich tool results: images, audio, embedded resources and mixed content.

A tool whose result type is one of these returns media rather than a typed
value. MCP clients receive them as content blocks; providers that take text only
show the model each part's ``render()``, a short stand-in naming what it is.
They are plain dataclasses of JSON values (media as base64 text), so a recorded
``ToolInvoked`` saves and loads like any other result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

__all__ = ["Audio", "Content", "ContentPart", "EmbeddedResource", "Image", "Text"]


def _checked_base64(data: str, what: str) -> None:
    # Imported here: most programs never build media, and `import wink` stays light.
    import base64
    import binascii

    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(
            f"{what}: data must be base64 text; build it with .of(raw_bytes)"
        ) from None


def _size(data: str) -> int:
    return len(data) * 3 // 4 - data.count("=")


@dataclass(frozen=True, slots=True)
class Text:
    """A text part of mixed content."""

    text: str
    """The text itself."""
    type: Literal["text"] = "text"
    """The part's kind, as MCP names it."""

    def render(self) -> str:
        """The text."""
        return self.text


@dataclass(frozen=True, slots=True)
class Image:
    """An image: base64 data and its MIME type."""

    data: str
    """The image's bytes, base64-encoded."""
    mime_type: str
    """Such as ``image/png``."""
    type: Literal["image"] = "image"
    """The part's kind, as MCP names it."""

    def __post_init__(self) -> None:
        _checked_base64(self.data, "Image")

    @classmethod
    def of(cls, raw: bytes, mime_type: str) -> Image:
        """An image of ``raw`` bytes."""
        import base64

        return cls(base64.b64encode(raw).decode("ascii"), mime_type)

    def render(self) -> str:
        """A stand-in for models that take text only."""
        return f"[image: {self.mime_type}, {_size(self.data)} bytes]"


@dataclass(frozen=True, slots=True)
class Audio:
    """A sound: base64 data and its MIME type."""

    data: str
    """The audio's bytes, base64-encoded."""
    mime_type: str
    """Such as ``audio/wav``."""
    type: Literal["audio"] = "audio"
    """The part's kind, as MCP names it."""

    def __post_init__(self) -> None:
        _checked_base64(self.data, "Audio")

    @classmethod
    def of(cls, raw: bytes, mime_type: str) -> Audio:
        """A sound of ``raw`` bytes."""
        import base64

        return cls(base64.b64encode(raw).decode("ascii"), mime_type)

    def render(self) -> str:
        """A stand-in for models that take text only."""
        return f"[audio: {self.mime_type}, {_size(self.data)} bytes]"


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    """A resource's contents carried inside a result: text, or base64 ``blob``."""

    uri: str
    """Where the resource lives, such as ``file:///notes/todo.md``."""
    mime_type: str | None = None
    """Such as ``text/plain``; ``None`` when unknown."""
    text: str | None = None
    """The contents, when they are text."""
    blob: str | None = None
    """The contents, base64-encoded, when they are bytes."""
    type: Literal["resource"] = "resource"
    """The part's kind, as MCP names it."""

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError(f"EmbeddedResource {self.uri!r}: give exactly one of text and blob")
        if self.blob is not None:
            _checked_base64(self.blob, f"EmbeddedResource {self.uri!r}")

    def render(self) -> str:
        """The text contents under the URI, or a stand-in for binary contents."""
        if self.text is not None:
            return f"{self.uri}:\n{self.text}"
        assert self.blob is not None  # __post_init__ keeps exactly one
        return f"[resource {self.uri}: {self.mime_type or 'bytes'}, {_size(self.blob)} bytes]"


ContentPart = Annotated[Text | Image | Audio | EmbeddedResource, Field(discriminator="type")]
"""One part of mixed ``Content``."""


@dataclass(frozen=True, slots=True)
class Content:
    """Mixed content: text, images, audio and resources, in order."""

    parts: tuple[ContentPart, ...]
    """The parts, in the order a client shows them."""

    def render(self) -> str:
        """Each part's text or stand-in, one after another."""
        return "\n\n".join(part.render() for part in self.parts)


RICH_TYPES: tuple[type[object], ...] = (Text, Image, Audio, EmbeddedResource, Content)
"""Result types sent to MCP clients as content blocks rather than structured content."""
