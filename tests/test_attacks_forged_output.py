"""Attacks on what CI reads (issue 39): a spec cannot forge output, and a change cannot waive its own finding.

- A YAML key or value holding a newline was printed raw: in a CI log (GitHub reads workflow commands from
  stdout and stderr alike) a key `"bad\\n::error file=x::forged"` printed a `::error` line of its own. Every
  spec-derived string is now shown with its control characters escaped, in every format: text and github
  (`\\x0a`; an annotation's message also escaped by GitHub's rules), Markdown (a cell it cannot leave), JUnit
  (a name that stays one line); JSON stays exact.
- A pull request passed `diff --fail-on weakens-safety` by adding, in spec/review-waivers.yaml, a waiver for its
  own finding. A waiver the change itself adds now waives nothing and is a finding, WAIVER_ADDED
  (weakens-safety); a waiver already on the base branch waives as before.

Each attack runs the real command line in a subprocess, on a project made by `resume-contract init` or a git
repository of the tests' frozen spec.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

TESTS = Path(__file__).resolve().parent
FROZEN_SPEC = TESTS / "frozen_spec" / "spec"
CLI = [sys.executable, "-m", "resume_contract"]
# What the spec smuggles in: a newline, then a workflow command of its own, twice. (A carriage return is refused
# by the spec's own checks, as every invisible character is: tests/test_attacks_spec.py.)
FORGED_KEY = "bad\n::error file=x::forged\n::warning::also forged"
# The tool's own annotations: a level, properties (their `:` and `,` escaped), a title, then the message.
OWN_ANNOTATION = re.compile(r"::(error|warning|notice) [^:\n]*title=[^:\n]*::[^\n]*")


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def _assert_unforged(text: str) -> list[str]:
    """No line that a quoted string started: every line beginning `::` is one whole annotation of the tool's own,
    and no carriage return (which a terminal would use to draw over a line) survives. Returns the annotations."""
    assert "\r" not in text
    annotations = []
    for line in text.split("\n"):
        if line.startswith("::"):
            assert OWN_ANNOTATION.fullmatch(line), f"not an annotation of the tool's own: {line!r}"
            annotations.append(line)
    return annotations


@pytest.fixture
def hostile_project(tmp_path: Path) -> Path:
    """A project from `resume-contract init`, whose spec/failpoints.yaml ends with a key that forges two lines."""
    project = tmp_path / "project"
    made = _run(tmp_path, "init", str(project))
    assert made.returncode == 0, made.stderr
    with (project / "spec" / "failpoints.yaml").open("a", encoding="utf-8") as spec:
        spec.write(json.dumps(FORGED_KEY) + ": 1\n")  # a JSON string is a YAML double-quoted key
    return project


def test_a_key_cannot_forge_a_workflow_command_in_check_github(hostile_project: Path) -> None:
    result = _run(hostile_project, "check", "--format", "github")
    assert result.returncode == 2
    annotations = _assert_unforged(result.stdout)
    _assert_unforged(result.stderr)
    # One spec error, one annotation: the key stays inside it (GitHub's escapes after the visible ones).
    assert len(annotations) == 1 and annotations[0].startswith("::error file=spec/failpoints.yaml,line=")
    assert "unknown key 'bad\\x0a::error file=x::forged\\x0a::warning::also forged'" in annotations[0]
    assert re.search(r"; allowed keys are \[failpoints, [a-z_, ]+\]$", annotations[0]), annotations[0]  # (the schema's keys)
    assert "unknown key 'bad\\x0a::error file=x::forged\\x0a::warning::also forged'" in result.stderr
    assert not [line for line in result.stderr.splitlines() if line.startswith("::")]


@pytest.mark.parametrize("command", [("check",), ("generate",), ("generate", "--format", "github"), ("check", "--format", "json")])
def test_a_key_is_escaped_in_every_error_check_and_generate_print(hostile_project: Path, command: tuple[str, ...]) -> None:
    result = _run(hostile_project, *command)
    assert result.returncode == 2
    _assert_unforged(result.stdout)
    _assert_unforged(result.stderr)
    assert "spec/failpoints.yaml:" in result.stderr and "bad\\x0a::error file=x::forged\\x0a" in result.stderr
    assert all(line.startswith(("spec/", "resume-contract", "note:")) for line in result.stderr.splitlines()), result.stderr
    if "json" in command:  # JSON is exact: its own escapes keep the key one string
        messages = [error["message"] for error in json.loads(result.stdout)["errors"]]
        assert any(f"unknown key '{FORGED_KEY}'" in message for message in messages), messages


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                   cwd=project, check=True, capture_output=True)


HOSTILE_BOUNDARY = "Before tool preparation (T1)\n::error file=x::forged | <b>bold</b> `code` [link](http://x)\n::notice::forged"
HOSTILE_REASON = "reviewed\n::error file=y::forged reason | </details> `"


@pytest.fixture
def hostile_change(tmp_path: Path) -> Path:
    """A git repository of an `init` project: `base`, then `head`, which rewords a failpoint's boundary with the
    text above and waives that finding with the reason above."""
    project = tmp_path / "project"
    assert _run(tmp_path, "init", str(project)).returncode == 0
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "base")
    _git(project, "tag", "base")
    failpoints = project / "spec" / "failpoints.yaml"
    text = failpoints.read_text(encoding="utf-8")
    assert "boundary: Before tool preparation (T1)\n" in text
    failpoints.write_text(text.replace("boundary: Before tool preparation (T1)\n", f"boundary: {json.dumps(HOSTILE_BOUNDARY)}\n", 1), encoding="utf-8")
    found = _run(project, "--root", str(project), "diff", "base", "--format", "json", "--depth", "0")
    assert found.returncode == 0, found.stderr
    finding = next(change["finding"] for change in json.loads(found.stdout)["changes"] if change["rule"] == "FAILPOINT_BOUNDARY_REWORDED")
    (project / "spec" / "review-waivers.yaml").write_text(
        f"waivers:\n  - finding: {finding}\n    reason: {json.dumps(HOSTILE_REASON)}\n", encoding="utf-8"
    )
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "head")
    _git(project, "tag", "head")
    return project


def _diff(project: Path, output_format: str) -> subprocess.CompletedProcess[str]:
    return _run(project, "--root", str(project), "diff", "base", "head", "--format", output_format, "--depth", "0")


def test_a_value_cannot_forge_a_line_in_diff_text_and_json_stays_exact(hostile_change: Path) -> None:
    result = _diff(hostile_change, "text")
    assert result.returncode == 0, result.stderr
    assert _assert_unforged(result.stdout) == [] and _assert_unforged(result.stderr) == []
    assert "(T1)\\x0a::error file=x::forged | <b>bold</b>" in result.stdout
    assert "reviewed\\x0a::error file=y::forged reason" in result.stdout
    document = json.loads(_diff(hostile_change, "json").stdout)
    change = next(change for change in document["changes"] if change["rule"] == "FAILPOINT_BOUNDARY_REWORDED")
    assert HOSTILE_BOUNDARY in change["message"]


def test_a_value_cannot_forge_an_annotation_in_diff_github(hostile_change: Path) -> None:
    result = _diff(hostile_change, "github")
    annotations = _assert_unforged(result.stdout)
    _assert_unforged(result.stderr)
    lines = result.stdout.splitlines()
    assert len(annotations) == len(lines) - 1 and lines[-1].startswith("resume-contract diff base -> head: ")
    boundary = next(line for line in annotations if "title=neutral%3A FAILPOINT_BOUNDARY_REWORDED%3A" in line)
    # Shown as an escape (one line in GitHub's view too), then escaped by GitHub's rules.
    assert "(T1)\\x0a::error file=x::forged" in boundary and "\\x0a::notice::forged" in boundary
    assert "%0A" not in boundary and "%0D" not in boundary
    assert any("reviewed\\x0a::error file=y::forged reason" in line for line in annotations)


def test_a_value_cannot_break_out_of_its_markdown_cell(hostile_change: Path) -> None:
    result = _diff(hostile_change, "markdown")
    _assert_unforged(result.stdout)
    table = [line for line in result.stdout.splitlines() if line.startswith("|")]
    header = table[0]
    columns = len(re.findall(r"(?<!\\)\|", header))
    assert all(len(re.findall(r"(?<!\\)\|", row)) == columns for row in table), table
    row = next(line for line in table if line.startswith("| neutral | `FAILPOINT_BOUNDARY_REWORDED:"))
    # Shown as an escape, and neither a cell's end, HTML, code nor a link.
    assert "\\\\x0a::error file=x::forged \\| &lt;b>bold&lt;/b> \\`code\\` \\[link\\](http://x)" in row
    assert "<b>" not in result.stdout and "&lt;/details>" in result.stdout
    assert result.stdout.count("</details>") == result.stdout.count("<details>") <= 1


def test_a_junit_name_and_message_stay_one_line() -> None:
    from resume_contract.output.junit import JUnitCase, junit_xml

    hostile = "P0\n::error file=x::forged\r\x1b[2J"
    suite = ElementTree.fromstring(junit_xml(f"suite {hostile}", [JUnitCase(hostile, hostile, failure=f"{hostile}\nsecond line")]))
    case = suite.find("testcase")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    for shown in (suite.get("name"), case.get("classname"), case.get("name")):
        assert shown is not None and "\n" not in shown and "\r" not in shown and "\x1b" not in shown
        assert "P0\\x0a::error file=x::forged\\x0d\\x1b[2J" in shown
    # A failure's text keeps its lines (the tool writes several), each escaped; its message is the first.
    assert failure.get("message") == "P0"
    assert (failure.text or "").split("\n") == ["P0", "::error file=x::forged\\x0d\\x1b[2J", "second line"]


# --- A change cannot waive its own finding -------------------------------------------------------------------

NEVER = ("may not have occurred. Do not retry the tool call", "may not have occurred. Never retry the tool call")
REASON = "Reworded for clarity; the instruction is unchanged"


def _waivers(finding: str) -> str:
    return f"waivers:\n  - finding: {finding}\n    reason: \"{REASON}\"\n"


@pytest.fixture
def review_repo(tmp_path: Path) -> Path:
    """A git repository of the frozen spec (commit `base`)."""
    project = tmp_path / "project"
    shutil.copytree(FROZEN_SPEC, project / "spec")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "base")
    return project


def _reword_directive(project: Path) -> None:
    projector = project / "spec" / "projector.yaml"
    text = projector.read_text(encoding="utf-8")
    assert NEVER[0] in text
    projector.write_text(text.replace(*NEVER, 1), encoding="utf-8")


def _directive_finding(project: Path) -> str:
    """The finding `diff` gives the directive's rewording (the working tree against main)."""
    result = _run(project, "--root", str(project), "diff", "main", "--format", "json", "--depth", "0")
    return next(change["finding"] for change in json.loads(result.stdout)["changes"] if change["rule"] == "DIRECTIVE_CHANGED")


