"""Benchmark: read + plan a large ledger, against the floor of merely parsing it with the stdlib.

    .venv/bin/python benchmarks/plan_speed.py                 # 1,000,000 events, 3 rounds
    .venv/bin/python benchmarks/plan_speed.py --events 200000 --rounds 5

It writes its own ledger (deterministic, ~265 bytes an event, ~37.5% tool calls and as many responses),
then times, each in a fresh interpreter so peak memory is its own, alternating the order every round:

- floor:  `json.loads` of every line, keeping every event (what any reader must at least do), once as
          written and once with the cyclic GC paused (the stricter floor);
- plan:   `read_ledger` (strict decode, every corruption check, rows kept verbatim) + `build_resume_plan`.

It reports the best and median wall time of each, their ratio (plan / floor: the target is <= 1.0), and
peak RSS. Machines are noisy: compare ratios from one run, not seconds across runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_FLOOR = """
import gc, json, resource, sys, time
if sys.argv[2] == "gc-paused":
    gc.disable()
start = time.perf_counter()
with open(sys.argv[1], "rb") as handle:
    events = [json.loads(line) for line in handle]
elapsed = time.perf_counter() - start
print(elapsed, len(events), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

_PLAN = """
import resource, sys, time
from resume_contract.plan import build_resume_plan
from resume_contract.store import read_ledger
start = time.perf_counter()
ledger = read_ledger(sys.argv[1])
read_done = time.perf_counter()
plan = build_resume_plan(ledger.events, rows=ledger.rows)
elapsed = time.perf_counter() - start
print(elapsed, ledger.high_water, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, read_done - start, plan.disposition, len(plan.operations))
"""


def write_ledger(path: Path, count: int) -> None:
    """A run of `count` events: each turn is user text, three call/response pairs and a model text."""
    base = {"partial": False, "sessionId": "bench-session", "invocationId": "bench-invocation", "runId": "bench-run"}
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            turn, step = divmod(index, 8)
            call_id = f"call-{turn}-{(step - 1) // 2}"
            event = {"id": f"evt-{index:08d}", "ts": 1767225600000 + index, **base, "turnId": f"turn-{turn}"}
            if step == 0:
                event.update(author="user", role="user", content={"kind": "text", "text": f"Please update file number {turn} with the new release notes."})
            elif step == 7:
                event.update(author="agent", role="model", content={"kind": "text", "text": f"Turn {turn} is done; the files are updated."})
            elif step % 2 == 1:
                event.update(author="agent", role="model", content={"kind": "function_call", "id": call_id, "name": "write_file", "args": {"path": f"notes/{turn}.md", "mode": "overwrite"}})
            else:
                event.update(author="tool", role="tool", content={"kind": "function_response", "id": call_id, "name": "write_file", "result": {"bytesWritten": 1024 + step}})
            handle.write(json.dumps(event, separators=(",", ":")) + "\n")


def run(script: str, ledger: Path, *extra: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", script, str(ledger), *extra], capture_output=True, text=True, check=True)
    return result.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ledger", type=Path, help="reuse (or create) this ledger file instead of a temporary one")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        ledger = args.ledger or Path(scratch) / "runtime-events.jsonl"
        if not ledger.exists():
            write_ledger(ledger, args.events)
        size = ledger.stat().st_size
        floor_times, paused_times, plan_times, read_times = [], [], [], []
        floor_rss = paused_rss = plan_rss = 0
        detail = ""
        for round_number in range(args.rounds):
            order = ("floor", "paused", "plan") if round_number % 2 == 0 else ("plan", "paused", "floor")
            for which in order:
                if which == "floor":
                    elapsed, count, rss = run(_FLOOR, ledger, "gc-on")
                    floor_times.append(float(elapsed))
                    floor_rss = max(floor_rss, int(rss))
                elif which == "paused":
                    elapsed, count, rss = run(_FLOOR, ledger, "gc-paused")
                    paused_times.append(float(elapsed))
                    paused_rss = max(paused_rss, int(rss))
                else:
                    elapsed, count, rss, read, disposition, operations = run(_PLAN, ledger)
                    plan_times.append(float(elapsed))
                    read_times.append(float(read))
                    plan_rss = max(plan_rss, int(rss))
                    detail = f"{disposition}, {operations} operations"
        print(f"ledger: {count} events, {size / 1e6:.0f} MB ({detail}); {args.rounds} rounds; python {sys.version.split()[0]}")
        rows = [
            ("floor  json.loads per line", floor_times, floor_rss),
            ("floor  json.loads, GC paused", paused_times, paused_rss),
            ("plan   read_ledger + plan", plan_times, plan_rss),
        ]
        for label, times, rss in rows:
            print(f"{label:<30} best {min(times):6.2f} s  median {statistics.median(times):6.2f} s  peak RSS {rss / 1024:6.0f} MiB")
        print(f"{'':<30} (plan: read {min(read_times):.2f} s, project {min(p - r for p, r in zip(plan_times, read_times)):.2f} s)")
        for label, times, rss in rows[:2]:
            print(
                f"ratio  plan / {label[7:]:<24} best {min(plan_times) / min(times):.2f}x  "
                f"median {statistics.median(plan_times) / statistics.median(times):.2f}x  memory {plan_rss / rss:.2f}x  (target <= 1.0x)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
