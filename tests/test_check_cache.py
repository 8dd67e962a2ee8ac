"""`check` remembers a clean verdict (resume_contract/project/locate.py) and can make it faster, never different:
a remembered verdict prints what a full check prints, and after any edit that a full check would fail on, the
verdict is the full check's, exactly as with an empty cache.

Tool tests: the frozen spec (the `project` fixture) and run loops written here.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"
FAILPOINT_IDS = [item["id"] for item in yaml.safe_load((FROZEN_SPEC / "failpoints.yaml").read_text(encoding="utf-8"))["failpoints"]]
RUN_LOOP = "runloop.py"


def _with_run_loop(project: Path, run_cli, ids: list[str]) -> Path:
    """The project's spec names a run loop, written with a hook for each of `ids`; regenerated."""
    failpoints = project / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text(encoding="utf-8").replace("\nfailpoints:\n", f"\nrun_loop: {RUN_LOOP}\nfailpoints:\n", 1), encoding="utf-8")
    _write_run_loop(project / RUN_LOOP, ids)
    assert run_cli("--root", str(project), "generate")[0] == 0
    return project / RUN_LOOP


def _write_run_loop(path: Path, ids: list[str]) -> None:
    body = "".join(f'    failpoints.hit("{failpoint_id}")\n' for failpoint_id in ids)
    path.write_text(f"def run(failpoints):\n{body}    failpoints.passed.append('done')\n", encoding="utf-8")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Each call points the verdict cache at a new, empty directory."""
    made = iter(range(1000))

    def fresh() -> None:
        monkeypatch.setenv("RESUME_CONTRACT_CACHE_DIR", str(tmp_path / f"cache-{next(made)}"))

    fresh()
    return fresh


def _no_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    from resume_contract_generator import pipeline

    def refuse(root: Path) -> None:
        raise AssertionError("check rendered the spec although its clean verdict was remembered")

    monkeypatch.setattr(pipeline, "check", refuse)


@pytest.mark.parametrize("format", ["text", "json", "github"])
def test_a_remembered_clean_check_prints_what_the_full_check_printed(format: str, project: Path, run_cli, cache, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_run_loop(project, run_cli, FAILPOINT_IDS)
    full = run_cli("--root", str(project), "check", "--format", format)
    assert full[0] == 0
    _no_rendering(monkeypatch)
    assert run_cli("--root", str(project), "check", "--format", format) == full


def _hand_edit(project: Path) -> None:
    path = project / "generated" / "CONTRACT.md"
    path.write_text(path.read_text(encoding="utf-8") + "\nedited by hand\n", encoding="utf-8")


def _spec_edit(project: Path) -> None:
    path = project / "spec" / "scope.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("phase: Phase 0\n", "phase: Phase 0b\n", 1), encoding="utf-8")


def _orphan(project: Path) -> None:
    (project / "generated" / "stray.md").write_text("not generated\n", encoding="utf-8")


def _leftover(project: Path) -> None:
    (project / "generated.resume-contract-new").mkdir()


def _hook_removed(project: Path) -> None:
    _write_run_loop(project / RUN_LOOP, FAILPOINT_IDS[1:])


def _run_loop_removed(project: Path) -> None:
    (project / RUN_LOOP).unlink()


def _generated_removed(project: Path) -> None:
    shutil.rmtree(project / "generated")


EDITS = [_hand_edit, _spec_edit, _orphan, _leftover, _hook_removed, _run_loop_removed, _generated_removed]


@pytest.mark.parametrize("edit", EDITS, ids=lambda edit: edit.__name__.strip("_"))
def test_no_remembered_verdict_hides_what_a_full_check_finds(edit: Callable[[Path], None], project: Path, run_cli, cache) -> None:
    _with_run_loop(project, run_cli, FAILPOINT_IDS)
    assert run_cli("--root", str(project), "check")[0] == 0  # clean, and remembered
    edit(project)
    remembered = run_cli("--root", str(project), "check")
    cache()  # nothing remembered: the full check
    assert remembered == run_cli("--root", str(project), "check")
    assert remembered[0] != 0


def test_the_key_reads_each_rendering_librarys_installed_metadata() -> None:
    from importlib.metadata import version

    from resume_contract.project.verdicts import _RENDERING_LIBRARIES, library_metadata

    found = library_metadata()
    assert set(found) == set(_RENDERING_LIBRARIES)
    for library, metadata in found.items():
        assert metadata is not None, library
        lines = metadata.read_text(encoding="utf-8").splitlines()
        assert f"Version: {version(library)}" in lines, library  # the version importlib.metadata reads


def test_a_cache_this_user_cannot_reach_costs_only_its_speed(project: Path, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Another user's $HOME (sudo without -H: EACCES) or a path the system refuses: nothing is remembered, and
    # every command checks in full instead of stopping. A name too long for the system is refused even to root.
    monkeypatch.setenv("RESUME_CONTRACT_CACHE_DIR", str(tmp_path / ("x" * 300)))
    ledger = tmp_path / "runtime-events.jsonl"
    ledger.write_bytes(b"")
    assert run_cli("--root", str(project), "plan", str(ledger))[0] == 0
    assert run_cli("--root", str(project), "check")[0] == 0
