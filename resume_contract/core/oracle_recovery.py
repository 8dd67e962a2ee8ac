"""The packaged oracle's second edition: maka's Phase 0 as of maka-history step 06 (recovery facts and the ledger
scan), written straight from that text, for a contract whose spec/invariants.yaml says `packaged_oracle:
recovery-facts`. Like `oracle.py` it imports nothing from the spec or the generated code, and is written otherwise
than the walk: each row is put in its lane first, then each call id's rows are resolved as one story.

What it decides, from the text (and the first edition's rules it keeps: partial rows, the tool-boundary marker,
the high-water, hidden rows; not the first edition's rule against rows after the terminal event, which maka's
ledger scan never had: such a row is read as any other):

- every committed row belongs to one lane by its content kind and action keys: ordinary, function_call,
  tool_dispatch, function_response, a recovery fact (reconcile_result, recovery_decision). A row in two lanes, or
  in one with the wrong envelope (a dispatch with content, or whose refs do not name its operation and call; a
  recovery fact with content, of another version or kind, or without refs naming its operation and call; a call
  or response whose actions hold more than stateDelta) is a lane conflict: it blocks, and takes no part in tool
  state nor in the replay;
- a call id's story: its first call opens it (not dispatched under the protocol, else in doubt); its dispatch
  marks it started, if it names the call's tool and the hash of the call's tool and arguments (else it corrupts
  the operation); its first response naming its tool settles it; a reconcile result may follow the dispatch; a
  parked decision parks an unsettled operation, a completed one confirms a settled one; a second call, dispatch or
  response, or a fact out of that order, corrupts the operation for good; a fact or response naming no call
  blocks;
- parked and corrupt operations block without asking for verification; an operation in doubt asks for it;
- calls are replayed only with their operation's response, and so are the later calls and responses that
  corrupted it (not when the pair is hidden, or half of it); a response naming no call, or another tool, or one
  on an operation already corrupt, is not.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from .oracle import CALL, PROTOCOL, RESPONSE, OracleDecision, reading

RECOVERY_KINDS = ("maka.tool.reconcile_result", "maka.tool.recovery_decision")


def lane_conflict(row: dict[str, Any]) -> bool:
    """Whether a committed row is in two lanes, or in its lane with the wrong envelope."""
    actions = row.get("actions")
    actions = actions if isinstance(actions, dict) else {}
    refs = row.get("refs")
    refs = refs if isinstance(refs, dict) else {}
    kind = (row.get("content") or {}).get("kind") if isinstance(row.get("content"), dict) else None
    if "toolDispatch" in actions:
        dispatch = actions["toolDispatch"] if isinstance(actions["toolDispatch"], dict) else {}
        return (
            "content" in row or "toolRecovery" in actions
            or not isinstance(dispatch.get("providerToolCallId"), str) or not isinstance(dispatch.get("operationId"), str)
            or refs.get("operationId") != dispatch.get("operationId") or refs.get("toolCallId") != dispatch.get("providerToolCallId")
        )
    if "toolRecovery" in actions:
        fact = actions["toolRecovery"] if isinstance(actions["toolRecovery"], dict) else {}
        version = fact.get("version")
        payload = fact.get("payload")
        decided = payload.get("disposition") if isinstance(payload, dict) else None
        return (
            "content" in row or type(version) not in (int, float) or version != 1 or fact.get("kind") not in RECOVERY_KINDS
            or not isinstance(refs.get("operationId"), str) or not isinstance(refs.get("toolCallId"), str)
            or (fact.get("kind") == RECOVERY_KINDS[1] and decided not in ("parked", "completed"))
        )
    return kind in (CALL, RESPONSE) and "actions" in row and any(key != "stateDelta" for key in actions)


def recovery_fact(row: dict[str, Any]) -> tuple[str, str] | None:
    """(call id, "reconcile" / "parked" / "completed") of a recovery fact in its lane, or None."""
    actions = row.get("actions")
    fact = actions.get("toolRecovery") if isinstance(actions, dict) else None
    if not isinstance(fact, dict) or "content" in row:
        return None
    call_id = row["refs"]["toolCallId"]
    if fact["kind"] == RECOVERY_KINDS[0]:
        return call_id, "reconcile"
    payload = fact.get("payload")
    return call_id, str(payload["disposition"]) if isinstance(payload, dict) else ""  # (parked or completed: else a lane conflict)


class _Story:
    """One call id's operation as its rows tell it."""

    def __init__(self, call: int, name: Any, waits_for_dispatch: bool, args: Any = None) -> None:
        self.call, self.name, self.args = call, name, args
        self.status = "not_dispatched" if waits_for_dispatch else "indeterminate"
        self.dispatched = False
        self.answer: int | None = None
        self.standing: list[int] = []  # later calls and responses that corrupted it: replayed with it, if answered

    def corrupt(self) -> None:
        self.status = "corruption"


