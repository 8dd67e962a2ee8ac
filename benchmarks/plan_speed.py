"""Benchmark: plan ledgers of growing size, and audit a workspace of many runs; every figure in one run.

    .venv/bin/python benchmarks/plan_speed.py                                  # 100k, 1M, 3M events
    .venv/bin/python benchmarks/plan_speed.py --sizes 100000,1000000,3000000,10000000 --json
    .venv/bin/python benchmarks/plan_speed.py --sizes 1000000 --rounds 5 --audit-runs 0
    .venv/bin/python benchmarks/plan_speed.py --sizes 1000000,10000000 --rounds 2 --audit-runs 0 --skip-one-process
    .venv/bin/python benchmarks/plan_speed.py --sizes 0 --audit-runs 0 --memory-rows 1000000   # the memory rows only

Ledgers are deterministic (~300 bytes an event; each turn is user text, three call/response pairs and a model
text, so 37.5% of events are calls and as many are responses) and cached in --cache (outside the repo; the
10M ledger is ~3 GB and takes a few minutes to write once). Each measurement runs in a fresh interpreter, so
its peak RSS is its own:

- floor: `json.loads` of every line, each parsed event dropped at once (what any reader must at least do; a
  floor that kept them all would pay for 2 GiB of objects at 1M and flatter the ratio); measured for sizes up
  to --floor-up-to;
- plan:  `plan_ledger` (the streaming strict reader + the projection) and the plan written as JSON to
  /dev/null, rows copied: all of what `resume-contract plan --json LEDGER` does after start-up, with
  --processes (default: all cores, as `plan` uses; a ledger under 24 MiB is planned in one process anyway);
  its peak RSS is its own plus its largest worker's;
- 1 proc: the same in one process (how each worker of an audit plans a run);
- audit: `resume-contract plan --workspace` over --audit-runs runs of --audit-events events, one worker;
- memory (--memory-rows N): peak RSS of planning, in one process, a plain ledger of N events, the same ledger
  with every row partial, and a workspace run of the plain ledger with one partial snapshot anchored in its
  middle (`plan_run`), each as a ratio to the plain ledger's, measured side by side.

Wall times are the median of --rounds (never the best). Machines are noisy: compare the ratios of one run, not
seconds across runs (the ratio column is plan / floor, measured side by side).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from resume_contract.system.interrupts import default_workers

_FLOOR = """
import json, resource, sys, time
start, cpu = time.perf_counter(), time.process_time()
count = 0
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        json.loads(line)
        count += 1
elapsed = time.perf_counter() - start
print(elapsed, count, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.process_time() - cpu)
"""

_PLAN = """
import resource, sys, time
from resume_contract import plan_json_pieces, plan_ledger, plan_run
start, cpu = time.perf_counter(), time.process_time()
if len(sys.argv) > 3:  # a workspace run: workspace, session, run
    plan = plan_run(sys.argv[1], sys.argv[2], sys.argv[3])
else:
    plan = plan_ledger(sys.argv[1], processes=int(sys.argv[2]))
with open("/dev/null", "wb") as sink:
    for piece in plan_json_pieces(plan):
        sink.write(piece)
