"""What CI reads: GitHub Actions annotations (`--format github`), JSON (`--format json` / `--json`) and JUnit XML
(`--junit`, parsed with the standard library's ElementTree, as CI reporters do). Tool tests on the frozen spec."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest
from resume_contract_generator.annotations import annotation

TESTS = Path(__file__).resolve().parent
FROZEN_SPEC = TESTS / "frozen_spec" / "spec"
CATALOG = "generated/resume_contract_generated/catalog.py"


def _overlay(project: Path, case: str) -> None:
    for overlay in sorted((TESTS / "bad_specs" / case / "spec").iterdir()):
        shutil.copyfile(overlay, project / "spec" / overlay.name)


def test_an_annotation_cannot_be_ended_early_by_what_it_quotes() -> None:
    line = annotation("error", "50% done\nsecond::line", file="spec/a,b:c.yaml", line=3, col=5, title="x: y")
    assert line == "::error file=spec/a%2Cb%3Ac.yaml,line=3,col=5,title=x%3A y::50%25 done%0Asecond::line"
    assert "\n" not in line


def test_check_github_annotates_each_spec_error_at_its_line(project: Path, run_cli) -> None:
    _overlay(project, "unknown_key")
    code, out, err = run_cli("--root", str(project), "check", "--format", "github")
    assert code == 2
    assert out.splitlines() == [
        "::error file=spec/decisions.yaml,line=17,col=5,title=resume-contract%3A bad spec::missing required key 'disposition' in 'after_function_call'",
        "::error file=spec/decisions.yaml,line=20,col=5,title=resume-contract%3A bad spec::unknown key 'dispostion' (did you mean 'disposition'?); allowed keys "
        "are [summary, same_tool_decision_as, disposition, operation_statuses, diagnostics, rejection_reasons, replay, terminal_fact]",
    ]
    assert err.endswith("resume-contract: the spec has 2 errors; nothing was written\n")


def test_check_json_reports_spec_errors_and_drift(project: Path, run_cli) -> None:
    code, out, _ = run_cli("--root", str(project), "check", "--format", "json")
    assert code == 0 and json.loads(out) == {"clean": True, "generatedFiles": json.loads(out)["generatedFiles"], "drift": [], "hooks": [], "fix": None}
    (project / CATALOG).write_text((project / CATALOG).read_text() + "# edited\n")
    code, out, _ = run_cli("--root", str(project), "check", "--format", "json")
    document = json.loads(out)
    assert code == 1 and document["clean"] is False
    assert document["drift"] == [{"kind": "hand-edited", "path": CATALOG}]
    assert document["fix"].startswith("resume-contract generate --force")
    _overlay(project, "unknown_key")
    code, out, _ = run_cli("--root", str(project), "check", "--format", "json")
    assert code == 2 and [(e["file"], e["line"], e["column"]) for e in json.loads(out)["errors"]] == [("spec/decisions.yaml", 17, 5), ("spec/decisions.yaml", 20, 5)]


def test_check_github_annotates_drifted_files(project: Path, run_cli) -> None:
    (project / CATALOG).unlink()
    code, out, _ = run_cli("--root", str(project), "check", "--format", "github")
    assert code == 1
    assert out.splitlines() == [
        f"::error file={CATALOG},title=resume-contract check::{CATALOG} is missing (to fix: resume-contract generate)",
        "generated/ does not match spec/",
    ]


def test_diff_github_annotates_each_change_at_its_spec_line(tmp_path: Path, run_cli) -> None:
    head = tmp_path / "head"
    shutil.copytree(FROZEN_SPEC, head / "spec")
    for overlay in (TESTS / "review_cases" / "DECISION_DISPOSITION_RELAXED" / "current").glob("*.yaml"):
        shutil.copyfile(overlay, head / "spec" / overlay.name)
    code, out, _ = run_cli("--root", str(head), "diff", str(FROZEN_SPEC), str(head / "spec"), "--format", "github", "--depth", "1", "--fail-on", "weakens-safety")
    lines = out.splitlines()
    assert code == 1
    assert any(
        re.fullmatch(r"::error file=spec/decisions.yaml,line=20,col=5,title=weakens-safety%3A DECISION_DISPOSITION_RELAXED%3A[0-9a-f]{16}"
                     r"::prefix 'after_function_call': blocked -> safe_replay", line)
        for line in lines
    )
    assert all(line.startswith(("::error ", "::notice ")) for line in lines[:-1])
    assert lines[-1].startswith("resume-contract diff ") and "weakens-safety" in lines[-1]
    # A removed item is annotated on its file but no line: its base line would point at another line of the head.
    assert any(
        re.fullmatch(r"::error file=spec/projector.yaml,title=weakens-safety%3A DIAGNOSTIC_REMOVED%3A[0-9a-f]{16}::diagnostic 'pending_tool_result' "
                     r"removed \(it was at spec/projector.yaml:63:3 on the base side\)", line)
        for line in lines
    )


def test_crash_json_and_junit_list_every_case(tmp_path: Path, run_cli) -> None:
    from resume_contract_generated.catalog import FAILPOINTS_BY_ID

    failpoint = next(iter(FAILPOINTS_BY_ID))
    junit = tmp_path / "crash.xml"
    code, out, _ = run_cli("crash", "--failpoint", failpoint, "--json", "--junit", str(junit))
    document = json.loads(out)
    assert code == 0 and document["failures"] == [] and document["verified"] == document["cases"]
    suite = ElementTree.parse(junit).getroot()
    cases = suite.findall("testcase")
    assert suite.tag == "testsuite" and int(suite.get("tests")) == len(cases) == document["cases"]
    assert suite.get("failures") == "0" and all(case.find("failure") is None for case in cases)
    assert {case.get("name") for case in cases} >= {f"{failpoint} {row['outcome']} sigkill" for row in document["table"]}


def test_verify_json_and_junit_name_the_violated_invariant(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import msgspec

    from resume_contract.cli import proof_commands
    from resume_contract.proof import verify as verify_module

    contract = verify_module.active()  # the contract the commands run here, broken in one step
    step = dict(contract.table.step)
    step[("indeterminate", "function_response", False)] = ("succeeded", None)  # accept a response naming another tool
    broken = msgspec.structs.replace(contract, table=msgspec.structs.replace(contract.table, step=types.MappingProxyType(step)))
    monkeypatch.setattr(proof_commands, "selected_contract", lambda args, **_: broken)
    junit, counterexample = tmp_path / "verify.xml", tmp_path / "cx.jsonl"
    code, out, _ = run_cli("verify", "--depth", "2", "--jobs", "1", "--json", "--junit", str(junit), "--counterexample", str(counterexample))
    document = json.loads(out)
    violated = {violation["invariant"] for violation in document["violations"]}
    assert code == 1 and "matches_oracle" in violated and document["counterexample"] == str(counterexample) and counterexample.is_file()
    suite = ElementTree.parse(junit).getroot()
    failed = {case.get("name") for case in suite.findall("testcase") if case.find("failure") is not None}
    assert failed == violated and int(suite.get("failures")) == len(violated)
    assert int(suite.get("tests")) == len(document["invariants"])


def test_the_documented_workflow_runs_commands_this_cli_accepts() -> None:
    import re

    import yaml

    from resume_contract.cli.parser import build_parser

    workflow = yaml.safe_load((TESTS.parent / "docs" / "github-workflow.yml").read_text(encoding="utf-8"))
    runs = "\n".join(step.get("run", "") for step in workflow["jobs"]["contract"]["steps"])
    # Shell line continuations joined; GitHub's ${{ expressions }} stand for one word each.
    runs = re.sub(r"\$\{\{[^}]*\}\}", "https://github.com/acme/agents", runs.replace("\\\n", " "))
    commands = [line.strip() for line in runs.splitlines() if line.strip().startswith("resume-contract ")]
    assert any("check --format github" in command for command in commands)
    assert any("--format markdown" in command for command in commands) and any("--fail-on weakens-safety" in command for command in commands)
    for command in commands:
        words = [word.strip('"') for word in re.sub(r"\s*>.*$", "", command).split()[1:]]
        build_parser().parse_args([word.replace("$base", "origin/main") for word in words])  # exits on an unknown option
