"""Attacks on the store and the workspace, each with the guarantee it must not break (issue 10, items 1-6, 15).

- Containment: nothing outside the workspace is read as a ledger, written, truncated or created.
- An acknowledged row is never lost: a failure part-way through an append poisons the writer.
- Readers never make a writer fail, and "not live" holds for the whole read.
- `repair` is idempotent and crash-safe.
- The audit reports every run; a run it cannot read is `unreadable` with its cause, and a dead worker costs
  only its own runs.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from resume_contract.errors import DuplicateEventId, EscapesWorkspace, LedgerInUse, TornTail
from resume_contract.ledger import committed_file as committed_file_module
from resume_contract.ledger import repair as repair_module
from resume_contract.ledger import store as store_module
from resume_contract.ledger.locks import try_lock, unlock
from resume_contract.ledger.repair import repair_ledger
from resume_contract.ledger.store import RuntimeEventStore, read_ledger


def _committed(tmp_path: Path, events, count: int = 2, write_piece_bytes: int | None = None) -> tuple[RuntimeEventStore, Path]:
    store = RuntimeEventStore(tmp_path / "ws", write_piece_bytes=write_piece_bytes)
    store.append(events.text("e1"))
    if count > 1:
        store.append(events.call("e2", "c1"))
    return store, store.path("s1", "r1")


# -- 1. containment -----------------------------------------------------------------------------------------
def _outside_ledger(tmp_path: Path) -> tuple[Path, bytes]:
    outside = tmp_path / "outside" / "victim.jsonl"
    outside.parent.mkdir()
    content = b'{"id":"x"}\n{"torn'
    outside.write_bytes(content)
    return outside, content


def test_a_ledger_symlinked_out_of_the_workspace_is_never_read_written_or_truncated(tmp_path: Path, run_cli, snapshot, events) -> None:
    outside, content = _outside_ledger(tmp_path)
    workspace = tmp_path / "ws"
    run_dir = workspace / "sessions" / "s1" / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "runtime-events.jsonl").symlink_to(outside)
    before = snapshot(tmp_path / "outside")
    for command in ("repair", "plan"):
        code, out, err = run_cli(command, "--workspace", str(workspace), "--session", "s1", "--run", "r1")
        assert (code, out) == (2, ""), command
        assert "a symlink inside the workspace" in err
    code, out, _ = run_cli("plan", "--workspace", str(workspace), "--json")
    run = json.loads(out.splitlines()[0])
    assert code == 2 and run["status"] == "unreadable" and "symlink" in run["error"]
    with pytest.raises(EscapesWorkspace):
        RuntimeEventStore(workspace).append(events.text("e9"))
    with pytest.raises(EscapesWorkspace):
        RuntimeEventStore(workspace).read("s1", "r1")
    assert snapshot(tmp_path / "outside") == before and outside.read_bytes() == content


def test_a_session_symlinked_elsewhere_gets_no_truncation_and_no_quarantine_there(tmp_path: Path, run_cli, snapshot, events) -> None:
    elsewhere = tmp_path / "elsewhere"
    target = elsewhere / "runs" / "r1" / "runtime-events.jsonl"
    target.parent.mkdir(parents=True)
    target.write_bytes(b'{"id":"x"}\n{"torn')
    workspace = tmp_path / "ws"
    (workspace / "sessions").mkdir(parents=True)
    (workspace / "sessions" / "s1").symlink_to(elsewhere)
    before = snapshot(elsewhere)
    code, _, err = run_cli("repair", "--workspace", str(workspace), "--session", "s1", "--run", "r1")
    assert code == 2 and "a symlink inside the workspace" in err
    code, out, _ = run_cli("plan", "--workspace", str(workspace))
    assert code == 2 and "unreadable" in out and "1 unreadable" in out
    with pytest.raises(EscapesWorkspace):
        RuntimeEventStore(workspace).append(events.text("e9"))
    assert snapshot(elsewhere) == before


def test_a_step_symlinked_away_is_named_by_the_path_up_to_it(tmp_path: Path) -> None:
    # Each step of a walk down the workspace is opened below the last; a link refused names the path up to it.
    from resume_contract.ledger.containment import open_directory

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "ws" / "sessions").mkdir(parents=True)
    (tmp_path / "ws" / "sessions" / "s1").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(EscapesWorkspace) as refused:
        open_directory(tmp_path / "ws", ("sessions", "s1", "runs"))
    assert str(refused.value) == f"{tmp_path / 'ws' / 'sessions' / 's1'}: a symlink inside the workspace; refusing to follow it"
    os.close(open_directory(str(tmp_path / "ws"), ("sessions",)))  # a root given as text works as a Path does


def test_a_snapshot_directory_symlinked_away_is_refused(tmp_path: Path, run_cli) -> None:
    workspace = tmp_path / "ws"
    run_dir = workspace / "sessions" / "s1" / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "runtime-events.jsonl").write_bytes(b"")
    (tmp_path / "partials").mkdir()
    (run_dir / "runtime-partials").symlink_to(tmp_path / "partials")
    code, _, err = run_cli("plan", "--workspace", str(workspace), "--session", "s1", "--run", "r1")
    assert code == 2 and "a symlink inside the workspace" in err


# -- 2. an acknowledged row is never lost ---------------------------------------------------------------------
@pytest.mark.parametrize("failing_piece", [1, 2, 5])
@pytest.mark.parametrize("failure", [KeyboardInterrupt, lambda: OSError(errno.EIO, "I/O error")], ids=["ctrl-c", "oserror"])
def test_a_failure_between_pieces_of_a_row_poisons_the_writer(tmp_path: Path, events, monkeypatch, failing_piece: int, failure) -> None:
    store, path = _committed(tmp_path, events, write_piece_bytes=16)  # the committed rows are one piece each: few enough calls
    acknowledged = path.read_bytes()
    real_write = os.write
    calls = {"n": 0}

    def flaky_write(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == failing_piece + 1:
            raise failure()
        return real_write(fd, data)

    monkeypatch.setattr(store_module.os, "write", flaky_write)
    with pytest.raises((KeyboardInterrupt, OSError)):
        store.append(events.response("e3", "c1"))
    monkeypatch.setattr(store_module.os, "write", real_write)
    # The next append is refused, not written after the torn bytes.
    with pytest.raises(TornTail, match=f"after {failing_piece * 16} of"):
        store.append(events.text("e4"))
    store.close()
    assert path.read_bytes().startswith(acknowledged) and len(path.read_bytes()) == len(acknowledged) + failing_piece * 16
    result = repair_ledger(path)
    assert result.committed_bytes == len(acknowledged) and path.read_bytes() == acknowledged
    reopened = RuntimeEventStore(tmp_path / "ws")
    assert reopened.append(events.text("e4")) is True
    assert [event.id for event in reopened.read("s1", "r1").events] == ["e1", "e2", "e4"]


# -- 3. readers never make a writer fail; "not live" holds for the whole read ---------------------------------
def test_a_writer_opening_during_a_readers_probe_waits_and_succeeds(tmp_path: Path, events) -> None:
    store, path = _committed(tmp_path, events)
    store.close()
    fd = os.open(path, os.O_RDONLY)
    assert try_lock(fd, exclusive=False)
    releaser = threading.Timer(0.1, unlock, args=(fd,))
    releaser.start()
    try:
        started = time.monotonic()
        writer = RuntimeEventStore(tmp_path / "ws")
        assert writer.append(events.text("e3")) is True
        assert time.monotonic() - started >= 0.09
        writer.close()
    finally:
        releaser.join()
        os.close(fd)


def test_a_writer_that_starts_during_a_read_makes_the_read_refuse(tmp_path: Path, events, monkeypatch) -> None:
    store, path = _committed(tmp_path, events)
    store.close()
    real_fdopen = os.fdopen

    started = []

    def fdopen_while_a_writer_starts(fd: int, *args, **kwargs):
        # The probe found no writer; now one starts and appends before the read is over (once: the writer
        # reads the ledger through here too).
        if not started:
            started.append(True)
            writer = RuntimeEventStore(tmp_path / "ws")
            writer.append(events.text("e3"))
            writer.close()
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(store_module.os, "fdopen", fdopen_while_a_writer_starts)
    with pytest.raises(LedgerInUse, match="started writing this ledger while it was read"):
        read_ledger(path, refuse_live=True)


_WRITER_STOPPED_MID_ROW = """
import os, sys
from resume_contract.contract import event_from_wire
from resume_contract.ledger import store
real_write = os.write
pieces = []

