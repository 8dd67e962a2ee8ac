"""Benchmark: plan one run of a runtime.sqlite of 10,000 runs x 200 events, and audit all of it; every figure
measured in one run, as a ratio to a floor measured beside it.

    .venv/bin/python benchmarks/sqlite_speed.py                       # builds the database once (~1.5 GB)
    .venv/bin/python benchmarks/sqlite_speed.py --runs 2000 --rounds 5  # a smaller one, for a quick look

The database (cached in --cache, outside the repo) has the reference's runtime schema (copied from a database the
reference wrote, tests/conformance_sqlite/reference/T_P6), `user_version` 12, WAL, and --runs runs of --events
events each in sessions of 10 runs: a user text carrying the tool-boundary marker, then turns of a model text and
T1 (a function_call and its dispatch event) and T2 (the bound function_response), a terminal text at the end; one
run in 10 stops after a T1 (blocked, as a crash there leaves it). Payloads are canonical JSON (sorted keys); each
row's `event_kind` is the one the reference's writer derives, and each operation has its `tool_operations` row.

Each measurement runs in a fresh interpreter (its peak RSS is its own), on the same database:
- floor, one run:  open the database read-only, SELECT the run's payload_json ORDER BY event_seq, event_id,
  decode each with msgspec (json.decode into a dict) -- what any reader of the store must at least do;
- plan, one run:   `plan_run` of the same run and its plan written as JSON to /dev/null (`plan --format json`'s
  work after start-up); each process times --repeat plans of the run and keeps its best; --rounds rounds, each a
  floor process then a plan process, and the ratio is the median of the rounds' ratios;
- floor, audit:    the floor for every run, one after another (listing the runs as the reference lists them);
- audit:           `resume-contract plan --workspace` 's work: every run planned and summarized (`audit_store`).

The reference's own figures on the same shape (../shared/conformance-sqlite/README.md): one run 2.53 ms
(readRuntimeEvents + plan, in process), every run of 10,000: 22.9 s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCHEMA_FROM = REPO / "tests" / "conformance_sqlite" / "reference" / "T_P6" / "WS" / "runtime.sqlite"
MARKER = {"runtimeProtocol": {"toolBoundary": "t1_after_preflight_v1"}}

_FLOOR_ONE = """
import resource, sqlite3, sys, time, msgspec
path, session, run, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
decode = msgspec.json.decode
times = []
for _ in range(repeat):
    start = time.perf_counter()
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    events = [decode(payload) for (payload,) in connection.execute(
        "SELECT payload_json FROM runtime_events WHERE session_id = ? AND run_id = ? ORDER BY event_seq, event_id", (session, run))]
    connection.close()
    times.append(time.perf_counter() - start)
