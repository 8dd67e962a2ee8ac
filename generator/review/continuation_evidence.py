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
from resume_contract.core.moves import INPUTS, Outcome, describe, move, refusal, strongest
from resume_contract.errors import FactsRefused

from ..spec.continuation_model import ContinuationSpec
from ..spec.continuation_situations import continuation_table_of, decide_planner_situation, source_run
from ..spec.model import Spec
from ..spec.tables import table_of, wire_model
from .rules import NEUTRAL


@dataclass(frozen=True)
class Moved:
    """One explored situation whose decision differs between the sides."""

    label: str
    size: tuple[int, int]  # (events, inputs changed): the smaller, the better the proof
    effect: str
    base: str
    head: str
    flips: bool  # the disposition itself moved (the clearest proof)
    why: str = ""  # the part of the move that decides its class (core.moves)


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
        old, new = _outcome(before), _outcome(after)
        found = move(old, new)
        if found.change_class != NEUTRAL:
            flips = not old.refused and not new.refused and old.word != new.word
            moved.append(Moved(label, size, found.change_class, describe(old), describe(new), flips, found.why))
    # The clearest proof first: the disposition itself moved, else a name given in place of another (a name only
    # dropped, or a diagnostic alone, says less of what the change does); then the smallest.
    return sorted(moved, key=lambda item: (not item.flips, "given in place of" not in item.why, item.size, item.label))


def evidence_class(moved: list[Moved]) -> str | None:
    """The strongest effect among what moved (None: nothing moved)."""
    return strongest(item.effect for item in moved) if moved else None


def _outcome(summary: dict[str, Any] | None) -> Outcome:
    """A continuation decision as core.moves compares it: its facts refused (None), or its disposition, whether it
    continues (a continuation payload), its reasons and its diagnostics' codes."""
    if summary is None:
        return refusal(INPUTS, "facts refused")
    return Outcome(summary["disposition"], "continuation" in summary, tuple(summary["rejection_reasons"]),
                   tuple(diagnostic["code"] for diagnostic in summary["diagnostics"]))


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
            other_events = {other: [model.decode_row(row.encode("utf-8")) for row in rows] for other, rows in run.get("other_rows", {}).items()}
            plan = decide_planner_situation(run["latest"], run["run"], run["header"], events, run["others"], run["host"], run["ids"], projector, table, other_events)
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
            run = {key: situation.value(key) for key in ("header", "other_runs", "other_events", "host", "ids")}
            base = {
                "header": run["header"], "rows": situation.events_json, "others": run["other_runs"], "host": run["host"], "ids": run["ids"],
                "latest": situation.latest, "run": source_run(continuation), **({"other_rows": run["other_events"]} if run["other_events"] else {}),
            }
            variations: list[tuple[str, int, dict[str, Any]]] = [(name, 0, base)]
            for field in sorted(base["header"] or {}):
                header = {key: value for key, value in base["header"].items() if key != field}
                variations.append((f"{name} without header.{field}", 1, {**base, "header": header}))
            if base["others"]:
                variations.append((f"{name} without the other runs", 1, {key: value for key, value in {**base, "others": {}}.items() if key != "other_rows"}))
            variations += [(f"{label.replace(situation.name, name, 1)}", 1, {**base, "host": host}) for label, _, host in _variations(situation.name, base["host"], continuation)]
            variations += [(f"{name} {said}", 1, {**base, "rows": rows}) for said, rows in appended(situation.events_json)]
            for label, changed, run in variations:
                explored.append((label, (len(run["rows"]), changed), run))
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
            forms = [(situation.name, 0, situation.events_json, situation.facts)]
            forms += [(label, changed, situation.events_json, facts) for label, changed, facts in _variations(situation.name, situation.facts, continuation)]
            forms += [(f"{situation.name} {said}", 1, rows, situation.facts) for said, rows in appended(situation.events_json)]
            for label, changed, rows, facts in forms:
                key = json.dumps([rows, facts], sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    explored.append((label, (len(rows), changed), rows, facts))
    return explored


# Events the explorer adds after a situation's last one: what a check of the ledger's end reads (the terminal event
# being the last, a run still streaming, the replay ending in model output) moves only with them.
_APPENDED: tuple[tuple[str, dict[str, Any]], ...] = (
    ("with model output after its last event", {"role": "model", "author": "agent", "content": {"kind": "text", "text": "more"}}),
    ("with a partial event after its last event", {"role": "model", "author": "agent", "partial": True, "content": {"kind": "text", "text": "mo"}}),
    ("with a user text after its last event", {"role": "user", "author": "user", "content": {"kind": "text", "text": "again"}}),
)


def appended(rows: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """The situation's rows with each of _APPENDED after its last row: that row's identity and time, a fresh id."""
    if not rows:
        return []
    last = json.loads(rows[-1])
    identity = {key: last[key] for key in ("sessionId", "invocationId", "runId", "turnId", "ts") if key in last}
    return [(said, (*rows, json.dumps({**identity, "id": f"explore-after-{index}", "partial": False, **event}, sort_keys=True, separators=(",", ":"))))
            for index, (said, event) in enumerate(_APPENDED, 1)]


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