def write_then_stop(fd, data):
    pieces.append(len(data))
    if len(pieces) == 3:  # between the second and third piece of the row
        print("mid-row", flush=True)
        sys.stdin.readline()
    return real_write(fd, data)

store.os.write = write_then_stop
writer = store.RuntimeEventStore(sys.argv[1], write_piece_bytes=1 << 16)
writer.append(event_from_wire({"id": "e9", "ts": 1, "partial": False, "author": "user", "role": "user", "sessionId": "s1",
    "invocationId": "i1", "runId": "r1", "turnId": "t1", "content": {"kind": "text", "text": "x" * (1 << 20)}}))
"""


@pytest.mark.parametrize("command", ["plan", "plan --workspace"])
def test_a_writer_that_starts_after_the_probe_and_stops_mid_row_is_live_not_torn(tmp_path: Path, events, monkeypatch, run_cli, command: str) -> None:
    # Issue 23, item 3: the reader's probe found no writer; a writer then started and is between two pieces of
    # one row when the reader reads. The row is torn only in the middle of being written: "live" (exit 2),
    # never `torn_row` (exit 3), which would send on-call to `repair` under a live writer.
    store, path = _committed(tmp_path, events)
    store.close()
    real_probe = committed_file_module.has_live_writer
    writers: list[subprocess.Popen[str]] = []

    def probe_then_a_writer_starts(fd: int) -> bool:
        live = real_probe(fd)
        if not writers:
            writer = subprocess.Popen([sys.executable, "-c", _WRITER_STOPPED_MID_ROW, str(tmp_path / "ws")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            writers.append(writer)
            assert writer.stdout is not None and writer.stdout.readline() == "mid-row\n"
        return live

    monkeypatch.setattr(committed_file_module, "has_live_writer", probe_then_a_writer_starts)  # the reader's probe
    try:
        if command == "plan":
            code, out, err = run_cli("plan", str(path))
            assert (code, out) == (2, "") and "started writing this ledger while it was read" in err, err
        else:
            code, out, err = run_cli("plan", "--workspace", str(tmp_path / "ws"), "--jobs", "1", "--json")
            run = json.loads(out.splitlines()[0])
            assert code == 2 and run["status"] == "live", out
        assert not path.read_bytes().endswith(b"\n")  # the premise: the reader did see a torn row
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()


# -- 4. repair is idempotent and crash-safe -------------------------------------------------------------------
def _torn(tmp_path: Path, events) -> tuple[Path, bytes]:
    store, path = _committed(tmp_path, events)
    store.close()
    committed = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b'{"id":"e3","torn')
    return path, committed


def _quarantines(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.torn-*")) + sorted(path.parent.glob(f".{path.name}.torn-*"))


@pytest.mark.parametrize("step", ["write", "fsync", "replace", "truncate"])
def test_repair_cut_off_at_any_step_converges_when_run_again(tmp_path: Path, events, monkeypatch, step: str) -> None:
    path, committed = _torn(tmp_path, events)
    torn = path.read_bytes()[len(committed):]
    targets = {
        "write": (repair_module.os, "fsync"),  # fails before the quarantine is complete: ENOSPC-like
        "fsync": (repair_module.os, "fsync"),
        "replace": (repair_module.os, "replace"),
        "truncate": (repair_module.os, "ftruncate"),
    }
    module, name = targets[step]
    real = getattr(module, name)
    failure = OSError(errno.ENOSPC, "No space left on device") if step in ("write", "fsync") else KeyboardInterrupt()

    def fail(*args, **kwargs):
        raise failure

    monkeypatch.setattr(module, name, fail)
    with pytest.raises((OSError, KeyboardInterrupt)):
        repair_ledger(path)
    monkeypatch.setattr(module, name, real)
    # Cut off: the ledger still holds its torn tail, and no partial quarantine or temporary file is left.
    assert path.read_bytes() == committed + torn
    for leftover in _quarantines(path):
        assert not leftover.name.startswith(".") and leftover.read_bytes() == torn
    first = repair_ledger(path)
    again = repair_ledger(path)
    assert path.read_bytes() == committed and first.quarantine is not None and first.quarantine.read_bytes() == torn
    assert again.quarantine is None and _quarantines(path) == [first.quarantine]


def test_repair_replaces_a_partial_quarantine_an_older_version_left(tmp_path: Path, events) -> None:
    path, committed = _torn(tmp_path, events)
    torn = path.read_bytes()[len(committed):]
    import hashlib

    name = f"{path.name}.torn-{len(committed)}-{hashlib.sha256(torn).hexdigest()[:12]}"
    (path.parent / name).write_bytes(b"")  # ENOSPC after create, before write
    result = repair_ledger(path)
    assert result.quarantine == path.parent / name and result.quarantine.read_bytes() == torn
    assert path.read_bytes() == committed


def test_repair_refuses_a_fifo_or_a_directory_where_the_ledger_belongs_as_plan_does(tmp_path: Path, run_cli) -> None:
    # Issue 53 (6): a FIFO opened for repair read as an empty file, "no torn tail; nothing changed", exit 0 (which
    # docs/on-call.md reads as "the rest is clean"); plan says "not a file", exit 2.
    workspace = tmp_path / "ws"
    runs = workspace / "sessions" / "s1" / "runs"
    (runs / "fifo").mkdir(parents=True)
    os.mkfifo(runs / "fifo" / "runtime-events.jsonl")
    (runs / "directory" / "runtime-events.jsonl").mkdir(parents=True)
    for run in ("fifo", "directory"):
        code, out, err = run_cli("repair", "--workspace", str(workspace), "--session", "s1", "--run", run)
        assert (code, out) == (2, ""), (run, code, out, err)
        assert "not a regular file" in err and "no torn tail" not in err
        plan_code, _, _ = run_cli("plan", "--workspace", str(workspace), "--session", "s1", "--run", run)
        assert plan_code == 2
    assert stat.S_ISFIFO(os.lstat(runs / "fifo" / "runtime-events.jsonl").st_mode)
    assert sorted(p.name for p in (runs / "fifo").iterdir()) == ["runtime-events.jsonl"]


# -- 5, 6. the audit reports every run; a dead worker costs only its runs ----------------------------------------
def test_the_audit_reports_runs_it_cannot_read_with_their_cause(tmp_path: Path, run_cli) -> None:
    workspace = tmp_path / "ws"
    runs = workspace / "sessions" / "s1" / "runs"
    (runs / "fifo").mkdir(parents=True)
    os.mkfifo(runs / "fifo" / "runtime-events.jsonl")
    (runs / "directory" / "runtime-events.jsonl").mkdir(parents=True)
    (runs / "dangling").mkdir()
    (runs / "dangling" / "runtime-events.jsonl").symlink_to(tmp_path / "gone")
    (runs / "empty-run").mkdir()
    code, out, _ = run_cli("plan", "--workspace", str(workspace), "--json", "--jobs", "1")
    lines = [json.loads(line) for line in out.splitlines()]
    by_run = {line["runId"]: line for line in lines[:-1]}
    assert code == 2 and lines[-1]["summary"]["unreadable"] == 4 and lines[-1]["summary"]["total"] == 4
    assert "not a regular file" in by_run["fifo"]["error"] and "not a regular file" in by_run["directory"]["error"]
    assert "symlink" in by_run["dangling"]["error"] and "has no runtime-events.jsonl" in by_run["empty-run"]["error"]


def test_a_session_or_run_this_user_may_not_open_is_reported_and_the_rest_audited(tmp_path: Path, run_cli, events, monkeypatch) -> None:
    # As another user, `chmod 700` on a session or a run denies it (root is never denied, so it is injected here).
    from resume_contract.ledger import audit as audit_module

    workspace = tmp_path / "ws"
    store = RuntimeEventStore(workspace)
    for session, run in (("s1", "denied"), ("s1", "ok"), ("s2", "any")):
        store.append(events.text(f"{session}-{run}", sessionId=session, runId=run))
    store.close()
    listing, planning = os.listdir, audit_module.walk_run

    def listdir(path):
        if Path(path) == workspace / "sessions" / "s2" / "runs":
            raise PermissionError(13, "Permission denied", str(path))
        return listing(path)

    def walk_run(where, session_id, run_id, **options):
        if run_id == "denied":
            raise PermissionError(13, "Permission denied", run_id)  # as os.open names the step it opened in dir_fd
        return planning(where, session_id, run_id, **options)

    monkeypatch.setattr(os, "listdir", listdir)
    monkeypatch.setattr(audit_module, "walk_run", walk_run)
    code, out, _ = run_cli("plan", "--workspace", str(workspace), "--json", "--jobs", "1")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 2 and [(line["sessionId"], line["runId"], line["status"]) for line in lines[:-1]] == [
        ("s2", "", "unreadable"), ("s1", "denied", "unreadable"), ("s1", "ok", "safe_replay")
    ]
    assert lines[0]["error"] == f"{workspace / 'sessions' / 's2' / 'runs'}: cannot be listed: Permission denied"
    assert lines[1]["error"] == f"{workspace / 'sessions' / 's1' / 'runs' / 'denied'}: Permission denied"


def test_a_worker_that_dies_costs_only_its_own_run_and_the_summary_is_printed(tmp_path: Path, events, monkeypatch) -> None:
    from resume_contract.ledger import audit as audit_module

    workspace = tmp_path / "ws"
    store = RuntimeEventStore(workspace)
    for run in ("a", "b", "killer", "d"):
        store.append(_text(run))
    store.close()
    real = audit_module.summarize

    def summarize_or_die(job, *rest):
        if job[2] == "killer":
            os.kill(os.getpid(), signal.SIGKILL)
        return real(job, *rest)

    monkeypatch.setattr(audit_module, "summarize", summarize_or_die)
    found = audit_module.discover(workspace)
    summaries = list(audit_module.audit(found.ledgers, workers=2))
    assert [(s.run_id, s.status) for s in summaries] == [("a", "safe_replay"), ("b", "safe_replay"), ("d", "safe_replay"), ("killer", "unreadable")]
    assert "the worker process planning this run died" in summaries[3].error


def _text(run: str):
    from resume_contract.contract import event_from_wire

    return event_from_wire(
        {"id": f"e-{run}", "ts": 1, "partial": False, "author": "user", "role": "user", "sessionId": "s1",
         "invocationId": "i", "runId": run, "turnId": "t", "content": {"kind": "text", "text": "hi"}}
    )


@pytest.mark.slow
def test_a_ledger_larger_than_memory_is_read_in_bounded_memory(tmp_path: Path) -> None:
    big = tmp_path / "runtime-events.jsonl"
    with big.open("wb") as handle:
        handle.truncate(3 * 1024**3)  # sparse: 3 GiB of zeros, no disk used, and no newline: one torn row
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))"
    code = f"{limit}; from resume_contract.cli import main; raise SystemExit(main(['plan', {str(big)!r}]))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 3, result.stderr
    assert ":1: byte offset 0: torn_row: the last 3221225472 bytes" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_repair_finds_the_last_row_and_keeps_a_torn_tail_larger_than_memory_in_bounded_memory(tmp_path: Path) -> None:
    # Issue 23, item 5: repair read the whole file to find its last newline. 2 GiB of committed bytes and a
    # 300 MiB torn tail (sparse: no disk used but the quarantine's) are repaired under a 256 MiB address space.
    import hashlib

    big = tmp_path / "runtime-events.jsonl"
    committed, torn = 2 * 1024**3, 300 * 1024**2
    with big.open("wb") as handle:
        handle.truncate(committed - 1)
        handle.seek(committed - 1)
        handle.write(b"\n")
        handle.truncate(committed + torn)
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (256 * 1024**2, 256 * 1024**2))"
    code = f"{limit}; from resume_contract.cli import main; raise SystemExit(main(['repair', {str(big)!r}]))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    zeros = hashlib.sha256()
    for _ in range(torn // (1 << 20)):
        zeros.update(bytes(1 << 20))
    quarantine = tmp_path / f"runtime-events.jsonl.torn-{committed}-{zeros.hexdigest()[:12]}"
    assert big.stat().st_size == committed and quarantine.stat().st_size == torn
    with quarantine.open("rb") as handle:
        assert handle.read(1 << 20) == bytes(1 << 20) and handle.seek(-5, os.SEEK_END) and handle.read() == bytes(5)


def _write_rows(path: Path, count: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        for start in range(0, count, 100_000):
            handle.write("".join(
                f'{{"id":"evt-{index:08d}","ts":{index},"partial":false,"sessionId":"s1","invocationId":"i1","runId":"r1","turnId":"t{index // 8}",'
                f'"author":"agent","role":"model","content":{{"kind":"function_call","id":"c{index}","name":"write_file","args":{{"path":"notes/{index}.md","mode":"overwrite","body":"the release notes of turn {index // 8}"}}}}}}\n'
                for index in range(start, min(count, start + 100_000))
            ))


@pytest.mark.slow
def test_a_writer_reopens_a_large_ledger_in_bounded_memory(tmp_path: Path) -> None:
    # Issue 23, item 5: reopening held every event decoded and a digest per id, 1.1 GB for a 170 MB ledger.
    # A 1M-event ledger (~280 MB) is reopened under a 512 MiB address space, and still knows every id.
    workspace = tmp_path / "ws"
    ledger = workspace / "sessions" / "s1" / "runs" / "r1" / "runtime-events.jsonl"
    _write_rows(ledger, 1_000_000)
    assert ledger.stat().st_size > 250 * 1024**2
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (512 * 1024**2, 512 * 1024**2))"
    code = f"""{limit}
