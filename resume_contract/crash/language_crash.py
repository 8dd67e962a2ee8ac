"""The crash harness of a contract in the contract language: a child process appends a scenario's rows to a JSONL
ledger (each row one write, then fsync) and is SIGKILLed by the parent once it says they are committed, or once it
has written half of the next row (a torn tail); the parent then reads the ledger twice, as a new process would
after the crash, and reports what the contract decides.

    python -m resume_contract.crash.language_crash LEDGER COMMIT TEAR  < rows.jsonl     (the child)

The harness only observes: what the decision must be is the caller's (the scenario's `then`, rendered into the
generated tests and into generated/resume_contract_generated/language.py's SCENARIOS).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from typing import Any

import msgspec

from ..core.language import RowInvalid, SequenceCorrupt, decide_rows, outcome
from ..errors import LedgerCorruption
from ..ledger.language_reader import plan_file
from ..ledger.repair import repair_ledger
from .harness import died_by_kill, kill

TIMEOUT_SECONDS = 60


class Observed(msgspec.Struct, frozen=True):
    """What a crash left: how the child died, the decision read twice (equal, or `twice_differ`), and for a torn
    tail, the corruption before `repair` and the decision after it."""

    killed: bool
    outcome: dict[str, Any]
    twice_differ: bool = False
    torn_refused: str | None = None


def run_language_crash(module: Any, rows: list[dict[str, Any]], committed: int, *, torn: bool = False) -> Observed:
    """SIGKILL a child once `committed` rows of `rows` are appended (with `torn`, once half of the next is written
    too), then decide the ledger it left."""
    with tempfile.TemporaryDirectory(prefix="resume-contract-crash-") as scratch:
        ledger = os.path.join(scratch, "ledger.jsonl")
        stdin = b"".join(msgspec.json.encode(row) + b"\n" for row in rows)
        command = [sys.executable, "-m", "resume_contract.crash.language_crash", ledger, str(committed), "1" if torn else "0"]
        with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as child:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(stdin)
            child.stdin.close()
            said = child.stdout.readline().strip()
            kill(child)
            child.wait(TIMEOUT_SECONDS)
            killed = died_by_kill(child.returncode) and said in (b"committed", b"torn")
        torn_refused = None
        if torn:
            try:
                plan_file(ledger, module)
            except LedgerCorruption as corruption:
                torn_refused = corruption.kind
            repair_ledger(ledger)
        first, second = outcome_of(ledger, module), outcome_of(ledger, module)
        return Observed(killed, first, first != second, torn_refused)


def outcome_of(ledger: str, module: Any) -> dict[str, Any]:
    """The decision as a scenario states it: {decision, reasons, items} or {corrupt: kind}."""
    try:
        return outcome(plan_file(ledger, module))
    except LedgerCorruption as corruption:
        return {"corrupt": corruption.kind}


def decided(module: Any, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The decision over rows held in memory (each checked against the model), as `outcome_of` states it."""
    try:
        return outcome(decide_rows(module, rows))
    except RowInvalid:
        return {"corrupt": "invalid_event"}
    except SequenceCorrupt:
        return {"corrupt": "corrupt_sequence"}


def agrees(outcome: dict[str, Any], expected: dict[str, Any]) -> bool:
    """Whether an outcome is what a scenario's `then` says (its items only when it gives them)."""
    if expected.get("corrupt"):
        return "corrupt" in outcome
    shown = {key: outcome.get(key) for key in ("decision", "reasons")} | ({"items": outcome.get("items")} if "items" in expected else {})
    return shown == expected


def _child(ledger: str, committed: int, tear: bool) -> int:
    rows = sys.stdin.buffer.read().splitlines(keepends=True)
    fd = os.open(ledger, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for row in rows[:committed]:
        os.write(fd, row)
        os.fsync(fd)
    if tear and committed < len(rows):
        os.write(fd, rows[committed][: max(1, len(rows[committed]) // 2)])
        os.fsync(fd)
        print("torn", flush=True)
    else:
        print("committed", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    raise SystemExit(_child(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"))
