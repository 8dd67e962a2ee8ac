"""Phase 1's conformance vectors: a ledger, a facts file and the continuation decision the contract pins.

The situations are the ones `verify` proves the continuation invariants over and the review compares both sides
of a change on (`explored_situations`): every named situation of spec/continuation.yaml and each with one input
changed. Their decisions come from the spec alone — the decoding model, the projector table and the
continuation table are built from the spec model in memory, never read from generated/. A situation's own
`expect` is not used: `check` already holds the table to it, and the variations have none.

Besides, one corrupt ledger per corruption kind with the base facts: a continuation never decides over a ledger
Phase 0 refuses (exit 3). And the planner form's situations (`explored_planner_situations`: each named planner
situation, and each without one header field, without the other runs, with one host input changed), each a
workspace directory written out (the source run's `run.json` and ledger, the other runs' headers), a HOST.json
and the fresh ids.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from resume_contract_generator.review.continuation_evidence import explored_planner_situations, explored_situations
from resume_contract_generator.spec.continuation_situations import (
    continuation_table_of,
    decide_planner_situation,
    source_run,
)
from resume_contract_generator.spec.model import Spec
from resume_contract_generator.spec.tables import table_of, wire_model

from ..core.continuation import continuation_summary, decide_continuation
from ..core.continuation_table import ContinuationTable
from ..errors import VectorError
from .protocol import FACTS_DIR, LEDGERS_DIR, WORKSPACES_DIR, continuation_protocol, planner_protocol

KIND = "continuation"
CORRUPTION_KIND = "continuation-corruption"
PLANNER_KIND = "continuation-planner"
HEADER_NAME, LEDGER_NAME = "run.json", "runtime-events.jsonl"  # as ledger.continuation_run and ledger.store name them


@dataclass(frozen=True)
class ContinuationVector:
    id: str
    kind: str
    description: str
    rows: bytes
    facts: dict[str, Any]
    expect: dict[str, Any]


def build_continuation_vectors(spec: Spec, corrupt_ledgers: dict[str, bytes]) -> list[ContinuationVector]:
    """The continuation vectors of `spec` (none for a Phase 0 contract), in a fixed order. `corrupt_ledgers`:
    {corruption kind: a ledger refused as that kind}, as the Phase 0 vectors make them."""
    if spec.continuation is None:
        return []
    projector, table, model = table_of(spec), continuation_table_of(spec), wire_model(spec.wire)
    vectors: list[ContinuationVector] = []
    ids: set[str] = set()
    for label, _, rows, facts in explored_situations(spec):
        events = [model.decode_row(row.encode("utf-8")) for row in rows]
        expect = pinned_continuation(continuation_summary(decide_continuation(events, facts, projector, table)))
        vector_id = _unique(f"{KIND}-{_slug(label)}", ids)
        data = "".join(row + "\n" for row in rows).encode("utf-8")
        vectors.append(ContinuationVector(vector_id, KIND, label, data, facts, expect))
    base = spec.continuation.situations[0].facts if spec.continuation.situations else None
    if base is None:
        raise VectorError("spec/continuation.yaml names no situation: no facts to make the corruption vectors with")
    for kind, ledger in corrupt_ledgers.items():
        description = f"a {kind} ledger: refused before any decision"
        vectors.append(ContinuationVector(_unique(f"{CORRUPTION_KIND}-{kind}", ids), CORRUPTION_KIND, description, ledger, base, {"corruption": kind}))
    return vectors


@dataclass(frozen=True)
class PlannerVector:
    id: str
    description: str
    session: str
    run: str | None  # None: decided as `--latest`
    files: dict[str, bytes]  # the workspace's files, by path below it
    host: dict[str, Any]
    ids: dict[str, str]
    expect: dict[str, Any]
    kind: str = PLANNER_KIND


def build_planner_vectors(spec: Spec) -> list[PlannerVector]:
    """The planner form's vectors of `spec` (none without a planner), in a fixed order."""
    if spec.continuation is None or spec.continuation.gates == ():
        return []
    projector, table, model = table_of(spec), continuation_table_of(spec), wire_model(spec.wire)
    run = source_run(spec.continuation)
    session = str(json.loads(spec.continuation.base_event_json).get("sessionId", ""))
    vectors: list[PlannerVector] = []
    ids: set[str] = set()
    for label, _, situation in explored_planner_situations(spec):
        events = [model.decode_row(row.encode("utf-8")) for row in situation["rows"]]
        plan = decide_planner_situation(situation["latest"], run, situation["header"], events, situation["others"], situation["host"], situation["ids"], projector, table)
        runs = f"sessions/{session}/runs"
        files = {f"{runs}/{run}/{LEDGER_NAME}": "".join(row + "\n" for row in situation["rows"]).encode("utf-8")}
        if situation["header"] is not None:
            files[f"{runs}/{run}/{HEADER_NAME}"] = _json(situation["header"])
        for other, header in situation["others"].items():
            files[f"{runs}/{other}/{HEADER_NAME}"] = _json(header)
        vector_id = _unique(f"{PLANNER_KIND}-{_slug(label.removeprefix('planner: '))}", ids)
        expect = pinned_continuation(continuation_summary(plan))
        vectors.append(PlannerVector(vector_id, label, session, None if situation["latest"] else run, files, situation["host"], situation["ids"], expect))
    return vectors


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def pinned_continuation(summary: dict[str, Any]) -> dict[str, Any]:
    """A decision (`continuation_summary`'s shape) as the vectors pin it, in the reference's field names."""
    return {
        "disposition": summary["disposition"],
        "rejectionReasons": summary["rejection_reasons"],
        "diagnostics": summary["diagnostics"],
        "continuation": summary.get("continuation"),
    }


def render_continuation(
    table: ContinuationTable | None, vectors: list[ContinuationVector], planner: list[PlannerVector]
) -> tuple[dict[str, bytes], dict[str, Any] | None]:
    """({relative path: bytes} of the ledgers, facts files and workspaces, the manifest's `continuation` section
    or None)."""
    if table is None or not vectors:
        return {}, None
    files: dict[str, bytes] = {}
    cases = []
    for vector in vectors:
        ledger, facts = f"{LEDGERS_DIR}/{vector.id}.jsonl", f"{FACTS_DIR}/{vector.id}.json"
        files[ledger] = vector.rows
        files[facts] = (json.dumps(vector.facts, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
        cases.append({"id": vector.id, "kind": vector.kind, "description": vector.description, "ledger": ledger, "facts": facts, "expect": vector.expect})
    planner_cases = []
    for planned in planner:
        workspace = f"{WORKSPACES_DIR}/{planned.id}"
        files.update({f"{workspace}/{path}": data for path, data in planned.files.items()})
        files[f"{workspace}.host.json"] = _json(planned.host)
        planner_cases.append(
            {
                "id": planned.id, "kind": planned.kind, "description": planned.description, "workspace": workspace, "session": planned.session,
                "run": planned.run, "host": f"{workspace}.host.json", "ids": planned.ids, "expect": planned.expect,
            }
        )
    section: dict[str, Any] = {
        "dispositions": {"proceed": table.proceed, "stop": table.stop},
        "protocol": continuation_protocol(table.proceed, table.stop),
        "cases": cases,
    }
    if planner_cases:
        section["plannerProtocol"] = planner_protocol(table.proceed, table.stop)
        section["plannerCases"] = planner_cases
    return files, section


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", label.lower()).strip("-")


def _unique(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}-{number}", number + 1
    taken.add(candidate)
    return candidate
