"""A wording edit of the contract costs only its spec lines: made on a throw-away copy, the whole suite passes.

tools/edit_drill.py rewords the directive and a failpoint boundary on one copy of the repository, regenerates
and runs the full suite there (the other edits, a new failpoint and a new diagnostic, take a few minutes each:
`.venv/bin/python tools/edit_drill.py`). Skipped inside the suite the drill itself runs.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
from edit_drill import NESTED, main  # noqa: E402


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get(NESTED) == "1", reason="this is the suite the drill runs")
@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="the drill copies the files git knows")
def test_rewording_the_directive_and_a_boundary_needs_no_test_edit(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["reword-directive+reword-boundary"])
    report = capsys.readouterr().out
    assert code == 0, report
    assert report.startswith("passed  reword-directive+reword-boundary (")


@pytest.mark.skipif(os.environ.get(NESTED) == "1", reason="inside the drill the spec already holds an edit")
def test_every_edit_still_applies_to_the_live_spec(tmp_path: Path) -> None:
    # An edit that no longer finds its text would make the drill fail for the wrong reason: keep them current.
    from edit_drill import EDITS

    for name in ("spec", "resume_contract"):
        shutil.copytree(REPO / name, tmp_path / name)
    for edit in EDITS:
        edit.apply(tmp_path)  # raises EditDoesNotApply, naming the file and the text it looked for
