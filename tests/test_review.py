"""`resume-contract diff` end to end, and the rules a valid spec cannot reach, on hand-built models."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from resume_contract_generator.review import collector as review_module
from resume_contract_generator.review.collector import review
from resume_contract_generator.spec.validate import load_spec

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).parent / "review_cases"
# A tool test: the base is the corpus' frozen spec, never the live spec/ (a contract edit must not break it).
FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"
FROZEN_ROOT = FROZEN_SPEC.parent


def _overlay(target: Path, case: str, side: str) -> Path:
    shutil.copytree(FROZEN_SPEC, target / "spec")
    for overlay in sorted((CORPUS / case / side).glob("*.yaml")):
        shutil.copyfile(overlay, target / "spec" / overlay.name)
    return target / "spec"


def test_flipping_after_function_call_to_safe_replay_weakens_safety_with_the_canonical_ledger(tmp_path: Path, run_cli) -> None:
    head = _overlay(tmp_path / "head", "DECISION_DISPOSITION_RELAXED", "current")
    code, out, err = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--format", "markdown", "--fail-on", "weakens-safety")
    assert code == 1
    # The head breaks the contract's own invariants, so `check` would refuse it: the review says so first.
    assert err.startswith("resume-contract diff: warning: the head fails `resume-contract check`: spec/invariants.yaml:")
    assert "invariant 'fail_closed'" in err
    assert out.startswith("### Contract review: **weakens-safety**\n")
    # (its class shown by a ledger, with its before and after decisions: a class no witness shows is not given)
    assert re.search(
        r"\| weakens-safety \| `DECISION_DISPOSITION_RELAXED:[0-9a-f]{16}` \| prefix 'after_function_call': blocked -> safe_replay \| "
        r"by the ledgers: \d+ of \d+ are weakens-safety; canonical after_function_call \(ok, error\): user_text, function_call: blocked "
        r"\\\[dangling_tool_state\\\].*-> safe_replay.*\| spec/decisions.yaml:20:5 \| spec/decisions.yaml:20:5 \|",
        out,
    ), out
    first_ledger = next(line for line in out.splitlines() if line.startswith("| weakens-safety | canonical"))
    assert first_ledger.startswith("| weakens-safety | canonical after_function_call (ok, error): user_text, function_call | blocked \\[dangling_tool_state\\]")  # renders as [..]: brackets are escaped


@pytest.mark.slow
def test_a_wording_only_change_is_neutral_and_exits_0(tmp_path: Path, run_cli) -> None:
    head = _overlay(tmp_path / "head", "DIAGNOSTIC_REWORDED", "current")
    code, out, _ = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--fail-on", "weakens-safety")
    assert code == 0
    assert "1 change: 0 weakens-safety, 0 breaking, 0 tightens, 1 neutral" in out
    assert run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--fail-on", "any")[0] == 1
    assert run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--fail-on", "tightens")[0] == 0


def test_two_spec_directories_are_compared_outside_any_project(tmp_path: Path) -> None:
    # `diff old/spec new/spec`, as its help shows it, from a directory no project holds: no revision is read.
    base = shutil.copytree(FROZEN_SPEC, tmp_path / "base" / "spec")
    head = _overlay(tmp_path / "head", "DIAGNOSTIC_REWORDED", "current")
    command = [sys.executable, "-m", "resume_contract", "diff", str(base.relative_to(tmp_path)), str(head.relative_to(tmp_path)), "--depth", "1", "--fail-on", "any"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1 and "1 change: 0 weakens-safety, 0 breaking, 0 tightens, 1 neutral" in result.stdout, result.stderr


def test_json_output_lists_every_change_and_ledger(tmp_path: Path, run_cli) -> None:
    head = _overlay(tmp_path / "head", "STATE_ADDED", "current")
    code, out, _ = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--format", "json", "--depth", "2")
    document = json.loads(out)
    assert code == 0
    assert document["verdict"] == "weakens-safety"
    assert document["summary"] == {"weakens-safety": 5, "breaking": 0, "tightens": 0, "neutral": 0, "total": 5}
    ledger = document["evidence"]["ledgers"][0]
    assert ledger["label"] == "function_call(a), function_response(a, other tool)"
    assert (ledger["base"]["disposition"], ledger["head"]["disposition"]) == ("blocked", "safe_replay")
    assert [event["id"] for event in ledger["events"]] == ["e1", "e2"]
    moved = document["evidence"]["ledgersDecidingDifferently"]
    assert moved == len(document["evidence"]["ledgers"]) > 1
    # A script that wants fewer (a rename can move tens of thousands of ledgers) asks for fewer.
    few = json.loads(run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--format", "json", "--depth", "2", "--ledgers", "1")[1])
    assert (len(few["evidence"]["ledgers"]), few["evidence"]["ledgersDecidingDifferently"]) == (1, moved)


def test_an_invalid_side_is_reported_with_its_location_and_not_compared(tmp_path: Path, run_cli) -> None:
    head = tmp_path / "head"
    shutil.copytree(FROZEN_SPEC, head / "spec")
    decisions = head / "spec" / "decisions.yaml"
    decisions.write_text(decisions.read_text().replace("    disposition: blocked\n", "    dispostion: blocked\n"))
    code, out, err = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head / "spec"))
    assert (code, out) == (2, "")
    assert f"head ({head / 'spec'}): spec/decisions.yaml:20:5: unknown key 'dispostion'" in err
    assert err.endswith("resume-contract diff: the head spec is invalid; nothing was compared\n")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _git_project(tmp_path: Path, case: str) -> Path:
    """A repository whose main holds the frozen spec and whose branch `feature` holds a review case's head."""
    project = tmp_path / "project"
    shutil.copytree(FROZEN_SPEC, project / "spec")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "spec")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    _git(project, "checkout", "-qb", "feature")
    for overlay in (CORPUS / case / "current").glob("*.yaml"):
        shutil.copyfile(overlay, project / "spec" / overlay.name)
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", f"as {case}")
    return project


