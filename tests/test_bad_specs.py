"""The bad-spec corpus: each case overlays spec files (and schemas, in spec/schema/) on the corpus' own frozen spec (tests/frozen_spec/, never
the live spec/) and must exit 2 with its exact messages (file:line:col) and write nothing. Each case's
directory is named for what it breaks. tests/bad_specs/refresh.py recomputes the expected messages."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "bad_specs"
CASES = sorted(path.name for path in CORPUS.iterdir() if path.is_dir())


def test_the_corpus_covers_every_required_kind_of_mistake() -> None:
    required = {
        "duplicate_key",
        "unknown_key",
        "wrong_type",
        "dangling_reference",
        "nondeterministic_rule",
        "incomplete_machine",
        "unreachable_state",
        "decision_contradicts_machine",
        "injection_attempt",
        "weakened_consistently",
    }
    assert required <= set(CASES)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", ["generate", "check"])
def test_bad_spec_exits_2_with_exact_messages_and_writes_nothing(case: str, command: str, project: Path, run_cli, snapshot) -> None:
    shutil.copytree(CORPUS / case / "spec", project / "spec", dirs_exist_ok=True)  # files, and schemas in spec/schema/
    before = snapshot(project)

    code, out, err = run_cli("--root", str(project), command)

    assert (code, out) == (2, "")
    assert err == (CORPUS / case / "expected_stderr.txt").read_text(encoding="utf-8")
    assert snapshot(project) == before
