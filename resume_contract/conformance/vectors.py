"""Language-neutral conformance vectors, generated from the spec: a ledger and the outcome the contract pins.

Any implementation of the contract (this project's, or a runtime in another language) is held to them by
`resume-contract conform`. A vector is a JSONL ledger written verbatim, an optional expected high-water, and
either the decision the contract pins or the corruption kind the ledger must be refused with. The cases:

- canonical: every prefix of the canonical ledger, per tool outcome (the required-decisions table);
- high-water: each canonical prefix reopened where one more event was expected (runtime_offset_mismatch);
- table: for every reachable transition-table entry, the shortest ledger that takes it;
- anomaly: for every anomaly, the shortest ledger that raises it;
- corruption: one ledger per corruption kind;
- explored: every ledger up to `depth` events over `resume_contract.explore`'s alphabet, one per outcome.

Outcomes come from the spec alone: the decoding model and the projector table are built from the spec model
in memory (as the generator checks them), never from what generated/ holds.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resume_contract_generator.render.outputs import STAGING_SUFFIX, swap_in
from resume_contract_generator.spec.model import Spec
from resume_contract_generator.spec.tables import decoder_of, table_of

from ..core.explore import spell, wires, words
from ..core.plan import ResumePlan
from ..core.project import project
from ..core.table import ProjectorTable
from ..core.wire import WireModel, encode_json
from ..errors import LedgerCorruption, VectorError
from ..ledger.reader import decode_rows
from .protocol import FORMAT, LEDGERS_DIR, MANIFEST, PROTOCOL, SCHEMA, manifest_schema, pinned

DEFAULT_DEPTH = 3


@dataclass(frozen=True)
class Vector:
    id: str
    kind: str
    description: str
    rows: bytes
    expected_high_water: int | None
    expect: dict[str, Any]


class _Planner:
    def __init__(self, spec: Spec) -> None:
        self.model: WireModel = decoder_of(spec)
        self.table: ProjectorTable = table_of(spec)

    def plan(self, rows: bytes, expected_high_water: int | None = None, trace: list | None = None) -> ResumePlan:
        events, raws = decode_rows(Path("vector.jsonl"), rows, model=self.model)
        return project(events, self.table, expected_high_water, trace, raws)


def _jsonl(values: list[dict[str, Any]]) -> bytes:
    return b"".join(encode_json(value) + b"\n" for value in values)


def build_vectors(spec: Spec, depth: int = DEFAULT_DEPTH) -> list[Vector]:
    """Every vector for `spec`, in a fixed order."""
    planner = _Planner(spec)
    vectors: list[Vector] = []
    for prefix in spec.ledger.prefixes:
        for outcome in spec.ledger.outcome_names:
            rows = "".join(event.wire(outcome) + "\n" for event in spec.ledger.events[: prefix.length]).encode()
            plan = planner.plan(rows)
            vectors.append(Vector(f"canonical-{prefix.name}-{outcome}", "canonical", f"canonical ledger, prefix {prefix.name}, outcome {outcome}", rows, None, pinned(plan)))
            mismatch = prefix.length + 1
            vectors.append(
                Vector(
                    f"high-water-{prefix.name}-{outcome}",
                    "high-water",
                    f"canonical prefix {prefix.name} ({outcome}) reopened where {mismatch} events were expected",
                    rows,
                    mismatch,
                    pinned(planner.plan(rows, mismatch)),
                )
            )
    vectors += _explored(planner, depth)
    vectors += _corruption(spec, planner)
    return vectors


def _explored(planner: _Planner, depth: int) -> list[Vector]:
    table_entries: dict[tuple[str, str, bool], Vector] = {}
    anomalies: dict[str, Vector] = {}
    outcomes: dict[str, Vector] = {}
    for word in words(depth):
        rows = _jsonl(wires(word))
        trace: list[tuple[str, str, bool]] = []
        expect = pinned(planner.plan(rows, trace=trace))
        name = spell(word)
        for step in trace:
            if step not in table_entries:
                state, event, names_match = step
                table_entries[step] = Vector(
                    f"table-{state}-{event}-{'name_matches' if names_match else 'name_differs'}",
                    "table",
                    f"the shortest ledger that takes the table entry ({state}, {event}, {'names match' if names_match else 'names differ'}): {name}",
                    rows,
                    None,
                    expect,
                )
        for code in expect["diagnostics"]:
            if code not in anomalies:
                anomalies[code] = Vector(f"anomaly-{code}", "anomaly", f"the shortest ledger that raises {code}: {name}", rows, None, expect)
        signature = json.dumps({**expect, "replayEventIds": len(expect["replayEventIds"])}, sort_keys=True)
        if signature not in outcomes:
            outcomes[signature] = Vector(f"explored-{len(outcomes):04d}", "explored", name, rows, None, expect)
    return [*table_entries.values(), *anomalies.values(), *outcomes.values()]


def _base_row(event_id: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": event_id, "sessionId": "vector-session", "invocationId": "vector-invocation", "runId": "vector-run",
        "turnId": "vector-turn", "ts": 1, "partial": False, "author": "user", "role": "user",
        "content": {"kind": "text", "text": "hello"},
    }
    row.update(fields)
    return row


# One ledger per corruption kind the store knows how to find; the spec may name no other.
_GOOD = encode_json(_base_row("e1")) + b"\n"
_RECIPES: dict[str, tuple[str, bytes]] = {
    "torn_row": ("the last row has no newline: a write cut off", _GOOD + encode_json(_base_row("e2"))[:-7]),
    "invalid_utf8": ("a row holds a byte that is not UTF-8", _GOOD + encode_json(_base_row("e2")).replace(b"hello", b"hel\xfflo") + b"\n"),
    "invalid_json": ("a row that is not JSON", _GOOD + b'{"id": "e2", oops}\n'),
    "invalid_event": ("a row outside the wire format (an unknown role)", _GOOD + encode_json(_base_row("e2", role="robot")) + b"\n"),
    "duplicate_event_id": ("two rows with one event id", _GOOD + encode_json(_base_row("e1", ts=2)) + b"\n"),
    "duplicate_key": ("a row repeating a key", _GOOD + encode_json(_base_row("e2"))[:-1] + b',"partial":false}\n'),
    "foreign_row": ("a row of another run", _GOOD + encode_json(_base_row("e2", runId="other-run")) + b"\n"),
}


def _corruption(spec: Spec, planner: _Planner) -> list[Vector]:
    vectors = []
    for kind, meaning in spec.ledger_rules.corruption_kinds:
        if kind not in _RECIPES:
            raise VectorError(f"no vector can be made for corruption kind '{kind}' ({meaning}): the reader does not know it")
        description, rows = _RECIPES[kind]
        try:
            planner.plan(rows)
        except LedgerCorruption as corruption:
            if corruption.kind != kind:
                raise VectorError(f"the {kind} vector is refused as {corruption.kind}") from None
        else:
            raise VectorError(f"the {kind} vector is not refused")
        vectors.append(Vector(f"corruption-{kind}", "corruption", description, rows, None, {"corruption": kind}))
    return vectors


def render_vectors(spec: Spec, vectors: list[Vector], depth: int) -> dict[str, bytes]:
    """{relative path: bytes}: the manifest, its schema and one ledger per vector. Byte-identical across runs."""
    files: dict[str, bytes] = {}
    cases = []
    for vector in vectors:
        ledger = f"{LEDGERS_DIR}/{vector.id}.jsonl"
        files[ledger] = vector.rows
        cases.append(
            {
                "id": vector.id,
                "kind": vector.kind,
                "description": vector.description,
                "ledger": ledger,
                "expectedHighWater": vector.expected_high_water,
                "expect": vector.expect,
            }
        )
    manifest = {
        "format": FORMAT,
        "specSha256": spec.sha256,
        "depth": depth,
        "about": "Generated from spec/ by `resume-contract vectors`; check an implementation with `resume-contract conform`.",
        "protocol": PROTOCOL,
        "referenceDifferences": {
            "anomalies": list(spec.ledger_rules.reference_anomalies),
            "corruptionKinds": list(spec.ledger_rules.reference_corruption_kinds),
        },
        "cases": cases,
    }
    files[MANIFEST] = (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    files[SCHEMA] = (json.dumps(manifest_schema(), indent=1) + "\n").encode("utf-8")
    return dict(sorted(files.items()))


def validate_manifest(files: dict[str, bytes]) -> None:
    """The manifest must satisfy its own schema: checked before anything is written."""
    from jsonschema import Draft202012Validator

    Draft202012Validator(json.loads(files[SCHEMA])).validate(json.loads(files[MANIFEST]))


def write_vectors(files: dict[str, bytes], out: Path) -> None:
    """Write the vectors to `out`, all or nothing: staged beside it, then swapped in.

    `out` may be missing or hold earlier vectors (a manifest of this format); anything else is refused."""
    out = Path(out)
    if out.is_symlink() or (out.exists() and not _holds_vectors(out)):
        raise VectorError(f"{out}: exists and does not hold resume-contract vectors; give a new or an earlier vectors directory")
    shutil.rmtree(out.with_name(out.name + STAGING_SUFFIX), ignore_errors=True)  # an earlier run's, cut off
    swap_in(out, files)


def _holds_vectors(directory: Path) -> bool:
    if not directory.is_dir():
        return False
    if not any(directory.iterdir()):
        return True
    try:
        return json.loads((directory / MANIFEST).read_text(encoding="utf-8")).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False
