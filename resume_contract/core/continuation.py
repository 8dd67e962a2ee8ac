"""The pure continuation decision `events + facts -> ContinuationPlan`, interpreted from a ContinuationTable.

Step 0 is the Phase 0 plan of the events (`project.py`); then the table's checks, in order. Nothing here names
an input, a reason or a diagnostic: the table does (`continuation_table.py`), and `continuation_functions.py`
holds the named functions a spec may call. Facts are checked against the declared inputs before anything is
decided (`FactsRefused`: an undeclared key, a missing one, a wrong type).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..errors import ExpressionFailed
from . import expressions as _x
from .continuation_facts import check_facts
from .continuation_functions import FUNCTIONS
from .continuation_json import event_rows_json, expression_json, fact_json
from .continuation_table import OPERATION_FIELDS, PHASE0_FIELDS, Check, ContinuationTable
from .plan import Diagnostic, ResumePlan, row_event_id
from .project import project
from .table import ProjectorTable


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()  # a path that names nothing (an optional input not given, no first event, ...)


class ContinuationPlan(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True, kw_only=True):
    """The continuation decision: `continue` with its payload, or `park` with its reasons and diagnostics.

    `continuation["runtimeContext"]` holds the Phase 0 replay's committed rows exactly as written."""

    disposition: str
    rejection_reasons: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    continuation: dict[str, Any] | None = None


def decide_continuation(
    events: Sequence[Any],
    facts: Mapping[str, Any],
    projector: ProjectorTable,
    table: ContinuationTable,
    rows: Sequence[msgspec.Raw] | None = None,
) -> ContinuationPlan:
    """Decide whether the committed prefix `events` may be continued under `facts`. Pure; raises FactsRefused."""
    check_facts(facts, table.inputs)
    context = DecisionContext(events, facts, table)
    phase0 = project(events, projector, expected_high_water(facts, table), rows=rows)
    context.phase0 = phase0
    reasons: list[str] = []
    diagnostics: list[Diagnostic] = []
    said = table.phase0_after is None  # Phase 0's findings are said before every check, or after the one named

    def say_phase0() -> None:
        reasons.extend(reason for reason in phase0.rejection_reasons if reason not in reasons)
        diagnostics.extend(phase0.diagnostics)

    if said:
        say_phase0()
    parked_by_checks = False
    for check in table.checks:
        try:
            fired = [] if context.skipped(check, reasons) else context.bindings(check, reasons)
            diagnostics += [context.diagnostic(check, binding, reasons) for binding in fired]
        except ExpressionFailed as failed:  # no decision: say which check could not be judged
            raise ExpressionFailed(f"check '{check.name}': {failed}") from None
        reason = table.diagnostics[check.diagnostic][0]
        if fired and reason is not None:
            parked_by_checks = True
            if reason not in reasons:
                reasons.append(reason)
        if not said and check.name == table.phase0_after:
            said = True
            say_phase0()
        if fired and check.stops:
            break
    if not said:  # a check that stops came first: what Phase 0 found is said all the same, last
        say_phase0()
    if phase0.disposition != table.proceeds_on or parked_by_checks:
        return ContinuationPlan(disposition=table.stop, rejection_reasons=tuple(reasons), diagnostics=tuple(diagnostics))
    payload = context.payload(table.continuation)
    return ContinuationPlan(
        disposition=table.proceed, rejection_reasons=tuple(reasons), diagnostics=tuple(diagnostics), continuation=payload
    )


def expected_high_water(facts: Mapping[str, Any], table: ContinuationTable) -> int | None:
    """The high-water step 0 plans Phase 0 with: the first of the spec's `phase0.expected_high_water` inputs
    present in `facts` (None: none is)."""
    context = DecisionContext((), facts, table)
    return next((value for path in table.expected_high_water if (value := context.value(path)) is not ABSENT), None)