@pytest.mark.slow
def test_git_revisions_and_the_default_merge_base(tmp_path: Path, run_cli) -> None:
    project = _git_project(tmp_path, "FAILPOINT_PREFIX_LATER")

    code, out, _ = run_cli("--root", str(project), "diff", "main", "feature", "--fail-on", "breaking")
    assert code == 1 and "FAILPOINT_PREFIX_LATER: failpoint P4" in out
    # Default: merge base of HEAD with main, against the working tree (which now also rewords P3).
    failpoints = project / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text().replace("Tool implementation in progress", "Tool running"))
    code, out, _ = run_cli("--root", str(project), "diff")
    assert code == 0
    assert out.startswith("resume-contract diff merge-base ")
    assert "FAILPOINT_PREFIX_LATER" in out and "FAILPOINT_BOUNDARY_REWORDED" in out
    code, _, err = run_cli("--root", str(project), "diff", "no-such-revision")
    assert code == 2 and "no-such-revision" in err


@pytest.mark.parametrize(
    ("state", "field", "value", "rule", "change_class"),
    [
        # (classed by the ledgers that move; on these hand-built models `final` alone moves no ledger (a valid spec
        # cannot make that change alone: tests/test_review_cases.py), so no class but neutral is shown; another
        # diagnostic at the end gives another name)
        ("indeterminate", "final", True, "STATE_MADE_FINAL", "neutral"),
        ("succeeded", "final", False, "STATE_MADE_NOT_FINAL", "neutral"),
        ("indeterminate", "at_end", "duplicate_tool_call", "STATE_AT_END_CHANGED", "breaking"),
    ],
)
def test_state_rules_on_hand_built_models(state: str, field: str, value: object, rule: str, change_class: str) -> None:
    base = load_spec(FROZEN_ROOT)
    states = tuple(dataclasses.replace(s, **{field: value}) if s.name == state else s for s in base.projector.states)
    head = dataclasses.replace(base, projector=dataclasses.replace(base.projector, states=states))
    changes = [c for c in review(base, head, depth=2).changes if c.rule == rule]
    assert [(c.change_class, c.base, c.head) for c in changes] == [(change_class, base.projector.state(state).mark, base.projector.state(state).mark)]


def test_replay_reordered_on_a_hand_built_model() -> None:
    base = load_spec(FROZEN_ROOT)
    reordered = dataclasses.replace(base.decision("after_function_response"), replay=("function_call", "user_text", "function_response"))
    head = dataclasses.replace(base, decisions=tuple(reordered if d.prefix == reordered.prefix else d for d in base.decisions))
    changes = review(base, head, depth=0).changes
    assert [(c.rule, c.change_class, c.message) for c in changes] == [
        ("DECISION_REPLAY_REORDERED", "neutral", "prefix 'after_function_response': replay order changed")
    ]


