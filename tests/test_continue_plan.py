"""`resume-contract continue-plan` and `build_continuation_plan`: every situation of the contract's decision table
(spec/continuation.yaml, read here) through both, and the command's refusals (exit 2, nothing written; exit 3 on a
corrupt ledger, never a decision) and its text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from resume_contract import build_continuation_plan, decode_event
from resume_contract.contract import load_generated
from resume_contract.core.continuation import continuation_summary

REPO = Path(__file__).resolve().parent.parent
SPEC = yaml.safe_load((REPO / "spec" / "continuation.yaml").read_text(encoding="utf-8"))
SITUATIONS = SPEC["situations"]
CONTRACT = load_generated(REPO)


def _rows(events: list[dict[str, Any]]) -> list[str]:
    """A situation's events as ledger rows, as spec/continuation.yaml says they are written."""
    base = SITUATIONS["base"]["event"]
    return [json.dumps({"id": f"event-{n}", "ts": n, **base, **event}) for n, event in enumerate(events, start=1)]


def _case(name: str) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    case = SITUATIONS["cases"][name]
    facts = {**SITUATIONS["base"]["facts"], **case.get("facts", {})}
    expect = case["expect"]
    expected = {"disposition": expect["disposition"], "rejection_reasons": expect.get("rejection_reasons", []), "diagnostics": expect.get("diagnostics", [])}
    if "continuation" in expect:
        expected["continuation"] = expect["continuation"]
    return _rows(case["events"]), facts, expected


def test_the_decision_table_holds_every_example_of_the_shared_document() -> None:
    # The shared Phase 1 document's examples table has twelve rows; each is a situation here.
    assert len(SITUATIONS["cases"]) >= 12


@pytest.mark.parametrize("name", list(SITUATIONS["cases"]))
def test_every_situation_through_the_api(name: str) -> None:
    rows, facts, expected = _case(name)
    events = [decode_event(row.encode(), CONTRACT) for row in rows]

    assert continuation_summary(build_continuation_plan(events, facts, contract=CONTRACT)) == expected


@pytest.mark.parametrize("name", list(SITUATIONS["cases"]))
def test_every_situation_through_the_command(name: str, tmp_path: Path, run_cli) -> None:
    rows, facts, expected = _case(name)
    ledger, facts_file = tmp_path / "runtime-events.jsonl", tmp_path / "facts.json"
    ledger.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    facts_file.write_text(json.dumps(facts), encoding="utf-8")

    code, out, err = run_cli("--root", str(REPO), "continue-plan", str(ledger), "--facts", str(facts_file), "--json")

    assert (code, err) == (0 if expected["disposition"] == "continue" else 1, "")
    printed = json.loads(out)
    assert list(printed)[:3] == ["disposition", "rejectionReasons", "diagnostics"]
    assert printed["rejectionReasons"] == expected["rejection_reasons"]
    assert [{k: d[k] for k in ("code", "eventId", "detail") if k in d} for d in printed["diagnostics"]] == expected["diagnostics"]
    if "continuation" in expected:
        context = printed["continuation"]["runtimeContext"]
        by_id = {json.loads(row)["id"]: json.loads(row) for row in rows}
        assert context == [by_id[event_id] for event_id in expected["continuation"]["runtimeContext"]]  # verbatim rows
        assert list(printed["continuation"]) == list(expected["continuation"])  # the reference's field order
    else:
        assert "continuation" not in printed


def _write(tmp_path: Path, rows: list[str], facts: Any) -> tuple[Path, Path]:
    ledger, facts_file = tmp_path / "runtime-events.jsonl", tmp_path / "facts.json"
    ledger.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    facts_file.write_text(facts if isinstance(facts, str) else json.dumps(facts), encoding="utf-8")
    return ledger, facts_file


