"""The contract language's decision over a run's committed rows: each row classed, each item it names moved by the first
entry that applies, then the items' end states, the diagnostics, the reasons and the replay. Pure: rows in (JSON
objects, already checked against the row model), a decision out, or SequenceCorrupt when an entry says the rows
are corrupt.

`module` is a contract's generated language.py; its functions are the contract's expressions, compiled ahead of
time by the generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

import msgspec

from ..errors import ExpressionFailed, ResumeContractError
from .language_rows import ABSENT, RowMismatch, at, id_key, kind_of, ordered, read_row, row_ids


class SequenceCorrupt(ResumeContractError):
    """The committed rows are a sequence the contract declares corrupt (an entry's `corrupt`): no decision."""

    def __init__(self, index: int, message: str) -> None:
        self.index = index
        self.message = message
        super().__init__(message)


class ItemReport(msgspec.Struct, frozen=True):
    item: str
    key: Any
    status: str
    event_id: Any = msgspec.field(name="eventId")  # the row that opened it (its id, or its position)
    report: dict[str, Any] = msgspec.field(default_factory=dict)  # what the contract says of it (`report:`)


class DiagnosticReport(msgspec.Struct, frozen=True):
    code: str
    reason: str
    message: str
    event_id: Any = msgspec.field(name="eventId")  # None: the prefix as a whole
    item: str | None = None
    key: Any = None


class LanguageDecision(msgspec.Struct, frozen=True):
    decision: str
    proceeds: bool
    items: list[ItemReport]
    diagnostics: list[DiagnosticReport]
    reasons: list[str] = msgspec.field(name="rejectionReasons")
    replay: list[Any] = msgspec.field(name="replayEventIds")
    high_water: int = msgspec.field(name="highWater")
    # The items whose end state raised a diagnostic (an effect not known to have happened: settle each before a
    # replay), and the committed rows the replay leaves out (never shown to the model again)
    to_verify: list[ItemReport] = msgspec.field(default_factory=list, name="toVerify")
    withheld: list[Any] = msgspec.field(default_factory=list, name="withheldEventIds")


def decide(module: ModuleType, rows: Sequence[dict[str, Any]], expected_high_water: int | None = None) -> LanguageDecision:
    """The decision over `rows`, a run's committed prefix in order; with `expected_high_water` (the contract
    declaring an offset check), its diagnostic first when the rows number otherwise. Raises SequenceCorrupt,
    ExpressionFailed."""
    walk = _Walk(module)
    if expected_high_water is not None and module.OFFSET_MISMATCH is not None and expected_high_water != len(rows):
        reason, message = module.DIAGNOSTICS[module.OFFSET_MISMATCH]
        walk.anomalies.append(DiagnosticReport(module.OFFSET_MISMATCH, reason, f"{message} (expected {expected_high_water}, found {len(rows)})", None))
    ids = row_ids(module, rows)
    kinds = [kind_of(module, row) for row in rows]
    _sequence(module, rows, ids, kinds)
    partial = module.PARTIAL
    for index, row in enumerate(rows):
        if partial is None or row.get(partial) is not True:
            walk.row(index, row, ids[index], kinds[index][0])  # type: ignore[index]  # (a row of the model has a kind)
    decision = _decision(module, rows, ids, walk.states, walk.anomalies)
    return _checked(module, rows, walk.states, decision) if module.CHECKS else decision


def _sequence(module: ModuleType, rows: Sequence[dict[str, Any]], ids: list[Any], kinds: list[Any]) -> None:
    """The row model's rules over the sequence: ids that must increase (`rows.order`), and every reference names an
    earlier row of the run (of the kinds it may name). Raises SequenceCorrupt at the first row that breaks one."""
    earlier: dict[Any, str] = {}
    previous = ABSENT
    for index, row in enumerate(rows):
        if module.ORDER is not None:
            value = at(row, module.ORDER[0])
            if previous is not ABSENT and not ordered(previous, value):
                raise SequenceCorrupt(index, f"{module.ORDER[1]} ({'.'.join(module.ORDER[0])} {value!r} after {previous!r})")
            previous = value
        for path, to, allowed in kinds[index][4] if kinds[index] is not None else ():
            named = at(row, path)
            if named is ABSENT or named is None:
                continue
            if to == "position":
                target = kinds[named - 1][0] if named.__class__ is int and 1 <= named <= index else None
            else:
                target = earlier.get(id_key(named))
            if target is None or (allowed and target not in allowed):
                what = "no earlier row" if target is None else f"a {target} row, not a row of {', '.join(allowed)}"
                raise SequenceCorrupt(index, f"dangling_reference: {'.'.join(path)} names {to} {named!r}, {what}")
        if kinds[index] is not None:
            earlier.setdefault(id_key(ids[index]), kinds[index][0])


class _Walk:
    """The items' states as the rows move them."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.tests = [(name, test) for name, kinds, test in module.CLASSES if test is not None]
        self.kind_classes: dict[str, set[str]] = {}
        for name, kinds, _ in module.CLASSES:
            for kind in kinds or ():
                self.kind_classes.setdefault(kind, set()).add(name)
        self.wanted = [frozenset(entry[0] for entry in item[4]) for item in module.ITEMS]
        self.states: dict[tuple[int, Any], list[Any]] = {}  # (item, key) -> [state, index of the row that opened it, report]
        self.anomalies: list[DiagnosticReport] = []

    def row(self, index: int, row: dict[str, Any], event_id: Any, kind: str) -> None:
        classes = set(self.kind_classes.get(kind, ()))
        for name, test in self.tests:
            if _run(test, row, f"class {name}", event_id):
                classes.add(name)
        for group, outcome, value in self.module.EXCLUSIVE:
            both = [name for name in group if name in classes]
            if len(both) > 1 and outcome == "corrupt":
                raise SequenceCorrupt(index, f"{value} (a row of the classes {', '.join(both)}, which exclude each other)")
            if len(both) > 1:
                reason, message = self.module.DIAGNOSTICS[value]
                self.anomalies.append(DiagnosticReport(value, reason, message, event_id))
        for number, item in enumerate(self.module.ITEMS):
            if classes & self.wanted[number]:
                self.move(number, item, classes, index, row, event_id)

    def move(self, number: int, item: tuple[Any, ...], classes: set[str], index: int, row: dict[str, Any], event_id: Any) -> None:
        """The item's entry that applies to the row, applied (every row of the item's classes has one: generate
        proves it)."""
        name, key_of, initial, _, entries, report = item
        if key_of.__class__ is dict:  # (a key per class of row: the first the row is of)
            key_of = next(function for row_class, function in key_of.items() if row_class in classes)
        key = _run(key_of, row, f"item {name}'s key", event_id)
        if key.__class__ not in (str, int, float):  # (a json field's value: 1 and true are one dict key; a map none)
            raise ExpressionFailed(f"item {name}'s key, at event {event_id!r}: a key is a string or a number, not {_kind_of(key)}")
        held = self.states.get((number, key))
        state = initial if held is None else held[0]
        for row_class, sources, when, when_text, outcome, value in entries:
            if row_class not in classes or state not in sources:
                continue
            if when is not None and not _run(when, row, f"item {name}: `{when_text}`", event_id):
                continue
            if outcome == "corrupt":
                raise SequenceCorrupt(index, f"{value} (item {name}, key {key!r}, in state {state}, a row of class {row_class})")
            if outcome == "anomaly":
                reason, message = self.module.DIAGNOSTICS[value]
                self.anomalies.append(DiagnosticReport(value, reason, message, event_id, name, key))
            elif held is not None:
                held[0] = value
            elif value != initial:
                said = {field: _said(function, row) for field, function in report}
                self.states[(number, key)] = [value, index, said]
            return


class RowInvalid(ResumeContractError):
    """A row that is no row of the contract's model (`decide_rows`)."""

    def __init__(self, index: int, message: str) -> None:
        self.index = index
        self.message = message
        super().__init__(message)


