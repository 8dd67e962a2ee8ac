"""The continuation decision's expressions (docs/expressions.md): a ledger fact's `expression`, a check's
`for_each`, `when`, `skip_if`, and, in a check written so, its `event_id` and `detail` values. Each is type-checked
and compiled here; `function_of` makes the compiled source a function for the situations the generator runs before
it writes code (the generated module holds the same source, as a `def`).

The names they read, each typed from what the spec declares: `input` (the declared inputs), `source` (the first
event, null for an empty ledger), `events` (the committed prefix), `replay` (the events of the Phase 0 replay, in
order), `fact` (the ledger facts: an expression fact sees those declared before it), `phase0` (the Phase 0 plan's
disposition, rejectionReasons, requiresVerification, sourceRuntimeEventHighWater), `raised` (the reasons raised so
far, Phase 0's first; not in a fact) and `item` (in a check with `for_each`: the item it fires for).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import SpecError
from ..expr import Environment
from ..expr.types import BOOL, INT, JSON, STRING, Type, list_of, object_type
from .compiled import compiled
from .continuation_model import CheckDecl, FactDecl, InputDecl
from .loader import LoadedFile, SpecPath
from .model import WireFormat

# The parameters of every compiled check, in this order (a fact's: all but `raised`; an event_id's or a detail's:
# these and `item`): what the interpreter hands it.
PARAMETERS = ("input", "source", "events", "replay", "fact", "phase0", "raised")
FACT_PARAMETERS = PARAMETERS[:-1]
ITEM_PARAMETERS = PARAMETERS + ("item",)

_INPUT_TYPES = {"boolean": BOOL, "string": STRING, "integer": INT, "string_list": list_of(STRING)}


def event_type(wire: WireFormat) -> Type:
    """An event as expressions read it: each wire field, JSON, possibly absent."""
    return object_type("event", {field.name: (JSON, True) for field in wire.fields})


def input_type(decl: InputDecl) -> Type:
    if decl.type == "object":
        return object_type(f"input.{decl.name}", {field.name: (input_type(field), field.optional) for field in decl.fields})
    return _INPUT_TYPES[decl.type]


def _fact_type(fact: FactDecl, event: Type) -> Type:
    if fact.kind == "expression":
        return JSON if fact.expression is None else fact.expression[2]  # (None: its own error is reported)
    if fact.kind == "lifecycle":
        return list_of(object_type(f"fact.{fact.name}[]", {"eventId": (STRING, False), "key": (STRING.or_null(), False)}))
    if fact.kind == "operation_field":
        return list_of(JSON)
    return event.or_null()  # an event, or null


@dataclass(frozen=True)
class Scope:
    """What the decision's expressions may read: the declared inputs, the facts (so far), the wire, the semantics."""

    inputs: tuple[InputDecl, ...]
    facts: tuple[FactDecl, ...]
    wire: WireFormat
    semantics: str

    def environment(self, *, fact: bool = False, item: Type | None = None, gate: bool = False) -> Environment:
        """The names an expression reads (a fact's, with `fact`; a `for_each` check's, with `item`; a planner
        gate's, with `gate`: it runs before step 0, so it reads `input`, `source` and `events` alone)."""
        event = event_type(self.wire)
        phase0 = object_type(
            "phase0",
            {"disposition": (STRING, False), "rejectionReasons": (list_of(STRING), False), "requiresVerification": (BOOL, False), "sourceRuntimeEventHighWater": (INT, False)},
        )
        names = {
            "input": object_type("input", {decl.name: (input_type(decl), decl.optional) for decl in self.inputs}),
            "source": event.or_null(),
            "events": list_of(event),
            "replay": list_of(event),
            "fact": object_type("fact", {decl.name: (_fact_type(decl, event), False) for decl in self.facts}),
            "phase0": phase0,
        }
        if not fact:
            names["raised"] = list_of(STRING)
        if item is not None:
            names["item"] = item
        if gate:
            names = {name: names[name] for name in ("input", "source", "events")}
        return Environment(names, self.semantics)


def expression_parts(file: LoadedFile, path: SpecPath, item: dict[str, Any], gates: bool, scope: Scope, errors: list[SpecError]) -> dict[str, Any] | None:
    """A check written with expressions (its `when` is one, or it has `for_each`): CheckDecl's expression fields,
    each part compiled; None for a check written with lists of tests."""
    if "for_each" not in item and not isinstance(item.get("when"), str):
        return None
    if gates and ("for_each" in item or "skip_if" in item):
        errors.append(SpecError(file.mark(path), "a planner gate written as an expression has `when` alone (no `for_each`, no `skip_if`)"))
        return {}
    env = item_env = scope.environment(gate=gates)
    parts: dict[str, Any] = {}
    if "for_each" in item:
        each = compiled(file, path + ("for_each",), env, errors)
        if each is not None and each[2].kind not in ("list", "json"):
            errors.append(SpecError(file.mark(path + ("for_each",)), f"`for_each` gives the list a check fires for, and this is {each[2]}"))
        if each is not None:
            parts["for_each"] = each[:2]
        # `item` holds what the list holds (json when its type cannot say)
        item_env = scope.environment(item=(each[2].item or JSON) if each is not None and each[2].kind == "list" else JSON)
    for group in ("when", "skip_if"):
        if group not in item:
            continue
        if not isinstance(item[group], str):
            errors.append(SpecError(file.mark(path + (group,)), f"in a check written with expressions (`for_each`), `{group}` is an expression too"))
        elif (test := compiled(file, path + (group,), item_env if group == "when" else env, errors, condition=True)) is not None:
            parts[group] = test[:2]
    if "event_id" in item and (event_id := compiled(file, path + ("event_id",), item_env, errors)) is not None:
        if event_id[2].kind not in ("string", "json", "null"):
            errors.append(SpecError(file.mark(path + ("event_id",)), f"`event_id` names an event by its id, a string, and this is {event_id[2]}"))
        parts["event_id"] = event_id[:2]
    details = []
    for name in item.get("detail", {}):
        if (value := compiled(file, path + ("detail", name), item_env, errors)) is not None:
            details.append((name, value[0], value[1]))
    return {
        "when_expression": parts.get("when"),
        "skip_expression": parts.get("skip_if"),
        "for_each_expression": parts.get("for_each"),
        "event_id_expression": parts.get("event_id"),
        "detail_expressions": tuple(details),
    }


def check_functions(check: CheckDecl) -> dict[str, tuple[str, tuple[str, ...]]]:
    """A check's compiled parts, as the functions its table entry holds: Check field (a detail's as
    `detail_functions.NAME`) -> (the compiled source, its parameters)."""
    takes_item: tuple[str, ...] = ITEM_PARAMETERS if check.for_each_expression is not None else PARAMETERS
    parts: list[tuple[str, tuple[str, str] | None, tuple[str, ...]]] = [
        ("when_function", check.when_expression, takes_item),
        ("skip_function", check.skip_expression, PARAMETERS),
        ("for_each_function", check.for_each_expression, PARAMETERS),
        ("event_id_function", check.event_id_expression, ITEM_PARAMETERS),
    ]
    functions: dict[str, tuple[str, tuple[str, ...]]] = {field: (expression[1], parameters) for field, expression, parameters in parts if expression is not None}
    functions |= {f"detail_functions.{name}": (source, ITEM_PARAMETERS) for name, _, source in check.detail_expressions}
    return functions
