"""The gallery examples/maka-history/ (a real contract's history as YAML edits) holds what it claims.

Each written step's patch changes spec/ only and applies onto the step before; `generate` accepts it; the step's
reference cases (the reference's recorded answers, copied from ../shared/evolutions) decide as the reference did,
but for the manifest's known gaps (which must still differ, and only in diagnostics); `diff` gives it the class
the history names. tools/gallery.py does the work; these tests call it.
"""

from __future__ import annotations

import filecmp
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
GALLERY = ROOT / "examples" / "maka-history"
SHARED = ROOT.parent / "shared" / "evolutions"


def _gallery() -> Any:
    spec = importlib.util.spec_from_file_location("gallery", ROOT / "tools" / "gallery.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gallery"] = module
    spec.loader.exec_module(module)
    return module


def test_every_written_step_is_a_patch_of_spec_only_with_its_reference_cases() -> None:
    gallery = _gallery()
    steps = gallery.written()
    assert [step["step"] for step in steps] == ["01-tool-boundary", "02-head-gate", "03-catalog-scope", "04-cwd-diagnostic", "05-permission-closers", "06-recovery-facts", "07-hidden-events", "08-terminal-last", "10-composite-order"]
    for step in steps:
        files = gallery.patch_files(GALLERY / step["patch"])
        assert files and all(name.startswith("spec/") for name in files), (step["step"], files)
        if step["cases"] is None:  # held to the reference's SQLite runs instead (tools/gallery.py check_sqlite_runs)
            assert (ROOT / step["sqlite_cases"]).is_dir() and step["reference"], step["step"]
        else:
            assert (GALLERY / step["cases"] / "cases.jsonl").is_file() and (GALLERY / step["cases"] / "about.json").is_file()


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/evolutions is not beside this checkout")
def test_the_copied_cases_are_the_shared_ones() -> None:
    for step in _gallery().written():
        name = step["step"]
        if step["cases"] is None:
            continue
        for file in ("about.json", "cases.jsonl"):
            assert filecmp.cmp(GALLERY / step["cases"] / file, SHARED / name / file, shallow=False), (name, file)


@pytest.mark.slow
def test_every_written_step_decides_its_cases_as_the_reference_and_is_classed_as_its_history_says() -> None:
    assert _gallery().check() == []


@pytest.mark.slow
def test_a_step_written_in_part_still_applies_and_holds_what_it_did() -> None:
    assert _gallery().check_drafts() == []