import sys
import msgspec
from resume_contract.errors import DuplicateEventId
from resume_contract.ledger.store import RuntimeEventStore
with RuntimeEventStore({str(workspace)!r}) as store:
    row = open({str(ledger)!r}, "rb").readline().rstrip(b"\\n")
    first = store.contract.model.decode_row(row)
    assert store.append(first) is False  # an exact retry of the first row
    try:
        store.append(msgspec.structs.replace(first, ts=-1))
    except DuplicateEventId:
        pass
    else:
        sys.exit("a changed event with a committed id was appended")
    assert store.append(msgspec.structs.replace(first, id="new")) is True
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    with ledger.open("rb") as handle:
        assert sum(piece.count(b"\n") for piece in iter(lambda: handle.read(1 << 22), b"")) == 1_000_001


# -- 15. flags ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [("crash", "--jobs", "-1"), ("crash", "--jobs", "0"), ("verify", "--jobs", "300"), ("plan", "--workspace", ".", "--jobs", "1000"), ("diff", "", "HEAD")],
)
def test_bad_flags_are_usage_errors(args, run_cli) -> None:
    code, out, err = run_cli(*args)
    assert (code, out) == (2, "") and err.startswith("resume-contract: ") and "Traceback" not in err


@pytest.mark.slow
def test_an_audit_reads_a_run_larger_than_memory_and_goes_on(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    for run in ("big", "small"):
        ledger = workspace / "sessions" / "s1" / "runs" / run / "runtime-events.jsonl"
        ledger.parent.mkdir(parents=True)
        ledger.write_bytes(b"")
    with (workspace / "sessions" / "s1" / "runs" / "big" / "runtime-events.jsonl").open("wb") as handle:
        handle.truncate(3 * 1024**3)
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))"
    code = f"{limit}; from resume_contract.cli import main; raise SystemExit(main(['plan', '--workspace', {str(workspace)!r}, '--jobs', '1']))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 3, result.stderr
    assert "corrupt    s1/big: " in result.stdout and "torn_row" in result.stdout
    assert "2 runs: 1 safe_replay, 0 blocked, 1 corrupt" in result.stdout and "Traceback" not in result.stderr


