"""spec/continuation.yaml as frozen dataclasses: the Phase 1 continuation decision the renderers and checks read.

JSON-like parts (tests, payload, situations' events and facts) are kept as canonical JSON text, so the model
stays hashable (tables are cached by value) and compares by content. Each record keeps its Mark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import Mark, SpecError


def canonical(value: Any) -> str:
    """JSON text of a spec value, key order kept (the spec's order is part of the contract)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class InputDecl:
    """One declared input (host fact): its type, whether it may be absent, and an object's fields."""

    name: str
    type: str
    optional: bool
    description: str
    fields: tuple[InputDecl, ...]
    mark: Mark

    def as_table(self) -> dict[str, Any]:
        table: dict[str, Any] = {"type": self.type, "optional": self.optional}
        if self.type == "object":
            table["fields"] = {field.name: field.as_table() for field in self.fields}
        return table


@dataclass(frozen=True)
class FactDecl:
    """A ledger fact: its kind (continuation_table.FACT_KINDS) and that kind's definition, as JSON text."""

    name: str
    kind: str
    definition_json: str
    description: str
    mark: Mark
    expression: Any = None  # an `expression` fact: (its text, the Python it compiles to, its type)

    @property
    def definition(self) -> Any:
        return json.loads(self.definition_json)


@dataclass(frozen=True)
class CheckDecl:
    name: str
    when_json: str
    skip_if_json: str
    stops: bool
    diagnostic: str
    event_id: str | None
    detail_json: str | None
    mark: Mark
    # A check written with expressions: each part's text and the Python the expression compiler made of it
    when_expression: tuple[str, str] | None = None
    skip_expression: tuple[str, str] | None = None
    for_each_expression: tuple[str, str] | None = None
    event_id_expression: tuple[str, str] | None = None
    detail_expressions: tuple[tuple[str, str, str], ...] = ()  # (name, text, source)

    @property
    def when(self) -> list[dict[str, Any]]:
        return [] if self.when_expression is not None else list(json.loads(self.when_json))

    @property
    def skip_if(self) -> list[dict[str, Any]]:
        return [] if self.skip_expression is not None else list(json.loads(self.skip_if_json))

    @property
    def detail(self) -> dict[str, str] | None:
        return None if self.detail_json is None else dict(json.loads(self.detail_json))


@dataclass(frozen=True)
class ContinuationDiagnostic:
    code: str
    reason: str | None  # None: reported, does not park
    message: str
    mark: Mark


@dataclass(frozen=True)
class Situation:
    """A named situation of the decision table: its events (full wire JSON), its facts and what it must decide."""

    name: str
    summary: str
    events_json: tuple[str, ...]
    facts_json: str
    expect_json: str
    mark: Mark  # its `facts` (or the situation when it has none)
    expect_mark: Mark

    @property
    def facts(self) -> dict[str, Any]:
        return dict(json.loads(self.facts_json))

    @property
    def expect(self) -> dict[str, Any]:
        return dict(json.loads(self.expect_json))


@dataclass(frozen=True)
class PlannerSituation:
    """A named situation of the planner form: the source header (None: unreadable), its events as rows, the
    session's other runs' headers, HOST.json, the fresh ids, and what it must decide."""

    name: str
    summary: str
    header_json: str  # JSON text of the header, or `null`
    events_json: tuple[str, ...]
    other_runs_json: str
    host_json: str
    ids_json: str
    expect_json: str
    mark: Mark
    expect_mark: Mark
    latest: bool = False  # decided as `--latest`: the run is picked among the header (as the run) and the others
    other_events_json: str = "{}"  # other runs' committed events as rows (run id -> rows): what the lineage walk reads

    def value(self, field: str) -> Any:
        return json.loads(getattr(self, f"{field}_json"))

    @property
    def expect(self) -> dict[str, Any]:
        return dict(json.loads(self.expect_json))


# What the lineage walk parks with besides its checks (planner.lineage's keys naming a diagnostic).
LINEAGE_FAILURES = ("cycle", "too_deep", "missing")


@dataclass(frozen=True)
class LineageDecl:
    """The lineage as the table holds it (its JSON, checks without their expressions) and each check's compiled
    (name, diagnostic, text, source)."""

    json: str
    checks: tuple[tuple[str, str, str, str], ...]  # each_edge
    run_checks: tuple[tuple[str, str, str, str], ...] = ()  # each_run

    @property
    def raised(self) -> tuple[str, ...]:
        """The diagnostics the walk can raise."""
        definition = json.loads(self.json)
        checked = tuple(diagnostic for _, diagnostic, _, _ in self.run_checks + self.checks)
        return tuple(definition[name] for name in LINEAGE_FAILURES) + checked


@dataclass(frozen=True)
class ContinuationSpec:
    """The whole continuation decision."""

    summary: str
    proceed: str
    stop: str
    inputs: tuple[InputDecl, ...]
    ledger_facts: tuple[FactDecl, ...]
    expected_high_water: tuple[str, ...]
    proceeds_on: str
    checks: tuple[CheckDecl, ...]
    diagnostics: tuple[ContinuationDiagnostic, ...]
    reasons: tuple[tuple[str, str], ...]  # (reason, what to do), in the spec's order
    payload_json: str
    situations: tuple[Situation, ...]
    # The planner form (None: the spec has none): its gates, its host/inputs/existing_continuation, its situations.
    gates: tuple[CheckDecl, ...] = ()
    planner_json: str | None = None
    planner_situations: tuple[PlannerSituation, ...] = ()
    base_event_json: str = "{}"  # what the situations' events are written over (their identity)
    invariants: tuple[tuple[str, str], ...] = ()  # (invariant, description): what verify proves of every decision
    semantics: str = "strict"  # whose rules its expressions' values follow (docs/expressions.md)
    phase0_after: str | None = None  # the check after which Phase 0's reasons stand (None: before every check)
    # Declared and not raised (a diagnostic no check raises, a reason no raised diagnostic parks with): said by
    # generate and check as warnings, never refused (a contract may declare a vocabulary before its checks).
    warnings: tuple[SpecError, ...] = ()
    lineage: LineageDecl | None = None  # the planner's walk over the runs the source continued (None: none)
    # The planner's inputs filled by an expression over header and events: (input, text, compiled source).
    input_expressions: tuple[tuple[str, str, str], ...] = ()

    @property
    def planner(self) -> dict[str, Any] | None:
        return None if self.planner_json is None else dict(json.loads(self.planner_json))

    @property
    def payload(self) -> dict[str, Any]:
        return dict(json.loads(self.payload_json))

    def diagnostic(self, code: str) -> ContinuationDiagnostic:
        return next(diagnostic for diagnostic in self.diagnostics if diagnostic.code == code)


def test_paths(name: str, argument: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """The paths a test reads, each with where it stands inside the test."""
    if name == "missing_from":
        return [((part,), argument[part]) for part in ("values", "set")]
    if name in ("not_one_of", "one_of"):
        return [(("value",), argument["value"])]
    if name == "any_equal":
        return [((number, side), value) for number, pair in enumerate(argument) for side, value in enumerate(pair)]
    if name == "differ":
        return [((side,), value) for side, value in enumerate(argument)]
    if name in ("no_events", "raised"):
        return []
    return [((), argument)]