def decide_rows(module: ModuleType, rows: Sequence[dict[str, Any]], expected_high_water: int | None = None) -> LanguageDecision:
    """`decide` over rows held in memory, each first checked against the model, as the reader checks a ledger's.
    Raises RowInvalid, SequenceCorrupt, ExpressionFailed."""
    read = []
    for index, row in enumerate(rows):
        try:
            read.append(read_row(module, row)[1])
        except RowMismatch as mismatch:
            raise RowInvalid(index, str(mismatch)) from None
    return decide(module, read, expected_high_water)


def outcome(decision: LanguageDecision) -> dict[str, Any]:
    """A decision as a scenario states it: its word, its reasons, its items as `item/key=status`."""
    return {
        "decision": decision.decision,
        "reasons": list(decision.reasons),
        "items": [f"{item.item}/{item.key}={item.status}" for item in decision.items],
    }


def _said(function: Any, row: dict[str, Any]) -> Any:
    """A report's value of the row that opened an item; null where the expression cannot read it (a report informs
    the person on call: it never stops a decision)."""
    try:
        return function(row)
    except ExpressionFailed:
        return None


def _kind_of(value: Any) -> str:
    return "null" if value is None else "a boolean" if value.__class__ is bool else "a list" if value.__class__ is list else "a map" if value.__class__ is dict else type(value).__name__