@pytest.mark.parametrize("bad", ["s1\n", "s1/../s2", ""])
def test_a_ledger_id_that_is_not_a_plain_name_is_refused(tmp_path: Path, run_cli, bad: str) -> None:
    code, out, err = run_cli("plan", "--workspace", str(tmp_path), "--session", bad or "s1", "--run", bad or "")
    assert (code, out) == (2, "") and "Traceback" not in err


# -- found by an attacker after the first round: races between a check and a use ----------------------------------
def test_a_run_directory_swapped_for_a_link_while_repair_waits_changes_nothing_outside(tmp_path: Path, events, monkeypatch, snapshot) -> None:
    path, committed = _torn(tmp_path, events)
    run_dir = path.parent
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "runtime-events.jsonl").write_bytes(b'{"id":"victim"}\n{"torn')
    before = snapshot(outside)
    real_lock = repair_module.lock_for_writing

    def swap_then_lock(fd: int, wait_seconds: float = 1.0) -> bool:
        run_dir.rename(run_dir.with_name("r1-moved"))  # the attacker swaps the run for a link meanwhile
        run_dir.symlink_to(outside)
        return real_lock(fd, wait_seconds)

    monkeypatch.setattr(repair_module, "lock_for_writing", swap_then_lock)
    result = repair_ledger(path, workspace=tmp_path / "ws")
    assert snapshot(outside) == before
    moved = run_dir.with_name("r1-moved")
    assert (moved / "runtime-events.jsonl").read_bytes() == committed  # the ledger that was opened, in place
    assert result.quarantine is not None and (moved / result.quarantine.name).is_file()