def test_a_weakening_no_rule_explains_is_still_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    base = load_spec(FROZEN_ROOT)
    head = load_spec(_overlay(tmp_path / "head", "DECISION_DISPOSITION_RELAXED", "current").parent)
    # Blind the rules that see this change: only the ledgers can tell.
    monkeypatch.setattr(review_module._Collector, "decisions", lambda self: None)
    monkeypatch.setattr(review_module._Collector, "projector", lambda self: None)
    changes = review(base, head, depth=1).changes
    assert [(c.rule, c.change_class) for c in changes] == [("EVIDENCE_UNEXPLAINED_WEAKENING", "weakens-safety")]


def test_identical_specs_have_no_change(run_cli) -> None:
    code, out, _ = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(FROZEN_ROOT))
    assert code == 0 and "0 changes" in out


def test_json_output_says_what_each_rule_means(tmp_path: Path, run_cli) -> None:
    head = _overlay(tmp_path / "head", "DIAGNOSTIC_REWORDED", "current")
    _, out, _ = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--format", "json", "--depth", "0")
    changes = json.loads(out)["changes"]
    assert [(change["rule"], change["about"]) for change in changes] == [("DIAGNOSTIC_REWORDED", review_module.RULES["DIAGNOSTIC_REWORDED"][1])]
    assert changes[0]["about"] and changes[0]["about"] != changes[0]["message"]


def test_an_unknown_revision_is_named_plainly(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "project"
    shutil.copytree(FROZEN_SPEC, project / "spec")
    _git(project, "init", "-q", "-b", "trunk")
    code, out, err = run_cli("--root", str(project), "diff", "no-such-branch", str(FROZEN_SPEC))
    assert (code, out) == (2, "")
    assert err == f"resume-contract: 'no-such-branch' is neither a spec directory nor a git revision in {project}\n"


def test_a_rewording_shows_only_the_words_that_changed() -> None:
    from resume_contract_generator.review.text import reworded

    old = "The side effects may or may not have occurred. Do not retry the tool call immediately. Use read-only tools."
    new = "The side effects may or may not have occurred. Never retry the tool call immediately. Use read-only tools."
    assert reworded(old, new) == "'…not have occurred. Do not retry the tool…' -> '…not have occurred. Never retry the tool…'"
    assert reworded("The tool succeeds.", "The tool succeeds and writes the file.") == "'The tool succeeds.' -> 'The tool succeeds and writes the file.'"
    assert reworded("a", "b") == "'a' -> 'b'"


def test_the_markdown_review_folds_the_ledger_evidence(tmp_path: Path, run_cli) -> None:
    head = _overlay(tmp_path / "head", "DECISION_DISPOSITION_RELAXED", "current")
    _, out, _ = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--format", "markdown", "--depth", "1")
    lines = out.splitlines()
    opened, closed = lines.index("<details>"), lines.index("</details>")
    assert lines[opened + 1].startswith("<summary>") and "ledgers decide differently" in lines[opened + 1]
    assert any(line.startswith("| weakens-safety | function_call(a) |") for line in lines[opened:closed])
    assert not any(line.startswith("| weakens-safety | `") for line in lines[opened:closed]), "findings stay unfolded"


def test_a_rename_whose_ledgers_decide_less_safely_is_weakens_safety(tmp_path: Path) -> None:
    # The REASON_RENAMED case's head, with the pending call neither diagnosed nor to verify: renamed *and* weaker
    # (a dangling call's ledger now replays).
    renamed = load_spec(_overlay(tmp_path / "head", "REASON_RENAMED", "current").parent)
    states = tuple(dataclasses.replace(s, at_end=None, requires_verification=False) if s.name == "indeterminate" else s for s in renamed.projector.states)
    head = dataclasses.replace(renamed, projector=dataclasses.replace(renamed.projector, states=states))
    classes = {c.rule: c.change_class for c in review(load_spec(FROZEN_ROOT), head, depth=2).changes}
    assert classes["REASON_RENAMED"] == "weakens-safety"
    assert {c.rule: c.change_class for c in review(load_spec(FROZEN_ROOT), renamed, depth=2).changes}["REASON_RENAMED"] == "breaking"


def test_the_review_classes_each_ledger_by_the_one_definition_of_moves() -> None:
    # The catalogue's evidence uses resume_contract/core/moves.py (tests/test_moves.py holds its table).
    from resume_contract_generator.review.evidence import effect

    from resume_contract.core.moves import Outcome

    blocked = Outcome("blocked", False, ("r1",), ("d1",), ("indeterminate",), ("e1",), ("a",))
    assert effect(blocked, blocked._replace(reasons=("r2",))) == "breaking"
    assert effect(blocked, blocked._replace(reasons=("r1", "r2"))) == "tightens"
    assert effect(blocked, Outcome("safe_replay", True, (), (), ("succeeded",), ("e1",))) == "weakens-safety"
    assert effect(blocked, blocked) == "neutral"


@pytest.mark.slow
def test_a_renamed_reason_is_one_breaking_finding_with_linked_locations(tmp_path: Path, run_cli) -> None:
    project = _git_project(tmp_path, "REASON_RENAMED")
    base, head = (_git(project, "rev-parse", name).strip() for name in ("main", "feature"))

    assert run_cli("--root", str(project), "diff", "main", "feature", "--fail-on", "weakens-safety")[0] == 0
    code, out, _ = run_cli("--root", str(project), "diff", "main", "feature", "--fail-on", "breaking", "--format", "markdown",
                           "--links", "https://github.com/acme/agents/")
    assert code == 1
    assert out.startswith("### Contract review: **breaking**\n")
    row = next(line for line in out.splitlines() if "`REASON_RENAMED:" in line)  # the Finding column: RULE:FINGERPRINT
    assert "reason 'dangling_tool_state' renamed to 'unresolved_tool_state'" in row
    assert f"[spec/projector.yaml:88:3](https://github.com/acme/agents/blob/{base}/spec/projector.yaml#L88)" in row
    assert f"[spec/projector.yaml:88:3](https://github.com/acme/agents/blob/{head}/spec/projector.yaml#L88)" in row
    # Nothing else about the rename is reported: no removal, addition, or decision/diagnostic that follows it.
    rules = [line.split("`")[1].split(":")[0] for line in out.splitlines() if line.startswith("| ") and "`" in line]
    assert rules == ["REASON_RENAMED", "DECISION_REWORDED"]
    # The working tree has no commit to link to: its locations stay text.
    code, out, _ = run_cli("--root", str(project), "diff", "main", "--format", "markdown", "--links", "https://github.com/acme/agents")
    row = next(line for line in out.splitlines() if "`REASON_RENAMED:" in line)
    assert row.endswith("/spec/projector.yaml#L88) | spec/projector.yaml:88:3 |")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--links", "https://github.com/acme/agents"], "add --format markdown"),
        (["--format", "markdown", "--links", "javascript:alert(1)"], "repository's web address"),
        (["--format", "markdown", "--links", "https://x.test/a)[b"], "repository's web address"),
        (["--format", "markdown", "--links", "https://github.com/acme/agents.git"], "without .git"),
        (["--format", "markdown", "--links", "https://github.com/acme/agents?x=1#frag"], "without .git, a query"),
    ],
)
def test_links_are_refused_unless_they_are_a_web_address_for_markdown(extra: list[str], message: str, run_cli) -> None:
    code, out, err = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(FROZEN_SPEC), *extra)
    assert (code, out) == (2, "") and message in err