def _commit(project: Path, message: str, tag: str) -> None:
    _git(project, "add", ".")
    _git(project, "commit", "-qm", message)
    _git(project, "tag", tag)


def _review(project: Path, base: str, head: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return _run(project, "--root", str(project), "diff", base, head, "--depth", "0", "--fail-on", "breaking", *extra)


def test_a_waiver_the_change_adds_does_not_pass_the_gate_until_it_is_on_the_base(review_repo: Path) -> None:
    _git(review_repo, "tag", "base")
    projector = review_repo / "spec" / "projector.yaml"
    original = projector.read_text(encoding="utf-8")
    _reword_directive(review_repo)
    finding = _directive_finding(review_repo)
    waivers = review_repo / "spec" / "review-waivers.yaml"
    waivers.write_text(_waivers(finding), encoding="utf-8")
    _commit(review_repo, "reword the directive, and waive it", "head")

    # The pull request waives its own finding: the waiver waives nothing, and is a weakens-safety finding.
    result = _review(review_repo, "base", "head")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"weakens-safety  WAIVER_ADDED: the change adds a waiver of its own finding {finding} (reason: {REASON})" in result.stdout
    assert "head spec/review-waivers.yaml:2:5" in result.stdout
    assert "a reviewer must approve it on the base branch first" in result.stdout
    assert "waived" not in result.stdout.split("\n")[1]  # the summary: nothing waived
    assert "stale waiver" not in result.stdout  # it matched a finding: not stale, and not honoured
    document = json.loads(_review(review_repo, "base", "head", "--format", "json").stdout)
    by_rule = {change["rule"]: change for change in document["changes"]}
    assert by_rule["WAIVER_ADDED"]["class"] == "weakens-safety" and by_rule["WAIVER_ADDED"]["head"] == "spec/review-waivers.yaml:2:5"
    assert by_rule["DIRECTIVE_CHANGED"]["waived"] is None and document["verdict"] == "weakens-safety"
    annotations = _review(review_repo, "base", "head", "--format", "github").stdout.splitlines()
    assert any(line.startswith("::error file=spec/review-waivers.yaml,line=2,col=5,title=weakens-safety%3A WAIVER_ADDED%3A") for line in annotations)

    # A reviewer approves the waiver on the base branch first; then the same change is waived, as before.
    projector.write_text(original, encoding="utf-8")
    _commit(review_repo, "approve the waiver", "approved")
    _reword_directive(review_repo)
    _commit(review_repo, "reword the directive", "reworded")
    result = _review(review_repo, "approved", "reworded")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 change: 0 weakens-safety, 1 breaking, 0 tightens, 0 neutral; 1 waived" in result.stdout
    assert f"waived (spec/review-waivers.yaml:2:5): {REASON}" in result.stdout
    assert "WAIVER_ADDED" not in result.stdout


def test_a_waiver_of_waiver_added_is_refused(review_repo: Path) -> None:
    (review_repo / "spec" / "review-waivers.yaml").write_text(_waivers("WAIVER_ADDED:0123456789abcdef"), encoding="utf-8")
    result = _run(review_repo, "--root", str(review_repo), "diff", "main", "--depth", "0")
    assert result.returncode == 2
    assert "spec/review-waivers.yaml:2:14: WAIVER_ADDED cannot be waived" in result.stderr
