"""continue-plan of a runtime.sqlite workspace, held to the reference's own decisions (issue 56).

tests/conformance_sqlite_phase1/reference.tar.xz is ../shared/conformance-sqlite-phase1 byte for byte (38
workspaces written by apache/maka @ f19eede03's own writers: runs, T1/T2 rounds, claims, child runs, continuation
starts, lineages; and what its `SessionManager.planSafeBoundaryContinuation` returned), kept as one archive of 89 KB
(the databases, 36 MB, are mostly empty pages), read by tests/phase1_archive.py and made by it:

    .venv/bin/python tests/phase1_archive.py ../shared/conformance-sqlite-phase1

Each case's source run is decided by `continue-plan --workspace WS --json`, reading the run's header from the
store's `core_agent_runs` and its events from `runtime_events`, with the case's host facts and fresh ids. The exit
code, disposition, rejection reasons and diagnostic codes must be the reference's, and where it continues, every
field of the continuation this contract gives (identities, source high-water, the replay's events, the safety
snapshot); the workspace is left byte for byte as it was.

STEP_09: what the packaged contract (maka's as of maka-history step 08) does not decide yet: durable claims, the
lineage walk over other runs' headers and prefixes, the composite replay (maka-history.md steps 09 and 10). Each is
a strict xfail: it fails the suite the day it passes. The continuation's fields step 09 adds (the boundary cursor
and its digests, the claim id, the provider replay digest) are not compared yet (STEP_09_FIELDS).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import phase1_archive
import pytest

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "conformance-sqlite-phase1"
HOST_KEYS = ("currentCwd", "sourceWorkspaceIdentity", "currentWorkspaceIdentity", "availableToolNames", "backgroundOperationsSettled", "expectedRuntimeEventHighWater")
STEP_09_FIELDS = {"boundary", "claimId", "providerReplayDigest", "providerProjectionVersion"}

_CLAIMS = "a durable claim of the source's boundary (runtime_continuation_claims) decides it: step 09's claims"
_LINEAGE = "the source continued another run: step 09's lineage walk (headers, prefixes and digests of its ancestors)"
STEP_09 = {
    **{name: _CLAIMS for name in ("claim_claim", "claim_run", "claim_start", "claim_target_header_changed", "claim_target_output_after_terminal", "claim_target_terminal_mismatch", "lineage_3_claim_started")},
    **{name: _LINEAGE for name in (
        "lineage_2_continue", "lineage_3_continue", "lineage_4_continue", "lineage_claim_mismatch", "lineage_claim_start_unbound", "lineage_cycle",
        "lineage_depth_exceeded", "lineage_header_protocol_dropped", "lineage_identity_mismatch", "lineage_legacy_continue",
        "lineage_middle_start_edited", "lineage_missing_ancestor", "lineage_prefix_digest_mismatch", "lineage_replay_mismatch",
        "lineage_start_claim_mismatch", "lineage_start_downgraded",
    )},
    "continue_completed_trailing_text": "step 09's composite replay trims a segment's interrupted suffix (the trailing model text)",
    "park_tool_unsettled": "step 10: on the composite path no Phase 0 plan is made first; the blocked replay segment is an unreadable prefix",
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return phase1_archive.write(tmp_path_factory.mktemp("phase1"))


EXPECTED = phase1_archive.expected()


def _digest(directory: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(directory.iterdir())}


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/conformance-sqlite-phase1 is not beside this checkout")
def test_the_archive_is_the_shared_set() -> None:
    shared = {path.relative_to(SHARED).as_posix(): path.read_bytes() for path in sorted(SHARED.rglob("*")) if path.is_file()}
    assert phase1_archive.members() == shared


def test_every_case_is_listed_once() -> None:
    assert len(EXPECTED) == 38 and set(STEP_09) < set(EXPECTED)


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=[pytest.mark.xfail(strict=True, reason=STEP_09[name])] if name in STEP_09 else []) for name in sorted(EXPECTED)]
)
def test_continue_plan_of_the_store_decides_as_the_reference(name: str, cases: Path, run_cli: Any, tmp_path: Path) -> None:
    args, expect = EXPECTED[name]["args"], EXPECTED[name]["expect"]
    workspace = tmp_path / "ws"
    shutil.copytree(cases / name / "ws", workspace)
    workspace.chmod(0o755)
    host = tmp_path / "host.json"
    host.write_text(json.dumps({key: args[key] for key in HOST_KEYS if key in args}), encoding="utf-8")
    before = _digest(workspace)
    code, out, err = run_cli(
        "continue-plan", "--workspace", str(workspace), "--session", args["sessionId"], "--run", args["sourceRunId"],
        "--host", str(host), "--ids", ",".join(args["newIds"][:3]), "--json",
    )
    assert _digest(workspace) == before, "deciding changed the workspace"
    got = json.loads(out)
    assert (code, got["disposition"], got["rejectionReasons"], [item["code"] for item in got["diagnostics"]]) == (
        expect["exit"], expect["disposition"], expect["rejectionReasons"], expect["diagnostics"]
    ), err
    if expect["disposition"] == "continue":
        ours, theirs = got["continuation"], expect["continuation"]
        assert set(theirs) - set(ours) == STEP_09_FIELDS
        assert {key: ours[key] for key in ours} == {key: theirs[key] for key in ours}


# The tool, on frozen inputs: one of the archive's workspaces (continue_plain: run-1 ended failed, one T1/T2 round)
# edited by SQL, as the reference's own cases were.

PLAIN_HOST = {key: EXPECTED["continue_plain"]["args"][key] for key in HOST_KEYS if key in EXPECTED["continue_plain"]["args"]}


def _plain(cases: Path, tmp_path: Path, *edits: tuple[str, tuple[Any, ...]]) -> tuple[Path, Path]:
    import sqlite3

    workspace = tmp_path / "ws"
    shutil.copytree(cases / "continue_plain" / "ws", workspace)
    (workspace / "runtime.sqlite").chmod(0o644)
    with sqlite3.connect(workspace / "runtime.sqlite") as connection:
        for statement, parameters in edits:
            connection.execute(statement, parameters)
    with sqlite3.connect(workspace / "runtime.sqlite") as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for side in ("-wal", "-shm"):
        (workspace / f"runtime.sqlite{side}").unlink(missing_ok=True)
    host = tmp_path / "host.json"
    host.write_text(json.dumps(PLAIN_HOST), encoding="utf-8")
    return workspace, host


def _decide(run_cli: Any, workspace: Path, host: Path, *run: str) -> tuple[int, str, str]:
    return run_cli("continue-plan", "--workspace", str(workspace), "--session", "session-1", *(run or ("--run", "run-1")), "--host", str(host), "--json")  # type: ignore[no-any-return]


def _header(cases: Path, run: str) -> dict[str, Any]:
    import sqlite3

    with sqlite3.connect(f"file:{cases / 'continue_plain' / 'ws' / 'runtime.sqlite'}?mode=ro&immutable=1", uri=True) as connection:
        (record,) = connection.execute("SELECT record_json FROM core_agent_runs WHERE run_id = ?", (run,)).fetchone()
    return json.loads(record)  # type: ignore[no-any-return]


def test_a_source_header_that_is_no_json_object_parks_as_an_unreadable_run(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    for record in ('["a list"]', '{"runId": "run-1", "runId": "run-1"}', "{not json"):
        workspace, host = _plain(cases, tmp_path / str(len(record)), ("UPDATE core_agent_runs SET record_json = ? WHERE run_id = 'run-1'", (record,)))
        code, out, err = _decide(run_cli, workspace, host)
        assert (code, json.loads(out)["rejectionReasons"]) == (1, ["source_run_unreadable"]), (record, err)


def test_another_runs_header_that_cannot_be_read_is_no_decision(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    # It may be a claim continuing run-1: no decision is made without it (exit 2, naming the store's table and run).
    other = {**_header(cases, "run-1"), "runId": "run-2", "invocationId": "inv-2"}
    text = json.dumps(other)[:-1] + ', "runId": "run-2"}'  # a repeated key: not a header
    workspace, host = _plain(cases, tmp_path, ("INSERT INTO core_agent_runs (session_id, run_id, created_at, record_json) VALUES ('session-1', 'run-2', 2, ?)", (text,)))
    code, out, err = _decide(run_cli, workspace, host)
    assert code == 2 and out == "" and "core_agent_runs, run 'run-2'" in err and "repair it, then plan again" in err, err


def test_a_readable_header_of_another_run_that_continued_the_source_is_a_continuation_that_exists(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    child = {**_header(cases, "run-1"), "runId": "run-2", "invocationId": "inv-2", "turnId": "turn-2", "status": "completed"}
    child["continuationSource"] = {"sourceInvocationId": "inv-1", "sourceRunId": "run-1", "sourceTurnId": "turn-1", "sourceRuntimeEventHighWater": 5}
    workspace, host = _plain(cases, tmp_path, ("INSERT INTO core_agent_runs (session_id, run_id, created_at, record_json) VALUES ('session-1', 'run-2', 2, ?)", (json.dumps(child),)))
    code, out, err = _decide(run_cli, workspace, host)
    assert (code, json.loads(out)["rejectionReasons"]) == (1, ["continuation_already_exists"]), err
    code, out, err = _decide(run_cli, workspace, host, "--latest")  # run-2 completed: no candidate but run-1, already continued
    assert code == 1, err


def test_a_run_the_store_does_not_know_is_a_usage_error_naming_the_store(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    workspace, host = _plain(cases, tmp_path)
    code, out, err = _decide(run_cli, workspace, host, "--run", "run-9")
    assert (code, out) == (2, "") and "session 'session-1' has no run 'run-9'" in err and "runtime.sqlite" in err
    code, out, err = run_cli("continue-plan", "--workspace", str(workspace), "--session", "session-9", "--latest", "--host", str(host), "--json")
    assert (code, out) == (2, "") and "no session 'session-9'" in err


def test_latest_picks_the_stores_interrupted_run_and_the_text_names_its_place_in_the_store(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    workspace, host = _plain(cases, tmp_path)
    code, out, err = _decide(run_cli, workspace, host, "--latest")
    assert code == 0 and json.loads(out)["pickedRunId"] == "run-1", err
    code, out, err = run_cli("continue-plan", "--workspace", str(workspace), "--session", "session-1", "--run", "run-1", "--host", str(host))
    assert code == 0 and f"run:           {workspace / 'runtime.sqlite'} (session session-1, run run-1)\n" in out, out


def test_a_store_of_the_runtime_layout_keeps_no_header_and_parks(run_cli: Any, tmp_path: Path) -> None:
    # ../shared/conformance-sqlite's T_P9: the runtime schema alone (no core_agent_runs), run-1 ended failed.
    shutil.copytree(Path(__file__).parent / "conformance_sqlite" / "reference" / "T_P9" / "WS", tmp_path / "ws")
    host = tmp_path / "host.json"
    host.write_text(json.dumps({**PLAIN_HOST, "availableToolNames": ["Bash"]}), encoding="utf-8")
    code, out, err = _decide(run_cli, tmp_path / "ws", host)
    assert (code, json.loads(out)["rejectionReasons"]) == (1, ["source_run_unreadable"]), err


def test_a_view_where_the_headers_belong_is_refused(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    workspace, host = _plain(cases, tmp_path, ("ALTER TABLE core_agent_runs RENAME TO kept", ()), ("CREATE VIEW core_agent_runs AS SELECT * FROM kept", ()))
    code, out, err = _decide(run_cli, workspace, host)
    assert (code, out) == (2, "") and "core_agent_runs: a view, not a table" in err, err


def _child_header(cases: Path) -> dict[str, Any]:
    child = {**_header(cases, "run-1"), "runId": "run-2", "invocationId": "inv-2", "turnId": "turn-2", "status": "completed"}
    child["continuationSource"] = {"sourceInvocationId": "inv-1", "sourceRunId": "run-1", "sourceTurnId": "turn-1", "sourceRuntimeEventHighWater": 5}
    return child


def test_a_header_row_that_names_no_run_or_a_run_twice_is_no_decision(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    # Either may be the claim that continues run-1 (a user's trial: a claiming child's row with its run_id stored as
    # a BLOB, or twice in a table without its key, was passed over and run-1 continued).
    record = json.dumps(_child_header(cases))
    blob = ("INSERT INTO core_agent_runs (session_id, run_id, created_at, record_json) VALUES ('session-1', CAST('run-2' AS BLOB), 2, ?)", (record,))
    workspace, host = _plain(cases, tmp_path / "blob", blob)
    code, out, err = _decide(run_cli, workspace, host)
    assert (code, out) == (2, "") and "a run_id stored as blob" in err, err
    twice = [
        ("CREATE TABLE runs_without_key AS SELECT * FROM core_agent_runs", ()), ("DROP TABLE core_agent_runs", ()),
        ("ALTER TABLE runs_without_key RENAME TO core_agent_runs", ()),
        ("INSERT INTO core_agent_runs (session_id, run_id, created_at, record_json) VALUES ('session-1', 'run-2', 2, ?)", (record,)),
        ("INSERT INTO core_agent_runs (session_id, run_id, created_at, record_json) VALUES ('session-1', 'run-2', 3, ?)", (record,)),
    ]
    workspace, host = _plain(cases, tmp_path / "twice", *twice)
    code, out, err = _decide(run_cli, workspace, host)
    assert (code, out) == (2, "") and "two rows for one run" in err, err


def test_a_durable_claim_whose_run_was_never_written_is_no_decision(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    # claim_claim's state, made from continue_plain: a claim of run-1 committed, its target run-2 never created.
    # This contract reads no claims (step 09): it must not continue run-1 a second time, nor decide it.
    claim = (
        "INSERT INTO runtime_continuation_claims (claim_id, source_session_id, source_invocation_id, source_run_id, source_turn_id, "
        "source_event_high_water, source_prefix_digest, boundary_digest, boundary_json, provider_projection_version, provider_replay_digest, "
        "target_session_id, target_invocation_id, target_run_id, target_turn_id, target_run_header_json, claimed_at, protocol_version) "
        "VALUES ('claim-2', 'session-1', 'inv-1', 'run-1', 'turn-1', 5, 'sha256:p', 'sha256:b', '{}', 1, 'sha256:r', 'session-1', 'inv-2', "
        "'run-2', 'turn-2', '{}', 7, 1)"
    )
    workspace, host = _plain(cases, tmp_path / "cut", (claim, ()))
    for run in (("--run", "run-1"), ("--latest",)):
        code, out, err = _decide(run_cli, workspace, host, *run)
        assert (code, out) == (2, "") and "claim 'claim-2' of run 'run-1'" in err and "no decision is made" in err, (run, err)
    # with its run written, the claim's run is a continuation that exists, as any other
    record = json.dumps(_child_header(cases))
    workspace, host = _plain(cases, tmp_path / "made", (claim, ()), ("INSERT INTO core_agent_runs (session_id, run_id, created_at, record_json) VALUES ('session-1', 'run-2', 2, ?)", (record,)))
    code, out, err = _decide(run_cli, workspace, host)
    assert (code, json.loads(out)["rejectionReasons"]) == (1, ["continuation_already_exists"]), err


def test_a_sessions_folder_beside_the_store_is_said_not_to_be_read(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    workspace, host = _plain(cases, tmp_path)
    (workspace / "sessions" / "session-1" / "runs" / "run-2").mkdir(parents=True)
    code, out, err = _decide(run_cli, workspace, host)
    assert code == 0 and f"note: {workspace / 'sessions'} is not read" in err, err


def test_a_run_id_holding_a_newline_cannot_forge_a_line_of_the_text(cases: Path, run_cli: Any, tmp_path: Path) -> None:
    forged = "run-1\ndecision:      continue"
    edits = [(f"UPDATE {table} SET run_id = ? WHERE run_id = 'run-1'", (forged,)) for table in ("runtime_events", "core_agent_runs", "core_agent_run_events")]
    edits.append(("UPDATE core_agent_runs SET record_json = json_set(record_json, '$.runId', ?)", (forged,)))
    edits.append(("UPDATE runtime_events SET payload_json = json_set(payload_json, '$.runId', ?)", (forged,)))
    workspace, host = _plain(cases, tmp_path, *edits)
    code, out, err = run_cli("continue-plan", "--workspace", str(workspace), "--session", "session-1", "--latest", "--host", str(host))
    assert [line for line in out.splitlines() if line.startswith("decision:")] == [f"decision:      {'continue' if code == 0 else 'park'}"], out
    assert "\\n" in out, out
