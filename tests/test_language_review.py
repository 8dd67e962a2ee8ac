"""`diff` of two contracts in the contract language (generator/language/review.py), on the language tests' own
frozen contract: each edit's class comes from the ledgers whose decision moved, with the smallest as evidence."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from test_language import CONTRACT, _project

REPO = Path(__file__).resolve().parent.parent


def _diff(run_cli, tmp_path: Path, new_text: str) -> dict:
    base = _project(tmp_path / "base")
    head = _project(tmp_path / "head", new_text)
    code, out, err = run_cli("--root", str(head), "diff", str(base), str(head), "--format", "json")
    assert code == 0, out + err
    return json.loads(out)


def _without_the_open_call_diagnostic(text: str) -> str:
    """The contract with the open call's diagnostic at the end dropped: its state's at_end, the diagnostic and its
    reason (a diagnostic nothing raises, a reason nothing gives, are refused)."""
    return text.replace("status: open, at_end: open_call,", "status: open,").replace(
        "    open_call: {reason: unsettled, message: a call has no result}\n", "").replace("    unsettled: a call is unsettled\n", "")


def _rules(review: dict) -> dict[str, str]:
    return {change["rule"]: change["class"] for change in review["changes"]}


def test_a_guard_splitting_a_state_with_a_new_reason_is_breaking_with_its_ledger(tmp_path: Path, run_cli) -> None:
    new = CONTRACT.replace(
        "      - {class: call, from: none, to: open}\n",
        "      - {class: call, from: none, when: row.tool == \"rm\", to: risky}\n      - {class: call, from: none, to: open}\n",
    ).replace(
        "      open: {description: open, status: open, at_end: open_call, replay_opener: false}\n",
        "      open: {description: open, status: open, at_end: open_call, replay_opener: false}\n"
        "      risky: {description: risky, status: open, at_end: risky_call, replay_opener: false}\n",
    ).replace("from: [open, closed, broken]", "from: [open, risky, closed, broken]").replace("from: open, when: row.ok", "from: [open, risky], when: row.ok").replace(
        "{class: done, from: open, to: broken}", "{class: done, from: [open, risky], to: broken}"
    ).replace("    shouting:", "    risky_call: {reason: risky, message: a risky call has no result}\n    shouting:").replace(
        "    unsettled: a call is unsettled\n", "    unsettled: a call is unsettled\n    risky: a risky call is unsettled\n"
    )
    review = _diff(run_cli, tmp_path, new)
    assert review["verdict"] == "breaking"
    assert _rules(review)["LANGUAGE_ITEM_CHANGED"] == "breaking"
    smallest = review["evidence"]["ledgers"][0]
    assert smallest["label"] == 'call(tool="rm")'


def test_dropping_a_diagnostic_at_the_end_weakens_safety(tmp_path: Path, run_cli) -> None:
    review = _diff(run_cli, tmp_path, _without_the_open_call_diagnostic(CONTRACT))
    assert review["verdict"] == "weakens-safety"
    assert _rules(review)["LANGUAGE_ITEM_CHANGED"] == "weakens-safety"
    (message,) = [change["message"] for change in review["changes"] if change["rule"] == "LANGUAGE_ITEM_CHANGED"]
    assert message == "item 'calls' changed: state open: at_end open_call -> None"  # (what changed, not "reworded")


def test_a_corruption_becoming_a_decision_that_proceeds_weakens_safety(tmp_path: Path, run_cli) -> None:
    review = _diff(run_cli, tmp_path, CONTRACT.replace("{class: done, from: [none, closed, broken], corrupt: a result for no open call}", "{class: done, from: [none, closed, broken], to: closed}"))
    assert review["verdict"] == "weakens-safety"
    assert review["evidence"]["ledgers"][0]["label"].startswith("done")


def test_two_edits_of_one_entry_are_two_findings_a_waiver_tells_apart(tmp_path: Path, run_cli) -> None:
    # A waiver names a finding by its fingerprint: one accepting the corrupt message's rewording must not accept the
    # same entry made to settle the call (it weakens safety), nor another message.
    entry = "{class: done, from: [none, closed, broken], corrupt: a result for no open call}"
    edits = {
        "reworded": entry.replace("a result for no open call", "a result that answers no open call"),
        "reworded again": entry.replace("a result for no open call", "a result naming no open call"),
        "settles": entry.replace("corrupt: a result for no open call", "to: closed"),
    }
    findings = {}
    for name, edit in edits.items():
        review = _diff(run_cli, tmp_path / name.replace(" ", "-"), CONTRACT.replace(entry, edit))
        (change,) = [change for change in review["changes"] if change["rule"] == "LANGUAGE_ITEM_CHANGED"]
        findings[name] = change["finding"]
    again = _diff(run_cli, tmp_path / "settles-again", CONTRACT.replace(entry, edits["settles"]))
    assert len(set(findings.values())) == 3, findings
    assert [c["finding"] for c in again["changes"] if c["rule"] == "LANGUAGE_ITEM_CHANGED"] == [findings["settles"]]


def test_a_reasons_change_and_a_message_change_of_one_diagnostic_are_two_findings(tmp_path: Path, run_cli) -> None:
    line = "    twice: {reason: odd, message: a call id twice}"
    assert line in CONTRACT
    moved = _diff(run_cli, tmp_path / "reason", CONTRACT.replace(line, "    twice: {reason: unsettled, message: a call id twice}"))
    both = _diff(run_cli, tmp_path / "both", CONTRACT.replace(line, "    twice: {reason: unsettled, message: one call id given twice}"))
    found = [[c["finding"] for c in review["changes"] if c["rule"] == "LANGUAGE_NAME_CHANGED"] for review in (moved, both)]
    assert len(found[0]) == len(found[1]) == 1 and found[0] != found[1], found


def test_an_items_initial_state_changed_is_said(tmp_path: Path, run_cli) -> None:
    new = CONTRACT.replace("      none: {description: none}\n", "      none: {description: none}\n      fresh: {description: fresh}\n", 1).replace(
        "    initial: none\n", "    initial: fresh\n", 1).replace("from: none,", "from: [none, fresh],").replace("from: [none, closed, broken]", "from: [none, fresh, closed, broken]")
    review = _diff(run_cli, tmp_path, new)
    messages = [c["message"] for c in review["changes"] if c["rule"] == "LANGUAGE_ITEM_CHANGED"]
    assert messages and "initial none -> fresh" in messages[0], messages


def test_reasons_listed_in_another_order_are_breaking_where_a_decision_lists_two(tmp_path: Path, run_cli) -> None:
    # Issue 53: a class comes from what decisions do. A decision that lists both reasons lists them in another order:
    # consumers reading the first one break (maka's step 10 is such a change, and is breaking).
    reordered = CONTRACT.replace("    odd: something odd\n    unsettled: a call is unsettled\n", "    unsettled: a call is unsettled\n    odd: something odd\n")
    assert reordered != CONTRACT
    review = _diff(run_cli, tmp_path, reordered)
    assert review["verdict"] == "breaking", review["changes"]
    assert _rules(review) == {"REASONS_REORDERED": "breaking"}
    assert review["evidence"]["ledgersDecidingDifferently"] > 0  # (an open call beside a shout lists both reasons)
    assert {ledger["effect"] for ledger in review["evidence"]["ledgers"]} == {"breaking"}
    assert all("reasons in another order" in ledger["why"] for ledger in review["evidence"]["ledgers"])


def test_each_finding_names_its_place_in_spec_contract_yaml_on_both_sides(tmp_path: Path, run_cli) -> None:
    # (an annotation lands on the changed line: `diff --format github` needs the file and line)
    lines = CONTRACT.splitlines()
    item = lines.index("  calls:") + 1
    reason = lines.index("    odd: something odd") + 1
    new = CONTRACT.replace("{class: done, from: open, to: broken}", "{class: done, from: open, to: closed}").replace("    odd: something odd\n", "    odd: something strange\n")
    review = _diff(run_cli, tmp_path, new)
    places = {change["rule"]: (change["base"], change["head"]) for change in review["changes"]}
    assert places["LANGUAGE_ITEM_CHANGED"] == (f"spec/contract.yaml:{item}:3", f"spec/contract.yaml:{item}:3"), places
    assert places["LANGUAGE_REWORDED"] == (f"spec/contract.yaml:{reason}:5", f"spec/contract.yaml:{reason}:5"), places


def test_a_reworded_message_is_neutral_and_moves_no_ledger(tmp_path: Path, run_cli) -> None:
    review = _diff(run_cli, tmp_path, CONTRACT.replace("message: a call has no result", "message: a call has no result yet"))
    assert review["verdict"] == "neutral"
    assert review["evidence"]["ledgersDecidingDifferently"] == 0


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_the_other_runtimes_second_pull_request_is_one_yaml_edit_classed_breaking(tmp_path: Path, run_cli) -> None:
    """examples/other-runtime/second-pr.patch: the contract's change is a git diff of spec/contract.yaml (and the
    project's oracle, its independent Python, follows the prose); after it the sample ledger decides as
    expected.json's `second_pull_request` says, `diff` classes it as it says, and verify holds."""
    example = REPO / "examples" / "other-runtime"
    expected = json.loads((example / "expected.json").read_text(encoding="utf-8"))["second_pull_request"]
    head = tmp_path / "head"
    shutil.copytree(example, head)
    patch = (example / expected["patch"]).read_text(encoding="utf-8")
    assert [line.split(" b/")[-1] for line in patch.splitlines() if line.startswith("diff --git")] == ["spec/contract.yaml", "oracle.py"]
    subprocess.run(["git", "apply", str(example / expected["patch"])], cwd=head, check=True)
    code, out, err = run_cli("--root", str(head), "generate")
    assert code == 0, out + err
    for ledger, want in expected["changes"].items():
        code, out, err = run_cli("--root", str(head), "plan", str(head / "ledgers" / ledger), "--json")
        decision = json.loads(out)
        assert (code, decision["decision"], decision["rejectionReasons"]) == (want["exit"], want["decision"], want["reasons"])
    code, out, err = run_cli("--root", str(head), "diff", str(example), str(head), "--format", "json")
    assert json.loads(out)["verdict"] == expected["class"]
    code, out, err = run_cli("--root", str(head), "verify", "--depth", "3")
    assert code == 0, out + err


