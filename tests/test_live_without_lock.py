"""A run is live whoever writes it: a process that holds the ledger open for writing without our lock (as the
reference TypeScript store does) is seen in the system's open files, where the system shows them (Linux)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pytest
from resume_contract_generated.catalog import CANONICAL_LEDGER_ROWS, PREFIX_LENGTHS
from resume_contract_generated.runtime_event import RuntimeEvent

from resume_contract.ledger.store import RuntimeEventStore
from resume_contract.system.open_files import VISIBLE, OpenFileTable

pytestmark = pytest.mark.skipif(not VISIBLE, reason="this system does not show other processes' open files")

# A writer that takes no lock: opens the ledger for appending, says so, and keeps it open until stdin closes.
_HOLDER = """
import sys
handle = open(sys.argv[1], sys.argv[2])
print("open", flush=True)
sys.stdin.read()
"""


def _ledger(workspace: Path, run: str) -> Path:
    with RuntimeEventStore(workspace) as store:
        for row in CANONICAL_LEDGER_ROWS["ok"][: PREFIX_LENGTHS["after_function_response"]]:
            event = msgspec.json.decode(row, type=RuntimeEvent)
            store.append(msgspec.structs.replace(event, session_id="s", run_id=run))
        return store.path("s", run)


@contextmanager
def _held(path: Path, mode: str) -> Iterator[subprocess.Popen[str]]:
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        yield holder
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def test_a_ledger_held_open_for_appending_without_a_lock_is_live_naming_the_process(tmp_path: Path, run_cli) -> None:
    path = _ledger(tmp_path, "running")
    before = path.read_bytes()
    with _held(path, "a") as holder:
        code, out, err = run_cli("plan", str(path))
        assert (code, out) == (2, "")
        assert f"open for writing by process {holder.pid} (" in err and "plan it once that process has stopped" in err
        code, out, _ = run_cli("plan", "--workspace", str(tmp_path), "--json")
        lines = [json.loads(line) for line in out.splitlines()]
        assert code == 2 and lines[0]["status"] == "live" and str(holder.pid) in lines[0]["error"]
    assert path.read_bytes() == before
    assert run_cli("plan", str(path))[0] == 0  # the writer gone, the crashed run is planned


def test_a_reader_holding_the_ledger_open_does_not_make_it_live(tmp_path: Path, run_cli) -> None:
    path = _ledger(tmp_path, "done")
    with _held(path, "r"):
        assert run_cli("plan", str(path))[0] == 0


def test_the_scan_finds_a_writer_through_another_name_for_the_same_file(tmp_path: Path) -> None:
    path = _ledger(tmp_path, "renamed")
    with _held(path, "r+") as holder:
        moved = path.with_name("moved.jsonl")
        path.rename(moved)
        os.symlink(moved, tmp_path / "link.jsonl")
        writers = OpenFileTable.scan().writers_of(os.stat(tmp_path / "link.jsonl"))
        assert [writer.pid for writer in writers] == [holder.pid]


def test_repair_leaves_a_torn_ledger_alone_while_a_process_holds_it_open_for_writing(tmp_path: Path, run_cli) -> None:
    path = _ledger(tmp_path, "torn")
    with path.open("ab") as handle:
        handle.write(b'{"id":"half')
    before = path.read_bytes()
    with _held(path, "a") as holder:
        code, _, err = run_cli("repair", str(path))
        assert code == 1 and f"open for writing by process {holder.pid} (" in err and "stop it before repairing" in err
        assert path.read_bytes() == before and [p.name for p in path.parent.iterdir()] == [path.name]
    code, out, _ = run_cli("repair", str(path))
    assert code == 0 and path.read_bytes() == before[: before.rindex(b"\n") + 1]


def test_repair_is_not_refused_by_a_child_another_thread_forks_while_it_runs(tmp_path: Path, monkeypatch) -> None:
    """A process that forks a child while repair runs (the crash harness forks children from threads) hands the
    child, until its exec, every descriptor it holds: the child must not read as the ledger's writer."""
    from resume_contract.ledger import repair as repair_module

    path = _ledger(tmp_path, "torn")
    with path.open("ab") as handle:
        handle.write(b'{"id":"half')
    real_scan = OpenFileTable.scan
    forked: list[int] = []

    def scan_while_a_forked_child_lives(of: os.stat_result | None = None) -> OpenFileTable:
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # the instant between fork and exec, held open: it inherited every descriptor
            os.close(write)
            os.read(read, 1)
            os._exit(0)
        os.close(read)
        forked.append(child)
        try:
            return real_scan(of)
        finally:
            os.close(write)
            os.waitpid(child, 0)

    monkeypatch.setattr(repair_module.OpenFileTable, "scan", scan_while_a_forked_child_lives)
    result = repair_module.repair_ledger(path)
    assert forked and result.torn_bytes == len(b'{"id":"half') and path.read_bytes().endswith(b"\n")


def test_a_reader_whose_descriptor_is_reused_for_writing_mid_scan_is_not_the_ledgers_writer(tmp_path: Path, monkeypatch) -> None:
    """A process reading the ledger closes it and opens another file for writing under the same descriptor
    number just as the scan reads that descriptor's flags (racing executors did, 1 round in 120): the ledger's
    file and the other file's flags must not be paired into a writer of the ledger."""
    from resume_contract.system import open_files

    ledger, other = tmp_path / "ledger.jsonl", tmp_path / "claim.tmp"
    ledger.write_bytes(b"{}\n")
    reading = os.open(ledger, os.O_RDONLY)
    real_flags = open_files._open_flags
    swapped: list[int] = []

    def flags_read_after_the_number_is_reused(pid: int, fd: str) -> int | None:
        if int(fd) == reading and not swapped:
            writing = os.open(other, os.O_WRONLY | os.O_CREAT)
            os.dup2(writing, reading)  # the reader's number now holds a file open for writing
            os.close(writing)
            swapped.append(reading)
        return real_flags(pid, fd)

    monkeypatch.setattr(open_files, "_open_flags", flags_read_after_the_number_is_reused)
    try:
        status = os.stat(ledger)
        assert OpenFileTable.scan(of=status).writers_of(status) == ()
        assert swapped == [reading]
        writing = os.open(ledger, os.O_WRONLY)  # and a real writer is still seen
        try:
            assert [writer.descriptor for writer in OpenFileTable.scan(of=status).writers_of(status)] == [writing]
        finally:
            os.close(writing)
    finally:
        os.close(reading)
