"""An independent oracle: the packaged contract's decision written straight from its text (Phase 0, and the
tool-boundary protocol of maka-history step 01).

It imports nothing from the spec or the generated code, and it is deliberately written differently (two
passes, plain lists) so that a spec that is consistent but wrong, or a table the generator got wrong, shows
up as a disagreement in `resume-contract verify`. What it decides, from the contract:

- partial events never change tool state and are never replayed;
- a call with no matching committed response is indeterminate (a response naming another tool, or
  arriving for an unknown or already answered call, or a second call with a used id, matches nothing);
- any such anomaly, any indeterminate call, or a committed event after the terminal event blocks;
- an expected high-water that differs from the prefix's length blocks with runtime_offset_mismatch;
- provider replay keeps calls and responses only as matched pairs, and every other committed event;
- a run whose first row (partial or not) names the tool-boundary protocol commits each call's dispatch (a row
  with `actions.toolDispatch` and no content, naming the call) before the tool runs: a call with neither its
  dispatch nor its response committed provably never ran (not_dispatched, which blocks without asking for
  verification); in any run, a dispatch naming no call that awaits its response is an anomaly, and so is a
  protocol marker on any row but the first, or one naming another protocol;
- a hidden row (`modelVisibility: "hidden"`, maka-history step 07: the model never saw it) is never replayed, yet
  takes part in tool state as any row; a response that settles a call when one of the two is hidden leaves the
  other unreplayed too (the replay would show half a pair), and blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

TERMINAL = ("completed", "failed", "aborted", "cancelled")
# The object field and key that end a run when the key holds `true` (the contract's endInvocation action).
END_FLAG = ("actions", "endInvocation")
CALL, RESPONSE = "function_call", "function_response"
PROTOCOL = "t1_after_preflight_v1"  # the tool-boundary protocol a run's first row may name


@dataclass(frozen=True)
class OracleDecision:
    disposition: str
    statuses: tuple[tuple[str, str], ...]  # (call id, status) in call order
    replay_ids: tuple[str, ...]
    requires_verification: bool
    required_reasons: frozenset[str]  # the reasons the contract names that this ledger must carry


class Reading(NamedTuple):
    """Everything the oracle reads of one row: rows with one reading are decided alike."""

    partial: bool
    terminal: bool
    tool: str | None  # CALL, RESPONSE or None
    call_id: Any
    name: Any
    failed: bool
    protocol: Any = None  # the row's protocol marker: (the toolBoundary it names,), or None without one
    dispatch: Any = None  # the call id a dispatch row names, or None
    hidden: bool = False  # the model never saw the row


def reading(row: dict[str, Any]) -> Reading:
    """What the oracle reads of one row (its JSON values); of a partial row, nothing more."""
    actions = row.get("actions")
    actions = actions if isinstance(actions, dict) else {}
    protocol = actions["runtimeProtocol"] if "runtimeProtocol" in actions else None
    if protocol is not None:
        protocol = ((protocol or {}).get("toolBoundary") if isinstance(protocol, dict) else None,)
    if row["partial"] is True:
        return Reading(True, False, None, None, None, False, protocol)
    dispatched = actions.get("toolDispatch")
    dispatch = dispatched.get("providerToolCallId") if isinstance(dispatched, dict) and "content" not in row else None
    content = row.get("content") or {}
    kind = content.get("kind")
    tool = kind if kind in (CALL, RESPONSE) else None
    ended = (row.get(END_FLAG[0]) or {}).get(END_FLAG[1]) is True
    return Reading(
        partial=False,
        terminal=row.get("status") in TERMINAL or ended,
        tool=tool,
        call_id=content.get("id") if tool else None,
        name=content.get("name") if tool else None,
        failed=tool == RESPONSE and content.get("isError") is True,
        protocol=protocol,
        dispatch=dispatch if isinstance(dispatch, str) else None,
        hidden=row.get("modelVisibility") == "hidden",
    )


def decide(rows: Sequence[dict[str, Any]], expected_high_water: int | None = None, read: Sequence[Reading] | None = None) -> OracleDecision:
    """Decide a ledger given as its rows' JSON values (plain dicts, as `json.loads` gives them); `read`, when
    given, is each row's `reading`, already taken."""
    if read is None:
        read = [reading(row) for row in rows]
    committed = [index for index, row in enumerate(read) if not row.partial]
    under_protocol = bool(read) and read[0].protocol == (PROTOCOL,)

    calls, answers, dispatched, anomaly = _pass_one(read, committed)

    # Pass 2: anything committed after the first terminal event.
    terminal_seen = False
    for index in committed:
        if terminal_seen:
            anomaly = True
            break
        terminal_seen = read[index].terminal

    statuses = []
    paired: set[int] = set()
    for call_id, (call_index, _) in calls.items():
        if call_id in answers:
            answer_index, failed = answers[call_id]
            statuses.append((call_id, "failed" if failed else "succeeded"))
            paired.update((call_index, answer_index))
        elif under_protocol and call_id not in dispatched:
            statuses.append((call_id, "not_dispatched"))
        else:
            statuses.append((call_id, "indeterminate"))
    # A pair half hidden: its visible half is not replayed, and it blocks.
    unpaired = {
        answer if read[calls[call_id][0]].hidden else calls[call_id][0]
        for call_id, (answer, _) in answers.items() if read[calls[call_id][0]].hidden is not read[answer].hidden
    }
    anomaly = anomaly or bool(unpaired)
    replay = tuple(
        rows[index]["id"] for index in committed
        if not read[index].hidden and index not in unpaired and (read[index].tool is None or index in paired)
    )
    indeterminate = any(status == "indeterminate" for _, status in statuses)
    never_ran = any(status == "not_dispatched" for _, status in statuses)
    offset_mismatch = expected_high_water is not None and expected_high_water != len(rows)
    required = set()
    if indeterminate or never_ran:
        required.add("dangling_tool_state")
    if offset_mismatch:
        required.add("runtime_offset_mismatch")
    blocked = anomaly or indeterminate or never_ran or offset_mismatch
    return OracleDecision(
        disposition="blocked" if blocked else "safe_replay",
        statuses=tuple(statuses),
        replay_ids=replay,
        requires_verification=indeterminate,
        required_reasons=frozenset(required),
    )


def _pass_one(read: Sequence[Reading], committed: list[int]) -> tuple[dict[str, tuple[int, str]], dict[str, tuple[int, bool]], set[str], bool]:
    """Pass 1: the first call of each id, the dispatches of the calls awaiting a response, the first response
    that matches a call, and whether a row was out of place."""
    calls: dict[str, tuple[int, str]] = {}
    answers: dict[str, tuple[int, bool]] = {}
    dispatched: set[str] = set()
    anomaly = False
    for index in committed:
        row = read[index]
        if row.protocol is not None and (index != 0 or row.protocol != (PROTOCOL,)):
            anomaly = True
        if row.dispatch is not None:
            if row.dispatch not in calls or row.dispatch in answers:
                anomaly = True
            else:
                dispatched.add(row.dispatch)
        elif row.tool == CALL:
            if row.call_id in calls:
                anomaly = True
            else:
                calls[row.call_id] = (index, row.name)
        elif row.tool == RESPONSE:
            call = calls.get(row.call_id)
            if call is None or call[1] != row.name or row.call_id in answers:
                anomaly = True
            else:
                answers[row.call_id] = (index, row.failed)
    return calls, answers, dispatched, anomaly
