"""The run-header store: bounded strict reads, atomic replacement, the exclusive claim, containment, and a
writer killed mid-write leaving the old header or the new one, never a mix."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from resume_contract.errors import (
    EscapesWorkspace,
    InvalidLedgerId,
    RunHeaderExists,
    RunHeaderMissing,
    RunHeaderRefused,
    RunHeaderUnreadable,
)
from resume_contract.ledger.continuation_run import read_header
from resume_contract.ledger.run_headers import MAX_HEADER_BYTES, RunHeaderStore

HEADER = {"runId": "r1", "sessionId": "s1", "status": "created", "cwd": "/workspace/repo"}


def _files(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_a_header_written_reads_back_and_a_write_replaces_it_whole(tmp_path: Path) -> None:
    store = RunHeaderStore(tmp_path)
    store.write("s1", "r1", HEADER)
    assert store.read("s1", "r1") == HEADER
    store.write("s1", "r1", {**HEADER, "status": "completed"})
    assert store.read("s1", "r1") == {**HEADER, "status": "completed"}
    # One file, no temporary left behind by a write that finished.
    assert sorted(os.listdir(tmp_path / "sessions/s1/runs/r1")) == ["run.json"]
    assert json.loads((tmp_path / "sessions/s1/runs/r1/run.json").read_text()) == {**HEADER, "status": "completed"}


def test_create_is_exclusive_and_a_lost_claim_changes_nothing(tmp_path: Path) -> None:
    store = RunHeaderStore(tmp_path)
    store.create("s1", "r1", HEADER)
    before = _files(tmp_path)
    with pytest.raises(RunHeaderExists, match="already has a header"):
        store.create("s1", "r1", {**HEADER, "status": "running"})
    assert _files(tmp_path) == before


def test_a_missing_header_or_run_is_missing_not_empty(tmp_path: Path) -> None:
    store = RunHeaderStore(tmp_path)
    with pytest.raises(RunHeaderMissing):
        store.read("s1", "r1")
    assert store.read_or_none("s1", "r1") is None
    (tmp_path / "sessions/s1/runs/r1").mkdir(parents=True)
    with pytest.raises(RunHeaderMissing, match="no run header"):
        store.read("s1", "r1")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[1, 2]", "a JSON list, not an object"),
        (b"{\"a\": 1", "not JSON"),
        (b"{\"a\": 1, \"a\": 2}", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"{\"pad\": \"" + b"x" * MAX_HEADER_BYTES + b"\"}", "larger than"),
    ],
)
def test_a_header_that_is_not_one_json_object_is_unreadable_with_its_reason(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "sessions/s1/runs/r1/run.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    with pytest.raises(RunHeaderUnreadable, match=message) as raised:
        RunHeaderStore(tmp_path).read("s1", "r1")
    assert str(path) in str(raised.value)
    assert read_header(path) is None  # the planner's reader is this one: to it, an unreadable header


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "", "../../etc", "x" * 129])
def test_path_traversing_ids_are_refused_before_the_disk_is_touched(tmp_path: Path, bad: str) -> None:
    store = RunHeaderStore(tmp_path / "ws")
    for call in (lambda: store.read(bad, "r1"), lambda: store.write("s1", bad, HEADER), lambda: store.create(bad, "r1", HEADER)):
        with pytest.raises(InvalidLedgerId):
            call()
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize("step", ["sessions", "sessions/s1", "sessions/s1/runs", "sessions/s1/runs/r1"])
def test_a_symlink_at_any_step_below_the_workspace_is_refused_for_reads_and_writes(tmp_path: Path, step: str) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    (workspace / step).parent.mkdir(parents=True, exist_ok=True)
    (workspace / step).symlink_to(outside, target_is_directory=True)
    store = RunHeaderStore(workspace)
    for call in (lambda: store.read("s1", "r1"), lambda: store.write("s1", "r1", HEADER), lambda: store.create("s1", "r1", HEADER)):
        with pytest.raises(EscapesWorkspace):
            call()
    assert list(outside.rglob("*")) == []


def test_a_symlinked_header_is_refused_and_never_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(HEADER))
    path = tmp_path / "ws/sessions/s1/runs/r1/run.json"
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    store = RunHeaderStore(tmp_path / "ws")
    with pytest.raises(EscapesWorkspace, match="symlink"):
        store.read("s1", "r1")
    assert read_header(path) is None  # the planner: an unreadable header
    with pytest.raises(RunHeaderExists):
        store.create("s1", "r1", {**HEADER, "status": "running"})
    assert json.loads(target.read_text()) == HEADER  # the link's target was never written


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {1: "a"}, {"x": object()}, ["not", "an", "object"]])
def test_a_header_that_is_not_plain_json_is_refused_with_nothing_written(tmp_path: Path, bad) -> None:
    with pytest.raises(RunHeaderRefused):
        RunHeaderStore(tmp_path).write("s1", "r1", bad)
    assert _files(tmp_path) == {}


_WRITER = textwrap.dedent(
    """
    import sys
    from resume_contract.ledger.run_headers import RunHeaderStore

    store = RunHeaderStore(sys.argv[1], durable=False)
    headers = [{"runId": "r1", "status": name, "pad": name * (300 << 10)} for name in ("old", "new")]
    store.write("s1", "r1", headers[0])
    print("writing", flush=True)
    index = 1
    while True:
        store.write("s1", "r1", headers[index])
        index = 1 - index
    """
)


@pytest.mark.slow
def test_a_writer_killed_mid_write_leaves_the_old_header_or_the_new_never_a_mix(tmp_path: Path) -> None:
    """Each write is 900 KiB (300 Ki three-byte names), so most kills land while one is being written; every kill must leave a whole header."""
    seen = set()
    generator = random.Random(27)
    for attempt in range(8):
        workspace = tmp_path / f"ws{attempt}"
        child = subprocess.Popen([sys.executable, "-c", _WRITER, str(workspace)], stdout=subprocess.PIPE)
        assert child.stdout is not None and child.stdout.readline().strip() == b"writing"
        time.sleep(generator.uniform(0.02, 0.3))
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
        child.stdout.close()
        header = RunHeaderStore(workspace).read("s1", "r1")
        assert header["status"] in ("old", "new")
        assert header["pad"] == header["status"] * (300 << 10)
        seen.add(header["status"])
        left = sorted(os.listdir(workspace / "sessions/s1/runs/r1"))
        assert "run.json" in left and all(name == "run.json" or name.startswith(".run.json.") for name in left)
    assert seen  # at least one kill was observed (which header survives depends on where each kill landed)
