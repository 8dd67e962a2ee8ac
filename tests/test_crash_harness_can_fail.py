"""The generated crash tests take their expectations from the decision table, so they can fail.

Flip the first blocked decision (`after_function_call` today) to safe_replay without changing the projector:
the generator's own check refuses such a spec (see tests/bad_specs/decision_contradicts_machine); rendering it
anyway, bypassing that check, must give a crash module whose cases for that prefix's failpoints (P1-P4 today)
fail against the real projector, and only those (and the SQLite store's boundaries that leave that prefix).
Everything is read from spec/: a contract edit needs no change here.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from resume_contract_generator.render.tree import render_all
from resume_contract_generator.spec.validate import load_spec

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_decision_changed_without_the_projector_fails_the_regenerated_crash_tests(tmp_path: Path) -> None:
    spec = load_spec(REPO)
    blocked = next(d for d in spec.decisions if d.disposition == "blocked")
    relaxed = dataclasses.replace(blocked, disposition="safe_replay", diagnostics=(), rejection_reasons=())
    mutant = dataclasses.replace(spec, decisions=tuple(relaxed if d.prefix == blocked.prefix else d for d in spec.decisions))
    module = render_all(mutant)["generated/tests/test_contract.py"]
    assert "'disposition': 'safe_replay'" in module
    # It runs against this repository's own contract (in sync), not a project above the temporary directory.
    own_project = "load_project(Path(__file__).resolve().parents[2])"
    assert own_project in module
    (tmp_path / "test_mutant_crash.py").write_text(module.replace(own_project, f"load_project(Path({str(REPO)!r}))"))

    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mutant_crash.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )

    assert result.returncode == 1, result.stdout[-2000:]
    failed = sorted(re.findall(r"^FAILED \S+::(\w+)\[(\S+)\]", result.stdout, re.MULTILINE))
    after_call = [fp.id for fp in spec.failpoints if fp.committed_prefix == blocked.prefix]
    outcomes = spec.ledger.outcome_names
    case_ids = [f"{fp}-{slug}-{outcome}" for fp, slug in zip(after_call, _slugs(spec, after_call)) for outcome in outcomes]
    expected = sorted(
        [("test_required_decision_in_process", case) for case in case_ids]
        + [("test_sigkill_after_the_committed_prefix", case) for case in case_ids]
        + [("test_the_run_loop_killed_at_its_real_boundary", f"loop-{fp}-kill-{outcome}") for fp in after_call for outcome in outcomes]
        + [("test_the_run_loop_killed_at_its_real_boundary", f"loop-{fp}-pause-{outcomes[0]}") for fp in after_call]
        + [("test_a_kill_mid_row_is_corruption_at_the_committed_offset_until_repaired", f"torn-{blocked.prefix}-{outcomes[0]}")]
        + [  # the SQLite store's boundaries that leave the same prefix (spec/failpoints.yaml `sqlite`)
            ("test_the_sqlite_store_killed_inside_and_after_each_transaction", f"sqlite-{boundary.id}-{outcome}")
            for boundary in spec.sqlite_failpoints
            if boundary.committed_prefix == blocked.prefix
            for outcome in outcomes
        ]
    )
    assert failed == expected
    summary = re.search(r"\b(\d+) failed, (\d+) passed\b", result.stdout)
    assert summary is not None and int(summary.group(1)) == len(expected) and int(summary.group(2)) > 0, result.stdout[-500:]


def _slugs(spec, ids: list[str]) -> list[str]:
    from resume_contract_generator.render.contexts import slug

    return [slug(next(fp.boundary for fp in spec.failpoints if fp.id == fp_id)) for fp_id in ids]
