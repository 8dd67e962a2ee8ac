"""Phase 0 plans of the packaged contract against maka's own planner, on generated ledgers (issue 56).

    .venv/bin/python tools/node_phase0_diff.py --maka /tmp/maka --esbuild /tmp/nodeplan/node_modules/.bin/esbuild
    .venv/bin/python tools/node_phase0_diff.py ... --depth 2 --random 0 --show 40   # every ledger of up to 2 facts

--maka and --esbuild as tools/node_sqlite_cases.py takes them (maka's tree at f19eede03; node 20 runs the bundle of
tests/node_fixtures/phase0_plan.ts). Ledgers: a user text carrying the tool-boundary marker, then every sequence
of up to --depth facts over two call ids (a call; a dispatch with maka's hash, a wrong hash or another tool's
name; a result, an error result or one naming another tool; a text; a failed terminal), then --random longer
ones (seeded), some without the marker. Each is planned by maka's `buildResumePlanFromRuntimeEvents` and by the
packaged contract (`build_resume_plan`), and the two compared field by field: disposition, rejection reasons,
diagnostic codes in order, operations (call id, status), whether verification is required, the replay's ids.

Prints how many ledgers differ in each field and the shortest examples of each pattern; exit 1 when any ledger
differs in disposition or reasons (what a caller acts on), else 0. A measurement for the next step of the
contract, not a test: the tests hold what was measured (tests/conformance_sqlite/node).
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from node_sqlite_cases import Maka  # noqa: E402 - a sibling script, not a package

from resume_contract.contract import build_resume_plan, event_from_wire  # noqa: E402

HEAD = {"sessionId": "session-1", "invocationId": "invocation-1", "runId": "run-1", "turnId": "turn-1", "partial": False}
ARGS = {1: {"command": "echo 1"}, 2: {"required": ["b", "a"], "10": 1, "9": 2}}
LETTERS = [(kind, n) for kind in ("call", "dispatch", "dispatch_hash", "dispatch_name", "result", "result_error", "result_name") for n in (1, 2)]
LETTERS += [("text", 0), ("terminal", 0)]
FIELDS = ("disposition", "reasons", "diagnostics", "operations", "verify", "replay")


def _row(letter: tuple[str, int], position: int, hashes: dict[int, str]) -> dict[str, Any]:
    kind, n = letter
    refs = {"operationId": f"op-{n}", "toolCallId": f"tool-{n}"}
    row: dict[str, Any] = {**HEAD, "id": f"e{position}", "ts": position}
    if kind == "text":
        return {**row, "author": "agent", "role": "model", "content": {"kind": "text", "text": "t"}}
    if kind == "terminal":
        return {**row, "author": "system", "role": "system", "status": "failed", "actions": {"endInvocation": True}}
    if kind == "call":
        return {**row, "author": "agent", "role": "model", "refs": refs, "content": {"kind": "function_call", "id": f"tool-{n}", "name": "Bash", "args": ARGS[n]}}
    if kind.startswith("dispatch"):
        dispatch = {
            "canonicalArgsHash": hashes[n] if kind != "dispatch_hash" else "sha256:" + "0" * 64, "operationId": f"op-{n}",
            "protocol": "t1_after_preflight_v1", "providerToolCallId": f"tool-{n}", "recoveryMode": "never_auto_retry",
            "toolName": "Other" if kind == "dispatch_name" else "Bash",
        }
        return {**row, "author": "system", "role": "system", "refs": refs, "actions": {"toolDispatch": dispatch}}
    content: dict[str, Any] = {"kind": "function_response", "id": f"tool-{n}", "name": "Other" if kind == "result_name" else "Bash", "result": {"ok": 1}}
    if kind == "result_error":
        content["isError"] = True
    return {**row, "author": "tool", "role": "tool", "refs": refs, "content": content}


def ledger(letters: list[tuple[str, int]], marker: bool, hashes: dict[int, str]) -> list[dict[str, Any]]:
    first: dict[str, Any] = {**HEAD, "id": "e0", "ts": 0, "author": "user", "role": "user", "content": {"kind": "text", "text": "go"}}
    if marker:
        first["actions"] = {"runtimeProtocol": {"toolBoundary": "t1_after_preflight_v1"}}
    return [first] + [_row(letter, position, hashes) for position, letter in enumerate(letters, 1)]


def ours(rows: list[dict[str, Any]]) -> dict[str, Any]:
    plan = build_resume_plan([event_from_wire(row) for row in rows])
    return {
        "disposition": plan.disposition, "reasons": list(plan.rejection_reasons), "diagnostics": [d.code for d in plan.diagnostics],
        "operations": [[o.tool_call_id, o.status] for o in plan.operations], "verify": plan.requires_verification, "replay": list(plan.replay_event_ids),
    }


def theirs(plan: dict[str, Any]) -> dict[str, Any]:
    return {
        "disposition": plan["disposition"], "reasons": plan["rejectionReasons"], "diagnostics": [d["code"] for d in plan["diagnostics"]],
        "operations": [[o["toolCallId"], o["status"]] for o in plan["operations"]], "verify": plan["requiresVerification"],
        "replay": [e["id"] for e in plan["replayRuntimeEvents"]],
    }


def spelled(rows: list[dict[str, Any]]) -> str:
    words = []
    for row in rows[1:]:
        content, actions = row.get("content") or {}, row.get("actions") or {}
        if content.get("kind") == "function_call":
            words.append(f"call{content['id'][-1]}")
        elif content.get("kind") == "function_response":
            words.append(f"result{content['id'][-1]}" + ("!" if content.get("isError") else "") + ("~" if content["name"] != "Bash" else ""))
        elif "toolDispatch" in actions:
            dispatch = actions["toolDispatch"]
            words.append(f"dispatch{dispatch['providerToolCallId'][-1]}" + ("#" if dispatch["canonicalArgsHash"].endswith("0" * 8) else "") + ("~" if dispatch["toolName"] != "Bash" else ""))
        else:
            words.append("terminal" if row.get("status") else "text")
    return " ".join(words)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--maka", type=Path, required=True)
    parser.add_argument("--esbuild", type=Path, required=True)
    parser.add_argument("--depth", type=int, default=2, help="every sequence of up to this many facts (default 2)")
    parser.add_argument("--random", type=int, default=2000, help="seeded longer ledgers (default 2000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=12, help="patterns to show, shortest example each")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        maka = Maka(args.maka, args.esbuild, Path(work))
        hashes = {n: answer["hash"] for n, answer in zip(ARGS, maka.ask([{"op": "hash", "toolName": "Bash", "args": ARGS[n]} for n in ARGS]))}
        generator = random.Random(args.seed)
        ledgers = [ledger(list(letters), True, hashes) for depth in range(1, args.depth + 1) for letters in itertools.product(LETTERS, repeat=depth)]
        ledgers += [ledger([generator.choice(LETTERS) for _ in range(generator.randint(3, 7))], generator.random() < 0.8, hashes) for _ in range(args.random)]
        answers = maka.ask([{"op": "plan", "events": rows} for rows in ledgers])
    counts: Counter[str] = Counter()
    patterns: dict[tuple[str, ...], list[tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]]] = {}
    for rows, answer in zip(ledgers, answers):
        mine, reference = ours(rows), theirs(answer["plan"])
        differing = tuple(field for field in FIELDS if mine[field] != reference[field])
        counts.update(differing)
        counts["any"] += bool(differing)
        if differing:
            patterns.setdefault(differing, []).append((rows, mine, reference))
    print(f"{len(ledgers)} ledgers; {counts['any']} differ: " + ", ".join(f"{field} {counts[field]}" for field in FIELDS))
    shown = [(min(examples, key=lambda example: len(example[0])), key) for key, examples in patterns.items()]
    for (rows, mine, reference), key in sorted(shown, key=lambda item: len(item[0][0]))[: args.show]:
        print(f"  {spelled(rows)}  ({len(patterns[key])} like it)")
        for field in key:
            print(f"    {field}: ours {mine[field]}  maka {reference[field]}")
    return 1 if counts["disposition"] or counts["reasons"] else 0


if __name__ == "__main__":
    sys.exit(main())