@pytest.mark.parametrize("side", ["base", "head"])
def test_a_review_of_a_language_contract_against_a_catalogue_one_is_refused(tmp_path: Path, run_cli, side: str) -> None:
    language = _project(tmp_path / "language")
    catalogue = tmp_path / "catalogue"
    shutil.copytree(REPO / "tests" / "frozen_spec", catalogue)
    base, head = (language, catalogue) if side == "base" else (catalogue, language)
    code, out, err = run_cli("--root", str(language), "diff", str(base), str(head))
    assert code == 2
    assert "one side is written in the contract language" in err


def test_a_check_added_over_the_prefix_tightens_with_its_ledger(tmp_path: Path, run_cli) -> None:
    checks = "  checks:\n    - {when: 'events.exists(e, e.type == \"say\" && e.text == \"stop\")', raise: shouting}\n"
    review = _diff(run_cli, tmp_path, CONTRACT.replace("  diagnostics:\n", checks + "  diagnostics:\n", 1))
    assert _rules(review) == {"LANGUAGE_CHECK_CHANGED": "tightens"}
    assert review["evidence"]["ledgers"][0]["label"] == 'say(text="stop")'


@pytest.mark.parametrize(
    ("old", "new", "rule", "change_class"),
    [
        ("  tag: type\n", "  tag: type\n  unknown_keys: ignore\n", "LANGUAGE_UNKNOWN_KEYS_READ", "weakens-safety"),
        ("semantics: strict", "semantics: javascript", "SEMANTICS_CHANGED", None),
    ],
)
def test_constructs_no_ledger_of_the_alphabet_may_move_are_still_named(tmp_path: Path, run_cli, old: str, new: str, rule: str, change_class: str | None) -> None:
    assert old in CONTRACT
    review = _diff(run_cli, tmp_path, CONTRACT.replace(old, new, 1))
    assert rule in _rules(review)
    if change_class is not None:
        assert _rules(review)[rule] == change_class


