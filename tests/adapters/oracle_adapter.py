"""The independent oracle (resume_contract/oracle.py) as a conformance adapter: `conform -- python this.py`.

Reads the ledger with the standard library alone: torn rows, blank rows, bad UTF-8, bad JSON, repeated keys,
rows outside the generated row schema (generated/runtime-event.schema.json), repeated ids and rows of another
run exit 3; anything else is decided by the oracle and printed as a plan (without the fields the oracle does
not compute: diagnostics, rejection reasons, the terminal event).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jsonschema import Draft202012Validator

from resume_contract.core.oracle import decide

ROW_SCHEMA = Path(__file__).resolve().parents[2] / "generated" / "runtime-event.schema.json"
CORRUPT = 3


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
    if len({row["id"] for row in rows}) != len(rows):
        raise Corrupt("duplicate id")
    if rows and any((row["sessionId"], row["runId"]) != (rows[0]["sessionId"], rows[0]["runId"]) for row in rows):
        raise Corrupt("foreign row")
    return rows, texts


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("ledger")
    parser.add_argument("--expected-high-water", type=int)
    args = parser.parse_args()
    try:
        rows, _ = read(Path(args.ledger))
    except Corrupt:
        return CORRUPT
    decision = decide(rows, args.expected_high_water)
    replay = set(decision.replay_ids)
    plan = {
        "disposition": decision.disposition,
        "operations": [{"toolCallId": call_id, "status": status} for call_id, status in decision.statuses],
        "requiresVerification": decision.requires_verification,
        "sourceRuntimeEventHighWater": len(rows),
        "runtimeEvents": rows,
        "replayRuntimeEvents": [row for row in rows if row["id"] in replay],
    }
    json.dump(plan, sys.stdout)
    return 0 if decision.disposition == "safe_replay" else 1


if __name__ == "__main__":
    raise SystemExit(main())
