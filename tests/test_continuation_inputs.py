"""The planner's inputs filled by an expression over the source's header and committed events (`{expression: ...}`
in spec/continuation.yaml `planner.inputs`), as tool tests on frozen inputs (tests/frozen_spec/phase1, edited here).
Expected decisions are written by hand from the rule, never computed by the code under test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from frozen_phase1 import edited
from frozen_phase1 import project as frozen_project
from resume_contract_generator.errors import SpecInvalid
from resume_contract_generator.spec.continuation_situations import continuation_table_of
from resume_contract_generator.spec.tables import decoder_of, table_of
from resume_contract_generator.spec.validate import load_spec

from resume_contract.core.continuation import continuation_summary
from resume_contract.core.continuation_planner import decide_from_run
from resume_contract.errors import ExpressionFailed

RULE = "      terminal_repair: {header_statuses: [completed, failed, cancelled], agrees: {cancelled: [aborted, cancelled]}}\n"
# A run repairs when its header's status is terminal and its last event is of the header's own run, with that status.
EXPRESSION = (
    "      expression: >-\n"
    '        header.status in ["completed", "failed"] && size(events) > 0 && last(events).runId == header.runId\n'
    "        && last(events).status == header.status\n"
)
HOST = {"currentCwd": "/w", "sourceWorkspaceIdentity": "ws", "currentWorkspaceIdentity": "ws", "backgroundOperationsSettled": True, "availableToolNames": []}
IDS = {"invocationId": "i9", "runId": "r9", "turnId": "t9"}


def _spec(root: Path, expression: str = EXPRESSION) -> Any:
    return load_spec(frozen_project(root, edited((RULE, expression))))


def _row(number: int, **fields: Any) -> bytes:
    wire = {"id": f"e{number}", "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": number, "partial": False}
    return json.dumps(wire | {"role": "user", "author": "user", "content": {"kind": "text", "text": "go"}} | fields).encode()


def _decide(spec: Any, header: dict[str, Any], rows: list[bytes]) -> dict[str, Any]:
    events = [decoder_of(spec).decode_row(row) for row in rows]
    return continuation_summary(decide_from_run(header, events, {}, HOST, IDS, table_of(spec), continuation_table_of(spec)))


HEADER = {"runId": "r", "sessionId": "s", "invocationId": "i", "turnId": "t", "status": "completed", "cwd": "/w"}
END = {"role": "system", "author": "system", "status": "completed", "actions": {"endInvocation": True}}


def _end(number: int, **fields: Any) -> bytes:
    """A terminal event (no content)."""
    row = json.loads(_row(number, **(END | fields)))
    del row["content"]
    return json.dumps(row).encode()


def test_an_input_filled_by_an_expression_decides_as_the_expression_says(tmp_path: Path) -> None:
    spec = _spec(tmp_path)

    assert _decide(spec, HEADER, [_row(1), _end(2)])["disposition"] == "continue"
    assert _decide(spec, HEADER | {"status": "failed"}, [_row(1), _end(2)])["rejection_reasons"] == ["terminal_repair_failed"]
    assert _decide(spec, HEADER | {"status": "failed"}, [_row(1), _end(2, status="failed")])["disposition"] == "continue"
    assert _decide(spec, HEADER, [_row(1)])["rejection_reasons"] == ["terminal_repair_failed"]  # no terminal event
    assert _decide(spec, HEADER | {"runId": None}, [_row(1), _end(2)])["rejection_reasons"] == ["terminal_repair_failed"]  # not its run


def test_an_input_expression_that_cannot_be_judged_is_no_decision(tmp_path: Path) -> None:
    # (a ledger of seven events divides by zero; the spec's own situations have fewer, so generate accepts it)
    spec = _spec(tmp_path / "p", '      expression: header.status == last(events).status && 10 / (size(events) - 7) != 0\n')

    assert _decide(spec, HEADER, [_row(1), _end(2)])["disposition"] == "continue"
    with pytest.raises(ExpressionFailed, match="planner input 'terminalRepairSucceeded'"):
        _decide(spec, HEADER, [*(_row(number) for number in range(1, 7)), _end(7)])


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (RULE, "      expression: size(events)\n", "a condition must be true or false, and this is int"),
        (RULE, "      expression: header.status == source.status\n", "source"),
        ("    continuationIdentity: {fresh_ids: true}\n", "    continuationIdentity: {expression: header.ids}\n", "an expression fills a boolean, string or integer input"),
    ],
)
def test_an_input_expression_that_could_not_fill_its_input_is_refused_at_its_line(old: str, new: str, message: str, tmp_path: Path) -> None:
    text = edited((old, new))
    line = text.splitlines().index(new.rstrip("\n")) + 1

    with pytest.raises(SpecInvalid) as invalid:
        load_spec(frozen_project(tmp_path, text))

    errors = [error for error in invalid.value.errors if message in error.message]
    assert errors and all(error.mark.line in (line - 1, line) for error in errors), invalid.value
