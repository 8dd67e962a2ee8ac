"""Evidence for a change of the continuation decision: both sides decide the same explored situations, and the
change takes the class of how their decisions moved, with the smallest situation that moved as its proof.

Explored: every named situation of either side (events and facts; a situation's expectation is each side's own
claim, so it is not the evidence), and each with one input changed — a boolean flipped, a string made another
one, a list emptied, an optional input left out. A situation only one side accepts the facts of is evidence that
the inputs changed (breaking: a host's facts object no longer fits). The planner form's situations too (a run's
header, its events, the session's other runs and HOST.json), each also with one header field left out, with the
other runs left out, and with one host input changed, decided by each side's gates and inputs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from resume_contract.core.continuation import continuation_summary, decide_continuation
from resume_contract.errors import FactsRefused

from ..spec.continuation_model import ContinuationSpec
from ..spec.continuation_situations import continuation_table_of, decide_planner_situation, source_run
from ..spec.model import Spec
from ..spec.tables import table_of, wire_model
from .rules import BREAKING, CLASSES, NEUTRAL, TIGHTENS, WEAKENS


@dataclass(frozen=True)
class Moved:
    """One explored situation whose decision differs between the sides."""

    label: str
    size: tuple[int, int]  # (events, inputs changed): the smaller, the better the proof
    effect: str
    base: str
    head: str
    flips: bool  # the disposition itself moved (the clearest proof)


def continuation_moves(base: Spec, head: Spec) -> list[Moved]:
    """Every explored situation whose decision moved: those whose disposition moved first, then smallest first."""
    deciders = [_decider(base), _decider(head)]
    planners = [_planner_decider(base), _planner_decider(head)]
    explored: list[tuple[str, tuple[int, int], list[dict[str, Any] | None]]] = [
        (label, size, [decide(rows, facts) for decide in deciders]) for label, size, rows, facts in explored_situations(base, head)
    ]
    explored += [(label, size, [decide(run) for decide in planners]) for label, size, run in explored_planner_situations(base, head)]
    moved = []
    for label, size, (before, after) in explored:
        if before != after:
            flips = before is not None and after is not None and before["disposition"] != after["disposition"]
            moved.append(Moved(label, size, _effect(before, after), _text(before), _text(after), flips))
    return sorted(moved, key=lambda item: (not item.flips, item.size, item.label))


def evidence_class(moved: list[Moved]) -> str | None:
    """The strongest effect among what moved (None: nothing moved)."""
    effects = {item.effect for item in moved}
    return next((name for name in CLASSES if name in effects), None)


def _decider(spec: Spec) -> Any:
    projector, table, model = table_of(spec), continuation_table_of(spec), wire_model(spec.wire)

    def decide(rows: tuple[str, ...], facts: dict[str, Any]) -> dict[str, Any] | None:
        try:
            events = [model.decode_row(row.encode("utf-8")) for row in rows]
            return continuation_summary(decide_continuation(events, facts, projector, table))
        except FactsRefused:
            return None
        except Exception:  # noqa: BLE001 - a row this side's wire format refuses: it cannot decide that situation
            return None

    return decide


def _planner_decider(spec: Spec) -> Any:
    projector, model = table_of(spec), wire_model(spec.wire)
    table = continuation_table_of(spec) if spec.continuation is not None else None

    def decide(run: dict[str, Any]) -> dict[str, Any] | None:
        if table is None or table.planner is None:
            return None  # this side has no planner form: it decides no run
        try:
            events = [model.decode_row(row.encode("utf-8")) for row in run["rows"]]
            if run["latest"] and "candidate" not in table.planner:
                return None  # this side cannot pick a run
            plan = decide_planner_situation(run["latest"], run["run"], run["header"], events, run["others"], run["host"], run["ids"], projector, table)
            return continuation_summary(plan)
        except FactsRefused:
            return None
        except Exception:  # noqa: BLE001 - a row this side's wire format refuses: it cannot decide that situation
            return None

    return decide


def explored_planner_situations(*specs: Spec) -> list[tuple[str, tuple[int, int], dict[str, Any]]]:
    """(label, (events, inputs changed), run) of every planner situation of the specs and each with one header
    field left out, the other runs left out, or one host input changed, each once."""
    seen: set[str] = set()
    explored: list[tuple[str, tuple[int, int], dict[str, Any]]] = []
    unique: list[tuple[str, tuple[int, int], dict[str, Any]]] = []
    for spec in specs:
        continuation = spec.continuation
        assert continuation is not None
        for situation in continuation.planner_situations:
            name = f"planner: {situation.name}"
            run = {key: situation.value(key) for key in ("header", "other_runs", "host", "ids")}
            base = {
                "header": run["header"], "rows": situation.events_json, "others": run["other_runs"], "host": run["host"], "ids": run["ids"],
                "latest": situation.latest, "run": source_run(continuation),
            }
            variations: list[tuple[str, int, dict[str, Any]]] = [(name, 0, base)]
            for field in sorted(base["header"] or {}):
                header = {key: value for key, value in base["header"].items() if key != field}
                variations.append((f"{name} without header.{field}", 1, {**base, "header": header}))
            if base["others"]:
                variations.append((f"{name} without the other runs", 1, {**base, "others": {}}))
            variations += [(f"{label.replace(situation.name, name, 1)}", 1, {**base, "host": host}) for label, _, host in _variations(situation.name, base["host"], continuation)]
            for label, changed, run in variations:
                explored.append((label, (len(situation.events_json), changed), run))
    # Each once, a named situation under its own name (before a variation of another that equals it).
    for label, size, run in sorted(explored, key=lambda item: item[1][1]):
        key = json.dumps(run, sort_keys=True, default=list)
        if key not in seen:
            seen.add(key)
            unique.append((label, size, run))
    return unique


def explored_situations(*specs: Spec) -> list[tuple[str, tuple[int, int], tuple[str, ...], dict[str, Any]]]:
    """(label, (events, inputs changed), rows, facts) of every named situation of the specs and each with one
    input changed, each once: what the review compares both sides on, and what `verify` checks Phase 1 on."""
    seen: set[str] = set()
    explored = []
    for spec in specs:
        continuation = spec.continuation
        assert continuation is not None
        for situation in continuation.situations:
            for label, changed, facts in [(situation.name, 0, situation.facts), *_variations(situation.name, situation.facts, continuation)]:
                key = json.dumps([situation.events_json, facts], sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    explored.append((label, (len(situation.events_json), changed), situation.events_json, facts))
    return explored


def _variations(name: str, facts: dict[str, Any], continuation: ContinuationSpec) -> list[tuple[str, int, dict[str, Any]]]:
    variations = []
    for decl in continuation.inputs:
        value = facts.get(decl.name)
        if decl.optional and decl.name in facts:
            variations.append((f"{name} without {decl.name}", 1, {k: v for k, v in facts.items() if k != decl.name}))
        if isinstance(value, bool):
            variations.append((f"{name} with {decl.name} {str(not value).lower()}", 1, {**facts, decl.name: not value}))
        elif isinstance(value, str):
            variations.append((f"{name} with another {decl.name}", 1, {**facts, decl.name: value + "-other"}))
        elif isinstance(value, list) and value:
            variations.append((f"{name} with {decl.name} empty", 1, {**facts, decl.name: []}))
    return variations


def _effect(base: dict[str, Any] | None, head: dict[str, Any] | None) -> str:
    if base is None or head is None:
        return BREAKING  # one side refuses facts the other decides on: the inputs changed
    if base["disposition"] != head["disposition"]:
        return WEAKENS if head["disposition"] == _proceed(base, head) else TIGHTENS
    old, new = base["rejection_reasons"], head["rejection_reasons"]
    if set(old) - set(new):
        return WEAKENS  # parks with less said about why
    if set(new) - set(old):
        return TIGHTENS
    if old != new:
        return BREAKING  # the same reasons in another order: consumers reading the first one break
    before, after = [d["code"] for d in base["diagnostics"]], [d["code"] for d in head["diagnostics"]]
    if set(before) - set(after):
        return WEAKENS  # a diagnostic no longer said
    if set(after) - set(before):
        return TIGHTENS  # one more said (a new diagnostic of an existing reason)
    return BREAKING if base["diagnostics"] != head["diagnostics"] else NEUTRAL  # reordered, or other details


def _proceed(base: dict[str, Any], head: dict[str, Any]) -> str:
    # The side that continues has a continuation payload.
    return base["disposition"] if "continuation" in base else head["disposition"]


def _text(summary: dict[str, Any] | None) -> str:
    if summary is None:
        return "facts refused"
    reasons = ", ".join(summary["rejection_reasons"])
    return f"{summary['disposition']} [{reasons}]" if reasons else summary["disposition"]
