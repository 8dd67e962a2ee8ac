"""What to do next, for the errors an operator meets: written once, used by `plan`, the audit and `repair`."""

from __future__ import annotations

from ..errors import TORN_ROW, LedgerCorruption

NOT_REPAIRABLE = (
    "repair cannot fix this (it only moves a torn last row aside); keep the file as evidence, do not replay this run"
)


def corruption_next_step(error: LedgerCorruption) -> str:
    """The next step for a corrupt ledger: the exact `repair` command for a torn tail, else why it will not do."""
    if error.kind == TORN_ROW:
        import shlex  # only on this path: a plan that finds no torn row does not load it

        return (
            f"next step: once no process is writing this run, run `resume-contract repair {shlex.quote(str(error.path))}` "
            "(it moves the torn bytes to a file beside the ledger and keeps every committed row), then plan again"
        )
    if getattr(error, "in_store", False):
        return (
            f"next step: a row of the SQLite store is {error.kind}: no plan can be made from this run, and repair does not "
            "change a store; keep runtime.sqlite (with any -wal and -shm beside it) as evidence, do not replay this run"
        )
    return f"next step: line {error.line} is {error.kind}: {NOT_REPAIRABLE}"


def corrupt_json(corruption: LedgerCorruption, contract: dict[str, str]) -> str:
    """The JSON document `plan --json` prints for a corrupt ledger: no decision, what is corrupt and where, and what to do."""
    import json

    return json.dumps({
        "outcome": "corrupt",
        "proceeds": False,
        "corruption": {"kind": corruption.kind, "file": str(corruption.path), "line": corruption.line, "byteOffset": corruption.offset, "detail": corruption.detail},
        "mustNotReplay": "the whole run: a corrupt ledger is never planned",
        "nextStep": corruption_next_step(corruption).removeprefix("next step: "),
        "contract": contract,
    })  # (ASCII: a file name that is no UTF-8 is written escaped)
