"""The planner form's gates written as expressions, and terminal repair's `last` (spec/continuation.yaml, maka-history
step 08).

A tool test on frozen inputs: the contract is the gallery's step 08 (examples/maka-history, base + patches, never
spec/), with its two gates: a partial event after the terminal one makes the ledger unreadable (an expression over
`events`), and a run that startup recovery cannot repair parks with that reason alone (an expression over
`input`, which the gates now read). Every expectation is written by hand from those lines.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
ROW = {"sessionId": "session-1", "invocationId": "invocation-1", "runId": "run-1", "turnId": "turn-1", "ts": 1, "partial": False}
HOST = {"currentCwd": "/w", "sourceWorkspaceIdentity": "ws", "currentWorkspaceIdentity": "ws", "backgroundOperationsSettled": True, "availableToolNames": []}


@pytest.fixture(scope="module")
def project(gallery_step: Any) -> Path:
    return gallery_step("08-terminal-last")  # type: ignore[no-any-return]


def text(event_id: str, role: str, words: str, partial: bool = False) -> dict[str, Any]:
    author = "user" if role == "user" else "agent"
    return {**ROW, "id": event_id, "partial": partial, "role": role, "author": author, "content": {"kind": "text", "text": words}}


def terminal(event_id: str, status: str) -> dict[str, Any]:
    return {**ROW, "id": event_id, "role": "system", "author": "system", "status": status, "actions": {"endInvocation": True}}


def decide(project: Path, rows: list[dict[str, Any]], status: str, tmp_path: Path) -> tuple[int, list[str], list[str]]:
    run = tmp_path / "ws" / "sessions" / "session-1" / "runs" / "run-1"
    run.mkdir(parents=True)
    header = {"runId": "run-1", "invocationId": "invocation-1", "sessionId": "session-1", "turnId": "turn-1", "status": status, "cwd": "/w", "workspaceIdentity": "ws", "createdAt": 1, "updatedAt": 1}
    (run / "run.json").write_text(json.dumps(header), encoding="utf-8")
    (run / "runtime-events.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (tmp_path / "host.json").write_text(json.dumps(HOST), encoding="utf-8")
    command = [sys.executable, "-m", "resume_contract", "--root", str(project), "continue-plan", "--workspace", str(tmp_path / "ws"),
               "--session", "session-1", "--run", "run-1", "--host", str(tmp_path / "host.json"), "--ids", "i2,r2,t2", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    printed = json.loads(done.stdout)
    return done.returncode, printed["rejectionReasons"], [d["code"] for d in printed["diagnostics"]]


def test_a_run_ending_in_its_terminal_event_is_repaired_and_continues(project: Path, tmp_path: Path) -> None:
    assert decide(project, [text("u", "user", "go"), terminal("t", "failed")], "failed", tmp_path) == (0, [], [])


def test_output_after_the_terminal_event_fails_repair_and_parks_with_that_reason_alone(project: Path, tmp_path: Path) -> None:
    # Before the gate, the model's text would also fail the resume boundary; the gate decides alone.
    rows = [text("u", "user", "go"), terminal("t", "failed"), text("m", "model", "late")]
    assert decide(project, rows, "failed", tmp_path) == (1, ["terminal_repair_failed"], ["terminal_repair_failed"])


def test_a_partial_event_after_the_terminal_one_makes_the_ledger_unreadable(project: Path, tmp_path: Path) -> None:
    rows = [text("u", "user", "go"), terminal("t", "failed"), text("p", "model", "la", partial=True)]
    assert decide(project, rows, "failed", tmp_path) == (1, ["runtime_ledger_unreadable"], ["runtime_ledger_unreadable"])


def test_a_partial_event_before_the_terminal_one_is_read_past(project: Path, tmp_path: Path) -> None:
    rows = [text("u", "user", "go"), text("p", "model", "la", partial=True), terminal("t", "failed")]
    assert decide(project, rows, "failed", tmp_path) == (0, [], [])


def test_a_gate_expression_reads_no_fact_of_step_0(project: Path, tmp_path: Path) -> None:
    """A gate runs before step 0: an expression gate naming `replay` is refused at generate, at its line."""
    copy = tmp_path / "project"
    shutil.copytree(project / "spec", copy / "spec")
    spec = copy / "spec" / "continuation.yaml"
    source = spec.read_text(encoding="utf-8")
    gate = '      when: "!input.terminalRepairSucceeded"'  # (the planner gate's, indented under `gates:`)
    assert source.count(gate) == 1
    edited = source.replace(gate, "      when: size(replay) == 0")
    spec.write_text(edited, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(copy), "generate"], capture_output=True, text=True, check=False)
    line = edited[: edited.index("size(replay)")].count("\n") + 1
    assert done.returncode == 2, done.stderr
    assert f"spec/continuation.yaml:{line}:" in done.stderr and "replay" in done.stderr
    assert not (copy / "generated").exists()


def test_a_gate_that_cannot_judge_a_run_names_itself(project: Path, tmp_path: Path) -> None:
    """generate decides the planner's situations, and one of two events divides by zero here: it says which gate."""
    copy = tmp_path / "project"
    shutil.copytree(project / "spec", copy / "spec")
    spec = copy / "spec" / "continuation.yaml"
    gate = '      when: "!input.terminalRepairSucceeded"'
    spec.write_text(spec.read_text(encoding="utf-8").replace(gate, "      when: 1 / (size(events) - 2) > 5"), encoding="utf-8")
    generated = subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(copy), "generate"], capture_output=True, text=True, check=False)
    assert generated.returncode == 2
    assert "an expression cannot be judged here: gate 'terminal_repair': / by zero" in generated.stderr, generated.stderr