def test_an_offset_check_removed_weakens_safety_where_the_caller_expected_more_rows(tmp_path: Path, run_cli) -> None:
    # The explorer reopens each ledger with an expected high-water one past its rows: the base stops there
    # (its offset check), the head, with no offset check, proceeds.
    offset = CONTRACT.replace("  diagnostics:\n", "  offset_mismatch: twice\n  diagnostics:\n", 1)
    base = _project(tmp_path / "base", offset)
    head = _project(tmp_path / "head")
    code, out, err = run_cli("--root", str(head), "diff", str(base), str(head), "--format", "json")
    review = json.loads(out)
    assert _rules(review) == {"LANGUAGE_NAME_CHANGED": "weakens-safety"}
    witness = review["evidence"]["ledgers"][0]
    assert witness["label"] == "say with expected high-water 2" and witness["effect"] == "weakens-safety", witness
    assert witness["base"]["proceeds"] is False and witness["head"]["proceeds"] is True, witness


def test_a_report_renamed_and_a_layout_moved_are_breaking_and_ledgers_name_items(tmp_path: Path, run_cli) -> None:
    base_text = CONTRACT.replace("    key: row.call\n", "    key: row.call\n    report: {tool: row.tool}\n").replace("  partial: partial\n", "  partial: partial\n  layout: \"{run}.jsonl\"\n")
    head_text = base_text.replace("report: {tool: row.tool}", "report: {name: row.tool}").replace('layout: "{run}.jsonl"', 'layout: "runs/{run}.jsonl"')
    base, head = _project(tmp_path / "base", base_text), _project(tmp_path / "head", head_text)
    code, out, err = run_cli("--root", str(head), "diff", str(base), str(head))
    assert "breaking        LANGUAGE_NAME_CHANGED: rows.layout: {run}.jsonl -> runs/{run}.jsonl" in out
    assert "breaking        LANGUAGE_NAME_CHANGED: item 'calls': report tool removed or renamed" in out
    code, out, err = run_cli("--root", str(head), "diff", str(_project(tmp_path / "b2")), str(_project(tmp_path / "h2", _without_the_open_call_diagnostic(CONTRACT))))
    assert "; items open" in out and "operations" not in out
