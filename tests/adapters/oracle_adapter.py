"""The independent oracle (resume_contract/oracle.py) as a conformance adapter: `conform -- python this.py`.

Reads the ledger with the standard library alone: torn rows, blank rows, bad UTF-8, bad JSON, repeated keys,
rows outside the generated row schema (generated/runtime-event.schema.json) exit 3; so do repeated ids and rows of
another run, unless the contract diagnoses them (its ledger scan: such a row blocks the plan, is never replayed and
takes no part in tool state). Anything else is decided by the packaged oracle, in the edition of maka's contract the
spec names (spec/invariants.yaml `packaged_oracle`), and printed as a plan (without the fields the oracle does not
compute: diagnostics, rejection reasons, the terminal event).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jsonschema import Draft202012Validator
from resume_contract_generated import catalog
from resume_contract_generated.projector_table import TABLE

from resume_contract.core.invariants import packaged_oracle

decide = packaged_oracle(getattr(catalog, "PACKAGED_ORACLE", "tool-boundary"))

ROW_SCHEMA = Path(__file__).resolve().parents[2] / "generated" / "runtime-event.schema.json"
CORRUPT = 3
TOOL_KINDS = ("function_call", "function_response")


class Corrupt(Exception):
    pass


def _pairs(pairs: list) -> dict:
    if len({key for key, _ in pairs}) != len(pairs):
        raise Corrupt("repeated key")
    return dict(pairs)


def _refuse(name: str) -> None:
    raise Corrupt(f"{name} is not JSON")


def read(path: Path) -> tuple[list[dict], list[str]]:
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        raise Corrupt("torn")
    validator = Draft202012Validator(json.loads(ROW_SCHEMA.read_text(encoding="utf-8")))
    rows, texts = [], []
    for line in data.split(b"\n")[:-1]:
        try:
            text = line.decode("utf-8")
            row = json.loads(text, object_pairs_hook=_pairs, parse_constant=_refuse)
        except (UnicodeDecodeError, ValueError) as error:
            raise Corrupt(str(error)) from None
        if not validator.is_valid(row):
            raise Corrupt("schema")
        rows.append(row)
        texts.append(text)
    return rows, texts


def scanned(rows: list[dict]) -> set[int]:
    """The indexes of the rows repeating an earlier row's id or of another run than the first row's: corruption,
    unless the contract's ledger scan diagnoses them."""
    seen: set[str] = set()
    flagged = set()
    for index, row in enumerate(rows):
        if row["id"] in seen:
            if TABLE.duplicate_id_diagnostic is None:
                raise Corrupt("duplicate id")
            flagged.add(index)
        seen.add(row["id"])
        if (row["sessionId"], row["runId"]) != (rows[0]["sessionId"], rows[0]["runId"]):
            if TABLE.foreign_row_diagnostic is None:
                raise Corrupt("foreign row")
            flagged.add(index)
    return flagged


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("ledger")
    parser.add_argument("--expected-high-water", type=int)
    args = parser.parse_args()
    try:
        rows, _ = read(Path(args.ledger))
        flagged = scanned(rows)
    except Corrupt:
        return CORRUPT
    kept = [row for index, row in enumerate(rows) if index not in flagged]
    expected = args.expected_high_water
    # The high-water counts every row; the oracle sees the kept ones (-1: a mismatch it must see as one).
    decision = decide(kept, None if expected is None else len(kept) if expected == len(rows) else -1)
    # A flagged row is replayed as it stands, unless it is a call or a result (it pairs with nothing).
    replay = set(decision.replay_ids) | {rows[index]["id"] for index in flagged if (rows[index].get("content") or {}).get("kind") not in TOOL_KINDS}
    plan = {
        "disposition": "blocked" if flagged else decision.disposition,
        "operations": [{"toolCallId": call_id, "status": status} for call_id, status in decision.statuses],
        "requiresVerification": decision.requires_verification,
        "sourceRuntimeEventHighWater": len(rows),
        "runtimeEvents": rows,
        "replayRuntimeEvents": [row for row in rows if row["id"] in replay],
    }
    json.dump(plan, sys.stdout)
    return 0 if plan["disposition"] == "safe_replay" else 1


if __name__ == "__main__":
    raise SystemExit(main())