def test_text_output_gives_the_decision_and_what_to_do_about_each_reason(tmp_path: Path, run_cli) -> None:
    # Any situation that parks with Phase 1 reasons only (which one is the contract's business, not this test's).
    name = next(name for name, case in SITUATIONS["cases"].items()
                if case["expect"]["disposition"] == "park" and set(case["expect"]["rejection_reasons"]) <= set(SPEC["reasons"]))
    rows, facts, expected = _case(name)
    ledger, facts_file = _write(tmp_path, rows, facts)

    code, out, _ = run_cli("--root", str(REPO), "continue-plan", str(ledger), "--facts", str(facts_file))

    assert code == 1
    assert out.startswith("decision:      park\n")
    for reason in expected["rejection_reasons"]:
        assert f"  - {reason}: {SPEC['reasons'][reason]}\n" in out


def test_a_phase0_reason_names_the_plan_command_that_shows_it_with_the_high_water_step_0_expected(tmp_path: Path, run_cli) -> None:
    # A situation that parks for Phase 0 with an expected high-water in its facts (the contract says which).
    name = next(name for name, case in SITUATIONS["cases"].items() if "workspaceCheckpoint" in case.get("facts", {})
                and not set(case["expect"].get("rejection_reasons", [])) <= set(SPEC["reasons"]))
    rows, facts, expected = _case(name)
    ledger, facts_file = _write(tmp_path, rows, facts)

    code, out, _ = run_cli("--root", str(REPO), "continue-plan", str(ledger), "--facts", str(facts_file))

    command = f"resume-contract plan {ledger} --expected-high-water {facts['workspaceCheckpoint']['runtimeEventHighWater']}"
    assert code == 1 and f"; `{command}` says why and what to do.\n" in out
    code, out, _ = run_cli("--root", str(REPO), *command.split()[1:], "--format", "json")
    assert (code, json.loads(out)["rejectionReasons"]) == (1, [reason for reason in expected["rejection_reasons"] if reason not in SPEC["reasons"]])
    # A negative expectation in the facts is no offset `plan` takes: the command given must still run.
    facts_file.write_text(json.dumps({**facts, "workspaceCheckpoint": {**facts["workspaceCheckpoint"], "runtimeEventHighWater": -1}}), encoding="utf-8")
    code, out, _ = run_cli("--root", str(REPO), "continue-plan", str(ledger), "--facts", str(facts_file))
    given = out.split("; `resume-contract ", 1)[1].split("` says why", 1)[0]
    assert code == 1 and "--expected-high-water" not in given and run_cli("--root", str(REPO), *given.split())[0] != 2


@pytest.mark.parametrize(
    ("facts", "message"),
    [
        ("{\"ledgerReadable\": true,", "facts.json:1:25: the facts file is not JSON"),
        ('{"ledgerReadable": true, "ledgerReadable": false}', "the key 'ledgerReadable' is repeated in one object"),
        ({**SITUATIONS["base"]["facts"], "sandboxed": True}, "facts.json: facts: undeclared key 'sandboxed'"),
        ({**SITUATIONS["base"]["facts"], "availableToolNames": "Bash"}, "facts.json: facts.availableToolNames: expected a list of strings"),
        ('{"workspaceCheckpoint": ' + "[" * 1200 + "]" * 1200 + "}", "facts.json: the facts file nests arrays or objects too deeply to read"),
        ('{"expectedRuntimeEventHighWater": ' + "9" * 5000 + "}", "facts.json: a number of 5000 digits; no fact is that large"),
    ],
)
def test_facts_that_cannot_be_used_exit_2_and_write_nothing(facts: Any, message: str, tmp_path: Path, run_cli, snapshot) -> None:
    ledger, facts_file = _write(tmp_path, _case("cwd_moved")[0], facts)
    before = snapshot(tmp_path)

    code, out, err = run_cli("--root", str(REPO), "continue-plan", str(ledger), "--facts", str(facts_file), "--json")

    assert (code, out) == (2, "")
    assert message in err
    assert "Traceback" not in err
    assert snapshot(tmp_path) == before


