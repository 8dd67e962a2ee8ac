"""An independent oracle: the Phase 0 decision written straight from the contract's text.

It imports nothing from the spec or the generated code, and it is deliberately written differently (two
passes, plain lists) so that a spec that is consistent but wrong, or a table the generator got wrong, shows
up as a disagreement in `resume-contract verify`. What it decides, from the contract:

- partial events never change tool state and are never replayed;
- a call with no matching committed response is indeterminate (a response naming another tool, or
  arriving for an unknown or already answered call, or a second call with a used id, matches nothing);
- any such anomaly, any indeterminate call, or a committed event after the terminal event blocks;
- an expected high-water that differs from the prefix's length blocks with runtime_offset_mismatch;
- provider replay keeps calls and responses only as matched pairs, and every other committed event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TERMINAL = ("completed", "failed", "aborted", "cancelled")


@dataclass(frozen=True)
class OracleDecision:
    disposition: str
    statuses: tuple[tuple[str, str], ...]  # (call id, status) in call order
    replay_ids: tuple[str, ...]
    requires_verification: bool
    required_reasons: frozenset[str]  # the reasons the contract names that this ledger must carry


def decide(rows: Sequence[dict[str, Any]], expected_high_water: int | None = None) -> OracleDecision:
    """Decide a ledger given as its rows' JSON values (plain dicts, as `json.loads` gives them)."""
    committed = [(index, row) for index, row in enumerate(rows) if row["partial"] is not True]

    def kind(row: dict[str, Any]) -> str | None:
        content = row.get("content")
        return content["kind"] if content else None

    # Pass 1: the first call of each id, and the first response that matches it.
    calls: dict[str, tuple[int, str]] = {}
    answers: dict[str, tuple[int, bool]] = {}
    anomaly = False
    for index, row in committed:
        content = row.get("content") or {}
        if kind(row) == "function_call":
            if content["id"] in calls:
                anomaly = True
            else:
                calls[content["id"]] = (index, content["name"])
        elif kind(row) == "function_response":
            call = calls.get(content["id"])
            if call is None or call[1] != content["name"] or content["id"] in answers:
                anomaly = True
            else:
                answers[content["id"]] = (index, content.get("isError") is True)

    # Pass 2: anything committed after the first terminal event.
    terminal_seen = False
    for _, row in committed:
        if terminal_seen:
            anomaly = True
            break
        ended = (row.get("actions") or {}).get("endInvocation") is True
        terminal_seen = row.get("status") in TERMINAL or ended

    statuses = []
    paired: set[int] = set()
    for call_id, (call_index, _) in calls.items():
        if call_id in answers:
            answer_index, failed = answers[call_id]
            statuses.append((call_id, "failed" if failed else "succeeded"))
            paired.update((call_index, answer_index))
        else:
            statuses.append((call_id, "indeterminate"))
    replay = tuple(
        row["id"] for index, row in committed if kind(row) not in ("function_call", "function_response") or index in paired
    )
    indeterminate = any(status == "indeterminate" for _, status in statuses)
    offset_mismatch = expected_high_water is not None and expected_high_water != len(rows)
    required = set()
    if indeterminate:
        required.add("dangling_tool_state")
    if offset_mismatch:
        required.add("runtime_offset_mismatch")
    blocked = anomaly or indeterminate or offset_mismatch
    return OracleDecision(
        disposition="blocked" if blocked else "safe_replay",
        statuses=tuple(statuses),
        replay_ids=replay,
        requires_verification=indeterminate,
        required_reasons=frozenset(required),
    )
