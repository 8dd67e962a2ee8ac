"""A wording edit of the contract costs only its spec lines: made on a throw-away copy, the edit loop's suite passes.

tools/edit_drill.py rewords the directive and a failpoint boundary on one copy of the repository, regenerates
and runs there the suite a maintainer runs after an edit (`-m "not slow"`), all but its costliest tests that
never read a word of the contract (`WORDLESS`). By hand, `.venv/bin/python tools/edit_drill.py` runs every test,
the slow ones too, and the other edits (a new failpoint, a new diagnostic: a few minutes each). Skipped inside the
suite the drill itself runs.

The Phase 0 edits find what they change by its key, so they apply to the live spec whatever it says. The review
edits of the continuation decision are tests of `diff`: they are made on the frozen Phase 1 spec
(tests/frozen_spec/), so the live contract's evolution (its cwd check became a diagnostic) never breaks them.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FROZEN = REPO / "tests" / "frozen_spec"
sys.path.insert(0, str(REPO / "tools"))
from edit_drill import NESTED, main  # noqa: E402

# The costliest tests, which never read a word of the contract (they judge decisions, or that two runs' bytes are
# equal), so a rewording cannot move them: the suite the drill runs leaves them out (about 400 of its 826 s on
# CI at 79ad462). `tools/edit_drill.py`, run by hand, runs every test, these too.
WORDLESS = (
    "tests/test_vectors_conform.py::test_two_implementations_agree_on_every_vector",  # each vector's plan, by two programs
    "tests/test_vectors_conform.py::test_vectors_are_byte_identical_across_runs_and_hash_seeds",
    "tests/test_gallery.py::test_every_written_step_decides_its_cases_as_the_reference_and_is_classed_as_its_history_says",  # examples/' own spec
    "tests/test_verify.py::test_the_packaged_contract_is_clean_at_depth_3",  # explored ledgers' decisions
    "tests/test_verify.py::test_a_table_that_accepts_a_misnamed_response_is_caught_with_the_shortest_ledger",
    "tests/test_verify.py::test_a_table_that_forgets_an_anomaly_breaks_monotonic_evidence",
    "tests/test_store_damage.py::test_no_page_flip_of_any_fixture_reads_more_permissively",  # the reference's databases
    "tests/test_review_judge.py::test_every_third_mutant_is_classed_as_the_judge_classes_it",  # mutants' classes
    # implementations held to every vector (frozen vectors, or decisions compared): verdicts, never words
    "tests/test_vectors_conform.py::test_a_wrong_implementation_is_reported_with_exactly_its_failing_vectors",
    "tests/test_vectors_conform.py::test_a_stricter_implementation_disagrees_but_is_not_unsafe",
    "tests/test_continuation_vectors.py::test_one_that_continues_over_a_pending_permission_is_reported_unsafe_on_exactly_those_vectors",
    "tests/test_continuation_vectors.py::test_one_that_parks_where_the_contract_continues_disagrees_but_is_not_unsafe",
    "tests/test_continuation_vectors.py::test_an_implementation_that_writes_into_its_workspace_changes_neither_the_vectors_nor_a_second_run",
    "tests/test_continuation_vectors.py::test_one_that_continues_a_run_twice_is_reported_unsafe_on_exactly_those_planner_vectors",
    # diffs of examples' own specs (the gallery's step, the other runtime's pull request) and a trust test
    "tests/test_recovery_facts.py::test_diff_of_the_step_with_itself_finds_nothing",
    "tests/test_language_review.py::test_the_other_runtimes_second_pull_request_is_one_yaml_edit_classed_breaking",
    "tests/test_attacks_trust.py::test_diff_executes_nothing_from_the_revisions_it_compares",
)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get(NESTED) == "1", reason="this is the suite the drill runs")
@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="the drill copies the files git knows")
def test_rewording_the_directive_and_a_boundary_needs_no_test_edit(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["reword-directive+reword-boundary", "--pytest-args=-m 'not slow' " + " ".join(f"--deselect {test}" for test in WORDLESS)])
    report = capsys.readouterr().out
    assert code == 0, report
    assert report.startswith("passed  reword-directive+reword-boundary (")


def test_each_test_the_drill_leaves_out_is_there() -> None:
    # (pytest deselects a test that is not there without a word: a renamed one would silently be run again)
    for test in WORDLESS:
        path, _, name = test.partition("::")
        assert f"\ndef {name}(" in (REPO / path).read_text(encoding="utf-8"), test


@pytest.mark.skipif(os.environ.get(NESTED) == "1", reason="inside the drill the spec already holds an edit")
def test_every_edit_still_applies_to_the_live_spec(tmp_path: Path) -> None:
    # An edit that no longer finds its text would make the drill fail for the wrong reason: keep them current.
    from edit_drill import EDITS

    for edit in EDITS:  # each on its own copy: the drill runs each edit alone (two may touch the same lines)
        copy = tmp_path / edit.name
        if edit.review_class is None:
            for name in ("spec", "resume_contract"):
                shutil.copytree(REPO / name, copy / name)
        else:
            _frozen_phase1(copy)
        edit.apply(copy)  # raises EditDoesNotApply, naming the file and the text it looked for


def _frozen_phase1(root: Path) -> None:
    shutil.copytree(FROZEN / "spec", root / "spec")
    for name in ("continuation.yaml", "lifecycle.yaml"):
        shutil.copyfile(FROZEN / "phase1" / name, root / "spec" / name)


def _sides(tmp_path: Path, edit_name: str) -> tuple[Path, Path]:
    """The frozen Phase 1 spec (base) and it with one continuation edit made (head), as the drill's diff sees them."""
    from edit_drill import EDITS

    base, head = tmp_path / "base", tmp_path / "head"
    _frozen_phase1(base)
    _frozen_phase1(head)
    next(edit for edit in EDITS if edit.name == edit_name).apply(head)
    return base, head


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get(NESTED) == "1", reason="inside the drill the spec already holds an edit")
@pytest.mark.parametrize(("edit_name", "review_class"), [("cwd-reported", "weakens-safety"), ("cwd-exact", "tightens"), ("checks-swapped", "breaking")])
def test_each_phase1_edit_is_reviewed_as_the_class_it_is(edit_name: str, review_class: str, tmp_path: Path) -> None:
    from edit_drill import EDITS, review_classes

    base, head = _sides(tmp_path, edit_name)

    assert next(edit for edit in EDITS if edit.name == edit_name).review_class == review_class
    assert set(review_classes(base, head, dict(os.environ))) == {review_class}


@pytest.mark.skipif(os.environ.get(NESTED) == "1", reason="inside the drill the spec already holds an edit")
def test_an_edit_the_review_classes_otherwise_fails_the_drill(tmp_path: Path) -> None:
    from edit_drill import Edit, _wrong_review, checks_swapped

    base, head = _sides(tmp_path, "checks-swapped")
    mislabelled = Edit("checks-swapped", "two checks swapped, claimed to tighten", checks_swapped, "tightens")

    assert _wrong_review([mislabelled], base, head, dict(os.environ)) == "diff classed the edit ['breaking'], not tightens"