def test_a_missing_ledger_or_facts_file_is_exit_2(tmp_path: Path, run_cli) -> None:
    ledger, facts_file = _write(tmp_path, [], SITUATIONS["base"]["facts"])

    assert run_cli("--root", str(REPO), "continue-plan", str(tmp_path / "nope.jsonl"), "--facts", str(facts_file))[0] == 2
    assert run_cli("--root", str(REPO), "continue-plan", str(ledger), "--facts", str(tmp_path / "nope.json"))[0] == 2
    workspace, _ = _base_run(tmp_path / "planner")
    code, _, err = _planner_cli(run_cli, workspace, tmp_path / "nope.json")
    assert code == 2 and err == f"resume-contract: {tmp_path / 'nope.json'}: no such host file\n"


def test_a_corrupt_ledger_is_exit_3_and_never_a_decision(tmp_path: Path, run_cli) -> None:
    rows, facts, _ = _case("cwd_moved")
    ledger, facts_file = _write(tmp_path, rows, facts)
    ledger.write_bytes(ledger.read_bytes() + b'{"id": "torn')

    code, out, err = run_cli("--root", str(REPO), "continue-plan", str(ledger), "--facts", str(facts_file), "--json")

    assert (code, out) == (3, "")
    assert "corrupt ledger" in err


def test_a_phase0_contract_has_no_continuation_decision_exit_2(project: Path, tmp_path: Path, run_cli) -> None:
    ledger, facts_file = _write(tmp_path, [], SITUATIONS["base"]["facts"])

    code, out, err = run_cli("--root", str(project), "continue-plan", str(ledger), "--facts", str(facts_file))

    assert (code, out) == (2, "")
    assert "declares no continuation decision (spec/continuation.yaml)" in err


# -- the planner form: a workspace run -----------------------------------------------------------------------

PLANNER = SPEC["planner"]["situations"]
SESSION, RUN = SITUATIONS["base"]["event"]["sessionId"], SITUATIONS["base"]["event"]["runId"]


def _planner_case(name: str) -> tuple[Any, list[str], dict[str, Any], dict[str, Any], dict[str, str], dict[str, Any]]:
    base, case = PLANNER["base"], PLANNER["cases"][name]
    header = None if case.get("header", {}) is None else {**base["header"], **case.get("header", {})}
    expect = case["expect"]
    expected = {"disposition": expect["disposition"], "rejection_reasons": expect.get("rejection_reasons", []), "diagnostics": expect.get("diagnostics", [])}
    if "continuation" in expect:
        expected["continuation"] = expect["continuation"]
    host, ids = {**base["host"], **case.get("host", {})}, {**base["ids"], **case.get("ids", {})}
    return header, _rows(case["events"]), case.get("other_runs", {}), host, ids, expected


def _run(root: Path, header: Any, rows: list[str] | None, others: dict[str, Any] | None = None) -> Path:
    runs = root / "sessions" / SESSION / "runs"
    (runs / RUN).mkdir(parents=True)
    if header is not None:
        (runs / RUN / "run.json").write_text(json.dumps(header), encoding="utf-8")
    if rows is not None:
        (runs / RUN / "runtime-events.jsonl").write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    for run_id, other in (others or {}).items():
        (runs / run_id).mkdir()
        (runs / run_id / "run.json").write_text(json.dumps(other), encoding="utf-8")
    return root


def _planner_cli(run_cli, workspace: Path, host_file: Path, *extra: str, form: tuple[str, ...] = ("--run", RUN)) -> tuple[int, str, str]:
    return run_cli("--root", str(REPO), "continue-plan", "--workspace", str(workspace), "--session", SESSION, *form, "--host", str(host_file), *extra)


def test_the_planner_table_holds_the_shared_documents_planner_examples() -> None:
    reasons = {tuple(case["expect"].get("rejection_reasons", [])) for case in PLANNER["cases"].values()}
    assert {("terminal_repair_failed",), ("continuation_already_exists",)} <= reasons


