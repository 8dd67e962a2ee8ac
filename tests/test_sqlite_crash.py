"""The SQLite store's crash harness can fail, and its spec section is validated: tests of the tool, on frozen inputs.

The harness must catch a store whose transaction is not atomic (a kill inside T1 that leaves the call behind) and
a run loop that never reaches a boundary; the spec's `sqlite` section is refused with file:line errors for an
unknown prefix or an id another failpoint has.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from resume_contract.crash import sqlite_harness
from resume_contract.crash.sqlite_harness import run_sqlite_case
from resume_contract.crash.verdict import expected_from_catalog, mismatches

FROZEN = Path(__file__).parent / "frozen_spec" / "spec"
PACKAGED_LOOP = Path(sqlite_harness.__file__).with_name("sqlite_runloop.py")


def _sabotaged_loop(tmp_path: Path, old: str, new: str) -> Path:
    text = PACKAGED_LOOP.read_text(encoding="utf-8")
    assert old in text, "the packaged SQLite run loop changed: keep this sabotage current"
    loop = tmp_path / "sqlite_runloop.py"
    loop.write_text(text.replace(old, new), encoding="utf-8")
    return loop


def test_a_kill_inside_t1_that_leaves_the_call_behind_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # T1 split in two: the call committed on the generic lane, then the hook: the call survives the kill.
    loop = _sabotaged_loop(tmp_path, 'store.commit_tool_prepared(call, inside=lambda: failpoints.hit("inside_t1"))',
                           'store.append(call); failpoints.hit("inside_t1")')
    monkeypatch.setattr(sqlite_harness, "PACKAGED_SQLITE_RUN_LOOP", loop)
    observed = run_sqlite_case("inside_t1", "ok", "before_function_call")
    problems = mismatches(observed, expected_from_catalog("before_function_call", "ok"))
    assert any(problem.startswith("committed_event_ids:") for problem in problems), problems
    assert any(problem.startswith("disposition:") for problem in problems), problems


def test_a_run_loop_that_never_reaches_the_boundary_fails_the_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop = _sabotaged_loop(tmp_path, 'failpoints.hit("after_t2")', "pass")
    monkeypatch.setattr(sqlite_harness, "PACKAGED_SQLITE_RUN_LOOP", loop)
    observed = run_sqlite_case("after_t2", "ok", "after_function_response")
    assert any("did not die" in problem for problem in observed.problems), observed.problems


def test_the_packaged_loop_killed_after_t1_leaves_exactly_the_call(tmp_path: Path) -> None:
    observed = run_sqlite_case("after_t1", "error", "after_function_call")
    assert observed.problems == [] and observed.plan is not None
    assert observed.plan.disposition == "blocked" and [op.status for op in observed.plan.operations] == ["indeterminate"]
    assert observed.side_effect_written is False  # killed before the tool ran


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ("sqlite:\n  boundaries:\n    - {id: inside_t1, boundary: b, committed_prefix: no_such_prefix}\n",
         r"spec/failpoints\.yaml:\d+:\d+: unknown prefix 'no_such_prefix'"),
        ("sqlite:\n  boundaries:\n    - {id: P1, boundary: b, committed_prefix: before_function_call}\n",
         r"spec/failpoints\.yaml:\d+:\d+: invalid name 'P1'"),
        ("sqlite:\n  boundaries:\n    - {id: inside_t1, boundary: b, committed_prefix: before_function_call}\n"
         "    - {id: inside_t1, boundary: c, committed_prefix: before_function_call}\n",
         r"spec/failpoints\.yaml:\d+:\d+: duplicate failpoint id 'inside_t1'"),
    ],
    ids=["unknown-prefix", "id-pattern", "duplicate-id"],
)
def test_a_bad_sqlite_section_is_refused_at_its_line(section: str, message: str, tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "project"
    shutil.copytree(FROZEN, project / "spec")
    failpoints = project / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text(encoding="utf-8") + "\n" + section, encoding="utf-8")
    code, out, err = run_cli("--root", str(project), "check")
    assert code == 2, (out, err)
    assert any(re.match(message, line) for line in err.splitlines()), err
    assert not (project / "generated").exists()
