"""Review waivers (spec/review-waivers.yaml): honoured by --fail-on, listed in every report, stale ones named,
a malformed file refused with its line. Tool tests on the frozen spec and the review corpus' overlays."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
FROZEN_SPEC = TESTS / "frozen_spec" / "spec"
REASON = "Reworded for clarity; the instruction is unchanged (reviewed in #123)"


def _head(tmp_path: Path, waivers: str | None) -> Path:
    head = tmp_path / "head"
    shutil.copytree(FROZEN_SPEC, head / "spec")
    for overlay in (TESTS / "review_cases" / "DIRECTIVE_CHANGED" / "current").glob("*.yaml"):
        shutil.copyfile(overlay, head / "spec" / overlay.name)
    if waivers is not None:
        (head / "spec" / "review-waivers.yaml").write_text(waivers, encoding="utf-8")
    return head


def _diff(run_cli, head: Path, *extra: str, base: Path = FROZEN_SPEC) -> tuple[int, str, str]:
    return run_cli("--root", str(head), "diff", str(base), str(head / "spec"), "--depth", "0", *extra)


def _approved(tmp_path: Path, waivers: str) -> Path:
    """The frozen spec as a base side that carries `waivers` (approved on the base branch: see WAIVER_ADDED)."""
    base = tmp_path / "base" / "spec"
    shutil.copytree(FROZEN_SPEC, base)
    (base / "review-waivers.yaml").write_text(waivers, encoding="utf-8")
    return base


def test_without_a_waiver_the_directive_change_fails_the_review(tmp_path: Path, run_cli) -> None:
    # (the directive is a field of the plan: a change of it is breaking, shown by a ledger whose plan gives it)
    assert _diff(run_cli, _head(tmp_path, None), "--fail-on", "breaking")[0] == 1


def _finding(run_cli, head: Path) -> str:
    """The finding `diff` prints for the head's change, ready to paste into a waiver."""
    out = _diff(run_cli, head)[1]
    return next(line.split("finding ", 1)[1] for line in out.splitlines() if line.strip().startswith("finding "))


def _waiver(finding: str, reason: str = REASON) -> str:
    return f"waivers:\n  - finding: {finding}\n    reason: \"{reason}\"\n"


def test_a_waiver_is_honoured_by_fail_on_and_listed_in_every_format(tmp_path: Path, run_cli) -> None:
    finding = _finding(run_cli, _head(tmp_path / "first", None))
    assert finding.startswith("DIRECTIVE_CHANGED:") and len(finding.split(":")[1]) == 16
    head, base = _head(tmp_path, _waiver(finding)), _approved(tmp_path, _waiver(finding))
    code, out, _ = _diff(run_cli, head, "--fail-on", "breaking", base=base)
    assert code == 0
    assert "1 change: 0 weakens-safety, 1 breaking, 0 tightens, 0 neutral; 1 waived" in out
    assert f"waived (spec/review-waivers.yaml:2:5): {REASON}" in out
    assert _diff(run_cli, head, "--fail-on", "any", base=base)[0] == 0

    document = json.loads(_diff(run_cli, head, "--format", "json", base=base)[1])
    assert [(change["finding"], change["waived"]) for change in document["changes"]] == [(finding, REASON)] and document["staleWaivers"] == []
    markdown = _diff(run_cli, head, "--format", "markdown", base=base)[1]
    assert f"| `{finding}` |" in markdown and f"_(waived: {REASON})_" in markdown
    annotations = _diff(run_cli, head, "--format", "github", base=base)[1].splitlines()
    assert annotations[0].startswith("::notice file=spec/projector.yaml,line=92,") and annotations[0].endswith(f"(waived: {REASON})")
    assert f"title=breaking%3A {finding.replace(':', '%3A')}" in annotations[0]


def test_the_fingerprint_is_the_same_on_every_run_and_under_any_hash_seed(tmp_path: Path) -> None:
    head = _head(tmp_path, None)
    seen = set()
    for seed in ("0", "1"):
        result = subprocess.run(
            [sys.executable, "-m", "resume_contract", "--root", str(head), "diff", str(FROZEN_SPEC), str(head / "spec"), "--depth", "0"],
            capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed},
        )
        seen.add(next(line for line in result.stdout.splitlines() if "finding " in line))
    assert len(seen) == 1


def test_a_waiver_for_one_rewording_of_the_directive_does_not_waive_another(tmp_path: Path, run_cli) -> None:
    # Issue 24, item 1: a branch rewords the directive and waives it; the next change rewords it again, to
    # something dangerous. The waiver was bound to the first finding: the second is not waived, and the
    # waiver, now stale, fails the review too.
    first = _finding(run_cli, _head(tmp_path / "first", None))
    head = _head(tmp_path / "second", _waiver(first))
    projector = head / "spec" / "projector.yaml"
    projector.write_text(projector.read_text().replace("before deciding the next step.", "before deciding the next step. You may retry the tool call."))
    code, out, err = _diff(run_cli, head, "--fail-on", "weakens-safety")
    assert code == 1
    assert "; 1 waived" not in out and "waived (" not in out
    assert f"stale waiver spec/review-waivers.yaml:2:5: {first} matches no finding of this change" in out
    assert "1 stale waiver(s)" in err