def decide_recovery(rows: Sequence[dict[str, Any]], expected_high_water: int | None = None) -> OracleDecision:
    """Decide a ledger given as its rows' JSON values, by maka's contract as of maka-history step 06."""
    read = [reading(row) for row in rows]
    committed = [index for index, row in enumerate(read) if not row.partial]
    under_protocol = bool(read) and read[0].protocol == (PROTOCOL,)
    blocked = expected_high_water is not None and expected_high_water != len(rows)
    stories: dict[Any, _Story] = {}
    dropped: set[int] = set()  # tool rows never replayed
    for index in committed:
        row, raw = read[index], rows[index]
        if row.protocol is not None and (index != 0 or row.protocol != (PROTOCOL,)):
            blocked = True
        if lane_conflict(raw):
            blocked = True
            dropped.add(index)
            continue
        fact = recovery_fact(raw)
        story = stories.get(row.dispatch if row.dispatch is not None else fact[0] if fact else row.call_id)
        if row.dispatch is not None or fact is not None:
            blocked = _action(story, "dispatch" if fact is None else fact[1], raw) or blocked
        elif row.tool == CALL:
            if story is None:
                stories[row.call_id] = _Story(index, row.name, under_protocol, (raw.get("content") or {}).get("args"))
            else:
                blocked = True
                _again(story, index, dropped)
        elif row.tool == RESPONSE:
            blocked = _response(story, index, row, dropped) or blocked
    statuses = tuple((call_id, story.status) for call_id, story in stories.items())
    replay = _replay(rows, read, committed, stories, dropped)
    in_doubt = any(status == "indeterminate" for _, status in statuses)
    unsettled = any(status not in ("succeeded", "failed") for _, status in statuses)
    required = {"dangling_tool_state"} if unsettled else set()
    if expected_high_water is not None and expected_high_water != len(rows):
        required.add("runtime_offset_mismatch")
    return OracleDecision(
        disposition="blocked" if blocked or unsettled or replay[1] else "safe_replay",
        statuses=statuses,
        replay_ids=replay[0],
        requires_verification=in_doubt,
        required_reasons=frozenset(required),
    )


def _of_its_call(story: _Story, dispatch: Any) -> bool:
    """Whether a dispatch is of its operation's call: the same tool, and `canonicalArgsHash` the SHA-256 of the
    call's tool and arguments as maka's canonicalizeMainlineV1 writes them (maka-history.md, step 01)."""
    text = _js_json({"toolName": story.name, "args": story.args})
    return bool(dispatch.get("toolName") == story.name and dispatch.get("canonicalArgsHash") == "sha256:" + hashlib.sha256(text.encode()).hexdigest())


_COLLATOR: list[Any] = []


def _collation_key(text: str) -> Any:
    """localeCompare's order (the root collation), its collator loaded once (about 0.5 s)."""
    if not _COLLATOR:
        from pyuca.collator import Collator_10_0_0

        _COLLATOR.append(Collator_10_0_0())
    return _COLLATOR[0].sort_key(text)


def _js_json(value: Any, parent: str | None = None) -> str:
    """maka's canonicalizeMainlineV1 then JSON.stringify: keys sorted (UTF-16), array-index keys first by value (a
    JavaScript object lists them so), `__proto__` dropped, arrays under `required`/`enum` in localeCompare order."""
    if isinstance(value, dict):
        keys = sorted((key for key in value if key != "__proto__"), key=lambda key: key.encode("utf-16-be", "surrogatepass"))
        index = [key for key in keys if key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 4294967295]
        keys = sorted(index, key=int) + [key for key in keys if key not in index]
        return "{" + ",".join(_js_string(key) + ":" + _js_json(value[key], key) for key in keys) + "}"
    if isinstance(value, list):
        texts = [_js_json(item) for item in value]
        if parent in ("required", "enum"):
            texts.sort(key=_collation_key)
        return "[" + ",".join(texts) + "]"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _js_number(value)
    return _js_string(value) if isinstance(value, str) else json.dumps(value)