@pytest.mark.parametrize("name", list(PLANNER["cases"]))
def test_every_planner_situation_through_the_api_and_the_command(name: str, tmp_path: Path, run_cli) -> None:
    from resume_contract import plan_continuation, plan_latest_continuation

    header, rows, others, host, ids, expected = _planner_case(name)
    workspace = _run(tmp_path / "ws", header, rows, others)
    (tmp_path / "host.json").write_text(json.dumps(host), encoding="utf-8")
    latest = PLANNER["cases"][name].get("latest", False)

    if latest:
        picked, plan = plan_latest_continuation(workspace, SESSION, host, ids, contract=CONTRACT)
        assert picked == (RUN if expected["disposition"] == "continue" else None)
    else:
        plan = plan_continuation(workspace, SESSION, RUN, host, ids, contract=CONTRACT)
    assert continuation_summary(plan) == expected
    form = ("--latest",) if latest else ("--run", RUN)
    code, out, err = _planner_cli(run_cli, workspace, tmp_path / "host.json", "--ids", ",".join(ids.values()), "--json", form=form)
    assert (code, err) == (0 if expected["disposition"] == "continue" else 1, "")
    printed = json.loads(out)
    assert (printed["disposition"], printed["rejectionReasons"]) == (expected["disposition"], expected["rejection_reasons"])


def _base_run(tmp_path: Path, rows: list[str] | None = None, header: Any = "base") -> tuple[Path, Path]:
    header = {**PLANNER["base"]["header"], "status": "completed"} if header == "base" else header
    if rows is None:
        rows = _rows([{"role": "user", "author": "user", "content": {"kind": "text", "text": "hi"}}, {"role": "system", "author": "system", "status": "completed", "actions": {"endInvocation": True}}])
    workspace = _run(tmp_path / "ws", header, rows)
    host_file = tmp_path / "host.json"
    host_file.write_text(json.dumps(PLANNER["base"]["host"]), encoding="utf-8")
    return workspace, host_file


def test_a_run_that_does_not_exist_is_exit_2(tmp_path: Path, run_cli) -> None:
    workspace, host_file = _base_run(tmp_path)
    code, out, err = run_cli("--root", str(REPO), "continue-plan", "--workspace", str(workspace), "--session", SESSION, "--run", "run-9", "--host", str(host_file))
    assert (code, out) == (2, "")
    assert "has no run 'run-9'" in err


def test_a_missing_ledger_parks_unreadable_and_a_corrupt_one_is_exit_3(tmp_path: Path, run_cli) -> None:
    workspace, host_file = _base_run(tmp_path)
    ledger = workspace / "sessions" / SESSION / "runs" / RUN / "runtime-events.jsonl"
    ledger.write_bytes(ledger.read_bytes() + b'{"id": "torn')
    assert _planner_cli(run_cli, workspace, host_file)[0] == 3
    ledger.unlink()
    code, out, _ = _planner_cli(run_cli, workspace, host_file, "--json")
    assert code == 1
    assert json.loads(out)["rejectionReasons"] == ["runtime_ledger_unreadable"]


@pytest.mark.parametrize("header", ["[1, 2]", '{"runId": "run-1", "runId": "run-2"}', "not json", "symlink"])
def test_a_header_that_is_not_a_json_object_parks_unreadable(header: str, tmp_path: Path, run_cli) -> None:
    workspace, host_file = _base_run(tmp_path, header=None)
    target = workspace / "sessions" / SESSION / "runs" / RUN / "run.json"
    if header == "symlink":
        (tmp_path / "elsewhere.json").write_text(json.dumps(PLANNER["base"]["header"]), encoding="utf-8")
        target.symlink_to(tmp_path / "elsewhere.json")
    else:
        target.write_text(header, encoding="utf-8")
    code, out, _ = _planner_cli(run_cli, workspace, host_file, "--json")
    assert code == 1
    assert json.loads(out)["rejectionReasons"] == ["source_run_unreadable"]