def test_a_stale_waiver_fails_the_review_whatever_it_fails_on(tmp_path: Path, run_cli) -> None:
    finding = _finding(run_cli, _head(tmp_path / "first", None))
    head = _head(tmp_path, _waiver(finding) + "  - finding: FAILPOINT_ADDED:0123456789abcdef\n    reason: left over\n")
    for fail_on in ("weakens-safety", "breaking", "tightens", "any"):
        assert _diff(run_cli, head, "--fail-on", fail_on)[0] == 1, fail_on
    code, out, _ = _diff(run_cli, head)
    assert code == 0  # without --fail-on, a report only
    assert "stale waiver spec/review-waivers.yaml:4:5: FAILPOINT_ADDED:0123456789abcdef matches no finding of this change; remove it" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"waivers:\n  - finding: DIRECTIVE_CHANGD:0123456789abcdef\n    reason: \"{REASON}\"\n", "spec/review-waivers.yaml:2:14: unknown rule 'DIRECTIVE_CHANGD' (did you mean 'DIRECTIVE_CHANGED'?)"),
        ("waivers:\n  - finding: DIRECTIVE_CHANGED:0123456789abcdef\n", "spec/review-waivers.yaml:2:5: a waiver needs a reason"),
        (f"waivers:\n  - finding: DIRECTIVE_CHANGED:0123456789abcdef\n    reason: \"{REASON}\"\n    owner: me\n", "spec/review-waivers.yaml:4:5: unknown key 'owner'"),
        ("waivers: [\n", "spec/review-waivers.yaml:2:1: invalid YAML"),
        ("waivers: {}\n", "spec/review-waivers.yaml:1:1: expected one key, 'waivers', holding a list of {finding, reason}"),
        (f"waivers:\n  - finding: DIRECTIVE_CHANGED\n    reason: \"{REASON}\"\n", "spec/review-waivers.yaml:2:14: a waiver needs the finding it accepts, RULE:FINGERPRINT as `diff` prints it"),
        (
            f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    location: spec/projector.yaml:92\n    reason: \"{REASON}\"\n",
            "spec/review-waivers.yaml:2:5: a waiver no longer names a rule: it names the one finding it accepts",
        ),
    ],
)
def test_a_malformed_waivers_file_is_refused_with_its_line(text: str, message: str, tmp_path: Path, run_cli) -> None:
    code, out, err = _diff(run_cli, _head(tmp_path, text))
    assert (code, out) == (2, "")
    assert f"head ({tmp_path / 'head' / 'spec'}): {message}" in err
    assert err.endswith("resume-contract diff: the head's review waivers are invalid; nothing was compared\n")


def test_waivers_are_read_from_the_head_revision(tmp_path: Path, run_cli) -> None:
    # The waiver is approved on the base branch first (one the change itself adds is WAIVER_ADDED, which
    # tests/test_attacks_forged_output.py shows); the head revision's file is the one applied.
    project = tmp_path / "project"
    shutil.copytree(FROZEN_SPEC, project / "spec")

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    first = _finding(run_cli, _head(tmp_path / "first", None))
    (project / "spec" / "review-waivers.yaml").write_text(_waiver(first), encoding="utf-8")
    git("add", ".")
    git("commit", "-qm", "base, with the waiver approved")
    for overlay in (TESTS / "review_cases" / "DIRECTIVE_CHANGED" / "current").glob("*.yaml"):
        shutil.copyfile(overlay, project / "spec" / overlay.name)
    git("add", ".")
    git("commit", "-qm", "reword the directive, waived")
    assert run_cli("--root", str(project), "diff", "main~1", "main", "--depth", "0", "--fail-on", "breaking")[0] == 0
    (project / "spec" / "review-waivers.yaml").write_text("waivers: []\n", encoding="utf-8")
    git("commit", "-qam", "the head drops the waiver")
    assert run_cli("--root", str(project), "diff", "main~2", "main", "--depth", "0", "--fail-on", "breaking")[0] == 1


def test_check_and_generate_refuse_a_malformed_waivers_file_with_its_line(project: Path, run_cli) -> None:
    (project / "spec" / "review-waivers.yaml").write_text("waivers:\n  - finding: DIRECTIVE_CHANGD:0123456789abcdef\n    reason: r\n", encoding="utf-8")
    for command in ("check", "generate"):
        code, _, err = run_cli("--root", str(project), command)
        assert code == 2 and "spec/review-waivers.yaml:2:14: unknown rule 'DIRECTIVE_CHANGD' (did you mean 'DIRECTIVE_CHANGED'?)" in err
    (project / "spec" / "review-waivers.yaml").write_text(_waiver("DIRECTIVE_CHANGED:0123456789abcdef"), encoding="utf-8")
    assert run_cli("--root", str(project), "check")[0] == 0
