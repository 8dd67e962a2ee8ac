"""Attacks through the process's surroundings (issue 23, item 10): stdout closed or a pipe whose reader left,
a workspace path that is not UTF-8, file descriptors exhausted, an audit worker killed. Each is an exit code and
a message, never a traceback; a killed worker costs the audit a few runs planned again, not the rest of it.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from resume_contract import RuntimeEventStore
from resume_contract.contract import event_from_wire

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "resume_contract"]


def _event(run: str, number: int = 0):
    wire = {"id": f"{run}-{number}", "ts": number, "partial": False, "author": "user", "role": "user", "sessionId": "s1",
            "invocationId": "i1", "runId": run, "turnId": "t1", "content": {"kind": "text", "text": "hello"}}
    return event_from_wire(wire)


def _workspace(path: Path, runs: int) -> Path:
    for number in range(runs):
        store = RuntimeEventStore(path)
        store.append(_event(f"r{number:04d}"))
        store.close()
    return path


def _close_stdout() -> None:
    os.close(1)


def _run(arguments: list[str], stdout: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    if stdout == "closed":
        return subprocess.run([*CLI, *arguments], preexec_fn=_close_stdout, stderr=subprocess.PIPE, cwd=cwd, timeout=120)
    if stdout == "full":
        with open("/dev/full", "wb") as full:
            return subprocess.run([*CLI, *arguments], stdout=full, stderr=subprocess.PIPE, cwd=cwd, timeout=120)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written: `| head -0`
    try:
        return subprocess.run([*CLI, *arguments], stdout=write, stderr=subprocess.PIPE, cwd=cwd, timeout=120)
    finally:
        os.close(write)


SAID = {"closed": "stdout is closed", "closed-pipe": "its reader closed the pipe", "full": "No space left on device"}


@pytest.mark.parametrize("stdout", ["closed", "closed-pipe", pytest.param("full", marks=pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full"))])
def test_every_command_with_stdout_closed_exits_2_with_a_message(tmp_path: Path, stdout: str) -> None:
    ledger = tmp_path / "runtime-events.jsonl"
    ledger.write_bytes(b"")
    workspace = _workspace(tmp_path / "ws", 2)
    commands = [
        ["plan", str(ledger)], ["plan", "--json", str(ledger)], ["--version"], ["--help"], ["check"],
        ["plan", "--workspace", str(workspace), "--jobs", "2", "--json"],
    ]
    for arguments in commands:
        result = _run(arguments, stdout, REPO)
        err = result.stderr.decode()
        assert result.returncode == 2 and "Traceback" not in err and "Exception ignored" not in err, (arguments, err)
        assert SAID[stdout] in err, (arguments, err)


def test_with_stdout_and_stderr_one_pipe_whose_reader_left_the_exit_code_still_says_what_happened(tmp_path: Path) -> None:
    # `2>&1 | head`: the message about the cut-off output cannot be written either. Python's "lost sys.stderr"
    # would make it exit 1, which reads as "blocked"; a corrupt ledger must stay 3.
    ledger = tmp_path / "runtime-events.jsonl"
    ledger.write_bytes(b"")
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_bytes(b"\x00\n")
    for arguments, code in ((["plan", str(ledger)], 2), (["plan", "--json", str(ledger)], 2), (["plan", str(corrupt)], 3), (["--help"], 2)):
        read, write = os.pipe()
        os.close(read)
        try:
            result = subprocess.run([*CLI, *arguments], stdout=write, stderr=write, cwd=REPO, timeout=120)
        finally:
            os.close(write)
        assert result.returncode == code, arguments


def test_an_audit_of_a_workspace_whose_path_is_not_utf8_writes_json_lines(tmp_path: Path) -> None:
    workspace = _workspace(Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/ws\xff")), 2)
    result = subprocess.run([*CLI, "plan", "--workspace", str(workspace), "--json"], capture_output=True, timeout=120)
    assert result.returncode == 0 and b"Traceback" not in result.stderr, result.stderr.decode()
    lines = [json.loads(line) for line in result.stdout.decode("ascii").splitlines()]
    assert [line.get("status") for line in lines[:-1]] == ["safe_replay", "safe_replay"]
    assert os.fsencode(lines[0]["ledger"]) == os.fsencode(str(workspace)) + b"/sessions/s1/runs/r0000/runtime-events.jsonl"


def test_an_audit_out_of_file_descriptors_is_an_error_never_a_traceback(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path / "ws", 20)
    said = set()
    for limit in range(5, 16):
        def limited(limit: int = limit) -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        result = subprocess.run([*CLI, "plan", "--workspace", str(workspace), "--jobs", "2"], capture_output=True, preexec_fn=limited, timeout=120)
        err = result.stderr.decode()
        assert result.returncode in (0, 2) and "Traceback" not in err, (limit, err)
        said |= {"too many open files"} & {line.split(" (")[0].removeprefix("resume-contract: ") for line in err.splitlines()}
    assert said == {"too many open files"}, "no limit tried ran out of descriptors: the test tried nothing"


def test_a_killed_audit_worker_costs_a_few_runs_planned_again_not_the_rest_of_the_audit(tmp_path: Path, monkeypatch) -> None:
    from resume_contract.ledger import audit as audit_module

    workspace = _workspace(tmp_path / "ws", 200)
    planners = tmp_path / "planners"
    killed = tmp_path / "killed"
    real = audit_module.summarize

    def summarize_killed_once(job, *rest):
        with open(planners, "a") as file:
            file.write(f"{os.getpid()}\n")
        if job[2] == "r0030":
            try:
                os.close(os.open(killed, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)  # as an operator's kill -9, or the OOM killer, would
        return real(job, *rest)

    monkeypatch.setattr(audit_module, "summarize", summarize_killed_once)
    found = audit_module.discover(workspace)
    summaries = list(audit_module.audit(found.ledgers, workers=2))
    assert [summary.run_id for summary in summaries] == [f"r{number:04d}" for number in range(200)]
    assert {summary.status for summary in summaries} == {"safe_replay"}  # the killed run too, planned again
    # Before, every run after the kill was planned alone, in a process of its own (~170 processes).
    processes = set(planners.read_text().split())
    assert len(processes) < 40, f"{len(processes)} processes planned 200 runs"