print(min(times), len(events), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

_PLAN_ONE = """
import resource, sys, time
from resume_contract import plan_json_pieces, plan_run
path, session, run, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
plan_run(path, session, run)  # (the contract loaded once, as a process planning runs has it)
times = []
with open("/dev/null", "wb") as sink:
    for _ in range(repeat):
        start = time.perf_counter()
        plan = plan_run(path, session, run)
        for piece in plan_json_pieces(plan):
            sink.write(piece)
        times.append(time.perf_counter() - start)
print(min(times), plan.source_runtime_event_high_water, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, plan.disposition)
"""

_FLOOR_AUDIT = """
import resource, sqlite3, sys, time, msgspec
path = sys.argv[1]
decode = msgspec.json.decode
start = time.perf_counter()
connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
runs = connection.execute("SELECT session_id, run_id FROM runtime_events UNION SELECT session_id, run_id FROM runtime_partial_snapshots ORDER BY 1, 2").fetchall()
count = 0
for session, run in runs:
    events = [decode(payload) for (payload,) in connection.execute(
        "SELECT payload_json FROM runtime_events WHERE session_id = ? AND run_id = ? ORDER BY event_seq, event_id", (session, run))]
    count += len(events)
connection.close()
print(time.perf_counter() - start, count, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

_AUDIT = """
import resource, sys, time
from resume_contract.ledger.audit import audit_store
start = time.perf_counter()
statuses = {}
for summary in audit_store(sys.argv[1]):
    statuses[summary.status] = statuses.get(summary.status, 0) + 1
print(time.perf_counter() - start, sum(statuses.values()), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, statuses)
"""


def _payload(session: str, run: str, seq: int, event_id: str, **fields: object) -> tuple[object, ...]:
    invocation, turn = f"inv-{session}-{run}", f"turn-{run}"
    event = {"id": event_id, "sessionId": session, "invocationId": invocation, "runId": run, "turnId": turn, "ts": 1767225600000 + seq,
             "partial": False, **fields}
    text = json.dumps(event, sort_keys=True, separators=(",", ":"))
    return (event_id, session, invocation, run, turn, seq, _event_kind(event), text, 1767225600000 + seq)


def _event_kind(event: dict[str, Any]) -> str:
    """The `event_kind` column the reference's writer derives from an event (its `runtimeEventKind`)."""
    actions = event.get("actions") or {}
    if event.get("content"):
        return str(event["content"]["kind"])
    if event.get("status"):
        return str(event["status"])
    return "workspace_fact" if actions.get("workspaceFact") else "tool_dispatch" if actions.get("toolDispatch") else "invocation_end" if actions.get("endInvocation") else "runtime_fact"


def _operation(row: tuple[object, ...], args_hash: str, state: str, result: str | None) -> tuple[object, ...]:
    """The `tool_operations` row T1 writes beside a call and its dispatch (and T2 completes), for the call row `row`."""
    event_id, _, invocation, run, turn = (str(value) for value in row[:5])
    op = event_id.removesuffix("_call")
    call = json.loads(str(row[7]))["content"]
    return (op, invocation, run, turn, call["id"], call["name"], args_hash, "never_auto_retry", state, event_id, result, 1, f"{op}_dispatch")


def _args_hash(tool: str, args: dict[str, str]) -> str:
    """The hash maka's dispatch carries of its call: SHA-256 of {"args", "toolName"} as canonical JSON (sorted keys, no
    spaces; the arguments here are ASCII strings, which Python's json writes as JavaScript's JSON.stringify does)."""
    return "sha256:" + hashlib.sha256(json.dumps({"args": args, "toolName": tool}, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _run_rows(session: str, run: str, events: int, crashed: bool) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The run's `runtime_events` rows, and the `tool_operations` rows its T1 and T2 transactions write beside them."""
    rows = [_payload(session, run, 1, f"{run}-user", author="user", role="user", actions=MARKER,
                     content={"kind": "text", "text": "Release the notes for version 2 and tell me what changed."})]
    operations = []
    turn = 0
    while len(rows) + 4 <= events - 1:
        turn += 1
        call_id, op = f"{run}-call-{turn}", f"{run}-op-{turn}"
        args = {"path": f"notes/{turn}.md", "text": "Release notes, part " + str(turn)}
        rows.append(_payload(session, run, len(rows) + 1, f"{run}-text-{turn}", author="agent", role="model",
                             content={"kind": "text", "text": "Writing the next part of the notes now."}))
        rows.append(_payload(session, run, len(rows) + 1, f"{op}_call", author="agent", role="model", refs={"operationId": op, "toolCallId": call_id},
                             content={"kind": "function_call", "id": call_id, "name": "write_file", "args": args}))
        call = rows[-1]
        rows.append(_payload(session, run, len(rows) + 1, f"{op}_dispatch", author="system", role="system", refs={"operationId": op, "toolCallId": call_id},
                             actions={"toolDispatch": {"canonicalArgsHash": _args_hash("write_file", args), "operationId": op, "protocol": "t1_after_preflight_v1",
                                                       "providerToolCallId": call_id, "recoveryMode": "never_auto_retry", "toolName": "write_file"}}))
        if crashed and len(rows) + 4 > events - 1:
            operations.append(_operation(call, _args_hash("write_file", args), "prepared", None))
            return rows, operations  # killed after T1: the call is indeterminate
        rows.append(_payload(session, run, len(rows) + 1, f"{op}_response", author="tool", role="tool", refs={"operationId": op, "toolCallId": call_id},
                             content={"kind": "function_response", "id": call_id, "name": "write_file", "result": {"bytesWritten": 40 + turn}}))
        operations.append(_operation(call, _args_hash("write_file", args), "succeeded", f"{op}_response"))
    while len(rows) < events - 1:
        rows.append(_payload(session, run, len(rows) + 1, f"{run}-text-end-{len(rows)}", author="agent", role="model",
                             content={"kind": "text", "text": "Done."}))
    rows.append(_payload(session, run, len(rows) + 1, f"{run}-terminal", author="agent", role="model", status="completed",
                         actions={"endInvocation": True}, content={"kind": "text", "text": "The notes are released."}))
    return rows, operations


def build(path: Path, runs: int, events: int) -> None:
    """The benchmark's database, written once (a temporary name, renamed when complete)."""
    source = sqlite3.connect(f"file:{SCHEMA_FROM}?mode=ro&immutable=1", uri=True)
    schema = [sql for (sql,) in source.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    source.close()
    partial = path.with_suffix(".building")
    partial.unlink(missing_ok=True)
    connection = sqlite3.connect(partial, isolation_level=None)
    connection.execute("PRAGMA page_size = 4096")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = OFF")
    for statement in schema:
        connection.execute(statement)
    connection.execute("PRAGMA user_version = 12")
    insert = ("INSERT INTO runtime_events (event_id, session_id, invocation_id, run_id, turn_id, event_seq, event_kind, payload_json, "
              "committed_at) VALUES (?,?,?,?,?,?,?,?,?)")
    operation = ("INSERT INTO tool_operations (operation_id, invocation_id, run_id, turn_id, provider_tool_call_id, tool_name, canonical_args_hash, "
                 "recovery_mode, current_state, call_event_id, result_event_id, version, dispatch_event_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")
    started = time.perf_counter()
    for first in range(0, runs, 100):
        connection.execute("BEGIN")
        for number in range(first, min(runs, first + 100)):
            rows, operations = _run_rows(f"session-{number // 10:05d}", f"run-{number:05d}", events, number % 10 == 7)
            connection.executemany(insert, rows)
            connection.executemany(operation, operations)
        connection.execute("COMMIT")
        print(f"\rbuilding {path.name}: {min(runs, first + 100)}/{runs} runs ({time.perf_counter() - started:.0f} s)", end="", file=sys.stderr)
    print(file=sys.stderr)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    partial.rename(path)
    for suffix in ("-wal", "-shm"):
        Path(str(partial) + suffix).unlink(missing_ok=True)


def _measure(code: str, *args: str, python: str = sys.executable) -> list[str]:
    result = subprocess.run([python, "-c", code, *args], capture_output=True, text=True, check=True)
    return result.stdout.split(maxsplit=3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5, help="processes a one-run figure is the median of")
    parser.add_argument("--repeat", type=int, default=50, help="plans of the run in each process (its best is taken)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/resume-contract-bench"))
    parser.add_argument("--skip-audit", action="store_true")
    parser.add_argument("--baseline-python", help="the interpreter of another installation (e.g. a venv with an earlier wheel): its plan of "
                        "the run and its audit are measured in the same rounds, and this one's given as a ratio to it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    # (v2: each dispatch carries its call's true hash; v1's carried zeros, so every operation was corrupt and every
    # response walked the generic loop. v3: each row's event_kind is the reference writer's, and T1/T2 write their
    # tool_operations rows, as the reference's store holds them: the reader compares both with the payloads)
    workspace = args.cache / f"sqlite-v3-{args.runs}x{args.events}"
    database = workspace / "runtime.sqlite"
    if not database.exists():
        workspace.mkdir(exist_ok=True)
        build(database, args.runs, args.events)
    figures: dict[str, object] = {"database": str(database), "bytes": database.stat().st_size, "runs": args.runs, "events": args.events}
    middle = args.runs // 2 + 3  # a safe_replay run in the middle of the file
    session, run = f"session-{middle // 10:05d}", f"run-{middle:05d}"
    # Floor and plan measured back to back in each round (the machine's noise moves both), the ratio the median
    # of the rounds' ratios.
    samples: dict[str, list[list[str]]] = {"floor_one": [], "plan_one": []} | ({"baseline_one": []} if args.baseline_python else {})
    for _ in range(args.rounds):
        samples["floor_one"].append(_measure(_FLOOR_ONE, str(database), session, run, str(args.repeat)))
        samples["plan_one"].append(_measure(_PLAN_ONE, str(workspace), session, run, str(args.repeat)))
        if args.baseline_python:
            samples["baseline_one"].append(_measure(_PLAN_ONE, str(workspace), session, run, str(args.repeat), python=args.baseline_python))
    decided = {sample[3].strip() for sample in samples["plan_one"]}
    if decided != {"safe_replay"}:  # (a run the contract finds unsound walks its slow paths: not what is measured)
        print(f"the measured run {session}/{run} is planned {sorted(decided)}, not safe_replay: the database does not "
              f"fit the contract; delete {workspace} to build it again", file=sys.stderr)
        return 1
    for name, taken in samples.items():
        figures[name] = {"seconds": statistics.median(float(sample[0]) for sample in taken), "events": int(taken[0][1]),
                         "max_rss_kib": max(int(sample[2]) for sample in taken)}
    figures["ratio_one"] = statistics.median(
        float(plan[0]) / float(floor[0]) for floor, plan in zip(samples["floor_one"], samples["plan_one"])
    )
    if args.baseline_python:
        figures["ratio_one_to_baseline"] = statistics.median(
            float(plan[0]) / float(baseline[0]) for baseline, plan in zip(samples["baseline_one"], samples["plan_one"])
        )
    if not args.skip_audit:
        floor = _measure(_FLOOR_AUDIT, str(database))
        audit = _measure(_AUDIT, str(workspace))
        figures["floor_audit"] = {"seconds": float(floor[0]), "events": int(floor[1]), "max_rss_kib": int(floor[2])}
        figures["audit"] = {"seconds": float(audit[0]), "runs": int(audit[1]), "max_rss_kib": int(audit[2]), "statuses": audit[3].strip()}
        figures["ratio_audit"] = float(audit[0]) / float(floor[0])
        if args.baseline_python:
            baseline = _measure(_AUDIT, str(workspace), python=args.baseline_python)
            figures["baseline_audit"] = {"seconds": float(baseline[0]), "runs": int(baseline[1]), "max_rss_kib": int(baseline[2])}
            figures["ratio_audit_to_baseline"] = float(audit[0]) / float(baseline[0])
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        print(f"database: {database} ({figures['bytes'] / 1e9:.2f} GB, {args.runs} runs x {args.events} events)")
        one, floor_one = figures["plan_one"], figures["floor_one"]
        print(f"one run:  plan {one['seconds'] * 1e3:.2f} ms, floor {floor_one['seconds'] * 1e3:.2f} ms: "  # type: ignore[index]
              f"{figures['ratio_one']:.2f}x (target <= 1.5x; the reference: 2.53 ms)")
        if args.baseline_python:
            print(f"          {figures['ratio_one_to_baseline']:.2f}x the baseline's plan ({statistics.median(float(b[0]) for b in samples['baseline_one']) * 1e3:.2f} ms, "
                  f"{args.baseline_python})")
        if not args.skip_audit:
            audit_figures, floor_audit = figures["audit"], figures["floor_audit"]
            print(f"audit:    {audit_figures['seconds']:.1f} s, floor {floor_audit['seconds']:.1f} s: {figures['ratio_audit']:.2f}x "  # type: ignore[index]
                  f"(target <= 1.6x; the reference: 22.9 s); peak RSS {audit_figures['max_rss_kib'] // 1024} MiB "  # type: ignore[index]
                  f"(floor {floor_audit['max_rss_kib'] // 1024} MiB); {audit_figures['statuses']}")  # type: ignore[index]
            if args.baseline_python:
                print(f"          {figures['ratio_audit_to_baseline']:.2f}x the baseline's audit ({figures['baseline_audit']['seconds']:.1f} s)")  # type: ignore[index]
    return 0


if __name__ == "__main__":
    sys.exit(main())
