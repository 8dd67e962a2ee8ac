"""The reference run loop and its failpoint hooks, and `resume-contract crash`."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
import pytest
from resume_contract_generated.catalog import RUNTIME_RESUME_FAILPOINTS

from resume_contract.crash.failpoints import Failpoints, parse
from resume_contract.crash.harness import run_boundary_case
from resume_contract.crash.runloop import run
from resume_contract.errors import FailpointConfigError
from resume_contract.ledger.store import read_ledger


def test_the_loop_passes_one_hook_per_catalog_failpoint_in_order(tmp_path: Path) -> None:
    passed = run(tmp_path, "ok", Failpoints({}))
    assert passed == [fp.id for fp in RUNTIME_RESUME_FAILPOINTS]
    ledger = read_ledger(tmp_path / "sessions/canonical-session/runs/canonical-run/runtime-events.jsonl")
    assert ledger.high_water == 4
    assert (tmp_path / "side-effects" / "notes.md").read_text() == "Release notes."


@pytest.mark.parametrize("failpoint", [fp.id for fp in RUNTIME_RESUME_FAILPOINTS])
def test_the_tool_side_effect_is_visible_only_from_p4_on(failpoint: str) -> None:
    prefix = next(fp.committed_prefix for fp in RUNTIME_RESUME_FAILPOINTS if fp.id == failpoint)
    observation = run_boundary_case(failpoint, "ok", prefix)
    assert observation.problems == []
    # P1-P3 leave a committed call whose side effect has not happened; P4 one whose side effect has:
    # the same prefix, so the plan must call both indeterminate.
    assert observation.side_effect_written == (int(failpoint[1:]) >= 4)


def test_failpoint_configuration_is_checked_against_the_catalog() -> None:
    assert parse("P3=kill, P5=pause,P6=off") == {"P3": "kill", "P5": "pause", "P6": "off"}
    with pytest.raises(FailpointConfigError, match="unknown failpoint 'P99'"):
        parse("P99=kill")
    with pytest.raises(FailpointConfigError, match="unknown action 'explode' for P3"):
        parse("P3=explode")
    with pytest.raises(FailpointConfigError, match="not a failpoint of the spec's catalog"):
        Failpoints({}).hit("P99")


def test_resume_contract_crash_prints_the_table_and_verifies(run_cli) -> None:
    from resume_contract_generated.catalog import DECISIONS, FAILPOINTS_BY_ID

    # The first failpoint whose committed prefix is blocked, and the reasons the decision table gives it.
    failpoint = next(fp for fp in FAILPOINTS_BY_ID.values() if DECISIONS[fp.committed_prefix].disposition == "blocked")
    reasons = ",".join(DECISIONS[failpoint.committed_prefix].rejection_reasons)
    code, out, err = run_cli("crash", "--failpoint", failpoint.id, "--outcome", "error")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines.pop(0).startswith("contract: ")  # which contract was crashed
    assert lines[0].split() == ["ID", "outcome", "boundary", "committed", "prefix", "decision", "reasons", "sigkill", "real", "boundary"]
    assert lines[1].split()[:2] == [failpoint.id, "error"] and lines[1].split()[-4:] == ["blocked", reasons, "verified", "verified"]
    assert lines[2].startswith(f"torn write after {failpoint.committed_prefix}: verified (corruption at byte ")
    assert "bare `python -c pass` children" in lines[3]
    assert lines[4] == "3 of 3 cases verified"


def test_resume_contract_crash_rejects_unknown_failpoints(run_cli) -> None:
    from resume_contract_generated.catalog import FAILPOINTS_BY_ID, SQLITE_FAILPOINTS_BY_ID
    from resume_contract_generated.continuation_boundaries import BOUNDARIES_BY_ID

    known = [*FAILPOINTS_BY_ID, *SQLITE_FAILPOINTS_BY_ID, *BOUNDARIES_BY_ID]
    assert run_cli("crash", "--failpoint", "P99") == (
        2,
        "",
        f"resume-contract: unknown failpoint 'P99'; the failpoints and boundaries are {', '.join(known)}\n",
    )


def test_a_child_that_never_signals_fails_the_case_with_its_stderr(monkeypatch) -> None:
    from resume_contract.crash import harness as crash

    # A prefix the child cannot commit (an invalid run id): it dies before saying "committed".
    bad = [msgspec.structs.replace(event, run_id="no such/run") for event in crash.canonical_prefix("ok", "after_function_call")]
    monkeypatch.setattr(crash, "canonical_prefix", lambda outcome, prefix, contract=None: bad)
    observation = crash.run_crash_case("P3", "ok", "after_function_call")
    assert observation.plan is None
    assert observation.problems[0].startswith("the child never signalled its appends committed; stderr: ")
    assert "InvalidLedgerId" in observation.problems[0]


def test_a_wait_for_a_silent_child_is_bounded() -> None:
    from resume_contract.crash.harness import Children, _Child, died_by_kill

    child = _Child(Children(), [sys.executable, "-c", "import sys, time; print('still starting', file=sys.stderr, flush=True); time.sleep(60)"])
    try:
        assert child.wait_for("committed", timeout=0.5) is False
        assert died_by_kill(child.kill())
    finally:
        child.close()
    assert child.stderr() == "still starting\n"


def test_crash_and_verify_run_the_contract_of_the_project_they_are_given(project, run_cli) -> None:
    # Another project's contract is what runs (its own generated/), never the installed one, and both say so.
    code, out, _ = run_cli("--root", str(project), "verify", "--depth", "1", "--jobs", "1")
    assert code == 0 and "contract: runtime-resume (Phase 0), spec sha256 " in out and f"; project {project.resolve()}\n" in out
    code, out, err = run_cli("--root", str(project), "crash")  # the frozen spec names no run loop to kill
    assert (code, out) == (1, "")
    assert err.startswith("resume-contract crash: the spec names no run loop to kill at each failpoint's hook")
