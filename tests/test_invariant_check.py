"""`generate` and `check` enforce the spec's declared invariants; weakening safety on purpose takes an invariant edit.

Tool tests on the frozen spec (tests/frozen_spec/) and the bad-spec corpus' `weakened_consistently` case.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from resume_contract_generator.spec.invariant_check import invariant_errors
from resume_contract_generator.spec.validate import load_spec

FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"
WEAKENED = Path(__file__).resolve().parent / "bad_specs" / "weakened_consistently" / "spec"


def test_the_frozen_spec_keeps_every_invariant() -> None:
    assert invariant_errors(load_spec(FROZEN_SPEC.parent)) == []


def _weakened(project: Path, *, drop: tuple[str, ...] = ()) -> None:
    for overlay in WEAKENED.iterdir():
        shutil.copyfile(overlay, project / "spec" / overlay.name)
    invariants = project / "spec" / "invariants.yaml"
    text = invariants.read_text(encoding="utf-8")
    for name in drop:
        text, count = re.subn(rf"\n  {name}:\n(?:    .*\n|      .*\n)+", "\n", text)
        assert count == 1, name
    invariants.write_text(text, encoding="utf-8")


def test_a_consistent_weakening_is_refused_by_check_and_generate(project: Path, run_cli, snapshot) -> None:
    _weakened(project)
    before = snapshot(project)
    for command in ("check", "generate"):
        code, out, err = run_cli("--root", str(project), command)
        assert (code, out) == (2, "")
        assert "spec/invariants.yaml:9:3: the spec violates invariant 'fail_closed': " in err
        assert "shortest ledger: function_call(a)." in err
    assert snapshot(project) == before


def test_every_command_refuses_the_spec_generate_refuses(project: Path, run_cli, tmp_path: Path, snapshot) -> None:
    # One pipeline decides what a checked spec is: `vectors` and `conform` (which make their vectors from the
    # spec) refuse what `generate` refuses, with the same messages, and write nothing.
    _weakened(project)
    generate = run_cli("--root", str(project), "generate")
    assert generate[0] == 2
    before = snapshot(project)
    out = tmp_path / "vectors"
    vectors = run_cli("--root", str(project), "vectors", "--out", str(out))
    assert vectors == generate and not out.exists()
    conform = run_cli("--root", str(project), "conform", "--", "true")
    assert conform == generate
    assert snapshot(project) == before


def test_weakening_on_purpose_edits_the_invariant_and_the_review_says_weakens_safety(project: Path, run_cli) -> None:
    _weakened(project, drop=("fail_closed", "matches_oracle"))
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and "does not match spec/" in out  # drift to regenerate, no longer a refused spec
    assert run_cli("--root", str(project), "generate")[0] == 0

    code, out, _ = run_cli("--root", str(project), "diff", str(FROZEN_SPEC), str(project / "spec"), "--fail-on", "weakens-safety")
    assert code == 1
    # The class comes from what decisions do: the relaxed decision is the weakening, shown by its smallest ledger;
    # the invariant's removal changes no decision by itself, and is breaking (verify proves less).
    assert re.search(r"weakens-safety +DECISION_DISPOSITION_RELAXED: prefix 'after_function_call': blocked -> safe_replay", out), out
    assert "weakens-safety  function_call(a): blocked [dangling_tool_state]; diagnostics pending_tool_result; to verify a; operations indeterminate -> safe_replay" in out, out
    assert re.search(r"breaking +INVARIANT_REMOVED: invariant 'fail_closed' removed", out), out


def test_a_reason_renamed_away_from_the_oracle_says_to_rename_it_there(tmp_path: Path) -> None:
    # The hand-written oracle names the contract's reasons: the fix is there, not in weakening an invariant.
    shutil.copytree(FROZEN_SPEC, tmp_path / "spec")
    for name in ("projector.yaml", "decisions.yaml"):
        path = tmp_path / "spec" / name
        path.write_text(path.read_text().replace("dangling_tool_state", "unresolved_tool_state"))
    messages = [error.message for error in invariant_errors(load_spec(tmp_path))]
    assert len(messages) == 1 and "invariant 'matches_oracle'" in messages[0]
    assert "rename it there too" in messages[0] and "resume_contract/core/oracle.py" in messages[0] and "oracle: <path>" in messages[0]
    assert "change this invariant too" not in messages[0]
