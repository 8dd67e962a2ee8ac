"""Review waivers (spec/review-waivers.yaml): honoured by --fail-on, listed in every report, stale ones named,
a malformed file refused with its line. Tool tests on the frozen spec and the review corpus' overlays."""

from __future__ import annotations

import json
import shutil
import subprocess
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


def _diff(run_cli, head: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli("--root", str(head), "diff", str(FROZEN_SPEC), str(head / "spec"), "--depth", "0", *extra)


def test_without_a_waiver_the_directive_change_fails_the_review(tmp_path: Path, run_cli) -> None:
    assert _diff(run_cli, _head(tmp_path, None), "--fail-on", "weakens-safety")[0] == 1


def test_a_waiver_is_honoured_by_fail_on_and_listed_in_every_format(tmp_path: Path, run_cli) -> None:
    head = _head(tmp_path, f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    location: spec/projector.yaml:92\n    reason: \"{REASON}\"\n")
    code, out, _ = _diff(run_cli, head, "--fail-on", "weakens-safety")
    assert code == 0
    assert "1 change: 1 weakens-safety, 0 breaking, 0 tightens, 0 neutral; 1 waived" in out
    assert f"waived (spec/review-waivers.yaml:2:5): {REASON}" in out
    assert _diff(run_cli, head, "--fail-on", "any")[0] == 0

    document = json.loads(_diff(run_cli, head, "--format", "json")[1])
    assert [change["waived"] for change in document["changes"]] == [REASON] and document["staleWaivers"] == []
    assert f"_(waived: {REASON})_" in _diff(run_cli, head, "--format", "markdown")[1]
    annotations = _diff(run_cli, head, "--format", "github")[1].splitlines()
    assert annotations[0].startswith("::notice file=spec/projector.yaml,line=92,") and annotations[0].endswith(f"(waived: {REASON})")


def test_a_waiver_may_name_the_location_exactly_as_the_report_prints_it(tmp_path: Path, run_cli) -> None:
    for location, honoured in (("spec/projector.yaml:92:1", True), ("spec/projector.yaml:92:2", False), ("spec/projector.yaml", True)):
        head = _head(tmp_path / location.replace("/", "_"), f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    location: {location}\n    reason: \"{REASON}\"\n")
        assert _diff(run_cli, head, "--fail-on", "weakens-safety")[0] == (0 if honoured else 1), location


def test_a_waiver_elsewhere_waives_nothing_and_is_reported_stale(tmp_path: Path, run_cli) -> None:
    head = _head(tmp_path, f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    location: spec/projector.yaml:10\n    reason: \"{REASON}\"\n"
                           f"  - rule: FAILPOINT_ADDED\n    reason: \"{REASON}\"\n")
    code, out, _ = _diff(run_cli, head, "--fail-on", "weakens-safety")
    assert code == 1 and "waived" not in out.splitlines()[1]
    assert "stale waiver spec/review-waivers.yaml:2:5: DIRECTIVE_CHANGED at spec/projector.yaml:10 matches no finding; remove it" in out
    assert "stale waiver spec/review-waivers.yaml:5:5: FAILPOINT_ADDED matches no finding; remove it" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"waivers:\n  - rule: DIRECTIVE_CHANGD\n    reason: \"{REASON}\"\n", "spec/review-waivers.yaml:2:11: unknown rule 'DIRECTIVE_CHANGD' (did you mean 'DIRECTIVE_CHANGED'?)"),
        ("waivers:\n  - rule: DIRECTIVE_CHANGED\n", "spec/review-waivers.yaml:2:5: a waiver needs a reason"),
        (f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    reason: \"{REASON}\"\n    owner: me\n", "spec/review-waivers.yaml:4:5: unknown key 'owner'"),
        ("waivers: [\n", "spec/review-waivers.yaml:2:1: invalid YAML"),
        (
            f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    location: projector.yaml:92\n    reason: \"{REASON}\"\n",
            "spec/review-waivers.yaml:3:15: location 'projector.yaml:92' is not a spec file's path from the repository root, "
            "optionally with :line or :line:col as the report prints it (e.g. spec/projector.yaml:92) (did you mean 'spec/projector.yaml:92'?)",
        ),
        (f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    location: spec/projector.yaml:abc\n    reason: \"{REASON}\"\n", "spec/review-waivers.yaml:3:15: location 'spec/projector.yaml:abc' is not"),
    ],
)
def test_a_malformed_waivers_file_is_refused_with_its_line(text: str, message: str, tmp_path: Path, run_cli) -> None:
    code, out, err = _diff(run_cli, _head(tmp_path, text))
    assert (code, out) == (2, "")
    assert f"head ({tmp_path / 'head' / 'spec'}): {message}" in err
    assert err.endswith("resume-contract diff: the head's review waivers are invalid; nothing was compared\n")


def test_waivers_are_read_from_the_head_revision(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "project"
    shutil.copytree(FROZEN_SPEC, project / "spec")

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=project, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "base")
    for overlay in (TESTS / "review_cases" / "DIRECTIVE_CHANGED" / "current").glob("*.yaml"):
        shutil.copyfile(overlay, project / "spec" / overlay.name)
    (project / "spec" / "review-waivers.yaml").write_text(f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    reason: \"{REASON}\"\n", encoding="utf-8")
    git("add", ".")
    git("commit", "-qm", "reword the directive, waived")
    assert run_cli("--root", str(project), "diff", "main~1", "main", "--depth", "0", "--fail-on", "weakens-safety")[0] == 0


def test_check_and_generate_refuse_a_malformed_waivers_file_with_its_line(project: Path, run_cli) -> None:
    (project / "spec" / "review-waivers.yaml").write_text("waivers:\n  - rule: DIRECTIVE_CHANGD\n    reason: r\n", encoding="utf-8")
    for command in ("check", "generate"):
        code, _, err = run_cli("--root", str(project), command)
        assert code == 2 and "spec/review-waivers.yaml:2:11: unknown rule 'DIRECTIVE_CHANGD' (did you mean 'DIRECTIVE_CHANGED'?)" in err
    (project / "spec" / "review-waivers.yaml").write_text(f"waivers:\n  - rule: DIRECTIVE_CHANGED\n    reason: \"{REASON}\"\n", encoding="utf-8")
    assert run_cli("--root", str(project), "check")[0] == 0