def test_a_hard_linked_ledger_is_not_truncated_or_appended_to(tmp_path: Path, events, run_cli) -> None:
    path, committed = _torn(tmp_path, events)
    victim = tmp_path / "victim.jsonl"
    torn = path.read_bytes()
    path.unlink()
    victim.write_bytes(torn)
    os.link(victim, path)
    code, _, err = run_cli("repair", "--workspace", str(tmp_path / "ws"), "--session", "s1", "--run", "r1")
    assert code == 2 and "hard links" in err and victim.read_bytes() == torn
    with pytest.raises(EscapesWorkspace, match="hard links"):
        RuntimeEventStore(tmp_path / "ws").append(events.text("e9"))


def test_a_snapshot_that_is_a_link_or_a_fifo_is_not_followed_and_does_not_hang(tmp_path: Path, run_cli) -> None:
    run_dir = tmp_path / "ws" / "sessions" / "s1" / "runs" / "r1"
    partials = run_dir / "runtime-partials"
    partials.mkdir(parents=True)
    (run_dir / "runtime-events.jsonl").write_bytes(b"")
    secret = tmp_path / "secret.partial"
    secret.write_text('{"version":1,"event":{"id":"SECRET","sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","ts":1,"partial":true,"author":"agent","role":"model"}}\n')
    (partials / "a.partial").symlink_to(secret)
    os.mkfifo(partials / "b.partial")
    code, out, _ = run_cli("plan", "--json", "--workspace", str(tmp_path / "ws"), "--session", "s1", "--run", "r1")
    assert code == 0 and "SECRET" not in out and json.loads(out)["sourceRuntimeEventHighWater"] == 0


