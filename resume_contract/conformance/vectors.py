"""Language-neutral conformance vectors, generated from the spec: a ledger and the outcome the contract pins.

Any implementation of the contract (this project's, or a runtime in another language) is held to them by
`resume-contract conform`. A vector is a JSONL ledger written verbatim, an optional expected high-water, and
either the decision the contract pins or the corruption kind the ledger must be refused with. The cases:

- canonical: every prefix of the canonical ledger, per tool outcome (the required-decisions table);
- high-water: each canonical prefix reopened where one more event was expected (runtime_offset_mismatch);
- table: for every reachable transition-table entry, the shortest ledger that takes it;
- anomaly: for every anomaly, the shortest ledger that raises it;
- corruption: one ledger per corruption kind;
- explored: every ledger up to `depth` events over the spec's alphabet (`resume_contract.core.explore`, as
  `verify` explores it: letters neither the projector nor the oracle tells apart explored once), one per outcome;
- letter: every other letter of the alphabet (each content kind, status, flag and partial form that shares a
  class), alone and followed by each explored letter, one per letter and outcome: another implementation may tell
  apart what this one does not;
- continuation (a contract with spec/continuation.yaml): Phase 1's situations with their facts files, and the
  corrupt ledgers again under the base facts (`continuation_vectors`), in the manifest's `continuation` section.

Outcomes come from the spec alone: the decoding model and the projector table are built from the spec model
in memory (as the generator checks them), never from what generated/ holds.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resume_contract_generator.render.outputs import swap_in
from resume_contract_generator.spec.continuation_situations import continuation_table_of
from resume_contract_generator.spec.model import Spec
from resume_contract_generator.spec.tables import decoder_of, table_of

from ..core.explore import ID_FIELD, Alphabet, Letter
from ..core.invariants import checked_alphabet
from ..core.plan import ResumePlan
from ..core.project import project
from ..core.spec_layout import STAGING_SUFFIX
from ..core.table import ProjectorTable
from ..core.wire import WireModel, encode_json
from ..errors import LedgerCorruption, VectorError
from ..ledger.reader import decode_rows
from .continuation_vectors import (
    ContinuationVector,
    PlannerVector,
    build_continuation_vectors,
    build_planner_vectors,
    render_continuation,
)
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
        self.alphabet: Alphabet = checked_alphabet(self.table, self.model)

    def plan(self, rows: bytes, expected_high_water: int | None = None, trace: list | None = None) -> ResumePlan:
        events, raws = decode_rows(Path("vector.jsonl"), rows, model=self.model, tolerate=self.table.tolerated)
        return project(events, self.table, expected_high_water, trace, raws)


def _jsonl(values: list[dict[str, Any]]) -> bytes:
    return b"".join(encode_json(value) + b"\n" for value in values)


def build_vectors(spec: Spec, depth: int = DEFAULT_DEPTH) -> list[Vector | ContinuationVector | PlannerVector]:
    """Every vector for `spec`, in a fixed order: Phase 0's, then the continuation decision's."""
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
    corruption = _corruption(spec, planner)
    vectors += corruption + _diagnosed(planner)
    continuation = build_continuation_vectors(spec, {vector.expect["corruption"]: vector.rows for vector in corruption})
    return [*vectors, *continuation, *build_planner_vectors(spec)]


def _explored(planner: _Planner, depth: int) -> list[Vector]:
    alphabet = planner.alphabet
    table_entries: dict[tuple[str, str, bool], Vector] = {}
    anomalies: dict[str, Vector] = {}
    outcomes: dict[str, Vector] = {}
    for word in alphabet.words(depth):
        rows = _jsonl(alphabet.wires(word))
        trace: list[tuple[str, str, bool]] = []
        expect = pinned(planner.plan(rows, trace=trace))
        name = alphabet.spell(word)
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
        signature = _signature(expect)
        if signature not in outcomes:
            outcomes[signature] = Vector(f"explored-{len(outcomes):04d}", "explored", name, rows, None, expect)
    return [*table_entries.values(), *anomalies.values(), *outcomes.values(), *_letters(planner, depth)]


def _signature(expect: dict[str, Any]) -> str:
    return json.dumps({**expect, "replayEventIds": len(expect["replayEventIds"])}, sort_keys=True)


def _letters(planner: _Planner, depth: int) -> list[Vector]:
    """Each letter explored only through its class's first: alone, and (from depth 2) followed by each explored
    letter."""
    alphabet = planner.alphabet
    vectors: list[Vector] = []
    for group in alphabet.classes:
        first = alphabet.letters[group[0]]
        for index in group[1:]:
            letter = alphabet.letters[index]
            seen: set[str] = set()
            ledgers: list[list[Letter]] = [[letter]]
            ledgers += [[letter, other] for other in alphabet.representatives] if depth >= 2 else []
            for ledger in ledgers:
                rows = _jsonl([item.wire(f"e{position}") for position, item in enumerate(ledger, 1)])
                expect = pinned(planner.plan(rows))
                signature = _signature(expect)
                if signature not in seen:
                    seen.add(signature)
                    name = ", ".join(item.name for item in ledger)
                    description = f"{name} ({letter.name} is explored as {first.name})"
                    vectors.append(Vector(f"letter-{len(vectors):04d}", "letter", description, rows, None, expect))
    return vectors


def _recipes(planner: _Planner) -> dict[str, tuple[str, bytes]]:
    """One ledger per corruption kind the store knows how to find, made of the spec's own rows (an event with no
    content); the spec may name no other kind."""
    plain = next(letter for letter in planner.alphabet.letters if letter.name == "no content")

    def row(event_id: str, **fields: Any) -> bytes:
        return encode_json({**plain.wire(event_id), **fields})

    good = row("e1") + b"\n"
    second = row("e2")
    without_id = encode_json({key: value for key, value in plain.wire("e2").items() if key != ID_FIELD})
    return {
        "torn_row": ("the last row has no newline: a write cut off", good + second[:-3]),
        "invalid_utf8": ("a row holds a byte that is not UTF-8", good + second.replace(b'"e2"', b'"e\xff2"') + b"\n"),
        "invalid_json": ("a row that is not JSON", good + b'{"id": "e2", oops}\n'),
        "invalid_event": (f"a row outside the wire format (without its required {ID_FIELD!r})", good + without_id + b"\n"),
        "duplicate_event_id": ("two rows with one event id", good + row("e1") + b"\n"),
        "duplicate_key": ("a row repeating a key", good + second[:-1] + b',"id":"e2"}\n'),
        # runId: the field the store reads a row's run from (spec/runtime_event.yaml must declare it).
        "foreign_row": ("a row of another run", good + row("e2", runId="other-run") + b"\n"),
    }


def _diagnosed(planner: _Planner) -> list[Vector]:
    """The corruption recipes of the kinds the contract diagnoses instead (`ledger_anomalies.duplicate_id`,
    `foreign_row`): each an anomaly vector, the plan its diagnostic blocks."""
    recipes = _recipes(planner)
    vectors = []
    for kind in sorted(planner.table.tolerated):
        description, rows = recipes[kind]
        vectors.append(Vector(f"anomaly-ledger-{kind}", "anomaly", f"{description}: the contract's diagnostic", rows, None, pinned(planner.plan(rows))))
    return vectors


def _corruption(spec: Spec, planner: _Planner) -> list[Vector]:
    vectors = []
    recipes = _recipes(planner)
    for kind, meaning in spec.ledger_rules.corruption_kinds:
        if kind in planner.table.tolerated:
            continue  # the contract's diagnostic, not a refusal (`_diagnosed`)
        if kind not in recipes:
            raise VectorError(f"no vector can be made for corruption kind '{kind}' ({meaning}): the reader does not know it")
        description, rows = recipes[kind]
        try:
            planner.plan(rows)
        except LedgerCorruption as corruption:
            if corruption.kind != kind:
                raise VectorError(f"the {kind} vector is refused as {corruption.kind}") from None
        else:
            raise VectorError(f"the {kind} vector is not refused")
        vectors.append(Vector(f"corruption-{kind}", "corruption", description, rows, None, {"corruption": kind}))
    return vectors


def render_vectors(spec: Spec, vectors: list[Vector | ContinuationVector | PlannerVector], depth: int) -> dict[str, bytes]:
    """{relative path: bytes}: the manifest, its schema, one ledger per vector and one facts file per continuation
    vector. Byte-identical across runs."""
    files: dict[str, bytes] = {}
    cases = []
    table = continuation_table_of(spec) if spec.continuation is not None else None
    continuation_files, continuation = render_continuation(
        table, [v for v in vectors if isinstance(v, ContinuationVector)], [v for v in vectors if isinstance(v, PlannerVector)]
    )
    files.update(continuation_files)
    for vector in vectors:
        if not isinstance(vector, Vector):
            continue
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
        **({"continuation": continuation} if continuation is not None else {}),
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
