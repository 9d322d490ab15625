"""What every dialect shares: reading the source of tools, and caching emitted specs.

Specs are cached per (tool identity, dialect, options) and, one level up, per
(tuple of tools, dialect, options), so emitting the specs of an unchanged prompt
again is a couple of dictionary lookups. A dialect may also keep work done per
params schema (OpenAI's strict rewrite), which new tools over known params types
share. Cached specs are read-only (``wink.contract.frozen``): callers get shared
values they cannot corrupt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, TypeAlias, TypeVar

from wink.prompt import RenderedPrompt
from wink.tools import Tool

__all__ = ["SpecCache", "ToolSource", "clear_caches", "option_for", "options_key", "tools_of"]

ToolSource: TypeAlias = RenderedPrompt | Iterable[Tool[Any, Any]] | Tool[Any, Any]
"""What ``tool_specs`` accepts: a rendered prompt, a sequence of tools, or one tool."""

T = TypeVar("T")
OptionT = TypeVar("OptionT")

_MAX_ENTRIES = 8192
_all_caches: list[SpecCache] = []


def tools_of(source: ToolSource) -> tuple[Tool[Any, Any], ...]:
    """The tools of a rendered prompt, a sequence of tools, or a single tool."""
    if isinstance(source, RenderedPrompt):
        return source.tools
    if isinstance(source, Tool):
        return (source,)
    if isinstance(source, str | bytes | Mapping) or not isinstance(source, Iterable):
        raise TypeError(
            f"tool_specs() takes a RenderedPrompt, a sequence of Tools or a Tool, "
            f"got {type(source).__name__}"
        )
    collected = tuple(source)
    for index, tool in enumerate(collected):
        if not isinstance(tool, Tool):
            raise TypeError(f"tool_specs(): item {index} is {tool!r}, not a Tool")
    return collected


def option_for(
    option: OptionT | Mapping[str, OptionT], tool: Tool[Any, Any], default: OptionT
) -> OptionT:
    """One tool's value of an option given either for all tools or per tool name."""
    if type(option) is str or type(option) is bool:
        return option  # the usual case, settled without an abstract type check
    if isinstance(option, Mapping):
        value: OptionT = option.get(tool.name, default)
        return value
    return option


def options_key(option: Any) -> Hashable:
    """A hashable form of an option value (mappings become sorted item tuples)."""
    if isinstance(option, Mapping):
        return tuple(sorted(option.items()))
    hashable: Hashable = option
    return hashable


class SpecCache:
    """A bounded map from a key to a built value; the oldest entries go first when full.

    Values must be immutable (frozen specs, tuples of them): they are shared.
    Keys hold their tools alive, so the bound also bounds the memory kept.
    """

    def __init__(self, max_entries: int = _MAX_ENTRIES) -> None:
        self._entries: dict[Hashable, Any] = {}
        self._max_entries = max_entries
        self._lock = threading.Lock()
        _all_caches.append(self)

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The cached value of ``key``, built on first use."""
        value: T | None = self._entries.get(key)
        if value is not None:
            return value
        built = build()
        with self._lock:
            self._entries[key] = built
            while len(self._entries) > self._max_entries:
                del self._entries[next(iter(self._entries))]
        return built

    def clear(self) -> None:
        """Forget every entry (tests and benchmarks measure cold emission with it)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def clear_caches() -> None:
    """Forget every cached spec (and strict rewrite) of every dialect."""
    for cache in _all_caches:
        cache.clear()