def _js_string(text: str) -> str:
    """A string as JSON.stringify writes it: a lone surrogate escaped (\\udXXX), anything else as Python writes it."""
    return re.sub("[\ud800-\udfff]", lambda found: f"\\u{ord(found.group()):04x}", json.dumps(text, ensure_ascii=False))


def _js_number(value: float) -> str:
    """A number as JavaScript writes it: a double's shortest digits, plainly from 1e-6 up to 1e21, else with an
    exponent such as 1e-7 or 1e+21; NaN and the infinities (an integer past the doubles' range) as null."""
    try:
        number = float(value)
    except OverflowError:
        return "null"
    if number != number or number in (float("inf"), float("-inf")):
        return "null"
    if number == int(number) and abs(number) < 2**53:
        return str(int(number))
    sign, digits, exponent = ("-" if number < 0 else ""), *_shortest(abs(number))
    point = exponent + len(digits)  # how many of the digits stand before the decimal point
    if len(digits) <= point <= 21:
        return sign + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if point - 1 >= 0 else '-'}{abs(point - 1)}"


def _shortest(number: float) -> tuple[str, int]:
    """(digits, exponent) with digits * 10**exponent == number, the shortest digits that read back as it (repr's)."""
    mantissa, _, exponent = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    trailing = len(digits) - len(digits.rstrip("0"))
    return digits.rstrip("0"), int(exponent or 0) - len(fraction) + trailing


def _action(story: _Story | None, what: str, raw: dict[str, Any]) -> bool:
    """A dispatch or recovery fact for `story`'s operation (None: it names no call). True: it blocks."""
    if story is None:
        return True
    settled = story.status in ("succeeded", "failed")
    if what == "dispatch" and story.status in ("not_dispatched", "indeterminate") and not story.dispatched:
        if not _of_its_call(story, raw["actions"]["toolDispatch"]):
            story.corrupt()
            return True
        story.dispatched = True
        story.status = "indeterminate"
        return False
    if what == "reconcile" and story.status == "indeterminate":
        story.dispatched = True
        return False
    if what == "parked" and story.status == "indeterminate":
        story.status = "parked"
        return False
    if what == "completed" and settled:
        return False
    story.corrupt()
    return True


def _again(story: _Story, index: int, dropped: set[int], misnamed: bool = False) -> None:
    """A call or response out of place: it corrupts the operation and stands with it, unless it was corrupt (or
    is a response naming another tool than the call)."""
    if story.status == "corruption" or misnamed:
        story.corrupt()
        dropped.add(index)
    else:
        story.corrupt()
        story.standing.append(index)


def _response(story: _Story | None, index: int, row: Any, dropped: set[int]) -> bool:
    """A response; True: it blocks."""
    if story is None:
        dropped.add(index)
        return True
    if story.status in ("not_dispatched", "indeterminate"):
        if story.name != row.name:
            dropped.add(index)
            return True
        story.answer = index
        story.status = "failed" if row.failed else "succeeded"
        return False
    _again(story, index, dropped, misnamed=story.name != row.name)
    return True


def _replay(
    rows: Sequence[dict[str, Any]], read: Sequence[Any], committed: list[int], stories: dict[Any, _Story], dropped: set[int]
) -> tuple[tuple[str, ...], bool]:
    """(the replayed ids, whether a pair half hidden blocks): calls stand with their operation's answer."""
    kept: set[int] = set(dropped)
    for story in stories.values():
        if story.answer is None:
            kept.add(story.call)
        if story.answer is None or read[story.call].hidden or read[story.answer].hidden:
            kept.update(story.standing)  # they stand with the call: replayed only with a pair that is
    # A pair half hidden: its visible half is not replayed either, and it blocks.
    unpaired = {
        story.answer if read[story.call].hidden else story.call
        for story in stories.values() if story.answer is not None and read[story.call].hidden is not read[story.answer].hidden
    }
    replay = tuple(
        rows[index]["id"] for index in committed
        if index not in kept and index not in unpaired and not read[index].hidden
    )
    return replay, bool(unpaired)