@pytest.mark.parametrize("change", [{"runId": "run-9"}, {"sessionId": "session-9"}])
def test_a_header_that_names_another_run_is_not_this_runs_and_parks_unreadable(change: dict[str, str], tmp_path: Path, run_cli) -> None:
    workspace, host_file = _base_run(tmp_path, header={**PLANNER["base"]["header"], "status": "completed", **change})
    code, out, _ = _planner_cli(run_cli, workspace, host_file, "--json")
    assert (code, json.loads(out)["rejectionReasons"]) == (1, ["source_run_unreadable"])


@pytest.mark.parametrize("other", ["not json", "[1]", "symlink", "another run's"])
def test_another_run_whose_header_cannot_be_read_is_no_decision(other: str, tmp_path: Path, run_cli) -> None:
    # It may be the claim of a continuation of this run: deciding without it could continue a run twice.
    workspace, host_file = _base_run(tmp_path)
    run_7 = workspace / "sessions" / SESSION / "runs" / "run-7"
    run_7.mkdir()
    claim = {**PLANNER["base"]["header"], "runId": "run-7", "status": "created"}
    if other == "symlink":
        (tmp_path / "claim.json").write_text(json.dumps(claim), encoding="utf-8")
        (run_7 / "run.json").symlink_to(tmp_path / "claim.json")
    else:
        (run_7 / "run.json").write_text(json.dumps({**claim, "runId": "run-8"}) if other == "another run's" else other, encoding="utf-8")
    code, out, err = _planner_cli(run_cli, workspace, host_file, "--json")
    assert (code, out) == (2, "") and f"{run_7 / 'run.json'}: " in err, err
    (run_7 / "run.json").unlink()  # a run without a header is no claim
    assert _planner_cli(run_cli, workspace, host_file, "--json")[0] == 0


def test_fresh_ids_that_are_no_run_id_are_exit_2(tmp_path: Path, run_cli) -> None:
    workspace, host_file = _base_run(tmp_path)
    code, out, err = _planner_cli(run_cli, workspace, host_file, "--ids", "invocation-2,../../../escaped,turn-2")
    assert (code, out) == (2, "") and "invalid run id '../../../escaped'" in err


def test_generated_ids_are_fresh(tmp_path: Path, run_cli) -> None:
    workspace, host_file = _base_run(tmp_path)
    code, out, _ = _planner_cli(run_cli, workspace, host_file, "--json")
    continuation = json.loads(out)["continuation"]
    assert code == 0
    assert {continuation["invocationId"], continuation["runId"], continuation["turnId"]}.isdisjoint({"invocation-1", "run-1", "turn-1"})


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--ids", "a,b"), "--ids takes INVOCATION,RUN,TURN"),
        (("--facts", "x.json"), "give LEDGER.jsonl --facts FACTS.json, or --workspace"),
    ],
)
def test_planner_usage_errors_are_exit_2(extra: tuple[str, ...], message: str, tmp_path: Path, run_cli) -> None:
    workspace, host_file = _base_run(tmp_path)
    code, out, err = _planner_cli(run_cli, workspace, host_file, *extra)
    assert (code, out) == (2, "")
    assert message in err


def test_a_host_file_with_an_input_the_planner_fills_itself_is_exit_2(tmp_path: Path, run_cli) -> None:
    workspace, host_file = _base_run(tmp_path)
    host_file.write_text(json.dumps({**PLANNER["base"]["host"], "terminalRepairSucceeded": True}), encoding="utf-8")
    code, out, err = _planner_cli(run_cli, workspace, host_file)
    assert (code, out) == (2, "")
    assert "host: undeclared key 'terminalRepairSucceeded'" in err


# -- --latest: the session's run picked as spec/continuation.yaml `planner.candidate` says ---------------------


def _session(tmp_path: Path, runs: dict[str, Any]) -> Path:
    """A workspace whose session holds `runs` ({run id: its header}), each with the base ledger of a failed run."""
    rows = _rows([{"role": "user", "author": "user", "content": {"kind": "text", "text": "hi"}}, {"role": "system", "author": "system", "status": "failed", "actions": {"endInvocation": True}}])
    root = tmp_path / "ws"
    for run_id, header in runs.items():
        run = root / "sessions" / SESSION / "runs" / run_id
        run.mkdir(parents=True)
        (run / "run.json").write_text(json.dumps(header), encoding="utf-8")
        (run / "runtime-events.jsonl").write_text("".join(row.replace('"run-1"', json.dumps(run_id)) + "\n" for row in rows), encoding="utf-8")
    (tmp_path / "host.json").write_text(json.dumps(PLANNER["base"]["host"]), encoding="utf-8")
    return root


