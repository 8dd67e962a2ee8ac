"""The projector's expressions (docs/language.md, "Classes and items"), type-checked and compiled.

- `facts: {NAME: EXPR}`: the run's facts, each read from `first`, the run's first event (partial or not).
- an event kind's `when`: for a tool content kind, a test of `fact` that splits one kind of content into
  several event kinds, run by run; without `content_kind`, a test of `row` (and `first`, `fact`) that makes a
  content-less row an *action event*, whose operation `key` (an expression of the same names) names.
- `ledger_anomalies.rows: [{when: EXPR, raise: CODE}]`: a diagnostic at every committed row where `when` holds.
- `replay.hidden: EXPR` (of `row` alone): a row the model never saw (never replayed; it drives tool state all the
  same).

Every row is the event as its JSON (the wire's field names); `semantics` (strict or javascript) says once how
values compare. Each part is compiled to Python that the generator writes into generated/ (never at run time).
"""

from __future__ import annotations

import dataclasses

from ..errors import SpecError
from ..expr import Environment
from ..expr.needs import needs
from ..expr.types import JSON, STRING, Type, object_type
from .compiled import compiled
from .loader import LoadedFile
from .model import EventKind, Projector, RowCheck, WireFormat

# The parameters of each kind of compiled function, in this order: what the walk hands it.
FACT_PARAMETERS = ("first",)
GUARD_PARAMETERS = ("fact",)
ROW_PARAMETERS = ("row", "first", "fact")
CALL_PARAMETERS = ("row", "call", "response", "first", "fact")
# An action event's operation's call, as the walk recorded it (its call id, tool name and arguments): what an
# `against_call` check compares the row with (and `response`, the row of the result that settled the operation, or
# null while none has)
CALL = object_type("call", {"id": (STRING, False), "name": (STRING, False), "args": (JSON, False)})


def event_type(wire: WireFormat) -> Type:
    """A row as an expression sees it: the event's JSON, every wire field (any JSON value, possibly absent)."""
    return object_type("row", {field.name: (JSON, True) for field in wire.fields})


def compile_projector(file: LoadedFile, projector: Projector, wire: WireFormat) -> tuple[Projector, list[SpecError]]:
    """The projector with its expressions compiled (and each action event's and row check's `needs`)."""
    errors: list[SpecError] = []
    data = file.data
    semantics = data.get("semantics", "strict")
    event = event_type(wire)
    first_env = Environment({"first": event}, semantics)
    facts: list[tuple[str, tuple[str, str]]] = []
    fact_types: dict[str, tuple[Type, bool]] = {}
    for name in data.get("facts", {}):
        fact = compiled(file, ("facts", name), first_env, errors)
        if fact is not None:
            facts.append((name, (fact[0], fact[1])))
            fact_types[name] = (fact[2], False)
    fact_type = object_type("fact", fact_types)
    guard_env = Environment({"fact": fact_type}, semantics)
    row_env = Environment({"row": event, "first": event, "fact": fact_type}, semantics)
    call_env = Environment({"row": event, "call": CALL, "response": event.or_null(), "first": event, "fact": fact_type}, semantics)
    events = tuple(_against_call(file, projector, _event_kind(file, kind, guard_env, row_env, errors), call_env, errors) for kind in projector.events)
    checks: list[RowCheck] = []
    for index, item in enumerate(data.get("ledger_anomalies", {}).get("rows", [])):
        when = compiled(file, ("ledger_anomalies", "rows", index, "when"), row_env, errors, condition=True)
        if when is not None:
            mark = file.mark(("ledger_anomalies", "rows", index))
            checks.append(RowCheck(when=(when[0], when[1]), anomaly=item["raise"], mark=mark, needs=needs(when[0], "row"), skip=item.get("skip", False)))
    hidden = None
    if "replay" in data:
        # A row is hidden or not by what it holds alone (the explorers judge a row by itself).
        test = compiled(file, ("replay", "hidden"), Environment({"row": event}, semantics), errors, condition=True)
        if test is not None:
            code = data["replay"].get("unpaired_result", "")
            hidden = RowCheck(when=(test[0], test[1]), anomaly=code, mark=file.mark(("replay",)), needs=needs(test[0], "row"))
    compiled_projector = dataclasses.replace(
        projector, semantics=semantics, facts=tuple(facts), events=events, row_checks=tuple(checks), hidden=hidden
    )
    return compiled_projector, errors


def _event_kind(file: LoadedFile, kind: EventKind, guard_env: Environment, row_env: Environment, errors: list[SpecError]) -> EventKind:
    item = file.data["events"][kind.name]
    path = ("events", kind.name)
    if kind.content_kind is not None:
        if "key" in item:
            errors.append(SpecError(file.mark(path + ("key",)), "a tool content kind names its operation by its call id (spec/runtime_event.yaml's tool_call); only an action event (no content_kind) takes `key`"))
        if "when" not in item:
            return kind
        guard = compiled(file, path + ("when",), guard_env, errors, condition=True)
        return kind if guard is None else dataclasses.replace(kind, when=(guard[0], guard[1]))
    if "when" not in item or "key" not in item:
        errors.append(SpecError(kind.mark, f"event '{kind.name}' has no content_kind: as an action event it needs `when` (which rows it is) and `key` (which operation it names)"))
        return kind
    when = compiled(file, path + ("when",), row_env, errors, condition=True)
    key = compiled(file, path + ("key",), row_env, errors)
    if key is not None and key[2].kind not in (STRING.kind, JSON.kind):
        errors.append(SpecError(file.mark(path + ("key",)), f"`key` names an operation by its call id, a string, and this is {key[2]}"))
    if when is None or key is None:
        return kind
    return dataclasses.replace(kind, when=(when[0], when[1]), key=(key[0], key[1]), needs=needs(when[0], "row"))


def _against_call(file: LoadedFile, projector: Projector, kind: EventKind, call_env: Environment, errors: list[SpecError]) -> EventKind:
    """An action event's `against_call: {to: STATE, checks: [{when: EXPR, raise: CODE, at: row|response}]}`, compiled
    and checked."""
    item = file.data["events"][kind.name].get("against_call")
    if item is None:
        return kind
    path = ("events", kind.name, "against_call")
    if kind.content_kind is not None:
        errors.append(SpecError(file.mark(path), "only an action event (no content_kind) is checked against its operation's call: a result's tool name is the rules' `when: name_differs`"))
        return kind
    statuses = {state.name: state.status for state in projector.states}
    if statuses.get(item["to"]) is None:
        known = ", ".join(name for name, status in statuses.items() if status is not None)
        errors.append(SpecError(file.mark(path + ("to",)), f"'{item['to']}' is not a state an operation can be in; the states with a status are [{known}]"))
    codes = [diagnostic.code for diagnostic in projector.diagnostics]
    checks = []
    for index, check in enumerate(item["checks"]):
        if check["raise"] not in codes:
            errors.append(SpecError(file.mark(path + ("checks", index, "raise")), f"unknown diagnostic '{check['raise']}'; the diagnostics are [{', '.join(codes)}]"))
        when = compiled(file, path + ("checks", index, "when"), call_env, errors, condition=True)
        if when is not None:
            # (one raised at the response is judged only where the operation has one)
            checks.append(RowCheck(when=(when[0], when[1]), anomaly=check["raise"], mark=file.mark(path + ("checks", index)), at=check.get("at", "row")))
    return dataclasses.replace(kind, against_call=tuple(checks), conflict_to=item["to"])
