"""Hidden rows (spec/projector.yaml `replay.hidden`, docs/language.md): never replayed, yet they take part in tool
state; a pair half hidden leaves its visible half out of the replay too and raises the contract's code after
every other diagnostic.

A tool test on frozen inputs: the contract is the gallery's step 07 (examples/maka-history, base + patches, never
spec/), and every expectation below is written by hand from the rule, not computed by the code under test. The
same ledger is planned short (in memory) and long (past the reader's chunks), which must agree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gallery_ledgers import plan

ROOT = Path(__file__).resolve().parent.parent
ROW = {"sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": 1, "partial": False}


@pytest.fixture(scope="module")
def project(gallery_step: Any) -> Path:
    return gallery_step("07-hidden-events")  # type: ignore[no-any-return]


def user(event_id: str) -> dict[str, Any]:
    return {**ROW, "id": event_id, "role": "user", "author": "user", "content": {"kind": "text", "text": "go"}}


def call(event_id: str, call_id: str, hidden: bool = False) -> dict[str, Any]:
    row = {**ROW, "id": event_id, "role": "model", "author": "agent", "content": {"kind": "function_call", "id": call_id, "name": "Bash", "args": {}}}
    return {**row, "modelVisibility": "hidden"} if hidden else row


def result(event_id: str, call_id: str, hidden: bool = False) -> dict[str, Any]:
    row = {**ROW, "id": event_id, "role": "tool", "author": "tool", "content": {"kind": "function_response", "id": call_id, "name": "Bash", "result": {}}}
    return {**row, "modelVisibility": "hidden"} if hidden else row


def summary(decided: dict[str, Any]) -> tuple[str, list[tuple[str, str | None]], list[str], list[tuple[str, str]]]:
    return (
        decided["disposition"],
        [(d["code"], d.get("eventId")) for d in decided["diagnostics"]],
        [row["id"] for row in decided["replayRuntimeEvents"]],
        [(o["toolCallId"], o["status"]) for o in decided["operations"]],
    )


def test_a_hidden_pair_is_settled_and_not_replayed(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u"), call("c", "a", hidden=True), result("r", "a", hidden=True)], tmp_path)
    assert summary(decided) == ("safe_replay", [], ["u"], [("a", "succeeded")])


def test_a_hidden_call_left_open_still_blocks(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u"), call("c", "a", hidden=True)], tmp_path)
    assert summary(decided) == ("blocked", [("pending_tool_result", "c")], ["u"], [("a", "indeterminate")])


def test_a_visible_result_of_a_hidden_call_is_diagnosed_after_the_pending_calls(project: Path, tmp_path: Path) -> None:
    rows = [user("u"), call("c1", "a", hidden=True), result("r1", "a"), call("c2", "b")]
    decided = plan(project, rows, tmp_path)
    # The pending call is diagnosed at the end of the walk; the half-hidden pair after that, whatever the order of rows.
    assert summary(decided) == ("blocked", [("pending_tool_result", "c2"), ("unmatched_tool_result", "r1")], ["u"], [("a", "succeeded"), ("b", "indeterminate")])


def test_a_visible_call_with_a_hidden_result_is_not_replayed_either(project: Path, tmp_path: Path) -> None:
    decided = plan(project, [user("u"), call("c", "a"), result("r", "a", hidden=True)], tmp_path)
    assert summary(decided) == ("blocked", [("unmatched_tool_result", "c")], ["u"], [("a", "succeeded")])


def test_a_long_ledger_is_planned_as_a_short_one(project: Path, tmp_path: Path) -> None:
    """Past the walk's compiled-loop threshold and the reader's chunks: the same rule, the same order."""
    filler = [item for n in range(3000) for item in (call(f"fc{n}", f"f{n}"), result(f"fr{n}", f"f{n}"))]
    rows = [user("u"), *filler, call("c1", "a", hidden=True), result("r1", "a"), call("c2", "b")]
    decided = plan(project, rows, tmp_path)
    disposition, diagnostics, replay, operations = summary(decided)
    assert (disposition, diagnostics) == ("blocked", [("pending_tool_result", "c2"), ("unmatched_tool_result", "r1")])
    assert replay == ["u", *(row["id"] for row in filler)]
    assert operations[-2:] == [("a", "succeeded"), ("b", "indeterminate")] and len(operations) == 3002


def _generate_with(project: Path, tmp_path: Path, hidden: str) -> subprocess.CompletedProcess[str]:
    copy = tmp_path / "project"
    shutil.copytree(project / "spec", copy / "spec")
    spec = copy / "spec" / "projector.yaml"
    source = spec.read_text(encoding="utf-8")
    line = '  hidden: row.modelVisibility == "hidden"\n'
    assert source.count(line) == 1
    spec.write_text(source.replace(line, f"  hidden: {hidden}\n"), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(copy), "generate"], capture_output=True, text=True, check=False)


def test_a_hidden_test_reads_the_row_alone(project: Path, tmp_path: Path) -> None:
    done = _generate_with(project, tmp_path, 'row.modelVisibility == "hidden" && fact.tool_boundary != "x"')
    assert done.returncode == 2 and "spec/projector.yaml:" in done.stderr and "unknown name 'fact'" in done.stderr, done.stderr
    assert not (tmp_path / "project" / "generated").exists()


@pytest.mark.parametrize(
    "hidden",
    [
        'row.modelVisibility == "hidden" && row.author != "tool"',  # a hidden result the test leaves visible
        'row.modelVisibility == "hidden" && row.ts < 1000000',  # ... or one with a real timestamp
        "row.modelVisibility",  # a "visible" row hidden (JavaScript's truthiness)
    ],
)
def test_a_hidden_test_that_hides_otherwise_than_the_oracle_is_refused(hidden: str, project: Path, tmp_path: Path) -> None:
    """The explorers try each tool row holding every combination of the values the test reads (and the field's
    declared ones): a test that leaves a hidden result visible, or hides a visible one, disagrees with the
    packaged oracle on a ledger of two rows, and generate says which."""
    done = _generate_with(project, tmp_path, hidden)
    assert done.returncode == 2 and "matches_oracle" in done.stderr, done.stderr