def _latest(run_cli, workspace: Path, host_file: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("--root", str(REPO), "continue-plan", "--workspace", str(workspace), "--session", SESSION, "--latest", "--host", str(host_file), *extra)


def _header(run_id: str, **fields: Any) -> dict[str, Any]:
    return {**PLANNER["base"]["header"], "runId": run_id, "status": "failed", **fields}


def test_latest_names_the_run_it_picked_in_text_and_json(tmp_path: Path, run_cli) -> None:
    workspace = _session(tmp_path, {"run-a": _header("run-a", createdAt="2026-01-01"), "run-b": _header("run-b", createdAt="2026-01-02")})

    code, out, err = _latest(run_cli, workspace, tmp_path / "host.json", "--json")
    printed = json.loads(out)
    assert (code, err, printed["pickedRunId"]) == (0, "", "run-b")
    assert printed["continuation"]["sourceRunId"] == "run-b"
    code, out, _ = _latest(run_cli, workspace, tmp_path / "host.json")
    assert code == 0 and out.startswith(f"--latest:      run run-b (the newest interrupted run of session {SESSION})\n")
    runs = workspace / "sessions" / SESSION / "runs"
    user, terminal = (runs / "run-b" / "runtime-events.jsonl").read_text().splitlines()
    call = {"id": "event-9", "sessionId": SESSION, "invocationId": "invocation-1", "runId": "run-b", "turnId": "turn-1", "ts": 9, "partial": False,
            "role": "model", "author": "agent", "content": {"kind": "function_call", "id": "call-1", "name": "Bash", "args": {}}}
    (runs / "run-b" / "runtime-events.jsonl").write_text(f"{user}\n{json.dumps(call)}\n{terminal}\n")  # a call left pending, the run's end after it
    code, out, _ = _latest(run_cli, workspace, tmp_path / "host.json")
    command = f"resume-contract plan --workspace {workspace} --session {SESSION} --run run-b"
    assert code == 1 and f"; `{command}` says why and what to do.\n" in out  # the picked run's Phase 0 plan


def test_latest_ties_on_created_at_are_broken_by_run_id_and_a_child_run_is_never_picked(tmp_path: Path, run_cli) -> None:
    runs = {
        "run-a": _header("run-a", createdAt="2026-01-01"),
        "run-c": _header("run-c", createdAt="2026-01-01"),
        "run-z": _header("run-z", createdAt="2026-01-09", parentRunId="run-a"),  # a child without a continuationSource
    }
    workspace = _session(tmp_path, runs)
    code, out, _ = _latest(run_cli, workspace, tmp_path / "host.json", "--json")
    assert (code, json.loads(out)["pickedRunId"]) == (0, "run-c")


def test_latest_with_nothing_interrupted_parks_and_a_session_without_runs_too(tmp_path: Path, run_cli) -> None:
    workspace = _session(tmp_path, {"run-a": _header("run-a", status="completed")})
    code, out, _ = _latest(run_cli, workspace, tmp_path / "host.json", "--json")
    assert (code, json.loads(out)["rejectionReasons"], json.loads(out)["pickedRunId"]) == (1, ["resume_candidate_missing"], None)
    empty = tmp_path / "empty"
    (empty / "sessions" / SESSION).mkdir(parents=True)
    code, out, _ = _latest(run_cli, empty, tmp_path / "host.json", "--json")
    assert (code, json.loads(out)["rejectionReasons"]) == (1, ["resume_candidate_missing"])


def test_latest_refuses_a_bad_host_file_even_when_nothing_is_picked(tmp_path: Path, run_cli) -> None:
    empty = tmp_path / "ws"
    (empty / "sessions" / SESSION).mkdir(parents=True)
    (tmp_path / "host.json").write_text(json.dumps({**PLANNER["base"]["host"], "feature": True}), encoding="utf-8")
    code, out, err = _latest(run_cli, empty, tmp_path / "host.json")
    assert (code, out) == (2, "") and "undeclared key 'feature'" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--session", SESSION, "--latest", "--run", RUN), "(--run R or --latest)"),
        (("--session", SESSION), "(--run R or --latest)"),
        (("--session", "nowhere", "--latest"), "no session 'nowhere'"),
        (("--session", "../x", "--latest"), "invalid session id"),
    ],
)
def test_latest_usage_errors_are_exit_2(args: tuple[str, ...], message: str, tmp_path: Path, run_cli) -> None:
    workspace = _session(tmp_path, {"run-a": _header("run-a")})
    code, out, err = run_cli("--root", str(REPO), "continue-plan", "--workspace", str(workspace), *args, "--host", str(tmp_path / "host.json"))
    assert (code, out) == (2, "") and message in err


