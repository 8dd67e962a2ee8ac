"""`resume-contract crash` lists the continuation's crash boundaries by id (text, --json, --junit), and `check`
and `crash` name a boundary whose hook the continuation run loop lacks, at its line of spec/lifecycle.yaml."""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from conftest import REPO

from resume_contract.cli import main


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_crash_runs_one_boundary_and_reports_it_by_id_in_json_and_junit(tmp_path: Path) -> None:
    junit = tmp_path / "crash.xml"
    code, out, err = _run("crash", "--failpoint", "after_terminal_event_committed", "--json", "--junit", str(junit))
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["table"] == [] and document["failures"] == []
    (row,) = document["continuation"]
    assert (row["boundary"], row["committed when killed"], row["recovery"], row["sigkill"]) == (
        "after_terminal_event_committed", "ended", "recover_seal", "verified"
    )
    cases = [(case.get("classname"), case.get("name")) for case in ElementTree.parse(junit).getroot().iter("testcase")]
    assert cases == [("crash.continuation", "after_terminal_event_committed continuation")]


def test_check_and_crash_name_a_boundary_without_its_hook(project: Path) -> None:
    # The frozen Phase 1 spec (a tool test: editing spec/ never breaks it), with the repository's run loop.
    frozen = REPO / "tests" / "frozen_spec" / "phase1"
    shutil.copyfile(frozen / "continuation.yaml", project / "spec" / "continuation.yaml")
    lifecycle = (frozen / "lifecycle.yaml").read_text(encoding="utf-8")
    (project / "spec" / "lifecycle.yaml").write_text(lifecycle.replace("run_loop: resume_contract/crash/continuation_loop.py", "run_loop: continuation_loop.py"))
    loop = (REPO / "resume_contract" / "crash" / "continuation_loop.py").read_text(encoding="utf-8")
    hook = '        failpoints.hit("after_terminal_event_committed")'
    assert hook in loop
    (project / "continuation_loop.py").write_text(loop.replace(hook, "        pass"))
    assert _run("--root", str(project), "generate")[0] == 0
    code, out, _ = _run("--root", str(project), "check")
    line = next(number for number, text in enumerate(lifecycle.splitlines(), 1) if text == "  - id: after_terminal_event_committed")
    assert code == 1
    assert f"spec/lifecycle.yaml:{line}:5: failpoint after_terminal_event_committed has no hook in the run loop" in out
    code, _, err = _run("--root", str(project), "crash", "--failpoint", "after_terminal_event_committed")
    assert code == 1 and "after_terminal_event_committed has no hook" in err and "nothing was run" in err
