"""The review's rules for spec/runtime_event.yaml: what a change to the wire format does to the rows read.

A mixin of the review's collector (`review._Collector`), whose `add` records a change and whose `_keyed`
reports removed and added entries and returns the keys both sides share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..errors import Mark
from ..spec.model import Spec, WireField
from . import rules


class _Add(Protocol):
    """The collector's `add` (`review.collector`), values and all."""

    def __call__(self, rule: rules.Rule, message: str, base: Mark | None, head: Mark | None, subject: str = "", values: Any = None) -> None: ...


class WireChanges:
    # Provided by the collector this is mixed into.
    base: Spec
    head: Spec
    add: _Add
    _keyed: Callable[..., list[str]]

    def wire(self) -> None:
        base, head = self.base.wire, self.head.wire
        loc_b = lambda *path: self.base.location("runtime_event", *path)  # noqa: E731
        loc_h = lambda *path: self.head.location("runtime_event", *path)  # noqa: E731
        if base.unknown_keys != head.unknown_keys:
            rule = rules.WIRE_UNKNOWN_KEYS_RELAXED if head.unknown_keys == "ignore" else rules.WIRE_UNKNOWN_KEYS_TIGHTENED
            self.add(rule, f"unknown keys: {base.unknown_keys} -> {head.unknown_keys}", loc_b("unknown_keys"), loc_h("unknown_keys"))
        self._wire_fields("event", base.fields, head.fields, ("fields",))
        old_kinds = {kind.name: kind for kind in base.content_kinds}
        new_kinds = {kind.name: kind for kind in head.content_kinds}
        def added(key: str) -> rules.Rule:
            # A kind that takes part in tool state changes decisions: the ledgers say how.
            return rules.WIRE_TOOL_CONTENT_KIND_ADDED if new_kinds[key].tool_call is not None else rules.WIRE_CONTENT_KIND_ADDED

        for key in self._keyed(rules.WIRE_CONTENT_KIND_REMOVED, added, "content kind", old_kinds, new_kinds, lambda k: old_kinds[k].mark, lambda k: new_kinds[k].mark):
            old, new = old_kinds[key], new_kinds[key]
            self._wire_fields(f"content kind '{key}'", old.fields, new.fields, ("content", "kinds", key, "fields"))
            if old.tool_call != new.tool_call:
                self.add(rules.WIRE_TOOL_CALL_CHANGED, f"content kind '{key}': tool_call {old.tool_call} -> {new.tool_call}", old.mark, new.mark)
            if old.description != new.description:
                self.add(rules.WIRE_REWORDED, f"content kind '{key}': description changed", old.mark, new.mark, values=(old.description, new.description))
        if (base.terminal_statuses, base.terminal_flag_field, base.terminal_flag_key) != (head.terminal_statuses, head.terminal_flag_field, head.terminal_flag_key):
            self.add(rules.WIRE_TERMINAL_CHANGED, "what makes an event terminal changed", loc_b("terminal"), loc_h("terminal"),
                     values=((base.terminal_statuses, base.terminal_flag_field, base.terminal_flag_key), (head.terminal_statuses, head.terminal_flag_field, head.terminal_flag_key)))
        if base.partial_flag != head.partial_flag:
            self.add(rules.WIRE_PARTIAL_FLAG_CHANGED, f"partial flag {base.partial_flag} -> {head.partial_flag}", loc_b("partial_flag"), loc_h("partial_flag"))
        # A refusal is its test under its semantics: another test, or the same under other rules, is another refusal.
        old_refusals = {(base.semantics, refusal.when[0]): refusal for refusal in base.refusals}
        new_refusals = {(head.semantics, refusal.when[0]): refusal for refusal in head.refusals}
        for test in sorted(old_refusals.keys() - new_refusals.keys()):
            self.add(rules.WIRE_REFUSAL_REMOVED, f"rows where {test[1]} ({test[0]}) are read again", old_refusals[test].mark, None, values=test)
        for test in sorted(new_refusals.keys() - old_refusals.keys()):
            self.add(rules.WIRE_REFUSAL_ADDED, f"rows where {test[1]} ({test[0]}) are refused", None, new_refusals[test].mark, values=test)
        for test in sorted(old_refusals.keys() & new_refusals.keys()):
            if old_refusals[test].message != new_refusals[test].message:
                self.add(rules.WIRE_REWORDED, f"refusal message changed: {test[1]}", old_refusals[test].mark, new_refusals[test].mark,
                         values=(old_refusals[test].message, new_refusals[test].message))

    def _wire_fields(self, owner: str, base: tuple[WireField, ...], head: tuple[WireField, ...], path: tuple[str, ...]) -> None:
        old = {field.name: field for field in base}
        new = {field.name: field for field in head}
        for key in self._keyed(rules.WIRE_FIELD_REMOVED, rules.WIRE_FIELD_ADDED, f"{owner}: field", old, new, lambda k: old[k].mark, lambda k: new[k].mark):
            before, after = old[key], new[key]
            where = (before.mark, after.mark)
            if before.required != after.required:
                rule = rules.WIRE_FIELD_MADE_REQUIRED if after.required else rules.WIRE_FIELD_MADE_OPTIONAL
                self.add(rule, f"{owner}: field '{key}' {'now required' if after.required else 'now optional'}", *where)
            if before.type != after.type:
                self.add(rules.WIRE_FIELD_TYPE_CHANGED, f"{owner}: field '{key}' type {before.type} -> {after.type}", *where)
            if before.enum != after.enum:
                lost = [value for value in before.enum if value not in after.enum] if before.enum else ["(any)"]
                gained = [value for value in after.enum if value not in before.enum] if after.enum else ["(any)"]
                if lost and after.enum:
                    self.add(rules.WIRE_ENUM_NARROWED, f"{owner}: field '{key}' no longer allows {', '.join(lost)}", *where)
                if gained and before.enum:
                    self.add(rules.WIRE_ENUM_WIDENED, f"{owner}: field '{key}' now allows {', '.join(gained)}", *where)
            if before.description != after.description:
                self.add(rules.WIRE_REWORDED, f"{owner}: field '{key}': description changed", *where, values=(before.description, after.description))
