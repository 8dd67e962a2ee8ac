"""A failpoint the run loop has no hook for is named by `check`, `generate` and `crash`, with the file to edit.

Tool tests: the frozen spec's failpoints, and run loops written here (never the real one).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from resume_contract_generator import hooks

FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"
FAILPOINT_IDS = [item["id"] for item in yaml.safe_load((FROZEN_SPEC / "failpoints.yaml").read_text(encoding="utf-8"))["failpoints"]]


RUN_LOOP = "runloop.py"


def _declared(project: Path, run_cli, run_loop: str = RUN_LOOP) -> Path:
    """The project's spec names its run loop (spec/failpoints.yaml `run_loop`), regenerated: where `check` and
    `crash` look for hooks."""
    failpoints = project / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text(encoding="utf-8").replace("\nfailpoints:\n", f"\nrun_loop: {run_loop}\nfailpoints:\n", 1), encoding="utf-8")
    assert run_cli("--root", str(project), "generate")[0] == 0
    return project / run_loop


def _failpoint_line(project: Path, failpoint_id: str) -> int:
    text = (project / "spec" / "failpoints.yaml").read_text(encoding="utf-8")
    return next(n for n, line in enumerate(text.splitlines(), 1) if line == f"  - id: {failpoint_id}")


def _run_loop(path: Path, ids: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f'    failpoints.hit("{failpoint_id}")\n' for failpoint_id in ids)
    path.write_text(f"def run(failpoints):\n{body}    failpoints.passed.append('done')\n", encoding="utf-8")
    return path


def test_hooks_are_read_from_the_source_without_running_it(tmp_path: Path) -> None:
    path = tmp_path / "runloop.py"
    path.write_text('import sys; sys.exit("ran")\nfp.hit("P1"); fp.hit(name); other("P2"); fp.hit("P3", 1)\n', encoding="utf-8")
    assert hooks.hooks_in(path) == {"P1", "P3"}
    assert hooks.missing_hooks(["P1", "P2", "P3"], path) == ["P2"]
    path.write_text("def broken(:\n", encoding="utf-8")
    assert hooks.missing_hooks(["P1"], path) == ["P1"]


def test_check_names_a_failpoint_without_a_hook_at_its_line_and_fails(project: Path, run_cli, snapshot) -> None:
    missing = FAILPOINT_IDS[3]
    _run_loop(_declared(project, run_cli), [i for i in FAILPOINT_IDS if i != missing])
    before = snapshot(project)

    code, out, _ = run_cli("--root", str(project), "check")
    line = _failpoint_line(project, missing)
    assert code == 1
    assert out.startswith(f"spec/failpoints.yaml:{line}:5: failpoint {missing} has no hook in the run loop: "
                          f"add `failpoints.hit(\"{missing}\")` to {RUN_LOOP} where its boundary is crossed")
    assert out.endswith("to fix: make the run loop's failpoint hooks match spec/failpoints.yaml, as named above\n")

    code, out, err = run_cli("--root", str(project), "generate")
    assert code == 0 and out.startswith("generated/ is up to date (") and out.endswith(" files)\n")
    assert err.startswith(f"warning: spec/failpoints.yaml:{line}:5: failpoint {missing} has no hook")
    assert snapshot(project) == before


def test_check_names_a_hook_that_is_no_failpoint_of_the_spec(project: Path, run_cli) -> None:
    runloop = _run_loop(_declared(project, run_cli), FAILPOINT_IDS + ["P99"])
    line = next(n for n, text in enumerate(runloop.read_text().splitlines(), 1) if '"P99"' in text)
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1
    assert out.startswith(f"{RUN_LOOP}:{line}: failpoints.hit('P99') names no failpoint of spec/failpoints.yaml")


def test_check_is_clean_when_every_failpoint_has_its_hook(project: Path, run_cli) -> None:
    _run_loop(_declared(project, run_cli), FAILPOINT_IDS)
    assert run_cli("--root", str(project), "check")[0] == 0


def test_a_run_loop_named_but_missing_is_a_finding(project: Path, run_cli) -> None:
    _declared(project, run_cli, "loops/gone.py")
    code, out, _ = run_cli("--root", str(project), "check")
    line = next(n for n, text in enumerate((project / "spec" / "failpoints.yaml").read_text().splitlines(), 1) if text.startswith("run_loop:"))
    assert code == 1 and out.startswith(f"spec/failpoints.yaml:{line}:1: the run loop 'loops/gone.py' does not exist in the project")


@pytest.mark.parametrize(("source", "said"), [
    (b"def run(failpoints):\n    failpoints.hit(\"P0\"\n", "2:19: the run loop has a syntax error: '(' was never closed; "),
    (b"def run(failpoints):\n    pass  # \xff\n", "1: the run loop is not UTF-8 (invalid start byte at byte 33)"),
])
def test_a_run_loop_that_does_not_parse_is_one_finding_at_its_line_not_a_missing_hook_each(project: Path, run_cli, source: bytes, said: str) -> None:
    _declared(project, run_cli).write_bytes(source)
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and out.startswith(f"{RUN_LOOP}:{said}") and "has no hook" not in out, out


def test_a_project_without_a_run_loop_checks_no_hooks(project: Path, run_cli) -> None:
    (project / RUN_LOOP).write_text('failpoints.hit("P99")\n', encoding="utf-8")  # not named by the spec: not its run loop
    assert run_cli("--root", str(project), "check")[0] == 0


def test_crash_refuses_to_run_when_a_hook_is_missing(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # The reference run loop without its last hook, in the harness's place.
    from resume_contract.contract import active
    from resume_contract.crash import harness

    ids = list(active().catalog.FAILPOINTS_BY_ID)
    real = harness.PACKAGED_RUN_LOOP.read_text(encoding="utf-8")
    line = f'        failpoints.hit("{ids[-1]}")'
    assert real.count(line) == 1
    loop = tmp_path / "runloop.py"
    loop.write_text("\n".join(text for text in real.splitlines() if not text.startswith(line)) + "\n", encoding="utf-8")
    monkeypatch.setattr(harness, "run_loop_of", lambda contract: loop)
    code, out, err = run_cli("crash")
    assert (code, out) == (1, "")
    assert f"resume-contract crash: failpoint {ids[-1]} has no hook in the run loop: add `failpoints.hit(\"{ids[-1]}\")` to {tmp_path / 'runloop.py'}" in err
    assert err.endswith("resume-contract crash: nothing was run\n")
    assert run_cli("crash", "--failpoint", ids[0], "--outcome", "ok", "--no-torn")[0] == 0  # its own hook is there
