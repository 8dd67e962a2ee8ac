"""The review's four classes, defined once by what decisions do (resume_contract/core/moves.py): the table of
docs/changing-the-contract.md, row by row. Each row is one ledger decided by a base and a head contract."""

from __future__ import annotations

import pytest

from resume_contract.core.moves import (
    BREAKING,
    CORRUPT,
    INPUTS,
    NEUTRAL,
    TIGHTENS,
    UNDECIDED,
    WEAKENS,
    Outcome,
    describe,
    move,
    refusal,
)

BLOCKED = Outcome("blocked", False, ("dangling_tool_state",), ("pending_tool_result",), ("indeterminate",), ("user",), ("call-1",), "Do not retry the tool.")
SAFE = Outcome("safe_replay", True, (), (), ("succeeded",), ("user", "call", "result"))
PARK = Outcome("park", False, ("terminal_repair_failed",), ("terminal_repair_failed",))
CONTINUE = Outcome("continue", True)

TABLE = [
    # weakens-safety: toward proceeding
    ("blocked -> safe_replay", BLOCKED, SAFE, WEAKENS),
    ("park -> continue", PARK, CONTINUE, WEAKENS),
    ("corrupt -> a plan (even one that stops)", refusal(CORRUPT, "invalid_event at row 2"), BLOCKED, WEAKENS),
    ("an operation to verify no longer listed", BLOCKED, BLOCKED._replace(to_verify=(), statuses=("not_dispatched",)), WEAKENS),
    ("a row withheld now replayed", BLOCKED, BLOCKED._replace(replay=("user", "call")), WEAKENS),
    ("a weakening beside a replacement", BLOCKED, BLOCKED._replace(reasons=("other",), to_verify=()), WEAKENS),
    # breaking: nothing toward proceeding, but what a consumer reads changes
    ("a reason given in place of another", PARK, PARK._replace(reasons=("provider_resume_boundary_unsupported",)), BREAKING),
    ("a reason dropped while still stopping", BLOCKED._replace(reasons=("dangling_tool_state", "runtime_offset_mismatch")), BLOCKED, BREAKING),
    ("reasons in another order", BLOCKED._replace(reasons=("a", "b")), BLOCKED._replace(reasons=("b", "a")), BREAKING),
    ("a diagnostic code given in place of another", BLOCKED, BLOCKED._replace(diagnostics=("duplicate_tool_call",)), BREAKING),
    ("an operation's status", BLOCKED, BLOCKED._replace(statuses=("parked",)), BREAKING),
    ("the directive says something else", BLOCKED, BLOCKED._replace(directive="Retry the tool."), BREAKING),
    ("the decision's word", BLOCKED, BLOCKED._replace(word="halt"), BREAKING),
    ("a plan where the contract now fails (exit 2)", BLOCKED, refusal(UNDECIDED, "an expression failed"), BREAKING),
    ("the host's facts no longer fit", PARK, refusal(INPUTS, "facts refused"), BREAKING),
    # tightens: only toward stopping
    ("safe_replay -> blocked", SAFE, BLOCKED, TIGHTENS),
    ("continue -> park", CONTINUE, PARK, TIGHTENS),
    ("a plan -> corrupt", BLOCKED, refusal(CORRUPT, "duplicate_key at row 1"), TIGHTENS),
    ("a reason added, every old one kept", PARK, PARK._replace(reasons=("terminal_repair_failed", "workspace_identity_mismatch")), TIGHTENS),
    ("an operation to verify added", BLOCKED._replace(to_verify=()), BLOCKED, TIGHTENS),
    ("a row no longer replayed", SAFE, SAFE._replace(replay=("user",)), TIGHTENS),
    # neutral: no output moves
    ("the same decision", BLOCKED, BLOCKED, NEUTRAL),
    ("corrupt both ways, another row named", refusal(CORRUPT, "invalid_event at row 1"), refusal(CORRUPT, "invalid_event at row 2"), NEUTRAL),
]


@pytest.mark.parametrize(("name", "before", "after", "expected"), TABLE, ids=[row[0] for row in TABLE])
def test_each_row_of_the_classes_table(name: str, before: Outcome, after: Outcome, expected: str) -> None:
    found = move(before, after)
    assert found.change_class == expected, (found, describe(before), describe(after))
    assert (found.why == "") == (expected == NEUTRAL)  # (a class is shown by the part of the move that decides it)


def test_a_move_and_its_reverse_are_weakening_and_tightening_alike() -> None:
    # Toward proceeding one way is toward stopping the other (where no name is replaced).
    for _, before, after, expected in TABLE:
        if expected == WEAKENS and not before.refused and not after.refused and before.reasons == after.reasons[: len(before.reasons)]:
            assert move(after, before).change_class in (TIGHTENS, BREAKING), (before, after)


def test_the_why_names_what_moved() -> None:
    assert move(BLOCKED, SAFE).why == "blocked -> safe_replay"
    assert move(BLOCKED, BLOCKED._replace(to_verify=())).why == "call-1 no longer to verify"
    assert move(PARK, PARK._replace(reasons=("x",))).why == "reasons x given in place of terminal_repair_failed"
    assert describe(BLOCKED) == "blocked [dangling_tool_state]; diagnostics pending_tool_result; to verify call-1"
