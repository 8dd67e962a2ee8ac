"""The fifth-boundary drill: adding a crash boundary of a continuation is a spec edit plus one hook.

On a throw-away copy of the working tree (tools/spec_mutants.copy_repository, as tools/edit_drill.py makes
its copies): spec/lifecycle.yaml gains `after_run_events_committed` (after the executor's `run` transition:
the start event and the run's own events are committed, no terminal event), and the continuation run loop
gains its one `failpoints.hit`. Then `diff` (the copy's spec against this tree's) reports exactly that
boundary, added, tightens; `generate` writes it into the catalog, CONTRACT.md and the generated crash tests;
those tests, run in the copy against the copy's contract, kill the executor at all five boundaries and pass;
and `check` is clean. Without the hook, `check` names the boundary at its line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import spec_mutants  # noqa: E402 - the one copy of the working tree, shared with the drills
from edit_drill import NESTED  # noqa: E402 - set in the suite an edit drill runs

NEW_BOUNDARY = """  - id: after_run_events_committed
    boundary: "The start event and the run's own events are committed; no terminal event"
    after: run
    replan: {disposition: park, reasons: [continuation_already_exists]}
    recovery: {takes: [recover_end, recover_seal], terminal_event: failed, header: failed, failure_class: app_restarted}
"""
HOOK_AFTER = "        execution.run(run_events)\n"
HOOK = '        failpoints.hit("after_run_events_committed")  # the run\'s events are committed; no terminal event\n'


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path}: the drill's anchor {old!r} moved; update the drill"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _cli(root: Path, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(root / "_import_shim"), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(root), *argv], capture_output=True, text=True, env=environment, cwd=cwd or root)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get(NESTED) == "1", reason="this is the suite an edit drill runs, in a copy that is no git checkout")
def test_a_fifth_boundary_is_a_spec_edit_plus_one_hook(tmp_path: Path) -> None:
    root = tmp_path / "copy"
    spec_mutants.copy_repository(root)
    _edit(root / "spec" / "lifecycle.yaml", "  - id: after_terminal_event_committed\n", NEW_BOUNDARY + "  - id: after_terminal_event_committed\n")

    # The spec edit alone: check names the boundary that has no hook yet, at its line.
    assert _cli(root, "generate").returncode == 0
    check = _cli(root, "check")
    lines = (root / "spec" / "lifecycle.yaml").read_text(encoding="utf-8").splitlines()
    line = lines.index("  - id: after_run_events_committed") + 1
    assert check.returncode == 1, check.stdout
    assert f"spec/lifecycle.yaml:{line}:5: failpoint after_run_events_committed has no hook" in check.stdout, check.stdout

    _edit(root / "resume_contract" / "crash" / "continuation_loop.py", HOOK_AFTER, HOOK_AFTER + HOOK)
    diff = _cli(root, "diff", str(REPO / "spec"), str(root / "spec"))
    assert diff.returncode == 0, diff.stderr
    assert "1 change: 0 weakens-safety, 0 breaking, 0 tightens, 1 neutral" in diff.stdout, diff.stdout  # a boundary covered more: no decision moves
    assert "CONTINUATION_BOUNDARY_ADDED: continuation boundary 'after_run_events_committed' added: after run (running)" in diff.stdout

    assert _cli(root, "check").returncode == 0
    generated = (root / "generated" / "tests" / "test_continuation_crash.py").read_text(encoding="utf-8")
    assert "'after_run_events_committed': {" in generated
    assert "`after_run_events_committed`" in (root / "generated" / "CONTRACT.md").read_text(encoding="utf-8")
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "generated/tests/test_continuation_crash.py"],
        cwd=root, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(root / "_import_shim"), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert tests.returncode == 0 and "5 passed" in tests.stdout, tests.stdout[-3000:]
    crash = _cli(root, "crash", "--failpoint", "after_run_events_committed")
    assert crash.returncode == 0, crash.stdout + crash.stderr
    assert "after_run_events_committed          running" in crash.stdout or "after_run_events_committed  running" in crash.stdout