def _run(function: Any, row: dict[str, Any], what: str, event_id: Any) -> Any:
    try:
        return function(row)
    except ExpressionFailed as failed:
        raise ExpressionFailed(f"{what}, at event {event_id!r}: {failed}") from None


def _checked(module: ModuleType, rows: Sequence[dict[str, Any]], states: dict[tuple[int, Any], list[Any]], decision: LanguageDecision) -> LanguageDecision:
    """The decision with the diagnostics of the contract's checks over the whole prefix (`decision.checks`) added."""
    partial = module.PARTIAL
    events = [row for row in rows if partial is None or row.get(partial) is not True]
    items: dict[str, list[dict[str, Any]]] = {item[0]: [] for item in module.ITEMS}
    for (number, key), (state, _, _) in sorted(states.items(), key=lambda pair: pair[1][1]):
        item = module.ITEMS[number]
        items[item[0]].append({"key": key, "state": state, "status": item[3][state][0]})
    raised = []
    for test, code, text in module.CHECKS:
        try:
            holds = test(events, items)
        except ExpressionFailed as failed:
            raise ExpressionFailed(f"the check `{text}`: {failed}") from None
        if holds:
            reason, message = module.DIAGNOSTICS[code]
            raised.append(DiagnosticReport(code, reason, message, None))
    if not raised:
        return decision
    diagnostics = decision.diagnostics + raised
    reasons = [reason for reason, _ in module.REASONS if reason in {diagnostic.reason for diagnostic in diagnostics}]
    return msgspec.structs.replace(decision, decision=module.STOP, proceeds=False, diagnostics=diagnostics, reasons=reasons)


def _decision(module: ModuleType, rows: Sequence[dict[str, Any]], ids: list[Any], states: dict[tuple[int, Any], list[Any]], anomalies: list[DiagnosticReport]) -> LanguageDecision:
    items: list[ItemReport] = []
    to_verify: list[ItemReport] = []
    at_end: list[DiagnosticReport] = []
    hidden: set[int] = set()
    for (number, key), (state, opened, said) in sorted(states.items(), key=lambda pair: pair[1][1]):
        item = module.ITEMS[number]
        status, diagnostic, replayed = item[3][state]
        opener = ids[opened]
        if status is not None:
            items.append(ItemReport(item[0], key, status, opener, said))
        if diagnostic is not None:
            reason, message = module.DIAGNOSTICS[diagnostic]
            at_end.append(DiagnosticReport(diagnostic, reason, message, opener, item[0], key))
            to_verify.append(ItemReport(item[0], key, status or state, opener, said))
        if not replayed:
            hidden.add(opened)
    diagnostics = anomalies + at_end
    raised = {diagnostic.reason for diagnostic in diagnostics}
    reasons = [reason for reason, _ in module.REASONS if reason in raised]
    partial, replay_test = module.PARTIAL, module.REPLAY
    replayed = {
        index
        for index, row in enumerate(rows)
        if index not in hidden
        and not (partial is not None and row.get(partial) is True)
        and (replay_test is None or _run(replay_test, row, "replay", ids[index]))
    }
    replay = [ids[index] for index in range(len(rows)) if index in replayed]
    withheld = [ids[index] for index in range(len(rows)) if index not in replayed]
    return LanguageDecision(module.STOP if reasons else module.PROCEED, not reasons, items, diagnostics, reasons, replay, len(rows), to_verify, withheld)
