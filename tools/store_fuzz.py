"""Page-flip fuzz of the SQLite store: a damaged store must never read safer than the undamaged one (issue 53).

    .venv/bin/python tools/store_fuzz.py                          # every public fixture, one flip in each page
    .venv/bin/python tools/store_fuzz.py --flips 3 --only S_many  # three flips a page, the cases named S_many*
    .venv/bin/python tools/store_fuzz.py --json

For each fixture database (tests/conformance_sqlite/reference, the reference's own writers' databases), each page in
turn gets one bit flipped (the byte and bit chosen by a seeded generator, so a run is repeatable), and the whole
workspace is read again as `plan` and the audit read it: the store's listing of runs, and every run planned (the
case's own run with its expected high-water). Each run's outcome is compared with the undamaged file's:

- the same outcome; or stricter: a refusal (unreadable or corrupt, exit 2 or 3) where a plan was made, a plan that
  blocks where it replayed, more reasons, diagnostics or operations to verify — all counted as safe;
- more permissive — the failure this fuzz exists to find: a move the review classes weakens-safety
  (resume_contract/core/moves.py): a plan where the file was refused, `safe_replay` where it blocked, fewer operations
  to verify (compared by number: a flip can rename a call), a row replayed that was withheld; or a run of the
  undamaged listing missing from the damaged one while the damaged audit refuses none of its runs (the audit would
  exit as if the run were not there; a listing whose index entry changed lists a run the reader then refuses).

An exception that is not one of resume-contract's own errors (what would be a traceback) is counted apart.
Exit 1 when any flip reads more permissively (or crashed), with each such flip listed.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resume_contract.core.moves import CORRUPT, UNDECIDED, WEAKENS, Outcome, describe, move, refusal

REPO = Path(__file__).resolve().parent.parent

FIXTURES = REPO / "tests" / "conformance_sqlite" / "reference"

# A damaged file can rename a call (a flipped letter in its id): operations to verify are compared by their number.
OPERATION = "an operation"


def read_workspace(workspace: Path, case_run: tuple[str, str], expected_high_water: int | None) -> tuple[tuple[tuple[str, str], ...] | None, dict[tuple[str, str], Outcome]]:
    """(the store's listing of runs, or None when the store is refused; each run's outcome)."""
    from resume_contract.contract import active, build_resume_plan
    from resume_contract.errors import LedgerCorruption, ResumeContractError
    from resume_contract.ledger.sqlite_store import SqliteStore

    verify_statuses = active().table.verification_statuses
    outcomes: dict[tuple[str, str], Outcome] = {}
    try:
        with SqliteStore(workspace) as store:
            listed = store.listing()
    except ResumeContractError as error:
        return None, {case_run: refusal(UNDECIDED, type(error).__name__)}
    listing = tuple((session, run) for session, run, _ in listed)
    for session, run, problem in listed:
        if problem is not None:  # (the audit reports such a run as corrupt, unread)
            outcomes[(session, run)] = refusal(CORRUPT, "invalid_identity")
    for run in dict.fromkeys((case_run, *listing)):
        if run in outcomes:
            continue
        high_water = expected_high_water if run == case_run else None
        try:
            with SqliteStore(workspace) as store:
                ledger = store.read_run(*run)
            if not ledger.events:
                outcomes[run] = refusal(UNDECIDED, "no rows")
                continue
            plan = build_resume_plan(ledger.events, high_water, rows=ledger.rows)
        except LedgerCorruption as error:
            outcomes[run] = refusal(CORRUPT, error.kind)
            continue
        except ResumeContractError as error:
            outcomes[run] = refusal(UNDECIDED, type(error).__name__)
            continue
        decided = Outcome.of_plan(plan, verify_statuses)
        outcomes[run] = decided._replace(to_verify=(OPERATION,) * len(decided.to_verify))
    return listing, outcomes


def more_permissive(before: Outcome, after: Outcome) -> str | None:
    """How `after` lets a run proceed more readily than `before` (the review's weakens-safety, core/moves.py), or
    None. A refusal of the damaged file is never more permissive, whatever its kind."""
    if after.refused:
        return None
    found = move(before, after)
    return found.why if found.change_class == WEAKENS else None


@dataclass
class Tally:
    flips: int = 0
    same: int = 0
    stricter: int = 0
    refused: int = 0
    permissive: int = 0
    crashed: int = 0


def flips_of(size: int, page_size: int, per_page: int, seed: str) -> Iterator[tuple[int, int, int]]:
    """(page number from 1, byte offset in the file, bit) for `per_page` flips in each page, seeded."""
    chooser = random.Random(seed)
    for page in range(size // page_size):
        for _ in range(per_page):
            offset = page * page_size + chooser.randrange(page_size)
            yield page + 1, offset, chooser.randrange(8)


def fuzz_case(case: Path, per_page: int, found: list[dict[str, Any]], tally: Tally) -> None:
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    original = (case / "WS" / "runtime.sqlite").read_bytes()
    page_size = int.from_bytes(original[16:18], "big") or 65536
    case_run = (expected["session"], expected["run"])
    with tempfile.TemporaryDirectory() as temporary:
        workspace = Path(temporary) / "WS"
        workspace.mkdir()
        store = workspace / "runtime.sqlite"
        store.write_bytes(original)
        base_listing, base = read_workspace(workspace, case_run, expected["expectedHighWater"])
        for page, offset, bit in flips_of(len(original), page_size, per_page, case.name):
            damaged = bytearray(original)
            damaged[offset] ^= 1 << bit
            for side in workspace.iterdir():
                side.unlink()
            store.write_bytes(bytes(damaged))
            tally.flips += 1
            where = {"case": case.name, "page": page, "offset": offset, "bit": bit}
            try:
                listing, after = read_workspace(workspace, case_run, expected["expectedHighWater"])
            except Exception as error:  # noqa: BLE001 - what would be a traceback, counted and named
                tally.crashed += 1
                found.append(where | {"crash": f"{type(error).__name__}: {error}"})
                continue
            if listing is not None and base_listing is not None:
                hidden = [run for run in base_listing if run not in listing]
                if hidden and not any(outcome.refused for outcome in after.values()):
                    tally.permissive += 1
                    found.append(where | {"run": list(hidden[0]), "how": "a run of the store is missing from its listing"})
                    continue
            moved = [(run, more_permissive(base[run], after[run])) for run in base if run in after]
            loosened = [(run, how) for run, how in moved if how is not None]
            if loosened:
                tally.permissive += 1
                run, how = loosened[0]
                found.append(where | {"run": list(run), "how": how, "before": describe(base[run]), "after": describe(after[run])})
            elif all(after.get(run) == base[run] for run in base):
                tally.same += 1
            elif any(outcome.refused for outcome in after.values()) or listing is None:
                tally.refused += 1
            else:
                tally.stricter += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flips", type=int, default=1, help="flips in each page (default 1)")
    parser.add_argument("--only", default="", help="the cases whose name starts with this")
    parser.add_argument("--json", action="store_true", help="print the tally and the permissive flips as JSON")
    args = parser.parse_args(argv)
    cases = sorted(path for path in FIXTURES.iterdir() if (path / "expected.json").is_file() and path.name.startswith(args.only))
    tally, found = Tally(), []
    for case in cases:
        fuzz_case(case, args.flips, found, tally)
    if args.json:
        print(json.dumps({"cases": len(cases), "tally": tally.__dict__, "permissive": found}, indent=1))
    else:
        print(f"{len(cases)} databases, {tally.flips} flips: {tally.same} read the same, {tally.refused} refused, "
              f"{tally.stricter} stricter, {tally.permissive} more permissive, {tally.crashed} crashed")
        for item in found[:40]:
            print(f"  {json.dumps(item)}")
    return 1 if tally.permissive or tally.crashed else 0


if __name__ == "__main__":
    raise SystemExit(main())