def test_latest_skips_what_is_not_a_run_directory_and_refuses_a_run_it_cannot_read(tmp_path: Path, run_cli) -> None:
    # A name that is no run id is no run; but a run that is there and cannot be read may be the newest candidate,
    # or a claim that continues the one picked: never passed over (exit 2, named), as `--run` refuses it.
    workspace = _session(tmp_path, {"run-a": _header("run-a", createdAt="2026-01-01")})
    runs = workspace / "sessions" / SESSION / "runs"
    (runs / "not a run").mkdir()
    (runs / "not a run" / "run.json").write_text(json.dumps(_header("not a run", createdAt="2026-09-09")), encoding="utf-8")
    code, out, _ = _latest(run_cli, workspace, tmp_path / "host.json", "--json")
    assert (code, json.loads(out)["pickedRunId"]) == (0, "run-a")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "run.json").write_text(json.dumps(_header("run-x", createdAt="2026-09-09")), encoding="utf-8")
    (runs / "run-x").symlink_to(tmp_path / "outside")
    code, out, err = _latest(run_cli, workspace, tmp_path / "host.json", "--json")
    assert (code, out) == (2, "") and f"{runs / 'run-x'}: a symlink inside the workspace" in err
    (runs / "run-x").unlink()
    (runs / "run-x").mkdir()
    for text in ('{"runId":', "[1]"):
        (runs / "run-x" / "run.json").write_text(text, encoding="utf-8")
        code, out, err = _latest(run_cli, workspace, tmp_path / "host.json", "--json")
        assert (code, out) == (2, "") and f"{runs / 'run-x' / 'run.json'}: " in err and "cannot be known" in err
    (runs / "run-x" / "run.json").write_text(json.dumps(_header("run-y", createdAt="2026-09-09")), encoding="utf-8")
    code, out, err = _latest(run_cli, workspace, tmp_path / "host.json", "--json")
    assert (code, out) == (2, "") and "names another run than the one whose directory holds it" in err

def test_facts_nested_too_deep_are_refused_whatever_the_processs_recursion_limit(tmp_path: Path, run_cli, snapshot) -> None:
    # A library in the same process may raise the recursion limit (cel-python sets 2500): the depth is bounded
    # before the decoder, never by the limit (a decoder let deeper than the stack would crash the process).
    import sys

    ledger, facts_file = _write(tmp_path, _case("cwd_moved")[0], '{"workspaceCheckpoint": ' + "[" * 1200 + "]" * 1200 + "}")
    before = snapshot(tmp_path)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:
        code, out, err = run_cli("--root", str(REPO), "continue-plan", str(ledger), "--facts", str(facts_file), "--json")
    finally:
        sys.setrecursionlimit(limit)
    assert (code, out) == (2, "") and "facts.json: the facts file nests arrays or objects too deeply to read (more than 256 levels)" in err
    assert snapshot(tmp_path) == before