elapsed = time.perf_counter() - start
# Peak RSS: this process's, plus its largest worker's (an upper bound: pages shared since the fork count twice).
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(elapsed, plan.source_runtime_event_high_water, rss, plan.disposition, len(plan.operations), time.process_time() - cpu)
"""

_AUDIT = """
import io, resource, sys, time
from resume_contract.cli import main
start = time.perf_counter()
out, err = io.StringIO(), io.StringIO()
code = main(["plan", "--workspace", sys.argv[1], "--jobs", "1"], out, err)
elapsed = time.perf_counter() - start
print(elapsed, code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""



def _row(index: int, session: str = "bench-session", run: str = "bench-run") -> str:
    turn, step = divmod(index, 8)
    call_id = f"call-{turn}-{(step - 1) // 2}"
    head = f'{{"id":"evt-{index:08d}","ts":{1767225600000 + index},"partial":false,"sessionId":"{session}","invocationId":"bench-invocation","runId":"{run}","turnId":"turn-{turn}",'
    if step == 0:
        return head + f'"author":"user","role":"user","content":{{"kind":"text","text":"Please update file number {turn} with the new release notes."}}}}'
    if step == 7:
        return head + f'"author":"agent","role":"model","content":{{"kind":"text","text":"Turn {turn} is done; the files are updated."}}}}'
    if step % 2 == 1:
        return head + f'"author":"agent","role":"model","content":{{"kind":"function_call","id":"{call_id}","name":"write_file","args":{{"path":"notes/{turn}.md","mode":"overwrite"}}}}}}'
    return head + f'"author":"tool","role":"tool","content":{{"kind":"function_response","id":"{call_id}","name":"write_file","result":{{"bytesWritten":{1024 + step}}}}}}}'


def write_ledger(path: Path, count: int, partial_rows: bool = False) -> None:
    """A run of `count` events (written to a temporary name, then renamed: a cached ledger is always whole);
    with `partial_rows`, every one of them partial."""
    writing = path.with_name(path.name + ".writing")
    with writing.open("w", encoding="utf-8") as handle:
        for start in range(0, count, 100_000):
            rows = "".join(_row(index) + "\n" for index in range(start, min(count, start + 100_000)))
            handle.write(rows.replace('"partial":false', '"partial":true') if partial_rows else rows)
    writing.rename(path)


def write_snapshot_run(root: Path, ledger: Path, count: int) -> None:
    """A workspace whose one run is `ledger` (hard-linked) with one open text stream's snapshot in its middle."""
    run_dir = root / "sessions" / "bench-session" / "runs" / "bench-run"
    if (run_dir / "runtime-events.jsonl").exists():
        return
    (run_dir / "runtime-partials").mkdir(parents=True, exist_ok=True)
    event = {"id": "snapshot-0", "sessionId": "bench-session", "invocationId": "bench-invocation", "runId": "bench-run", "turnId": "turn-open",
             "ts": 1767225600000 + count // 2, "partial": True, "author": "agent", "role": "model", "content": {"kind": "text", "text": ""},
             "refs": {"providerEventId": "bench-open"}}
    header = json.dumps({"version": 1, "event": event, "afterEventId": f"evt-{count // 2:08d}"})
    (run_dir / "runtime-partials" / "bench-open.partial").write_text(header + "\n" + "streamed text " * 100, encoding="utf-8")
    os.link(ledger, run_dir / "runtime-events.jsonl")


def write_workspace(root: Path, runs: int, events: int) -> None:
    marker = root / ".complete"
    if marker.exists():
        return
    for number in range(runs):
        run_dir = root / "sessions" / f"s{number // 100}" / "runs" / f"r{number}"
        run_dir.mkdir(parents=True, exist_ok=True)
        rows = "".join(_row(index, f"s{number // 100}", f"r{number}") + "\n" for index in range(events))
        (run_dir / "runtime-events.jsonl").write_text(rows, encoding="utf-8")
    marker.write_text("")


def run(script: str, *args: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=True)
    return result.stdout.split()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000,3000000", help="comma-separated event counts (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each measurement; the median is kept (default: %(default)s)")
    parser.add_argument("--floor-up-to", type=int, default=1_000_000, help="measure the json.loads floor up to this many events")
    parser.add_argument("--audit-runs", type=int, default=10_000, help="runs in the audited workspace (0: no audit)")
    parser.add_argument("--audit-events", type=int, default=200, help="events in each audited run")
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "resume-contract-bench", help="where ledgers are cached (default: %(default)s)")
    parser.add_argument("--processes", type=int, default=default_workers(), help="processes a plan may use (default: all cores, %(default)s here)")
    parser.add_argument("--skip-one-process", action="store_true", help="measure plans on --processes only, not also on one")
    parser.add_argument("--memory-rows", type=int, default=1_000_000, help="events in the memory comparison (0: none)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if int(size)]
    args.cache.mkdir(parents=True, exist_ok=True)

    results: dict[str, object] = {"python": sys.version.split()[0], "rounds": args.rounds, "cores": default_workers(), "plans": []}
    for size in sizes:
        ledger = args.cache / f"ledger-{size}.jsonl"
        if not ledger.exists():
            print(f"writing {ledger} ...", file=sys.stderr)
            write_ledger(ledger, size)
        plan_times, single_times, floor_times = [], [], []
        single_cpu: list[float] = []  # CPU seconds (the process's own): what a busy shared machine disturbs least
        floor_cpu: list[float] = []
        plan_rss = single_rss = floor_rss = 0
        detail = ""
        for _ in range(args.rounds):
            elapsed, count, rss, disposition, operations, _ = run(_PLAN, str(ledger), str(args.processes))
            plan_times.append(float(elapsed))
            plan_rss = max(plan_rss, int(rss))
            detail = f"{disposition}, {operations} operations"
            if args.processes > 1 and not args.skip_one_process:
                elapsed, count, rss, _, _, cpu = run(_PLAN, str(ledger), "1")
                single_times.append(float(elapsed))
                single_cpu.append(float(cpu))
                single_rss = max(single_rss, int(rss))
            if size <= args.floor_up_to:
                elapsed, _, rss, cpu = run(_FLOOR, str(ledger))
                floor_times.append(float(elapsed))
                floor_cpu.append(float(cpu))
                floor_rss = max(floor_rss, int(rss))
        entry = {
            "events": size,
            "megabytes": round(ledger.stat().st_size / 1e6),
            "plan_seconds": round(statistics.median(plan_times), 3),
            "microseconds_per_event": round(statistics.median(plan_times) / size * 1e6, 3),
            "plan_peak_rss_mib": round(plan_rss / 1024),
            "processes": args.processes,
            "plan": detail,
        }
        if single_times:
            entry.update(one_process_seconds=round(statistics.median(single_times), 3), one_process_peak_rss_mib=round(single_rss / 1024))
        if floor_times:
            entry.update(
                floor_seconds=round(statistics.median(floor_times), 3),
                floor_peak_rss_mib=round(floor_rss / 1024),
                plan_to_floor=round(statistics.median(plan_times) / statistics.median(floor_times), 3),
            )
            if single_times:
                entry.update(
                    one_process_to_floor=round(statistics.median(single_times) / statistics.median(floor_times), 3),
                    one_process_cpu_to_floor_cpu=round(statistics.median(single_cpu) / statistics.median(floor_cpu), 3),
                )
        results["plans"].append(entry)  # type: ignore[union-attr]
        if not args.json:
            _print_plan(entry)
    if args.audit_runs:
        results["audit"] = audit = _audit(args.cache, args.audit_runs, args.audit_events, args.rounds)
        if not args.json:
            print(f"audit  {audit['runs']} runs x {audit['events_per_run']} events, one worker: {audit['seconds']:.2f} s, peak RSS {audit['peak_rss_mib']} MiB")
    if args.memory_rows:
        results["memory"] = memory = _memory(args.cache, args.memory_rows, args.rounds)
        if not args.json:
            _print_memory(memory, args.memory_rows)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


def _print_memory(memory: dict[str, dict[str, float]], count: int) -> None:
    for name, figures in memory.items():
        print(f"memory {name:>19}, {count} events, one process: {figures['seconds']:.2f} s, peak RSS {figures['peak_rss_mib']} MiB, {figures['to_plain']:.2f}x the plain ledger's")


def _audit(cache: Path, runs: int, events: int, rounds: int) -> dict[str, float]:
    workspace = cache / f"workspace-{runs}x{events}"
    if not (workspace / ".complete").exists():
        print(f"writing {workspace} ...", file=sys.stderr)
    write_workspace(workspace, runs, events)
    times, rss_peak = [], 0
    for _ in range(rounds):
        elapsed, code, rss = run(_AUDIT, str(workspace))
        times.append(float(elapsed))
        rss_peak = max(rss_peak, int(rss))
    return {"runs": runs, "events_per_run": events, "seconds": round(statistics.median(times), 3), "peak_rss_mib": round(rss_peak / 1024), "exit_code": int(code)}


def _memory(cache: Path, count: int, rounds: int) -> dict[str, dict[str, float]]:
    """Peak RSS of a plain ledger, the same of partial rows, and a run with a snapshot, each planned alone."""
    plain, partial = cache / f"ledger-{count}.jsonl", cache / f"ledger-{count}-partial.jsonl"
    for path, partial_rows in ((plain, False), (partial, True)):
        if not path.exists():
            print(f"writing {path} ...", file=sys.stderr)
            write_ledger(path, count, partial_rows)
    workspace = cache / f"workspace-snapshot-{count}"
    write_snapshot_run(workspace, plain, count)
    cases = {"plain ledger": (str(plain), "1"), "partial rows": (str(partial), "1"), "run with a snapshot": (str(workspace), "bench-session", "bench-run")}
    figures: dict[str, dict[str, float]] = {}
    for name, case_args in cases.items():
        times, peak = [], 0
        for _ in range(rounds):
            elapsed, _, rss, _, _, _ = run(_PLAN, *case_args)
            times.append(float(elapsed))
            peak = max(peak, int(rss))
        figures[name] = {"seconds": round(statistics.median(times), 3), "peak_rss_mib": round(peak / 1024)}
    for entry in figures.values():
        entry["to_plain"] = round(entry["peak_rss_mib"] / figures["plain ledger"]["peak_rss_mib"], 2)
    return figures


_HEADER_PRINTED = False


def _print_plan(entry: dict) -> None:
    global _HEADER_PRINTED
    if not _HEADER_PRINTED:
        print(f"python {sys.version.split()[0]}; medians of the rounds; plan = plan_ledger + JSON to /dev/null on {entry['processes']} processes, "
              "1 proc = the same on one, floor = json.loads per line, nothing kept")
        print(f"{'events':>10} {'MB':>6} {'plan s':>8} {'us/event':>9} {'plan RSS':>9} {'1 proc s':>9} {'1 proc RSS':>10} {'floor s':>8} {'floor RSS':>10} {'plan/floor':>10} {'1 proc/floor':>12}")
        _HEADER_PRINTED = True
    floor = entry.get("floor_seconds")
    single = entry.get("one_process_seconds")
    print(
        f"{entry['events']:>10} {entry['megabytes']:>6} {entry['plan_seconds']:>8.2f} {entry['microseconds_per_event']:>9.2f} "
        f"{entry['plan_peak_rss_mib']:>5} MiB "
        + (f"{single:>9.2f} {entry['one_process_peak_rss_mib']:>6} MiB " if single is not None else f"{'-':>9} {'-':>10} ")
        + (f"{floor:>8.2f} {entry['floor_peak_rss_mib']:>6} MiB {entry['plan_to_floor']:>9.2f}x" if floor is not None else f"{'-':>8} {'-':>10} {'-':>10}")
        + (f" {entry['one_process_to_floor']:>11.2f}x (CPU {entry['one_process_cpu_to_floor_cpu']:.2f}x)" if floor is not None and single is not None else "")
    )


if __name__ == "__main__":
    raise SystemExit(main())