def continuation_summary(plan: ContinuationPlan) -> dict[str, Any]:
    """A decision as the spec's situations state one: diagnostics as code, eventId and detail (those present),
    and the continuation's `runtimeContext` as the ids of its rows."""
    summary: dict[str, Any] = {
        "disposition": plan.disposition,
        "rejection_reasons": list(plan.rejection_reasons),
        "diagnostics": [
            {"code": d.code, **({"eventId": d.event_id} if d.event_id is not None else {}), **({"detail": d.detail} if d.detail is not None else {})}
            for d in plan.diagnostics
        ],
    }
    if plan.continuation is not None:
        summary["continuation"] = {
            name: [row_event_id(row) for row in value] if _are_rows(value) else value
            for name, value in plan.continuation.items()
        }
    return summary


def _json_of(raw: Any) -> Any:
    """A free-JSON value (msgspec.Raw) decoded; the standard library reads lone surrogate escapes too."""
    return json.loads(bytes(raw)) if isinstance(raw, (msgspec.Raw, bytes, bytearray, memoryview)) else raw


class DecisionContext:
    """One decision: the events, the facts, the Phase 0 plan once made, and the ledger facts, each read once."""

    def __init__(self, events: Sequence[Any], facts: Mapping[str, Any], table: ContinuationTable) -> None:
        self.events = events
        self.facts = facts
        self.table = table
        self.phase0: ResumePlan | None = None
        self._facts: dict[str, Any] = {}
        self.planner: dict[str, Any] = {}  # the planner form's facts (`planner.NAME`), for its gates
        self._json: tuple[Any, ...] | None = None  # what expressions read, made once (expression_values)

    # -- values by path --------------------------------------------------------------------------------------
    def value(self, path: str, binding: Mapping[str, Any] | None = None) -> Any:
        head, _, rest = path.partition(".")
        steps = rest.split(".") if rest else []
        if head in ("missing", "item", "candidate"):
            value: Any = (binding or {}).get(head, ABSENT)
        elif head == "input":
            value = self.facts
        elif head == "planner":
            value = self.planner
        elif head == "source":
            return self._event_field(self.events[0] if self.events else ABSENT, steps[0])
        elif head == "fact":
            value = self.fact(steps.pop(0))
            if steps and not isinstance(value, (dict, _Absent)):  # an event: a wire field of it
                return self._event_field(value, steps[0])
        else:  # phase0
            assert self.phase0 is not None, "phase0 values are read after step 0"
            found = getattr(self.phase0, PHASE0_FIELDS[steps[0]])
            return tuple(found) if isinstance(found, Sequence) and not isinstance(found, str) else found
        for step in steps:
            value = value.get(step, ABSENT) if isinstance(value, dict) else ABSENT
        return value

    def _event_field(self, event: Any, name: str) -> Any:
        if event is ABSENT:
            return ABSENT
        found = getattr(event, self.table.event_attributes[name])
        return ABSENT if found is msgspec.UNSET else found

    # -- ledger facts ----------------------------------------------------------------------------------------
    def fact(self, name: str) -> Any:
        if name not in self._facts:
            ((kind, definition),) = self.table.ledger_facts[name].items()
            if kind == "expression":  # its value as JSON, where a check written with lists of tests reads it by path
                value = self.expression_values(())[4][name]
                self._facts[name] = ABSENT if value is None else value
            else:
                self._facts[name] = getattr(self, f"_fact_{kind}")(definition)
        return self._facts[name]

    def _flag(self, event: Any, where: Mapping[str, str]) -> Any:
        holder = getattr(event, self.table.event_attributes[where["field"]])
        if not isinstance(holder, dict) or where["key"] not in holder:
            return ABSENT
        return _json_of(holder[where["key"]])

    def _fact_lifecycle(self, definition: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The items opened and not closed, in the order they were first opened; partial events count for neither.
        As the reference keeps them (a map by key): a key opened again is still one item (its event the latest
        opening); an event that opens and closes a key leaves it closed. An opening with no string key can never
        be closed: it stays open, an item of its own (fail closed)."""
        partial = self.table.event_attributes["partial"]
        key = definition["key"]
        open_items: dict[Any, dict[str, Any]] = {}
        for number, event in enumerate(self.events):
            if getattr(event, partial) is True:
                continue
            opening = self._flag(event, definition["opened_by"])
            if opening is not ABSENT:
                item_key = opening.get(key) if isinstance(opening, dict) else None
                item_key = item_key if isinstance(item_key, str) else None
                open_items[item_key if item_key is not None else ("unkeyed", number)] = {"eventId": event.id, "key": item_key}
            for closer in definition["closed_by"]:
                closing = self._flag(event, closer)
                if isinstance(closing, dict) and isinstance(closing.get(key), str):
                    open_items.pop(closing[key], None)
        return list(open_items.values())

    def _fact_first_differing(self, fields: Sequence[str]) -> Any:
        attributes = [self.table.event_attributes[name] for name in fields]
        if not self.events:
            return ABSENT
        first = self.events[0]
        return next(
            (event for event in self.events[1:] if any(getattr(event, a) != getattr(first, a) for a in attributes)), ABSENT
        )

    def _fact_last_replayed_where(self, conditions: Sequence[Mapping[str, str]]) -> Any:
        assert self.phase0 is not None
        replayed = iter(self.phase0.replay_event_ids)
        wanted = next(replayed, None)
        last: Any = ABSENT
        for event in self.events:  # the replay is a subsequence of the events, in order
            if wanted is None:
                break
            if event.id != wanted:
                continue
            wanted = next(replayed, None)
            if any(self._content_is(event.content, condition) for condition in conditions):
                last = event
        return last

    def _content_is(self, content: Any, condition: Mapping[str, str]) -> bool:
        if content is msgspec.UNSET or content.KIND != condition["kind"]:
            return False
        nonempty = condition.get("nonempty")
        return nonempty is None or bool(getattr(content, self.table.content_attributes[condition["kind"], nonempty]))

    def _fact_operation_field(self, field: str) -> tuple[Any, ...]:
        assert self.phase0 is not None
        return tuple(getattr(operation, OPERATION_FIELDS[field]) for operation in self.phase0.operations)

    # -- tests -----------------------------------------------------------------------------------------------
    def skipped(self, check: Check, reasons: Sequence[str]) -> bool:
        if check.skip_function is not None:
            return check.skip_function(*self.expression_values(reasons))
        return any(self.holds(test, {}, reasons) for test in check.skip_if)

    def bindings(self, check: Check, reasons: Sequence[str]) -> list[dict[str, Any]]:
        """One binding per time the check fires (an `each_open` test once per open item, an expression once)."""
        if check.for_each_function is not None:
            values = self.expression_values(reasons)
            return [{"item": item} for item in _x.items(check.for_each_function(*values)) if check.when_function is None or check.when_function(*values, item)]
        if check.when_function is not None:
            return [{}] if check.when_function(*self.expression_values(reasons)) else []
        found: list[dict[str, Any]] = [{}]
        for test in check.when:
            found = [binding | extra for binding in found for extra in self.matches(test, binding, reasons)]
        return found

    def holds(self, test: Mapping[str, Any], binding: Mapping[str, Any], reasons: Sequence[str]) -> bool:
        return bool(self.matches(test, binding, reasons))

    def matches(self, test: Mapping[str, Any], binding: Mapping[str, Any], reasons: Sequence[str]) -> list[dict[str, Any]]:
        """The bindings a test adds where it holds: [] when it does not, [{}] when it holds once."""
        name = next(key for key in test if key != "normalise")
        argument = test[name]
        if name == "each_open":
            return [{"item": item} for item in self.value(argument, binding)]
        if name == "missing_from":
            # An absent list holds nothing (an optional input not given): everything is missing from it.
            available = set(_listed(self.value(argument["set"], binding)))
            missing = sorted({value for value in _listed(self.value(argument["values"], binding)) if value not in available})
            return [{"missing": missing}] if missing else []
        return [{}] if self._simple(name, argument, test.get("normalise"), binding, reasons) else []

    def _simple(self, name: str, argument: Any, normalise: str | None, binding: Mapping[str, Any], reasons: Sequence[str]) -> bool:
        if name == "no_events":
            return not self.events
        if name == "raised":
            return argument in reasons
        if name in ("not_one_of", "one_of"):
            return (self.value(argument["value"], binding) in argument["allowed"]) is (name == "one_of")
        if name == "any_equal":
            pairs = [(self.value(a, binding), self.value(b, binding)) for a, b in argument]
            return any(a is not ABSENT and a == b for a, b in pairs)
        if name == "differ":
            left, right = (self.value(path, binding) for path in argument)
            if normalise is not None:
                left, right = (FUNCTIONS[normalise](v) if isinstance(v, str) else v for v in (left, right))
            return bool(left != right)
        value = self.value(argument, binding)
        return {"present": value is not ABSENT, "absent": value is ABSENT, "is_false": value is False}[name]

    def expression_values(self, reasons: Sequence[str]) -> tuple[Any, ...]:
        """What a check written with expressions reads, in the order of its parameters (continuation_json.py)."""
        if self._json is None and self.phase0 is None:  # a planner gate: it reads input, source and events alone
            encoded = event_rows_json(self.events)
            self._json = (encoded[0] if encoded else None, encoded, [], {}, {})
        if self._json is None:
            assert self.phase0 is not None
            source, events, replay, phase0 = expression_json(self.events, self.phase0)
            facts: dict[str, Any] = {}
            for name, definition in self.table.ledger_facts.items():  # an expression fact reads the ones before it
                if "expression" in definition:
                    function = self.table.fact_functions.get(name)  # (none only in a spec the generator refused)
                    facts[name] = function(self.facts, source, events, replay, facts, phase0) if function else None
                else:
                    facts[name] = fact_json(self.fact(name), ABSENT)
            self._json = (source, events, replay, facts, phase0)
        return (dict(self.facts), *self._json, list(reasons))

    # -- what a check raises, what a continuation carries -----------------------------------------------------
    def diagnostic(self, check: Check, binding: Mapping[str, Any], reasons: Sequence[str] = ()) -> Diagnostic:
        if check.when_function is not None or check.for_each_function is not None:
            return self._expression_diagnostic(check, binding, reasons)
        event_id = ABSENT if check.event_id is None else self.value(check.event_id, binding)
        detail = None
        if check.detail is not None:
            detail = {name: _plain(self.value(path, binding)) for name, path in check.detail.items()}
        return Diagnostic(
            code=check.diagnostic,
            message=self.table.diagnostics[check.diagnostic][1],
            event_id=None if event_id is ABSENT else event_id,
            detail=detail,
        )

    def _expression_diagnostic(self, check: Check, binding: Mapping[str, Any], reasons: Sequence[str]) -> Diagnostic:
        values = (*self.expression_values(reasons), binding.get("item"))
        event_id = None if check.event_id_function is None else check.event_id_function(*values)
        detail = None if check.detail_functions is None else {name: function(*values) for name, function in check.detail_functions.items()}
        message = self.table.diagnostics[check.diagnostic][1]
        return Diagnostic(code=check.diagnostic, message=message, event_id=event_id if isinstance(event_id, str) else None, detail=detail)

    def payload(self, template: Mapping[str, Any]) -> dict[str, Any]:
        built: dict[str, Any] = {}
        for name, spec in template.items():
            if isinstance(spec, str):
                value = self.value(spec)
            elif "sorted_distinct" in spec:
                found = self.value(spec["sorted_distinct"])
                value = ABSENT if found is ABSENT else sorted(set(found))
            elif "if_present" in spec and self.value(spec["if_present"]) is ABSENT:
                value = ABSENT
            else:
                value = self.payload(spec["fields"])
            if value is not ABSENT:
                built[name] = value
        return built


def _listed(value: Any) -> Sequence[Any]:
    return value if isinstance(value, (list, tuple)) else ()


def _are_rows(value: Any) -> bool:
    return isinstance(value, tuple) and bool(value) and all(isinstance(item, msgspec.Raw) for item in value)


def _plain(value: Any) -> Any:
    return None if value is ABSENT else value
