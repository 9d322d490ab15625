"""Classify how one JSON Schema changed into another, rule by rule.

Params and results are read in opposite directions. Params must stay *backward*
compatible: the new schema accepts every payload the old one accepted, so calls
that worked keep working. Results must stay *forward* compatible: the new schema
produces nothing the old one rejected, so readers of old results can still read
new ones. Each difference is therefore first said as an effect on the set of
values the schema allows (widened, narrowed, changed both ways, an annotation, or
undecided), and the side turns that effect into a level.

A difference the rules cannot decide is reported as breaking with "undecided" in
its message, never passed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "LEVELS",
    "Level",
    "SchemaChange",
    "Side",
    "compare_schemas",
    "pointer_escape",
]

Side = Literal["params", "result"]
"""Which contract of a tool a schema is: its arguments or its result value."""
Level = Literal["breaking", "warning", "info"]
"""How much a change matters: breaking fails CI by default; info is compatible."""
LEVELS: tuple[Level, ...] = ("breaking", "warning", "info")
"""Levels, most severe first."""

Effect = Literal["widened", "narrowed", "changed", "annotation", "undecided"]
"""What a difference does to the set of values a schema allows."""

Location = tuple[str, ...]
"""Where in a payload a change applies: property names, ``*`` for any item or key."""

ANY = "*"

_ANNOTATIONS = frozenset({"title", "description", "examples", "example", "default"})
_QUIET = frozenset({"$comment", "deprecated", "readOnly", "writeOnly", "discriminator"})
_LOWER_BOUNDS = ("minimum", "exclusiveMinimum")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum")
_LOWER_LENGTHS = ("minLength", "minItems", "minProperties")
_UPPER_LENGTHS = ("maxLength", "maxItems", "maxProperties")
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "pattern",
        "format",
        "multipleOf",
        "uniqueItems",
        "anyOf",
        "oneOf",
        "$ref",
        "$defs",
        "$schema",
        *_LOWER_BOUNDS,
        *_UPPER_BOUNDS,
        *_LOWER_LENGTHS,
        *_UPPER_LENGTHS,
        *_ANNOTATIONS,
        *_QUIET,
    }
)


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One classified difference between two schemas."""

    rule: str
    """Stable id: the side, then what changed (``params-property-became-required``)."""
    level: Level
    """``breaking``, ``warning`` or ``info``."""
    pointer: str
    """JSON pointer to the changed node, in the new schema (the old one for a removal)."""
    location: Location
    """Where in a payload it applies (``("filters", "kind")``; ``*`` for any item)."""
    message: str
    """One line saying what changed and what it means for callers."""


def compare_schemas(
    old: Mapping[str, Any], new: Mapping[str, Any], side: Side, *, pointer: str = ""
) -> list[SchemaChange]:
    """Every classified difference from ``old`` to ``new``, read as ``side``.

    ``pointer`` prefixes every reported pointer (``/params`` in a tool contract).
    ``$ref`` is followed within each document's own ``$defs``.
    """
    comparison = _Comparison(side, dict(old), dict(new), pointer)
    comparison.compare(old, new, _At(pointer, pointer, ()))
    return comparison.changes


def pointer_escape(name: str) -> str:
    """A name as one JSON pointer segment (``~`` and ``/`` escaped)."""
    return name.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True, slots=True)
class _At:
    """Where the walk is: the pointer in each document, and the payload location."""

    old: str
    new: str
    location: Location

    def down(self, *segments: str, location: str | None = None) -> _At:
        suffix = "".join("/" + pointer_escape(segment) for segment in segments)
        moved = self.location if location is None else (*self.location, location)
        return _At(self.old + suffix, self.new + suffix, moved)

    def named(self) -> str:
        """The payload location in words: ``filters.kind``, ``tags[]``, or ``the value``."""
        if not self.location:
            return "the value"
        text = ""
        for part in self.location:
            text += "[]" if part == ANY else (f".{part}" if text else part)
        return text


