"""Write tests/conformance_sqlite/node: SQLite workspaces holding what the shared set has none of, each planned by
apache/maka's own code (issue 56) — rows after the terminal event, and dispatches of arguments whose hash only
maka's `canonicalizeMainlineV1` gives (`required`/`enum` arrays, `__proto__` keys, array-index keys).

    .venv/bin/python tools/node_sqlite_cases.py --maka /tmp/maka --esbuild /tmp/nodeplan/node_modules/.bin/esbuild

--maka is a tree of apache/maka at f19eede03 (`git archive f19eede03 packages/core packages/runtime | tar -x -C DIR`
from `fetch github:apache/maka`); --esbuild an esbuild binary (`npm install esbuild`). Node 20 runs the bundle of
tests/node_fixtures/phase0_plan.ts. The script is run by hand when the cases change; the tests read what it wrote.

Each case starts from a database of ../shared/conformance-sqlite (a copy in tests/conformance_sqlite/reference,
written by maka's own writers) and appends rows with plain SQL into `runtime_events`, as that set's `_sql` cases
were made (the next `event_seq`, identity columns from the payload, `event_kind` as maka's writer derives it —
asked of maka's `runtimeEventKind`, `payload_json` with keys sorted). A dispatch's `canonicalArgsHash` is the one
maka's `canonicalToolArgsHash` returns, or on purpose the plain key-sorted hash (`"hash": "sorted"`). The expected
plan is maka's `buildResumePlanFromRuntimeEvents` over the run's payloads in `event_seq` order, as
../shared/evolutions/README.md reads step 01's cases; expected.json has the shared set's shape (`check`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gallery import plan_check as _check  # noqa: E402 - a sibling script, not a package

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "tests" / "conformance_sqlite" / "reference"
TARGET = REPO / "tests" / "conformance_sqlite" / "node"
ENTRY = REPO / "tests" / "node_fixtures" / "phase0_plan.ts"
MAKA = "apache/maka @ f19eede03 (Apache-2.0)"

ARGS = {
    "required_enum": {"schema": {"type": "object", "required": ["path", "mode", "Mode", "_x"], "properties": {"mode": {"enum": ["w", "a", "r", "W"]}}}, "path": "/tmp/out"},
    "proto_and_index_keys": {"__proto__": {"polluted": True}, "10": "ten", "9": "nine", "b": 1, "a": [3, 1, 2], "nested": {"__proto__": 1, "01": 2, "1": 3}},
    "enum_mixed": {"filter": {"enum": [3, 1, "2", None, True, "a", "B"]}, "required": ["z", "é", "e", "10", "9"]},
}


def _text(event_id: str, author: str, text: str, ts: int) -> dict[str, Any]:
    role = "user" if author == "user" else "model"
    return {"author": author, "content": {"kind": "text", "text": text}, "id": event_id, "partial": False, "role": role, "ts": ts}


def _call(n: int, name: str, args: Any, ts: int) -> dict[str, Any]:
    refs = {"operationId": f"op-{n}", "toolCallId": f"tool-{n}"}
    return {"author": "agent", "content": {"args": args, "id": f"tool-{n}", "kind": "function_call", "name": name}, "id": f"op-{n}_call", "partial": False, "refs": refs, "role": "model", "ts": ts}


def _dispatch(n: int, name: str, args_hash: str, ts: int) -> dict[str, Any]:
    refs = {"operationId": f"op-{n}", "toolCallId": f"tool-{n}"}
    dispatch = {"canonicalArgsHash": args_hash, "operationId": f"op-{n}", "protocol": "t1_after_preflight_v1", "providerToolCallId": f"tool-{n}", "recoveryMode": "never_auto_retry", "toolName": name}
    return {"actions": {"toolDispatch": dispatch}, "author": "system", "id": f"op-{n}_dispatch", "partial": False, "refs": refs, "role": "system", "ts": ts}


def _response(n: int, name: str, ts: int, error: bool = False) -> dict[str, Any]:
    refs = {"operationId": f"op-{n}", "toolCallId": f"tool-{n}"}
    content: dict[str, Any] = {"id": f"tool-{n}", "kind": "function_response", "name": name, "result": {"exitCode": 1 if error else 0}}
    if error:
        content["isError"] = True
    return {"author": "tool", "content": content, "id": f"op-{n}_response", "partial": False, "refs": refs, "role": "tool", "ts": ts}


def _terminal(event_id: str, status: str, ts: int) -> dict[str, Any]:
    return {"actions": {"endInvocation": True}, "author": "system", "id": event_id, "partial": False, "role": "system", "status": status, "ts": ts}


# name -> (the shared case it starts from, what it is, the rows appended: ("row", event) or ("round", n, tool, args
# key, hash, ending) where ending is "response", "error" or "none")
CASES: dict[str, tuple[str, str, list[tuple[Any, ...]]]] = {
    "A_model_text_after_terminal": ("T_P9", "model text committed after the failed terminal event", [("row", _text("late-text", "agent", "one more thing", 5))]),
    "A_user_text_after_terminal": ("T_P9", "a user text after the terminal event", [("row", _text("late-user", "user", "again", 5))]),
    "A_second_terminal": ("T_P9", "a second terminal event (completed) after the failed one", [("row", _terminal("terminal-2", "completed", 5))]),
    "A_round_after_terminal": ("T_P9", "a whole T1/T2 round after the terminal event", [("round", 2, "Bash", None, "maka", "response")]),
    "A_call_after_terminal_unanswered": ("T_P9", "a T1 call and its dispatch after the terminal event, no result", [("round", 2, "Bash", None, "maka", "none")]),
    "A_call_after_terminal_not_dispatched": ("T_P9", "a T1 call after the terminal event, never dispatched", [("round", 2, "Bash", None, "maka", "call")]),
    "H_required_enum_answered": ("T_P6", "a second round whose arguments hold required/enum arrays out of order, hashed by maka", [("round", 2, "Write", "required_enum", "maka", "response")]),
    "H_required_enum_unanswered": ("T_P6", "the same call dispatched, no result (indeterminate)", [("round", 2, "Write", "required_enum", "maka", "none")]),
    "H_required_enum_sorted_hash": ("T_P6", "the same call, its dispatch hashed with plain sorted keys (arrays kept)", [("round", 2, "Write", "required_enum", "sorted", "response")]),
    "H_proto_and_index_keys_answered": ("T_P6", "arguments with __proto__ and array-index keys, hashed by maka, answered with an error", [("round", 2, "Edit", "proto_and_index_keys", "maka", "error")]),
    "H_proto_and_index_keys_unanswered": ("T_P6", "the same call dispatched, no result", [("round", 2, "Edit", "proto_and_index_keys", "maka", "none")]),
    "H_proto_and_index_keys_sorted_hash": ("T_P6", "the same call, its dispatch hashed with plain sorted keys, unanswered", [("round", 2, "Edit", "proto_and_index_keys", "sorted", "none")]),
    "H_enum_mixed_answered": ("T_P6", "an enum of mixed types and a required array with non-ASCII and digit names, hashed by maka", [("round", 2, "Read", "enum_mixed", "maka", "response")]),
    "H_enum_mixed_sorted_hash": ("T_P6", "the same call, its dispatch hashed with plain sorted keys", [("round", 2, "Read", "enum_mixed", "sorted", "response")]),
}


def _sorted_hash(name: str, args: Any) -> str:
    """The hash a plain key-sorted JSON gives (keys by code point, arrays as written): not maka's, on purpose."""
    body = json.dumps({"toolName": name, "args": args}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


class Maka:
    """maka's own functions, bundled once and asked in batches."""

    def __init__(self, tree: Path, esbuild: Path, work: Path) -> None:
        self.bundle = work / "phase0_plan.mjs"
        aliases = [f"--alias:@maka/core={tree / 'packages/core/src'}", f"--alias:@maka/runtime={tree / 'packages/runtime/src'}"]
        subprocess.run([str(esbuild), str(ENTRY), "--bundle", "--platform=node", "--format=esm", f"--outfile={self.bundle}", "--log-level=error", *aliases], check=True)

    def ask(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        done = subprocess.run(["node", str(self.bundle)], input=json.dumps(requests), capture_output=True, text=True, check=True)
        return json.loads(done.stdout)  # type: ignore[no-any-return]


def _rows(database: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{database}?mode=ro&immutable=1", uri=True) as connection:
        return connection.execute("SELECT session_id, invocation_id, run_id, turn_id, event_seq, committed_at, payload_json FROM runtime_events ORDER BY event_seq, event_id").fetchall()


def _events(maka: Maka, start: list[tuple[Any, ...]], steps: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    session, invocation, run, turn = start[-1][:4]
    head = {"sessionId": session, "invocationId": invocation, "runId": run, "turnId": turn}
    events: list[dict[str, Any]] = []
    for step in steps:
        if step[0] == "row":
            events.append(step[1])
            continue
        _, n, tool, key, how, ending = step
        args = ARGS[key] if key else {"command": f"echo late-{n}"}
        args_hash = maka.ask([{"op": "hash", "toolName": tool, "args": args}])[0]["hash"] if how == "maka" else _sorted_hash(tool, args)
        ts = 5
        events.append(_call(n, tool, args, ts))
        if ending != "call":
            events.append(_dispatch(n, tool, args_hash, ts))
        if ending in ("response", "error"):
            events.append(_response(n, tool, ts + 1, error=ending == "error"))
    return [{**event, **head} for event in events]


def write_case(maka: Maka, name: str, base: str, description: str, steps: list[tuple[Any, ...]]) -> None:
    folder = TARGET / name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "WS").mkdir(parents=True)
    database = folder / "WS" / "runtime.sqlite"
    shutil.copyfile(SOURCE / base / "WS" / "runtime.sqlite", database)
    start = _rows(database)
    added = _events(maka, start, steps)
    kinds = [answer["kind"] for answer in maka.ask([{"op": "kind", "event": event} for event in added])]
    with sqlite3.connect(database) as connection:
        sequence, committed = start[-1][4], start[-1][5]
        for event, kind in zip(added, kinds):
            sequence += 1
            payload = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            connection.execute(
                "INSERT INTO runtime_events (event_id, session_id, invocation_id, run_id, turn_id, event_seq, event_kind, payload_json, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (event["id"], event["sessionId"], event["invocationId"], event["runId"], event["turnId"], sequence, kind, payload, committed + 1),
            )
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for side in ("-wal", "-shm"):
        Path(f"{database}{side}").unlink(missing_ok=True)
    events = [json.loads(row[6]) for row in _rows(database)]
    answer = maka.ask([{"op": "plan", "events": events}])[0]
    if "plan" not in answer:
        raise SystemExit(f"{name}: maka threw: {answer}")
    session, run = events[0]["sessionId"], events[0]["runId"]
    expected = {
        "case": name,
        "description": description,
        "provenance": f"../shared/conformance-sqlite/{base} (written by {MAKA}'s own writers), rows appended with plain SQL by tools/node_sqlite_cases.py; planned by its buildResumePlanFromRuntimeEvents over the run's payloads in event_seq order, run unmodified on Node 20",
        "base": base,
        "session": session,
        "run": run,
        "expectedHighWater": None,
        "argv": ["plan", "--workspace", "WS", "--session", session, "--run", run, "--format", "json"],
        "exit": _check(answer["plan"])["exit"],
        "reference": {"outcome": "plan", "plan": answer["plan"]},
        "check": _check(answer["plan"]),
    }
    (folder / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--maka", type=Path, required=True, help="a tree of apache/maka at f19eede03 (packages/core, packages/runtime)")
    parser.add_argument("--esbuild", type=Path, required=True, help="an esbuild binary")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        maka = Maka(args.maka, args.esbuild, Path(work))
        for name, (base, description, steps) in CASES.items():
            write_case(maka, name, base, description, steps)
            print(f"{name}: {json.loads((TARGET / name / 'expected.json').read_text(encoding='utf-8'))['check']['disposition']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