_PENDING = """  pending_tool_result:
    reason: dangling_tool_state
    message: function_call has no matching committed function_response
"""
_OFFSET = """  runtime_offset_mismatch:
    reason: runtime_offset_mismatch
    message: RuntimeEvent high-water does not match the expected checkpoint offset
"""
_OFFSET_REASON = "  runtime_offset_mismatch: The reopened ledger is not the prefix the caller expected to resume from.\n"
# Edits that lose a reason or a diagnostic while looking like renames (found by an attack on the review).
_WEAKENINGS_THAT_LOOK_LIKE_RENAMES = {
    "high-water merged into another diagnostic": {
        "decisions.yaml": [("diagnostic: runtime_offset_mismatch", "diagnostic: event_after_terminal")],
        "projector.yaml": [(_OFFSET, ""), (_OFFSET_REASON, "")],
    },
    "reason moved onto the high-water reason": {
        "projector.yaml": [("  duplicate_tool_result:\n    reason: dangling_tool_state", "  duplicate_tool_result:\n    reason: runtime_offset_mismatch")],
    },
    "diagnostic merged into an existing one": {
        "projector.yaml": [("    at_end: pending_tool_result", "    at_end: duplicate_tool_call"), (_PENDING, "")],
        "decisions.yaml": [("diagnostics: [pending_tool_result]", "diagnostics: [duplicate_tool_call]")],
    },
    "exemption widened behind a rename": {
        "invariants.yaml": [("exempt_diagnostics: [duplicate_tool_call]", "exempt_diagnostics: [reused_tool_call_id]")],
        "decisions.yaml": [("tool_name_mismatch, duplicate_tool_call,", "tool_name_mismatch, reused_tool_call_id,")],
        "projector.yaml": [
            ("anomaly: duplicate_tool_call", "anomaly: reused_tool_call_id"),
            ("  duplicate_tool_call:\n", "  reused_tool_call_id:\n"),
            ("  - {from: succeeded, on: function_response, anomaly: duplicate_tool_result}", "  - {from: succeeded, on: function_response, anomaly: reused_tool_call_id}"),
        ],
    },
}


