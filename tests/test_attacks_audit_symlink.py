"""Attack (issue 39): a symlink where a run directory belongs, audited by `resume-contract plan --workspace WS`.

The promise: a symlink where a run's directory belongs (`sessions/S/runs/R`, or the session `sessions/S`) is
never followed, and the audit reports it as a refusal: named (the link's path), counted (apart, in text and JSON),
and the audit exits non-zero (2, as for any unreadable run: docs/on-call.md). On 557b96c such a run was one more
`unreadable` run among others, never said to be refused nor counted as such.

Each test runs the real CLI in a subprocess, as an operator would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROW = {"id": "e0", "ts": 0, "partial": False, "invocationId": "i", "turnId": "t", "author": "user", "role": "user",
       "content": {"kind": "text", "text": "x"}}


def _ledger(directory: Path, session: str, run: str) -> Path:
    directory.mkdir(parents=True)
    ledger = directory / "runtime-events.jsonl"
    ledger.write_text(json.dumps({**ROW, "sessionId": session, "runId": run}) + "\n")
    return ledger


def _audit(workspace: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "resume_contract", "plan", "--workspace", str(workspace), "--jobs", "1", *extra],
                          capture_output=True, text=True, timeout=120)


def _planted(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace with one sound run, a run directory that is a link to a directory holding a sound ledger of that
    very run, and a session that is a link to a directory holding a sound session."""
    workspace = tmp_path / "ws"
    _ledger(workspace / "sessions" / "s1" / "runs" / "r1", "s1", "r1")
    linked_run = workspace / "sessions" / "s1" / "runs" / "r2"
    _ledger(tmp_path / "elsewhere" / "r2", "s1", "r2")
    linked_run.symlink_to(tmp_path / "elsewhere" / "r2", target_is_directory=True)
    linked_session = workspace / "sessions" / "s2"
    _ledger(tmp_path / "elsewhere-session" / "runs" / "r1", "s2", "r1")
    linked_session.symlink_to(tmp_path / "elsewhere-session", target_is_directory=True)
    return workspace, linked_run, linked_session


def test_a_symlinked_run_directory_and_session_are_refused_named_and_counted_in_text(tmp_path: Path, snapshot) -> None:
    workspace, linked_run, linked_session = _planted(tmp_path)
    before = snapshot(tmp_path / "elsewhere"), snapshot(tmp_path / "elsewhere-session")
    result = _audit(workspace)
    assert result.returncode == 2, result.stderr
    lines = result.stdout.splitlines()
    assert f"unreadable s1/r2: refused (symlink): {linked_run}: a symlink inside the workspace; not followed, not read" in lines
    assert f"unreadable s2/: refused (symlink): {linked_session}: a symlink inside the workspace; not followed, not read" in lines
    assert "3 runs: 1 safe_replay, 0 blocked, 0 corrupt, 0 live, 2 unreadable (2 refused: symlinks), 0 skipped" in lines
    assert any(line.startswith("  refused (2): a symlink stands where a run's directory or ledger belongs") for line in lines)
    assert "Traceback" not in result.stderr
    assert (snapshot(tmp_path / "elsewhere"), snapshot(tmp_path / "elsewhere-session")) == before  # nothing written there


def test_a_symlinked_run_directory_and_session_are_refused_named_and_counted_in_json(tmp_path: Path) -> None:
    workspace, linked_run, linked_session = _planted(tmp_path)
    result = _audit(workspace, "--json")
    assert result.returncode == 2, result.stderr
    *runs, summary = [json.loads(line) for line in result.stdout.splitlines()]
    refused = {(run["sessionId"], run["runId"]): run for run in runs if run.get("refusal")}
    assert set(refused) == {("s1", "r2"), ("s2", "")}
    assert all(run["refusal"] == "symlink" and run["status"] == "unreadable" for run in refused.values())
    assert refused["s1", "r2"]["error"].startswith(f"{linked_run}: a symlink")
    assert refused["s2", ""]["error"].startswith(f"{linked_session}: a symlink")
    assert [run["status"] for run in runs if not run.get("refusal")] == ["safe_replay"]  # the sound run, still planned
    assert (summary["summary"]["refused"], summary["summary"]["unreadable"], summary["summary"]["total"]) == (2, 2, 3)


def test_a_symlinked_run_directory_alone_still_fails_the_audit(tmp_path: Path) -> None:
    # Everything else sound: the one refused run is what makes the audit exit non-zero, and it is named.
    workspace = tmp_path / "ws"
    (workspace / "sessions" / "s1" / "runs").mkdir(parents=True)
    _ledger(tmp_path / "elsewhere" / "r9", "s1", "r9")
    (workspace / "sessions" / "s1" / "runs" / "r9").symlink_to(tmp_path / "elsewhere" / "r9", target_is_directory=True)
    result = _audit(workspace)
    assert result.returncode == 2
    assert result.stdout.splitlines()[0].startswith("unreadable s1/r9: refused (symlink): ")
    assert "1 runs: 0 safe_replay, 0 blocked, 0 corrupt, 0 live, 1 unreadable (1 refused: symlinks), 0 skipped" in result.stdout
