"""A damaged SQLite store never reads safer (issue 53, 7): where runtime.sqlite keeps a fact twice, the copies are
compared, and a store whose copies disagree is refused (exit 2, naming the file and `PRAGMA integrity_check`).

Each test performs one flip the page-flip fuzz found reading more permissively on 876d4c8, on a copy of a fixture the
reference's own writers wrote (tests/conformance_sqlite/reference): before, the plan proceeded further than the
undamaged file's; now it is refused. The fuzz itself (tools/store_fuzz.py: one bit flipped in each page of every
fixture, in turn) is run whole in the slow tests and must find no more permissive decision.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests" / "conformance_sqlite" / "reference"


def _damaged(tmp_path: Path, case: str, offset: int, bit: int) -> Path:
    workspace = tmp_path / "WS"
    workspace.mkdir()
    data = bytearray((REFERENCE / case / "WS" / "runtime.sqlite").read_bytes())
    data[offset] ^= 1 << bit
    (workspace / "runtime.sqlite").write_bytes(bytes(data))
    return workspace


def _plan(run_cli, workspace: Path, session: str, run: str, *more: str) -> tuple[int, str, str]:
    return run_cli("plan", "--workspace", str(workspace), "--session", session, "--run", run, *more)


def _refused_as_damaged(code: int, out: str, err: str, workspace: Path) -> None:
    assert (code, out) == (2, ""), (code, out, err)
    assert f"{workspace / 'runtime.sqlite'}: damaged:" in err and "PRAGMA integrity_check" in err, err


@pytest.mark.parametrize(
    ("case", "offset", "bit", "session", "run", "what"),
    [
        # an entry of the index on (session, run) changed: the call and its dispatch hidden, blocked -> safe_replay
        ("S_t1_after_generic_call", 3548, 2, "session-1", "run-1", "its index on (session, run) gives"),
        # a dispatch's refs.operationId "op-1" -> "oP-1": the call read as never dispatched, no longer to verify
        ("T_P3", 37778, 5, "session-1", "run-1", "names it as its dispatch"),
        ("B_refused_mode", 37594, 5, "session-1", "run-1", "names it as its dispatch"),
        # a partial snapshot's turn_id column changed: the snapshot skipped, its duplicate id gone, blocked -> safe_replay
        ("S_partial_duplicate_event_id", 9985, 0, "session-1", "run-1", "which its stream key authenticates"),
    ],
)
def test_a_flip_that_read_safer_is_refused_as_damage(tmp_path: Path, run_cli, case: str, offset: int, bit: int, session: str, run: str, what: str) -> None:
    expected = json.loads((REFERENCE / case / "expected.json").read_text(encoding="utf-8"))
    workspace = _damaged(tmp_path, case, offset, bit)
    high_water = [] if expected["expectedHighWater"] is None else ["--expected-high-water", str(expected["expectedHighWater"])]
    code, out, err = _plan(run_cli, workspace, session, run, *high_water)
    _refused_as_damaged(code, out, err, workspace)
    assert what in err, err
    assert sorted(path.name for path in workspace.iterdir()) == ["runtime.sqlite"]  # (read as immutable: nothing created)


def _copy(tmp_path: Path, case: str) -> Path:
    workspace = tmp_path / "WS"
    shutil.copytree(REFERENCE / case / "WS", workspace)
    return workspace


def _write(workspace: Path, *statements: str) -> None:
    connection = sqlite3.connect(workspace / "runtime.sqlite", isolation_level=None)
    for statement in statements:
        connection.execute(statement)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    for side in ("-wal", "-shm"):
        (workspace / f"runtime.sqlite{side}").unlink(missing_ok=True)


def test_an_event_kind_column_that_is_not_its_payloads_is_damage(tmp_path: Path, run_cli) -> None:
    # The reference's writer derives event_kind from the payload (runtimeEventKind): a row whose column says
    # otherwise was changed after it was written.
    workspace = _copy(tmp_path, "T_P3")
    _write(workspace, "UPDATE runtime_events SET event_kind = 'runtime_fact' WHERE event_id = 'op-1_dispatch'")
    code, out, err = _plan(run_cli, workspace, "session-1", "run-1")
    _refused_as_damaged(code, out, err, workspace)
    assert "its event_kind column says 'runtime_fact' but its payload is a 'tool_dispatch' event" in err


def test_the_audit_refuses_a_store_whose_listing_index_lost_runs(tmp_path: Path, run_cli) -> None:
    # One bit of the index the runs are listed through (its page's cell count): run-b, blocked, and run-c leave the
    # listing, and on 876d4c8 the audit reported run-a alone, exit 0.
    workspace = _damaged(tmp_path, "S_multi_run_one_session", 3076, 3)
    code, out, err = run_cli("plan", "--workspace", str(workspace))
    _refused_as_damaged(code, out, err, workspace)
    assert "by the index its runs are listed through" in err


@pytest.mark.slow
def test_no_page_flip_of_any_fixture_reads_more_permissively() -> None:
    spec = importlib.util.spec_from_file_location("store_fuzz", ROOT / "tools" / "store_fuzz.py")
    assert spec is not None and spec.loader is not None
    fuzz = importlib.util.module_from_spec(spec)
    sys.modules["store_fuzz"] = fuzz  # (its dataclass looks its module up)
    spec.loader.exec_module(fuzz)
    tally, found = fuzz.Tally(), []
    cases = sorted(path for path in REFERENCE.iterdir() if (path / "expected.json").is_file())
    for case in cases:
        fuzz.fuzz_case(case, 1, found, tally)
    assert len(cases) == 66 and tally.flips > 5000
    assert (tally.permissive, tally.crashed) == (0, 0), found[:5]
    assert tally.refused > 1000  # (the flips are real: a fifth of them leave a store that is refused)


@pytest.mark.parametrize(("case", "offset", "bit"), [("S_partial_corrupt_skipped", 11774, 7), ("S_partial_segments_offset", 37565, 7)])
def test_a_flip_that_leaves_text_that_is_not_utf8_in_a_key_is_read_without_a_traceback(tmp_path: Path, run_cli, case: str, offset: int, bit: int) -> None:
    # A snapshot's stream key, or a row's invocation id, read back from bytes that are not UTF-8 was bound again as a
    # query parameter: UnicodeEncodeError, a traceback (found by the fuzz at four flips a page).
    workspace = _damaged(tmp_path, case, offset, bit)
    code, out, err = _plan(run_cli, workspace, "session-1", "run-1")
    assert code in (0, 1, 2, 3) and "Traceback" not in err and "UnicodeEncodeError" not in err, (code, out, err)
    code, out, err = run_cli("plan", "--workspace", str(workspace))
    assert "Traceback" not in err and "UnicodeEncodeError" not in err, (code, out, err)
