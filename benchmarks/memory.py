"""Benchmark: peak memory of the store reopening a large ledger and of `repair`, against floors of the same run.

    .venv/bin/python benchmarks/memory.py                          # 570k events (~170 MB), the issue's size
    .venv/bin/python benchmarks/memory.py --events 1000000,3000000 --json
    .venv/bin/python benchmarks/memory.py --events 1000000 --without-numpy   # as an install without the extra

Each measurement runs in a fresh interpreter, so its peak RSS (ru_maxrss) is its own:

- start-up: the interpreter with the store imported, reading nothing (what any command costs);
- plan:     `plan_ledger` of the ledger in one process: the streaming reader, which never holds the rows
            (the README's "Rows are never all held"), the floor the others are held to;
- reopen:   a `RuntimeEventStore` opened on (a copy of) the ledger and one event appended: the writer reads the ledger to
            learn the ids already committed (exact-retry detection);
- repair:   `repair` of that copy with a 64 KiB torn tail added.

Ledgers are plan_speed.py's (~300 bytes an event), cached in --cache. Machines are noisy: compare the ratios
of one run (each figure / the plan's), not megabytes across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plan_speed import _row  # noqa: E402  (the same deterministic rows as the speed benchmark)

SESSION, RUN = "bench-session", "bench-run"

_START_UP = """
import resource
import resume_contract.ledger.store
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

_PLAN = """
import resource, sys
from resume_contract.ledger.file_plan import plan_ledger
plan = plan_ledger(sys.argv[1])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, plan.source_runtime_event_high_water)
"""

_REOPEN = """
import resource, sys
from resume_contract.contract import event_from_wire
from resume_contract.ledger.store import RuntimeEventStore
event = event_from_wire({"id": "bench-appended", "ts": 1, "partial": False, "author": "user", "role": "user", "sessionId": sys.argv[2],
                         "invocationId": "i", "runId": sys.argv[3], "turnId": "t", "content": {"kind": "text", "text": "again"}})
with RuntimeEventStore(sys.argv[1]) as store:
    appended = store.append(event)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, appended)
"""

_REPAIR = """
import resource, sys
from resume_contract.ledger.repair import repair_ledger
result = repair_ledger(sys.argv[1])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, result.torn_bytes)
"""

TORN_TAIL = b'{"id":"torn","blob":"' + b"x" * (64 * 1024)


def write_workspace(root: Path, events: int) -> Path:
    """A workspace holding one run of `events` events (written aside, then renamed: a cached one is whole)."""
    ledger = root / "sessions" / SESSION / "runs" / RUN / "runtime-events.jsonl"
    if ledger.exists():
        return ledger
    ledger.parent.mkdir(parents=True, exist_ok=True)
    partial = ledger.with_name(ledger.name + ".writing")
    with partial.open("w", encoding="utf-8") as handle:
        for start in range(0, events, 100_000):
            handle.write("".join(_row(index, SESSION, RUN) + "\n" for index in range(start, min(events, start + 100_000))))
    partial.rename(ledger)
    return ledger


_NO_NUMPY = 'import sys; sys.modules["numpy"] = None  # import numpy fails, as where it is not installed\n'
WITHOUT_NUMPY = False


def measure(script: str, *args: str) -> list[str]:
    script = _NO_NUMPY + script if WITHOUT_NUMPY else script
    result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"a measurement failed:\n{result.stderr}")
    return result.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", default="570000", help="comma-separated event counts (default: %(default)s, ~170 MB)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each measurement; the largest peak is kept (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "resume-contract-bench-memory", help="where ledgers are cached (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--without-numpy", action="store_true", help="measure as an install without the numpy extra")
    args = parser.parse_args()
    global WITHOUT_NUMPY
    WITHOUT_NUMPY = args.without_numpy
    start_up = max(int(measure(_START_UP)[0]) for _ in range(args.rounds))
    results: dict[str, object] = {"python": sys.version.split()[0], "numpy": not args.without_numpy, "rounds": args.rounds, "start_up_peak_rss_mib": round(start_up / 1024), "ledgers": []}
    for events in map(int, args.events.split(",")):
        workspace = args.cache / f"ws-{events}"
        ledger = write_workspace(workspace, events)
        plan = reopen = repair = 0
        for _ in range(args.rounds):
            plan = max(plan, int(measure(_PLAN, str(ledger))[0]))
            # A fresh copy each round: the reopen appends an event, and repair truncates.
            scratch = args.cache / "scratch"
            copy = scratch / ledger.relative_to(workspace)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ledger, copy)
            reopen = max(reopen, int(measure(_REOPEN, str(scratch), SESSION, RUN)[0]))
            with copy.open("ab") as handle:
                handle.write(TORN_TAIL)
            repair = max(repair, int(measure(_REPAIR, str(copy))[0]))
            shutil.rmtree(scratch)
        entry = {
            "events": events,
            "ledger_mb": round(ledger.stat().st_size / 1e6),
            "plan_peak_rss_mib": round(plan / 1024),
            "reopen_peak_rss_mib": round(reopen / 1024),
            "repair_peak_rss_mib": round(repair / 1024),
            "reopen_to_plan": round(reopen / plan, 2),
            "repair_to_plan": round(repair / plan, 2),
        }
        results["ledgers"].append(entry)  # type: ignore[attr-defined]
        if not args.json:
            print(
                f"{events:>9} events, {entry['ledger_mb']} MB: plan {entry['plan_peak_rss_mib']} MiB; reopen {entry['reopen_peak_rss_mib']} MiB "
                f"({entry['reopen_to_plan']}x); repair {entry['repair_peak_rss_mib']} MiB ({entry['repair_to_plan']}x); start-up {results['start_up_peak_rss_mib']} MiB"
            )
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