@pytest.mark.parametrize("name", sorted(_WEAKENINGS_THAT_LOOK_LIKE_RENAMES))
def test_a_merge_that_looks_like_a_rename_is_never_neutral(name: str, tmp_path: Path, run_cli) -> None:
    # Two names merged into one: what a consumer reads changes (a name given in place of another, or dropped), and
    # no ledger moves toward proceeding: breaking, shown by a ledger (core/moves.py); `--fail-on breaking` fails it.
    base, head = tmp_path / "base" / "spec", tmp_path / "head" / "spec"
    shutil.copytree(FROZEN_SPEC, base)
    if name == "exemption widened behind a rename":
        # The base exempts the diagnostic the head renames (and then raises for more events).
        (base / "invariants.yaml").write_text((base / "invariants.yaml").read_text().replace("exempt_diagnostics: []", "exempt_diagnostics: [duplicate_tool_call]"))
    shutil.copytree(base, head)
    for file, edits in _WEAKENINGS_THAT_LOOK_LIKE_RENAMES[name].items():
        text = (head / file).read_text()
        for old, new in edits:
            assert old in text, (file, old)
            text = text.replace(old, new)
        (head / file).write_text(text)
    code, out, err = run_cli("--root", str(REPO), "diff", str(base), str(head), "--depth", "3", "--fail-on", "breaking")
    assert code == 1, out
    assert "0 breaking" not in out.splitlines()[1] and "by the ledgers:" in out
    assert all(line.startswith("resume-contract diff: warning: the head fails") for line in err.splitlines())


def test_two_renames_at_once_each_cite_their_own_ledgers(tmp_path: Path) -> None:
    head = tmp_path / "head" / "spec"
    shutil.copytree(FROZEN_SPEC, head)
    for file in ("projector.yaml", "decisions.yaml"):
        text = (head / file).read_text().replace("duplicate_tool_call", "repeated_call_id").replace("duplicate_tool_result", "repeated_result")
        (head / file).write_text(text)
    changes = {c.rule + " " + c.message: c for c in review(load_spec(FROZEN_ROOT), load_spec(head.parent), depth=3).changes}
    call = changes["DIAGNOSTIC_RENAMED diagnostic 'duplicate_tool_call' renamed to 'repeated_call_id'"]
    result = changes["DIAGNOSTIC_RENAMED diagnostic 'duplicate_tool_result' renamed to 'repeated_result'"]
    assert (call.change_class, result.change_class) == ("breaking", "breaking")
    assert "gave 'duplicate_tool_call' and give other names" in call.why and "repeated_call_id given in place of duplicate_tool_call" in call.why
    assert "gave 'duplicate_tool_result' and give other names" in result.why and "repeated_result given in place of duplicate_tool_result" in result.why


def test_spec_text_cannot_place_links_or_code_spans_in_the_markdown_review(tmp_path: Path, run_cli) -> None:
    # The sticky comment is the project's; text from a pull request's spec must not become a link, an image or code.
    head = tmp_path / "head" / "spec"
    shutil.copytree(FROZEN_SPEC, head)
    projector = head / "projector.yaml"
    text = projector.read_text(encoding="utf-8")
    projector.write_text(text.replace("directive: >-\n", "directive: >-\n  ![x](https://x.test/t.png) [approve](https://x.test) `ok`\n", 1), encoding="utf-8")
    _, out, _ = run_cli("--root", str(REPO), "diff", str(FROZEN_SPEC), str(head), "--format", "markdown", "--depth", "1")
    row = next(line for line in out.splitlines() if "DIRECTIVE_CHANGED" in line)
    assert "!\\[x\\](https://x.test/t.png) \\[approve\\](https://x.test) \\`ok\\`" in row
    assert "[approve](" not in row.replace("\\[approve\\](", "")