class _Comparison:
    def __init__(
        self, side: Side, old_root: dict[str, Any], new_root: dict[str, Any], base: str
    ) -> None:
        self.side = side
        self.base = base
        self.old_root = old_root
        self.new_root = new_root
        self.changes: list[SchemaChange] = []
        self._reported: set[tuple[str, str]] = set()
        self._following: set[tuple[str, str]] = set()

    # --- reporting ---------------------------------------------------------------

    def report(
        self,
        kind: str,
        effect: Effect,
        at: _At,
        message: str,
        *,
        removed: bool = False,
        level: Level | None = None,
    ) -> None:
        pointer = at.old if removed else at.new
        rule = f"{self.side}-{kind}"
        if (rule, pointer) in self._reported:
            return  # a definition reached twice is one change
        self._reported.add((rule, pointer))
        chosen = level or self._level(effect)
        if effect == "undecided":
            message += " (undecided: reported as breaking)"
        self.changes.append(SchemaChange(rule, chosen, pointer, at.location, message))

    def _level(self, effect: Effect) -> Level:
        if effect == "annotation":
            return "info"
        if effect in ("changed", "undecided"):
            return "breaking"
        accepts_less = effect == "narrowed"
        # Params: the new schema must accept all old calls. Results: it must not
        # produce what the old one rejected.
        breaks = accepts_less if self.side == "params" else not accepts_less
        return "breaking" if breaks else "info"

    def _meaning(self, effect: Effect) -> str:
        if self.side == "params":
            return {
                "widened": "calls that worked still work",
                "narrowed": "some calls that worked are now refused",
            }.get(effect, "some calls that worked may be refused")
        return {
            "widened": "readers of old results may refuse new ones",
            "narrowed": "old readers still read every new result",
        }.get(effect, "readers of old results may refuse new ones")

    # --- the walk ----------------------------------------------------------------

    def compare(self, old: Any, new: Any, at: _At) -> None:
        if old == new and not _has_ref(old):
            return
        old, new, at, stop = self._follow_refs(old, new, at)
        if stop:
            return
        if isinstance(old, bool) or isinstance(new, bool):
            self._compare_booleans(old, new, at)
            return
        if not isinstance(old, dict) or not isinstance(new, dict):
            self.report("undecided", "undecided", at, f"{at.named()}: a schema that is not one")
            return
        self._compare_annotations(old, new, at)
        if _is_union(old) or _is_union(new):
            self._compare_unions(old, new, at)
            return
        self._compare_assertions(old, new, at)

    def _follow_refs(self, old: Any, new: Any, at: _At) -> tuple[Any, Any, _At, bool]:
        old_ref = old.get("$ref") if isinstance(old, dict) else None
        new_ref = new.get("$ref") if isinstance(new, dict) else None
        if old_ref is None and new_ref is None:
            return old, new, at, False
        key = (str(old_ref), str(new_ref))
        if key in self._following:
            return old, new, at, True  # a recursive type: this pair is being compared
        self._following.add(key)
        old_at, new_at = at.old, at.new
        if isinstance(old_ref, str):
            old, old_at = _resolve(self.old_root, old, old_ref, self.base)
        if isinstance(new_ref, str):
            new, new_at = _resolve(self.new_root, new, new_ref, self.base)
        moved = _At(old_at, new_at, at.location)
        if old is None or new is None:
            self.report(
                "undecided",
                "undecided",
                moved,
                f"{at.named()}: a $ref wink cannot resolve ({old_ref or new_ref})",
            )
            return old, new, moved, True
        return old, new, moved, False

    def _compare_booleans(self, old: Any, new: Any, at: _At) -> None:
        old_schema = {} if old is True else old
        new_schema = {} if new is True else new
        if old is False and new is not False:
            self.report("type-widened", "widened", at, f"{at.named()}: now allowed at all")
        elif new is False and old is not False:
            self.report("type-narrowed", "narrowed", at, f"{at.named()}: no longer allowed")
        elif old_schema != new_schema:
            self.compare(old_schema, new_schema, at)

    # --- annotations: what the model reads -------------------------------------

    def _compare_annotations(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        for keyword in ("description", "title"):
            if old.get(keyword) != new.get(keyword):
                self.report(
                    "description-changed",
                    "annotation",
                    at,
                    f"{at.named()}: {keyword} changed (the prompt the model sees changed)",
                )
        if (old.get("examples"), old.get("example")) != (new.get("examples"), new.get("example")):
            self.report(
                "example-changed",
                "annotation",
                at,
                f"{at.named()}: examples changed (the prompt the model sees changed)",
            )
        self._compare_defaults(old, new, at)
        for keyword in sorted(_QUIET):
            if old.get(keyword) != new.get(keyword):
                self.report(
                    "annotation-changed", "annotation", at, f"{at.named()}: {keyword} changed"
                )

    def _compare_defaults(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        if self.side == "result" or old.get("default") == new.get("default"):
            return  # a result is written whole: its defaults decide nothing for readers
        if "default" in old and "default" in new:
            self.report(
                "default-changed",
                "annotation",
                at,
                f"{at.named()}: default changed from {_short(old['default'])} to "
                f"{_short(new['default'])}; calls that leave it out now behave differently",
                level="warning",
            )
        elif "default" in new:
            self.report(
                "default-added",
                "annotation",
                at,
                f"{at.named()}: default of {_short(new['default'])} added",
            )
        else:
            self.report(
                "default-removed",
                "annotation",
                at,
                f"{at.named()}: default of {_short(old['default'])} removed",
            )

    # --- unions ---------------------------------------------------------------------

    def _compare_unions(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        old_keyword = _union_keyword(old)
        new_keyword = _union_keyword(new)
        if old_keyword and new_keyword and old_keyword != new_keyword:
            self.report(
                "undecided",
                "undecided",
                at,
                f"{at.named()}: the union changed from {old_keyword} to {new_keyword}",
            )
            return
        old_branches = _branches(old)
        new_branches = _branches(new)
        keyword = old_keyword or new_keyword
        pairs, gone, added, ambiguous = _match_branches(
            old_branches, new_branches, self.old_root, self.new_root
        )
        if ambiguous:
            self.report(
                "undecided",
                "undecided",
                at,
                f"{at.named()}: wink cannot tell which alternatives of the union correspond",
            )
            return
        for old_index, new_index in pairs:
            self.compare(
                old_branches[old_index],
                new_branches[new_index],
                _At(
                    _branch_pointer(at.old, old, keyword, old_index),
                    _branch_pointer(at.new, new, keyword, new_index),
                    at.location,
                ),
            )
        for index in gone:
            where = _At(_branch_pointer(at.old, old, keyword, index), at.new, at.location)
            if old_branches[index] == {"type": "null"}:
                self.report(
                    "no-longer-nullable",
                    "narrowed",
                    where,
                    f"{at.named()}: null is no longer accepted; {self._meaning('narrowed')}",
                    removed=True,
                )
            else:
                self.report(
                    "union-branch-removed",
                    "narrowed",
                    where,
                    f"{at.named()}: the alternative {_describe(old_branches[index])} was "
                    f"removed; {self._meaning('narrowed')}",
                    removed=True,
                )
        for index in added:
            where = _At(at.old, _branch_pointer(at.new, new, keyword, index), at.location)
            if new_branches[index] == {"type": "null"}:
                self.report(
                    "became-nullable",
                    "widened",
                    where,
                    f"{at.named()}: null is now accepted; {self._meaning('widened')}",
                )
            else:
                self.report(
                    "union-branch-added",
                    "widened",
                    where,
                    f"{at.named()}: the alternative {_describe(new_branches[index])} was "
                    f"added; {self._meaning('widened')}",
                )

    # --- assertions: what values are allowed -------------------------------------

    def _compare_assertions(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        self._compare_types(old, new, at)
        self._compare_enums(old, new, at)
        for keyword in _LOWER_BOUNDS:
            self._compare_limit(old, new, at, keyword, "bound", lower=True)
        for keyword in _UPPER_BOUNDS:
            self._compare_limit(old, new, at, keyword, "bound", lower=False)
        for keyword in _LOWER_LENGTHS:
            self._compare_limit(old, new, at, keyword, "length", lower=True)
        for keyword in _UPPER_LENGTHS:
            self._compare_limit(old, new, at, keyword, "length", lower=False)
        self._compare_multiple_of(old, new, at)
        for keyword in ("pattern", "format"):
            self._compare_text_constraint(old, new, at, keyword)
        if bool(old.get("uniqueItems")) != bool(new.get("uniqueItems")):
            effect: Effect = "narrowed" if new.get("uniqueItems") else "widened"
            kind = "unique-items-added" if effect == "narrowed" else "unique-items-removed"
            self.report(
                kind,
                effect,
                at,
                f"{at.named()}: uniqueItems {kind.split('-')[-1]}; {self._meaning(effect)}",
            )
        self._compare_object(old, new, at)
        self._compare_arrays(old, new, at)
        for keyword in sorted((set(old) | set(new)) - _HANDLED):
            if old.get(keyword) != new.get(keyword):
                self.report(
                    "undecided",
                    "undecided",
                    at.down(keyword),
                    f"{at.named()}: {keyword} changed, which wink's rules do not cover",
                )

    def _compare_types(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        old_types = _types(old)
        new_types = _types(new)
        if old_types == new_types:
            return
        was, now = _type_words(old_types), _type_words(new_types)
        if new_types - old_types == {"null"} and old_types < new_types:
            self.report(
                "became-nullable",
                "widened",
                at,
                f"{at.named()}: null is now accepted; {self._meaning('widened')}",
            )
        elif old_types - new_types == {"null"} and new_types < old_types:
            self.report(
                "no-longer-nullable",
                "narrowed",
                at,
                f"{at.named()}: null is no longer accepted; {self._meaning('narrowed')}",
            )
        elif _within(old_types, new_types):
            self.report(
                "type-widened",
                "widened",
                at,
                f"{at.named()}: type widened from {was} to {now}; {self._meaning('widened')}",
            )
        elif _within(new_types, old_types):
            self.report(
                "type-narrowed",
                "narrowed",
                at,
                f"{at.named()}: type narrowed from {was} to {now}; {self._meaning('narrowed')}",
            )
        else:
            self.report(
                "type-changed",
                "changed",
                at,
                f"{at.named()}: type changed from {was} to {now}; {self._meaning('changed')}",
            )

    def _compare_enums(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        """``enum`` and ``const`` alike: a ``const`` is a list of one allowed value."""
        before, after = _allowed_values(old), _allowed_values(new)
        if before == after:
            return
        if before is None or after is None:
            effect: Effect = "narrowed" if after is not None else "widened"
            kind = "enum-added" if after is not None else "enum-removed"
            text = (
                "now limited to a list of values"
                if after is not None
                else "no longer limited to a list of values"
            )
            self.report(kind, effect, at, f"{at.named()}: {text}; {self._meaning(effect)}")
            return
        old_values = {_key(value): value for value in before}
        new_values = {_key(value): value for value in after}
        added = [value for key, value in new_values.items() if key not in old_values]
        removed = [value for key, value in old_values.items() if key not in new_values]
        if added:
            self.report(
                "enum-value-added",
                "widened",
                at.down("enum" if "enum" in new else "const"),
                f"{at.named()}: now also accepts {_values(added)}; {self._meaning('widened')}",
            )
        if removed:
            self.report(
                "enum-value-removed",
                "narrowed",
                at.down("enum" if "enum" in new else "const"),
                f"{at.named()}: no longer accepts {_values(removed)}; {self._meaning('narrowed')}",
            )

    def _compare_limit(
        self,
        old: dict[str, Any],
        new: dict[str, Any],
        at: _At,
        keyword: str,
        family: str,
        *,
        lower: bool,
    ) -> None:
        before, after = old.get(keyword), new.get(keyword)
        if before == after:
            return
        if any(value is not None and not _is_number(value) for value in (before, after)):
            self.report(
                "undecided",
                "undecided",
                at.down(keyword),
                f"{at.named()}: {keyword} is not a number",
            )
            return
        if before is None:
            tighter = True
        elif after is None:
            tighter = False
        else:
            tighter = after > before if lower else after < before
        effect: Effect = "narrowed" if tighter else "widened"
        kind = f"{family}-{'tightened' if tighter else 'loosened'}"
        if before is None:
            text = f"{keyword} {_short(after)} added"
        elif after is None:
            text = f"{keyword} {_short(before)} removed"
        else:
            text = f"{keyword} changed from {_short(before)} to {_short(after)}"
        self.report(
            kind,
            effect,
            at.down(keyword),
            f"{at.named()}: {text}; {self._meaning(effect)}",
            removed=after is None,
        )

    def _compare_multiple_of(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        before, after = old.get("multipleOf"), new.get("multipleOf")
        if before == after:
            return
        effect: Effect
        if before is None:
            effect = "narrowed"
        elif after is None:
            effect = "widened"
        elif _is_number(before) and _is_number(after) and before and after:
            if _divides(before, after):
                effect = "narrowed"
            elif _divides(after, before):
                effect = "widened"
            else:
                effect = "changed"
        else:
            effect = "undecided"
        kind = {"narrowed": "bound-tightened", "widened": "bound-loosened"}.get(
            effect, "bound-changed"
        )
        self.report(
            kind,
            effect,
            at.down("multipleOf"),
            f"{at.named()}: multipleOf changed from {_short(before)} to {_short(after)}; "
            f"{self._meaning(effect)}",
            removed=after is None,
        )

    def _compare_text_constraint(
        self, old: dict[str, Any], new: dict[str, Any], at: _At, keyword: str
    ) -> None:
        before, after = old.get(keyword), new.get(keyword)
        if before == after:
            return
        if before is None:
            self.report(
                f"{keyword}-added",
                "narrowed",
                at.down(keyword),
                f"{at.named()}: {keyword} {_short(after)} added; {self._meaning('narrowed')}",
            )
        elif after is None:
            self.report(
                f"{keyword}-removed",
                "widened",
                at.down(keyword),
                f"{at.named()}: {keyword} {_short(before)} removed; {self._meaning('widened')}",
                removed=True,
            )
        else:
            self.report(
                f"{keyword}-changed",
                "undecided",
                at.down(keyword),
                f"{at.named()}: {keyword} changed from {_short(before)} to {_short(after)}",
            )

    # --- objects ---------------------------------------------------------------

    def _compare_object(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        old_properties: dict[str, Any] = old.get("properties", {})
        new_properties: dict[str, Any] = new.get("properties", {})
        old_required = set(old.get("required", ()))
        new_required = set(new.get("required", ()))
        for name in [*old_properties, *(n for n in new_properties if n not in old_properties)]:
            here = at.down("properties", name, location=name)
            if name in old_properties and name in new_properties:
                self.compare(old_properties[name], new_properties[name], here)
                self._compare_required(name, name in old_required, name in new_required, here)
            elif name in new_properties:
                self._property_added(old, name, new_properties[name], name in new_required, here)
            else:
                self._property_removed(new, name, old_properties[name], name in old_required, here)
        for name in sorted((new_required - old_required) - set(new_properties)):
            self.report(
                "property-became-required",
                "narrowed",
                at.down("required"),
                f"{at.named()}: {name} is now required; {self._meaning('narrowed')}",
            )
        self._compare_additional(old, new, at)

    def _compare_required(self, name: str, was: bool, now: bool, at: _At) -> None:
        if was == now:
            return
        effect: Effect = "narrowed" if now else "widened"
        if self.side == "params":
            detail = (
                "calls that leave it out are now refused" if now else "calls that worked still work"
            )
        else:
            detail = (
                "old readers still read every new result"
                if now
                else "results may now leave it out, which old readers refuse"
            )
        self.report(
            "property-became-required" if now else "property-became-optional",
            effect,
            at,
            f"{at.named()} is now {'required' if now else 'optional'}; {detail}",
        )

    def _property_added(
        self, old: dict[str, Any], name: str, schema: Any, required: bool, at: _At
    ) -> None:
        allowed_before = old.get("additionalProperties", True)
        if allowed_before is not False:
            # An open object already allowed the name: the new property constrains it.
            self.compare(allowed_before, schema, at)
            self._compare_required(name, False, required, at)
            return
        kind = "required-property-added" if required else "optional-property-added"
        if self.side == "result":
            self.report(
                kind,
                "widened",
                at,
                f"{at.named()}: new {'required' if required else 'optional'} property; results "
                "are closed objects, so readers that refuse unknown keys refuse new results",
                level="warning",
            )
            return
        if required:
            self.report(
                kind,
                "changed",
                at,
                f"{at.named()}: new required property; calls without it are refused",
            )
        else:
            self.report(
                kind,
                "widened",
                at,
                f"{at.named()}: new optional property; calls that worked still work",
            )

    def _property_removed(
        self, new: dict[str, Any], name: str, schema: Any, required: bool, at: _At
    ) -> None:
        allowed_now = new.get("additionalProperties", True)
        if allowed_now is not False:
            self.compare(schema, allowed_now, at)
            self._compare_required(name, required, False, at)
            return
        kind = "required-property-removed" if required else "optional-property-removed"
        if self.side == "params":
            self.report(
                kind,
                "narrowed",
                at,
                f"{at.named()}: property removed; calls that send it are refused",
                removed=True,
            )
        elif required:
            self.report(
                kind,
                "widened",
                at,
                f"{at.named()}: required property removed; readers of old results expect it",
                removed=True,
            )
        else:
            self.report(
                kind,
                "narrowed",
                at,
                f"{at.named()}: optional property removed; old readers still read every new result",
                removed=True,
            )

    def _compare_additional(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        before = old.get("additionalProperties", True)
        after = new.get("additionalProperties", True)
        if before == after:
            return
        here = at.down("additionalProperties", location=ANY)
        if before is False:
            self.report(
                "additional-properties-allowed",
                "widened",
                here,
                f"{at.named()}: now accepts other keys; {self._meaning('widened')}",
            )
        elif after is False:
            self.report(
                "additional-properties-forbidden",
                "narrowed",
                here,
                f"{at.named()}: no longer accepts other keys; {self._meaning('narrowed')}",
            )
        else:
            self.compare(before, after, here)

    # --- arrays ------------------------------------------------------------------

    def _compare_arrays(self, old: dict[str, Any], new: dict[str, Any], at: _At) -> None:
        old_prefix = old.get("prefixItems")
        new_prefix = new.get("prefixItems")
        if old_prefix != new_prefix:
            if (
                not isinstance(old_prefix, list)
                or not isinstance(new_prefix, list)
                or len(old_prefix) != len(new_prefix)
            ):
                self.report(
                    "undecided",
                    "undecided",
                    at.down("prefixItems"),
                    f"{at.named()}: the positions of the tuple changed",
                )
            else:
                for index, (before, after) in enumerate(zip(old_prefix, new_prefix, strict=True)):
                    self.compare(
                        before, after, at.down("prefixItems", str(index), location=str(index))
                    )
        if "items" in old or "items" in new:
            before = old.get("items", True)
            after = new.get("items", True)
            self.compare(before, after, at.down("items", location=ANY))


# --- helpers --------------------------------------------------------------------


def _allowed_values(node: dict[str, Any]) -> list[Any] | None:
    """The values ``enum`` or ``const`` limit a node to, or ``None`` when they do not."""
    if isinstance(node.get("enum"), list):
        values = list(node["enum"])
        return [value for value in values if value == node["const"]] if "const" in node else values
    if "const" in node:
        return [node["const"]]
    return None


def _has_ref(node: Any) -> bool:
    """Whether a ``$ref`` occurs anywhere in ``node``: equal nodes may still name
    definitions that differ."""
    return '"$ref"' in _key(node)


def _resolve(
    root: dict[str, Any], node: dict[str, Any], reference: str, base: str
) -> tuple[dict[str, Any] | None, str]:
    """The node a local ``#/$defs/Name`` names, with the referring node's other keywords,
    and its pointer under ``base`` (the pointer of the whole document)."""
    if not reference.startswith("#/$defs/"):
        return None, base
    name = reference.removeprefix("#/$defs/")
    target = root.get("$defs", {}).get(name)
    if not isinstance(target, dict):
        return None, base
    siblings = {key: value for key, value in node.items() if key != "$ref"}
    return {**target, **siblings}, f"{base}/$defs/{pointer_escape(name)}"


def _is_union(node: dict[str, Any]) -> bool:
    return _union_keyword(node) is not None


def _union_keyword(node: dict[str, Any]) -> str | None:
    for keyword in ("anyOf", "oneOf"):
        if isinstance(node.get(keyword), list):
            return keyword
    return None


def _branches(node: dict[str, Any]) -> list[Any]:
    keyword = _union_keyword(node)
    if keyword is not None:
        return list(node[keyword])
    return [{key: value for key, value in node.items() if key not in _ANNOTATIONS}]


def _branch_pointer(pointer: str, node: dict[str, Any], keyword: str | None, index: int) -> str:
    if keyword is None or _union_keyword(node) is None:
        return pointer
    return f"{pointer}/{keyword}/{index}"


def _match_branches(
    old: Sequence[Any], new: Sequence[Any], old_root: dict[str, Any], new_root: dict[str, Any]
) -> tuple[list[tuple[int, int]], list[int], list[int], bool]:
    """Pairs of corresponding branches, old ones left over, new ones left over, and
    whether some could correspond in more than one way."""
    pairs: list[tuple[int, int]] = []
    free_old = list(range(len(old)))
    free_new = list(range(len(new)))
    for keys in (_exact, _reference, _tag, _type_key):
        old_keys = {i: keys(old[i], old_root) for i in free_old}
        new_keys = {i: keys(new[i], new_root) for i in free_new}
        for i in list(free_old):
            if old_keys[i] is None:
                continue
            same_old = [j for j in free_old if old_keys[j] == old_keys[i]]
            same_new = [j for j in free_new if new_keys[j] == old_keys[i]]
            if not same_new:
                continue
            if len(same_old) != len(same_new) or (len(same_old) > 1 and keys is not _exact):
                return pairs, free_old, free_new, True
            # Equal branches listed twice correspond in order.
            for old_index, new_index in zip(same_old, same_new, strict=True):
                pairs.append((old_index, new_index))
                free_old.remove(old_index)
                free_new.remove(new_index)
    return pairs, free_old, free_new, False


def _exact(branch: Any, root: dict[str, Any]) -> str | None:
    return _key(branch)


def _reference(branch: Any, root: dict[str, Any]) -> str | None:
    reference = branch.get("$ref") if isinstance(branch, dict) else None
    return reference if isinstance(reference, str) else None


def _type_key(branch: Any, root: dict[str, Any]) -> str | None:
    return _key(sorted(_types(_resolved(branch, root))))


def _resolved(branch: Any, root: dict[str, Any]) -> Any:
    if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
        target, _ = _resolve(root, branch, branch["$ref"], "")
        return target if target is not None else branch
    return branch


def _tag(branch: Any, root: dict[str, Any]) -> str | None:
    """The fixed values of a tagged object branch (``{"kind": "book"}``), as a key."""
    node = _resolved(branch, root)
    if not isinstance(node, dict):
        return None
    tags = {
        name: schema["const"]
        for name, schema in node.get("properties", {}).items()
        if isinstance(schema, dict) and "const" in schema
    }
    return _key(tags) if tags else None


_ALL_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})


def _types(node: Any) -> frozenset[str]:
    """The JSON types a node allows by its ``type`` (every type when it has none)."""
    if not isinstance(node, dict) or "type" not in node:
        return _ALL_TYPES
    declared = node["type"]
    names = frozenset(declared if isinstance(declared, list) else [declared])
    if "number" in names:
        names |= {"integer"}  # every integer is a number
    return names


def _within(inner: frozenset[str], outer: frozenset[str]) -> bool:
    return inner <= outer


def _type_words(types: frozenset[str]) -> str:
    if types == _ALL_TYPES:
        return "any type"
    shown = sorted(types - {"integer"} if "number" in types else types)
    return " or ".join(shown)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _values(values: Sequence[Any]) -> str:
    shown = ", ".join(_short(value) for value in values[:5])
    return shown + (f" and {len(values) - 5} more" if len(values) > 5 else "")


def _describe(branch: Any) -> str:
    reference = branch.get("$ref") if isinstance(branch, dict) else None
    if isinstance(reference, str):
        return reference.removeprefix("#/$defs/")
    return _type_words(_types(branch))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _divides(divisor: float, value: float) -> bool:
    quotient = value / divisor
    return abs(quotient - round(quotient)) < 1e-9
