"""Reading a workspace's runtime.sqlite beside a live runtime: read-only, one consistent snapshot a run, nothing
created, nothing changed, never locking the writer out; and every store this tool does not read refused clearly.

The writer here is a real second process using SQLite as the reference's store does (WAL, synchronous=FULL, each
transaction `BEGIN IMMEDIATE ... COMMIT`), appending a run's tool calls two events a transaction (a call and its
response): every committed prefix has an even number of events and is safe_replay, so a plan of anything but a
committed prefix shows (an odd high-water, or a dangling call).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from resume_contract import plan_run
from resume_contract.errors import LedgerMissing, StoreBusy, StoreUnreadable
from resume_contract.ledger.sqlite_store import SqliteStore

REFERENCE = Path(__file__).parent / "conformance_sqlite" / "reference"

WRITER = r'''
import json, sqlite3, sys, time
path, count, pace = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
connection = sqlite3.connect(path, isolation_level=None, timeout=10)
connection.execute("PRAGMA journal_mode=WAL")
connection.execute("PRAGMA synchronous=FULL")
def event(seq, event_id, **fields):
    payload = {"id": event_id, "sessionId": "live", "invocationId": "inv-live", "runId": "run-live", "turnId": "turn-live",
               "ts": seq, "partial": False, **fields}
    kind = payload["content"]["kind"]  # (the event_kind column the reference's writer derives from the payload)
    return (event_id, "live", "inv-live", "run-live", "turn-live", seq, kind, json.dumps(payload, sort_keys=True, separators=(",", ":")), seq)
errors = 0
for n in range(count):
    call = {"kind": "function_call", "id": f"c{n}", "name": "Bash", "args": {"n": n}}
    response = {"kind": "function_response", "id": f"c{n}", "name": "Bash", "result": {"ok": True}}
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany("INSERT INTO runtime_events (event_id, session_id, invocation_id, run_id, turn_id, event_seq, event_kind, payload_json, committed_at) VALUES (?,?,?,?,?,?,?,?,?)", [
            event(2 * n + 1, f"call-{n}", author="agent", role="model", content=call),
            event(2 * n + 2, f"response-{n}", author="tool", role="tool", content=response)])
        connection.execute("COMMIT")
    except sqlite3.OperationalError as error:
        errors += 1
        print("writer error:", error, file=sys.stderr)
        connection.execute("ROLLBACK")
    print(n, flush=True)
    time.sleep(pace)
print("errors", errors, flush=True)
sys.stdin.readline()  # closed when told: the last connection to close removes the -wal and -shm files
connection.close()
'''


def _store(tmp_path: Path) -> Path:
    """A copy of a reference-written workspace (runtime layout, user_version 12, WAL header, no -wal/-shm)."""
    shutil.copytree(REFERENCE / "T_P6" / "WS", tmp_path / "WS")
    for path in (tmp_path / "WS").iterdir():
        path.chmod(0o644)
    return tmp_path / "WS"


def _writer(database: Path, count: int, pace: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(database), str(count), str(pace)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_plans_beside_a_live_writer_are_committed_prefixes_and_never_lock_it_out(tmp_path: Path) -> None:
    workspace = _store(tmp_path)
    writer = _writer(workspace / "runtime.sqlite", 400, 0.005)
    assert writer.stdout is not None
    writer.stdout.readline()  # the first transaction is committed
    seen = []
    lines: list[str] = []
    reading = threading.Thread(target=lambda: lines.extend(iter(writer.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reading.start()
    while not any(line.startswith("errors") for line in lines):
        plan = plan_run(workspace, "live", "run-live")
        high_water = plan.source_runtime_event_high_water
        assert high_water % 2 == 0, f"a plan of half a transaction: high-water {high_water}"
        assert plan.disposition == "safe_replay", (high_water, plan.diagnostics)
        assert not seen or high_water >= seen[-1], "a later plan saw fewer committed events"
        seen.append(high_water)
        assert writer.poll() is None, writer.stderr.read() if writer.stderr else ""
    assert lines[-1].strip() == "errors 0"  # never locked out: every BEGIN IMMEDIATE ... COMMIT went through
    assert len(seen) >= 5 and len(set(seen)) >= 3, seen  # planned while it wrote, at several committed prefixes
    assert plan_run(workspace, "live", "run-live").source_runtime_event_high_water == 800
    assert sorted(os.listdir(workspace)) == ["runtime.sqlite", "runtime.sqlite-shm", "runtime.sqlite-wal"]  # the writer's
    writer.stdin.write("close\n")  # type: ignore[union-attr]
    writer.stdin.close()  # type: ignore[union-attr]
    assert writer.wait(timeout=60) == 0
    # The reader holds nothing open: the writer's close was the last, and removed its -wal and -shm.
    assert sorted(os.listdir(workspace)) == ["runtime.sqlite"], "a -wal or -shm file was left behind"


def test_reading_a_quiet_store_changes_no_byte_and_creates_no_file(tmp_path: Path) -> None:
    workspace = _store(tmp_path)
    before = (_digest(workspace / "runtime.sqlite"), os.stat(workspace / "runtime.sqlite").st_mtime_ns)
    for _ in range(3):
        assert plan_run(workspace, "session-1", "run-1").disposition == "safe_replay"
    assert sorted(os.listdir(workspace)) == ["runtime.sqlite"]
    assert (_digest(workspace / "runtime.sqlite"), os.stat(workspace / "runtime.sqlite").st_mtime_ns) == before


def test_a_writer_that_came_and_went_between_two_reads_is_seen(tmp_path: Path) -> None:
    # The quiet store is read as immutable (no lock, nothing created); a writer that opens it, commits and closes
    # (checkpointing into the file) changes the file: the next read of the same open store sees its rows.
    workspace = _store(tmp_path)
    with SqliteStore(workspace) as store:
        assert store.runs() == [("session-1", "run-1")]
        writer = _writer(workspace / "runtime.sqlite", 3, 0)
        _, err = writer.communicate("close\n", timeout=60)
        assert writer.returncode == 0, err
        assert store.runs() == [("live", "run-live"), ("session-1", "run-1")]
        assert len(store.read_run("live", "run-live").events) == 6
    assert sorted(os.listdir(workspace)) == ["runtime.sqlite"]


def test_a_database_locked_past_the_wait_is_store_busy_naming_it(tmp_path: Path) -> None:
    workspace = _store(tmp_path)
    holder = subprocess.Popen(
        # A runtime with the database open in WAL mode (its -wal and -shm beside it) that then takes it exclusively.
        [sys.executable, "-c", "import sqlite3,sys,time\nc=sqlite3.connect(sys.argv[1],isolation_level=None)\n"
         "c.execute('PRAGMA journal_mode=WAL'); c.execute('UPDATE runtime_events SET committed_at=committed_at')\n"
         "c.execute('PRAGMA locking_mode=EXCLUSIVE'); c.execute('BEGIN EXCLUSIVE')\n"
         "c.execute(\"UPDATE runtime_events SET committed_at=committed_at\")\nprint('held',flush=True)\ntime.sleep(30)",
         str(workspace / "runtime.sqlite")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(StoreBusy, match=r"runtime\.sqlite: the database stayed locked for 0\.5 s"):
            with SqliteStore(workspace, busy_timeout=0.5) as store:
                store.read_run("session-1", "run-1")
        assert time.monotonic() - started < 20
    finally:
        holder.kill()
        holder.wait()


def test_what_is_not_a_store_this_tool_reads_is_refused_with_exit_2(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    cases = {}
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "runtime.sqlite").write_bytes(b"not a database at all\n" * 40)
    cases[garbage] = "not a SQLite database"
    empty = tmp_path / "empty"
    empty.mkdir()
    connection = sqlite3.connect(empty / "runtime.sqlite")
    connection.execute("PRAGMA user_version = 12")
    connection.execute("CREATE TABLE other (x)")
    connection.close()
    cases[empty] = "runtime_events: no such table"
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "runtime.sqlite").symlink_to(_store(tmp_path / "elsewhere") / "runtime.sqlite")
    cases[linked] = "a symlink"
    for workspace, said in cases.items():
        before = sorted(os.listdir(workspace))
        code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1")
        assert (code, out) == (2, ""), (workspace, code, err)
        assert said in err and str(workspace / "runtime.sqlite") in err, err
        assert sorted(os.listdir(workspace)) == before
        code, out, err = run_cli("plan", "--workspace", str(workspace))
        assert code == 2 and said in err, (workspace, code, err)
    with pytest.raises(StoreUnreadable):
        plan_run(garbage, "session-1", "run-1")


def test_a_run_the_store_does_not_hold_is_missing_not_an_empty_safe_prefix(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _store(tmp_path)
    with pytest.raises(LedgerMissing, match="session 'session-1' has no run 'run-2'"):
        plan_run(workspace, "session-1", "run-2")
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "nobody", "--run", "run-1")
    assert (code, out) == (2, "") and "no session 'nobody'" in err, err


def _case(name: str, tmp_path: Path) -> Path:
    shutil.copytree(REFERENCE / name / "WS", tmp_path / name)
    return tmp_path / name


def test_repair_of_a_store_says_there_is_no_torn_tail_and_changes_nothing(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _case("T_P2", tmp_path)
    before = _digest(workspace / "runtime.sqlite")
    code, out, err = run_cli("repair", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1")
    assert (code, err) == (0, "") and "has no torn tail to move aside" in out and "nothing changed" in out
    corrupt = _case("S_unreadable_identity_mismatch", tmp_path)
    code, out, err = run_cli("repair", "--workspace", str(corrupt), "--session", "session-1", "--run", "run-1")
    assert code == 3 and "identity_mismatch" in err and "repair does not change a store" in err, err
    assert _digest(workspace / "runtime.sqlite") == before and sorted(os.listdir(workspace)) == ["runtime.sqlite"]


def test_a_store_given_as_a_ledger_file_is_a_usage_error_saying_what_to_run(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    database = _case("T_P2", tmp_path) / "runtime.sqlite"
    for command in ("plan", "repair"):
        code, out, err = run_cli(command, str(database))
        assert (code, out) == (2, ""), (command, code, err)
        assert "a SQLite database, not a JSONL ledger" in err and f"plan --workspace {database.parent}" in err, err


def test_recover_of_a_store_reports_the_interrupted_runs_and_changes_nothing(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _case("S_multi_run_one_session", tmp_path)  # run-a done; run-b and run-c interrupted
    before = _digest(workspace / "runtime.sqlite")
    code, out, err = run_cli("recover", "--workspace", str(workspace), "--format", "json")
    assert (code, err) == (0, "")
    report = __import__("json").loads(out)
    assert report["changed"] is False
    assert [(run["runId"], run["outcome"]) for run in report["runs"]] == [("run-a", "terminal"), ("run-b", "interrupted"), ("run-c", "interrupted")]
    code, out, err = run_cli("recover", "--workspace", str(workspace))
    assert code == 0 and "nothing was changed" in out and "session-1/run-b: no terminal event" in out
    assert _digest(workspace / "runtime.sqlite") == before and sorted(os.listdir(workspace)) == ["runtime.sqlite"]


def _insert_run(database: Path, payloads: list[bytes]) -> None:
    """Rows of run `hostile` (session `s`), inserted as plain SQL inserts, payloads as the bytes given."""
    connection = sqlite3.connect(database, isolation_level=None)
    for seq, payload in enumerate(payloads, 1):
        connection.execute("INSERT INTO runtime_events VALUES (?,?,?,?,?,?,?,?,?)",
                           (f"e{seq}", "s", "i", "hostile", "t", seq, "text", payload, seq))
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()


def _row(event_id: str, tail: bytes = b"") -> bytes:
    return (b'{"author":"user","content":{"kind":"text","text":"hi"},"id":"' + event_id.encode()
            + b'","invocationId":"i","partial":false,"role":"user","runId":"hostile","sessionId":"s","ts":1,"turnId":"t"' + tail + b"}")


@pytest.mark.parametrize(
    ("payload", "kind"),
    [
        (_row("e2", b',"actions":{"a":1,"a":2}'), "duplicate_key"),            # a key repeated inside free JSON
        (_row("e2", b',"ts":2'), "duplicate_key"),                              # a typed key repeated
        (_row("e2", b',"actions":{"x":"\xff"}'), "invalid_utf8"),              # invalid UTF-8 inside free JSON
        (_row("e2", b',"actions":' + b"[" * 2000 + b"]" * 2000), "invalid_json"),  # nested past the reader's bound
        (_row("e2", b',"colour":"red"'), "invalid_event"),
        (b"{not json", "invalid_json"),
    ],
    ids=["free-json-key", "typed-key", "utf8", "deep", "unknown-field", "not-json"],
)
def test_a_hostile_payload_is_the_same_corruption_as_in_a_jsonl_ledger(payload: bytes, kind: str, tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _store(tmp_path)
    _insert_run(workspace / "runtime.sqlite", [_row("e1"), payload])
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "s", "--run", "hostile")
    assert (code, out) == (3, ""), err
    assert f"event 2 (event_id 'e2', event_seq 2): {kind}: " in err or f"event_seq 2): {kind}: " in err, err


def test_a_payload_spread_over_lines_reads_as_the_same_event(tmp_path: Path) -> None:
    workspace = _store(tmp_path)
    _insert_run(workspace / "runtime.sqlite", [_row("e1"), _row("e2").replace(b",", b",\n  ")])
    plan = plan_run(workspace, "s", "hostile")
    assert plan.source_runtime_event_high_water == 2 and plan.disposition == "safe_replay"
    assert [bytes(row) for row in plan.runtime_events][1] == _row("e2").replace(b",", b",\n  ")  # the row as stored


# -- what an attacker tried (the review of this reader): each is refused or read, never a hang, a traceback or a plan
# of a corrupt run.


def _sql(database: Path, *statements: str, values: tuple[object, ...] = ()) -> None:
    connection = sqlite3.connect(database, isolation_level=None)
    for statement in statements[:-1]:
        connection.execute(statement)
    connection.execute(statements[-1], values)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()


def test_a_view_in_a_tables_place_is_refused_before_it_is_read(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _store(tmp_path)
    _sql(workspace / "runtime.sqlite", "ALTER TABLE runtime_events RENAME TO old_events",
         "CREATE VIEW runtime_events AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT 'e' || n AS "
         "event_id, 'session-1' AS session_id, 'i' AS invocation_id, 'run-1' AS run_id, 't' AS turn_id, n AS event_seq, 'x' AS "
         "event_kind, '{}' AS payload_json, n AS committed_at FROM r")
    started = time.monotonic()
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1")
    assert (code, out) == (2, "") and "runtime_events: a view, not a table" in err, err
    assert time.monotonic() - started < 10


def test_a_workspace_path_that_is_not_utf8_is_read(tmp_path: Path) -> None:
    workspace = Path(os.fsdecode(bytes(tmp_path) + b"/bad\xffname"))
    shutil.copytree(REFERENCE / "T_P6" / "WS", workspace)
    assert plan_run(workspace, "session-1", "run-1").disposition == "safe_replay"


def test_null_payloads_non_integer_seqs_and_non_text_ids_are_corruption(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _store(tmp_path)
    database = workspace / "runtime.sqlite"
    _sql(database, "CREATE TABLE loose AS SELECT * FROM runtime_events", "DROP TABLE runtime_events",
         "ALTER TABLE loose RENAME TO runtime_events",  # the same columns, without their constraints
         "INSERT INTO runtime_events VALUES ('n1', 'nulls', 'i', 'r', 't', 1, 'x', NULL, 1)")
    _sql(database, "INSERT INTO runtime_events VALUES (?, 'seqs', 'i', 'r', 't', 'x\ny', 'x', ?, 1)",
         values=("s1", _row("s1").replace(b'"hostile"', b'"r"').replace(b'"s"', b'"seqs"')))
    _sql(database, "INSERT INTO runtime_events VALUES ('b1', 'blobs', 'i', ?, 't', 1, 'x', '{}', 1)", values=(b"r",))
    for session, said in (("nulls", "its payload_json is NULL"), ("seqs", "its event_seq is not an integer")):
        code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", session, "--run", "r")
        assert (code, out) == (3, "") and said in err, err
        assert len(err.splitlines()) == 2, err  # the message and the next step: the seq's newline forges no line
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--format", "json")
    lines = [json.loads(line) for line in out.splitlines()]
    blob = next(line for line in lines[:-1] if line["sessionId"] == "blobs")
    assert blob["status"] == "corrupt" and "stored as blob, not text" in blob["error"], blob
    assert code == 3


def test_side_files_that_are_not_a_live_wal_are_never_added_to(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    for present in (["-shm"], ["-wal"]):  # a lone -shm, an empty lone -wal: nothing is in a WAL
        workspace = _store(tmp_path / "".join(present))
        for suffix in present:
            Path(f"{workspace / 'runtime.sqlite'}{suffix}").write_bytes(b"")
        before = sorted(os.listdir(workspace))
        assert run_cli("plan", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1")[0] == 0
        assert sorted(os.listdir(workspace)) == before
    workspace = _store(tmp_path / "journal")
    (workspace / "runtime.sqlite-journal").write_bytes(b"x" * 512)
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1")
    assert (code, out) == (2, "") and "-journal is beside the store" in err, err
    assert sorted(os.listdir(workspace)) == ["runtime.sqlite", "runtime.sqlite-journal"]


def test_a_side_file_that_is_a_symlink_is_named_and_never_followed(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _store(tmp_path / "ws")
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    Path(f"{workspace / 'runtime.sqlite'}-wal").write_bytes(b"")
    Path(f"{workspace / 'runtime.sqlite'}-shm").symlink_to(victim)
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1")
    assert (code, out) == (2, "") and "runtime.sqlite-shm: not a regular file (a symlink)" in err, err
    assert victim.read_bytes() == b""


def test_a_run_only_a_jsonl_ledger_beside_the_store_holds_is_missing_and_says_where_its_file_is(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _case("T_P2", tmp_path)
    ledger = workspace / "sessions" / "s9" / "runs" / "r9" / "runtime-events.jsonl"
    ledger.parent.mkdir(parents=True)
    row = {"id": "e1", "ts": 1, "partial": False, "sessionId": "s9", "invocationId": "i", "runId": "r9", "turnId": "t", "author": "user", "role": "user",
           "content": {"kind": "text", "text": "hi"}}
    ledger.write_text(json.dumps(row) + "\n", encoding="utf-8")
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "s9", "--run", "r9")
    assert (code, out) == (2, "") and "no session 's9'" in err and f"{ledger} is beside the store" in err, err
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "..", "--run", "r9")
    assert code == 2 and "is beside the store" not in err, err  # (an id naming a step up is looked for nowhere)


def test_an_empty_journal_beside_the_store_holds_nothing_to_roll_back_and_is_read_past(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _store(tmp_path)
    (workspace / "runtime.sqlite-journal").write_bytes(b"")
    before = _digest(workspace / "runtime.sqlite")
    assert run_cli("plan", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1")[0] == 0
    assert sorted(os.listdir(workspace)) == ["runtime.sqlite", "runtime.sqlite-journal"] and _digest(workspace / "runtime.sqlite") == before


def test_a_store_whose_schema_text_is_damaged_is_unreadable_never_a_traceback(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    # One byte of this database's schema records turned into one that is not UTF-8 (a user's trial found it: every
    # command ended in a UnicodeDecodeError, exit 1, which says blocked).
    workspace = _case("T_P4", tmp_path)
    database = workspace / "runtime.sqlite"
    damaged = bytearray(database.read_bytes())
    damaged[27633] ^= 0xFF
    database.write_bytes(bytes(damaged))
    for command in (["plan", "--session", "session-1", "--run", "run-1"], ["plan"], ["repair", "--session", "session-1", "--run", "run-1"], ["recover"]):
        code, out, err = run_cli(command[0], "--workspace", str(workspace), *command[1:])
        assert (code, out) == (2, ""), (command, code, out, err)
        assert "not a database this tool reads" in err and "not UTF-8" in err and "Traceback" not in err, (command, err)
    assert database.read_bytes() == bytes(damaged) and sorted(os.listdir(workspace)) == ["runtime.sqlite"]


def test_an_exception_no_command_maps_exits_2_never_1_which_says_blocked() -> None:
    script = "import resume_contract.cli as cli\ndef main():\n    raise RuntimeError('a bug')\ncli.main = main\ncli.run()\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 2 and "RuntimeError: a bug" in done.stderr and "internal error" in done.stderr, done.stderr


def test_the_audit_lists_no_call_that_provably_never_ran_as_one_to_verify(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _case("T_P1", tmp_path)  # a call committed without its dispatch: tool_not_dispatched
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--format", "json")
    (summary,) = [json.loads(line) for line in out.splitlines()[:-1]]
    assert code == 1 and summary["diagnostics"] == ["tool_not_dispatched"] and summary.get("toVerify", []) == [], out
    code, out, err = run_cli("plan", "--workspace", str(workspace))
    assert "verify Bash" not in out and "says why, and lists each call to verify" in out, out
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1")
    assert "never ran:" in out and "to verify:" not in out, out


def test_a_hint_naming_an_id_that_starts_with_a_dash_parses_back_to_that_id() -> None:
    import shlex

    from resume_contract.cli.parser import build_parser
    from resume_contract.output.terminal import run_options

    hint = "plan " + run_options("W S", "--help", "-r1")
    assert hint == "plan --workspace 'W S' --session=--help --run=-r1"
    args = build_parser().parse_args(shlex.split(hint))
    assert (args.workspace, args.session, args.run) == ("W S", "--help", "-r1")


def test_ids_from_the_database_never_forge_a_line(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _store(tmp_path)
    forged = "s\nresume-contract: 0 runs: all safe\x1b[2J"
    _sql(workspace / "runtime.sqlite", "INSERT INTO runtime_events VALUES ('f1', ?, 'i1', 'r', 't', 1, 'x', '{bad', 1)", values=(forged,))
    _sql(workspace / "runtime.sqlite", "INSERT INTO runtime_events VALUES (?, 'u', 'i2', 'r', 't', 1, 'x', '{}', 1)",
         values=(b"e\xff\nresume-contract: FORGED",))
    for argv in (("plan", "--workspace", str(workspace)), ("recover", "--workspace", str(workspace)),
                 ("plan", "--workspace", str(workspace), "--session", "u", "--run", "r")):
        code, out, err = run_cli(*argv)
        assert not any(line.startswith(("resume-contract: 0 runs", "resume-contract: FORGED", "0 runs")) for line in (out + err).splitlines()), (argv, out, err)
        assert "\x1b" not in out + err, argv
    assert code == 3  # the invalid UTF-8 event id: a corrupt row of its run, named
    code, out, err = run_cli("plan", "--workspace", str(workspace))
    assert code == 3 and "corrupt (2): no plan, and repair does not change a store" in out, out  # not "repair's torn row"


def test_a_run_listed_only_by_a_skipped_snapshot_is_planned_alike_alone_and_in_the_audit(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _case("S_partial_corrupt_skipped", tmp_path)
    _sql(workspace / "runtime.sqlite", "UPDATE runtime_partial_snapshots SET run_id = 'run-ghost'")
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--format", "json")
    ghost = next(json.loads(line) for line in out.splitlines() if '"run-ghost"' in line)
    code, out, err = run_cli("plan", "--workspace", str(workspace), "--session", ghost["sessionId"], "--run", "run-ghost", "--format", "json")
    assert code == {"safe_replay": 0, "blocked": 1}[ghost["status"]], err
    assert json.loads(out)["sourceRuntimeEventHighWater"] == ghost["highWater"]


def test_recover_and_repair_refuse_what_is_not_there(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    workspace = _store(tmp_path)
    code, out, err = run_cli("recover", "--workspace", str(workspace), "--session", "nosuch")
    assert (code, out) == (2, "") and "no session 'nosuch'" in err, err
    text = tmp_path / "text"
    text.mkdir()
    (text / "runtime.sqlite").write_text("not a database\n" * 10)
    code, out, err = run_cli("repair", "--workspace", str(text))
    assert (code, out) == (2, "") and "not a SQLite database" in err, err
    code, out, err = run_cli("repair", "--workspace", str(workspace), "--session", "session-1", "--run", "nope")
    assert (code, out) == (2, "") and "has no run 'nope'" in err, (out, err)  # (said alone: not "nothing changed" first)