# -- issue 23, item 5: memory bounded when the store reopens a ledger, and in repair ----------------------------
@pytest.mark.parametrize("in_a_dict", [1 << 16, 3])
@pytest.mark.parametrize("hashes", ["python", "all colliding"])
def test_a_reopened_writer_tells_exact_retries_from_new_events_by_reading_rows_back(tmp_path: Path, events, monkeypatch, in_a_dict: int, hashes: str, numpy_or_not: str) -> None:
    # The writer keeps only where each id's row starts (past a few ids, a hash of each): a hash found sends it
    # back to the row in the file, so ids whose hashes collide are still told apart.
    from resume_contract.ledger import committed_ids

    monkeypatch.setattr(committed_ids, "IN_A_DICT", in_a_dict)
    if hashes == "all colliding":
        monkeypatch.setattr(committed_ids, "hash", lambda value: 7, raising=False)
    store = RuntimeEventStore(tmp_path / "ws")
    for number in range(10):
        store.append(events.text(f"e{number}", f"text {number}"))
    store.close()
    path = store.path("s1", "r1")
    with RuntimeEventStore(tmp_path / "ws") as reopened:
        assert reopened.append(events.text("e3", "text 3")) is False
        with pytest.raises(DuplicateEventId):
            reopened.append(events.text("e3", "other text"))
        for number in range(10, 16):  # appended ids join the index (and, past IN_A_DICT, its sorted arrays)
            assert reopened.append(events.text(f"e{number}", f"text {number}")) is True
        assert reopened.append(events.text("e12", "text 12")) is False and reopened.append(events.text("e7", "text 7")) is False
        with pytest.raises(DuplicateEventId):
            reopened.append(events.text("e14", "changed"))
        assert reopened.append(events.text("new", "x")) is True
    assert [event.id for event in read_ledger(path).events] == [f"e{number}" for number in range(16)] + ["new"]
