"""The corpus refresh scripts show a diff, write only with --accept, name the case that fails, and never let a
case stop showing the rule or the mistake it exists for. Each runs on a scratch copy of one case."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _corpus(tmp_path: Path, corpus: str, case: str) -> Path:
    shutil.copytree(TESTS / "frozen_spec", tmp_path / "frozen_spec")
    (tmp_path / corpus).mkdir()
    shutil.copyfile(TESTS / corpus / "refresh.py", tmp_path / corpus / "refresh.py")
    shutil.copytree(TESTS / corpus / case, tmp_path / corpus / case)
    return tmp_path / corpus


def _refresh(corpus: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(corpus / "refresh.py"), *args], capture_output=True, text=True, timeout=120)


def test_review_refresh_shows_a_diff_and_writes_only_with_accept(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, "review_cases", "DIAGNOSTIC_REWORDED")
    expected = corpus / "DIAGNOSTIC_REWORDED" / "expected.txt"
    good = expected.read_text(encoding="utf-8")
    assert _refresh(corpus).returncode == 0, "an up-to-date corpus has nothing to accept"

    expected.write_text(good.replace("neutral", "tightens", 1), encoding="utf-8")
    shown = _refresh(corpus)
    assert shown.returncode == 1
    assert "--- a/DIAGNOSTIC_REWORDED/expected.txt" in shown.stdout
    assert "\n+1 change: 0 weakens-safety, 0 breaking, 0 tightens, 1 neutral\n" in shown.stdout
    assert "1 case(s) changed; read the diff above, then rerun with --accept" in shown.stdout
    assert expected.read_text(encoding="utf-8") != good, "without --accept nothing is written"

    accepted = _refresh(corpus, "--accept")
    assert accepted.returncode == 0 and "DIAGNOSTIC_REWORDED: accepted" in accepted.stdout
    assert expected.read_text(encoding="utf-8") == good


def test_review_refresh_refuses_a_case_that_stops_showing_its_rule(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, "review_cases", "DIAGNOSTIC_REWORDED")
    case = corpus / "DIAGNOSTIC_REWORDED"
    before = (case / "expected.txt").read_text(encoding="utf-8")
    shutil.copyfile(tmp_path / "frozen_spec" / "spec" / "projector.yaml", case / "current" / "projector.yaml")  # no change left
    result = _refresh(corpus, "--accept")
    assert result.returncode == 1
    assert "DIAGNOSTIC_REWORDED: the new report no longer shows DIAGNOSTIC_REWORDED, the rule this case exists for; refused" in result.stderr
    assert (case / "expected.txt").read_text(encoding="utf-8") == before


def test_review_refresh_names_a_case_whose_overlay_is_not_a_valid_spec(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, "review_cases", "DIAGNOSTIC_REWORDED")
    (corpus / "DIAGNOSTIC_REWORDED" / "current" / "projector.yaml").write_text("initial: [\n", encoding="utf-8")
    result = _refresh(corpus, "--accept")
    assert result.returncode == 1
    assert result.stderr.startswith("DIAGNOSTIC_REWORDED: a side of this case is not a valid spec; fix its overlays:\n")
    assert "Traceback" not in result.stderr


def test_bad_spec_refresh_refuses_a_case_the_generator_now_accepts(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, "bad_specs", "unknown_key")
    case = corpus / "unknown_key"
    before = (case / "expected_stderr.txt").read_text(encoding="utf-8")
    assert _refresh(corpus).returncode == 0
    shutil.copyfile(tmp_path / "frozen_spec" / "spec" / "decisions.yaml", case / "spec" / "decisions.yaml")  # the mistake is gone
    result = _refresh(corpus, "--accept")
    assert result.returncode == 1
    assert "unknown_key: generate exited 0, not 2: the case no longer shows a bad spec; refused" in result.stderr
    assert (case / "expected_stderr.txt").read_text(encoding="utf-8") == before
