"""The walk's tests of a row written in the contract's expressions: which action event a row is, and which row
checks it fails. A row is read as JSON (`wire.as_json`) only when it holds a field its test needs, so a ledger
of rows no test can match costs an attribute read a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from ..errors import DUPLICATE_EVENT_ID, FOREIGN_ROW, ExpressionFailed
from .columns import column
from .plan import Diagnostic
from .table import anomaly_codes
from .walk_reads import NO_FIELDS_READ
from .wire import as_json, free_json, holds_any, kept_json

if TYPE_CHECKING:
    from .run_facts import RunView
    from .table import ActionKind, ProjectorTable, RowCheck
    from .walk_reads import OpenOperation


def action_of(kinds: Sequence[ActionKind], event: Any, run: RunView | None, row: Any = None) -> tuple[ActionKind, str, Any] | None:
    """(the first action kind `event` is, the operation's call id, the row as JSON), or None. A key that is not a
    string names no operation: the row is not that kind. `row`: the event as JSON, if it was read already."""
    if run is None:
        return None
    for action in kinds:
        if not holds_any(event, action.needs):
            continue
        if row is None:
            row = as_json(event)
        try:
            if action.when(row, run.first, run.fact):
                key = action.key(row, run.first, run.fact)
                if type(key) is str:
                    return action, key, row
        except ExpressionFailed as failed:
            raise ExpressionFailed(f"event kind '{action.kind}', at event {event.id!r}: {failed}") from None
    return None


def against_call(
    action: ActionKind, event: Any, operation: OpenOperation, call_id: str, run: RunView | None, row: Any = None,
) -> list[tuple[str, str | None]]:
    """(code, the event id it names) of each of `action`'s checks of its operation that `event` fails, in order. The
    call is what the walk recorded of it: its id, tool name and arguments (as JSON); the response, the row of the
    result that settled the operation (None while none has: a check raised at it is then not judged)."""
    if run is None:
        return []
    args = operation.args  # (a Raw, a dict or list of Raws, or UNSET: read as JSON, absent as null)
    call = {"id": call_id, "name": operation.tool_name, "args": None if args is UNSET else msgspec.json.decode(msgspec.json.encode(args))}
    if row is None:
        row = as_json(event)
    answer = operation.response_event  # (the event; or the JSON text kept of it, once its piece was let go of)
    response = None if answer is None else free_json(answer) if answer.__class__ is msgspec.Raw else as_json(answer)
    found: list[tuple[str, str | None]] = []
    for code, when, at in action.against_call:
        if at == "response" and answer is None:
            continue
        try:
            if when(row, call, response, run.first, run.fact):
                found.append((code, event.id if at == "row" else operation.response_event_id))
        except ExpressionFailed as failed:
            raise ExpressionFailed(f"event kind '{action.kind}''s check raising {code}, at event {event.id!r}: {failed}") from None
    return found


def checked(checks: Sequence[RowCheck], event: Any, run: RunView | None, what: str = "the row check raising {code}") -> list[str]:
    """The codes of the row checks `event` fails, in the spec's order (`what` names a check in an error)."""
    return [check.code for check in failing(checks, event, run, what)]


def failing(checks: Sequence[RowCheck], event: Any, run: RunView | None, what: str = "the row check raising {code}") -> list[RowCheck]:
    """The row checks `event` fails, in the spec's order (`what` names a check in an error)."""
    return failing_read(checks, event, run, what)[0]


def failing_read(checks: Sequence[RowCheck], event: Any, run: RunView | None, what: str = "the row check raising {code}") -> tuple[list[RowCheck], Any]:
    """`failing`, and the row as JSON if a check read it (else None)."""
    row = None
    if run is None:
        return [], row
    failed_checks = []
    for check in checks:
        if holds_any(event, check.needs):
            if row is None:
                row = as_json(event)
            try:
                if check.when(row, run.first, run.fact):
                    failed_checks.append(check)
            except ExpressionFailed as failed:
                raise ExpressionFailed(f"{what.format(code=check.code)}, at event {event.id!r}: {failed}") from None
    return failed_checks, row


def rows_tested(names: tuple[str, ...] | None, events: Sequence[Any], first_index: int) -> frozenset[int]:
    """The indexes of `events` (the first at `first_index`) holding one of the attributes `names` (a test of the
    contract may judge those rows; `ProjectorTable.tested_fields`), found a column at a time (from C, where most
    rows hold none); all of them when `names` is None."""
    if not names:
        return frozenset(range(first_index, first_index + len(events))) if names is None else _NONE
    if len(events) == 1:  # (the generated loop hands the generic one its uncommon events one at a time)
        event = events[0]
        return frozenset((first_index,)) if any(getattr(event, name) is not UNSET for name in names) else _NONE
    found: set[int] = set()
    for name in names:
        held = column(name)(events)
        if held.count(UNSET) != len(held):
            found.update(first_index + index for index, value in enumerate(held) if value is not UNSET)
    return frozenset(found)


_NONE: frozenset[int] = frozenset()


def rows_hidden(walk: Any, events: Sequence[Any], first_index: int, partials: Sequence[Any]) -> frozenset[int]:
    """The indexes of the committed rows among `events` that the contract's hidden test holds for; each is left
    out of the replay here (whatever else it is)."""
    hidden = walk.table.hidden
    if hidden is None:
        return frozenset()
    names = None if hidden.needs is None else tuple(dict.fromkeys(name for name, _ in hidden.needs))
    found = frozenset(
        index for index in rows_tested(names, events, first_index)
        if not partials[index - first_index] and checked((hidden,), events[index - first_index], walk.run, "spec/projector.yaml's replay.hidden")
    )
    walk.not_replayed.extend(sorted(found))
    return found


def flag(walk: Any, kinds: dict[int, str]) -> None:
    """Flag rows the reader found (ledger index -> corruption kind) as the contract's diagnostics."""
    codes = {DUPLICATE_EVENT_ID: walk.table.duplicate_id_diagnostic, FOREIGN_ROW: walk.table.foreign_row_diagnostic}
    for index, kind in kinds.items():
        code = codes.get(kind)
        if code is None:
            raise ValueError(f"row {index}: {kind} is not a diagnostic of this contract")
        walk.flagged.setdefault(index, code)


def flagged_row(walk: Any, event: Any, index: int) -> None:
    """A row the contract diagnoses rather than the reader refusing it (`flag`): its diagnostic; it takes no part in
    tool state, and a call or result (pairing with nothing) is not replayed, any other row as it stands."""
    walk.diagnostics.append(diagnostic(walk.table, walk.flagged[index], event_id=event.id))
    if getattr(event.content, "KIND", None) in walk.table.tool_contents:
        walk.not_replayed.append(index)


def flag_rows(walk: Any, events: Sequence[Any]) -> None:
    """Flag, among a whole prefix held in memory, the rows repeating an earlier row's event id and those of
    another run than the first row's, when the contract diagnoses them (the reader refused them otherwise)."""
    table = walk.table
    if table.duplicate_id_diagnostic is not None:
        seen: set[str] = set()
        for index, event in enumerate(events):
            if event.id in seen:
                walk.flagged.setdefault(index, table.duplicate_id_diagnostic)
            seen.add(event.id)
    if table.foreign_row_diagnostic is not None and events:
        run = (events[0].session_id, events[0].run_id)
        for index, event in enumerate(events):
            if (event.session_id, event.run_id) != run:
                walk.flagged.setdefault(index, table.foreign_row_diagnostic)


def walk_row(walk: Any, event: Any, index: int) -> bool:
    """What the walk (`walk`, a `walk.Walk`: not named as a type, walk imports this module) says of a committed row
    before it reads its tool content: after the terminal event, the row checks it fails; True when the row was
    walked here, as an action event (its content being no tool kind). An expression that cannot judge the row
    raises ExpressionFailed, naming it and the event: nothing is decided."""
    table = walk.table
    if index > walk.terminal_index and table.after_terminal_diagnostic is not None:
        walk.diagnostics.append(diagnostic(table, table.after_terminal_diagnostic, event_id=event.id))
    row = None  # (the row as JSON, read once, by the first test that needs it)
    if table.row_checks:
        failed, row = failing_read(table.row_checks, event, walk.run)
        walk.diagnostics += [diagnostic(table, check.code, event_id=event.id) for check in failed]
        if any(check.skip for check in failed):
            walk.not_replayed.append(index)  # no part in tool state, nor in the replay
            return True
    if not table.action_kinds or table.tool_contents.get(getattr(event.content, "KIND", None)) is not None:
        return False
    action = action_of(table.action_kinds, event, walk.run, row)
    if action is None:
        return False
    kind, call_id = action[0].kind, action[1]
    # An action event takes its operation's step, neither creating one (the spec's checks hold that) nor settling it.
    operation = walk.operations.get(call_id)
    state = table.initial_state if operation is None else operation.state
    if walk.trace is not None:
        walk.trace.append((state, kind, True))
    target, anomaly = walk.reads.step[(state, kind, True)]
    if anomaly is not None:  # diagnosed; but replayed as it stands, being no tool content
        walk.diagnostics += [diagnostic(table, code, event_id=event.id, tool_call_id=call_id) for code in anomaly_codes(anomaly)]
    if operation is not None and action[0].against_call:
        conflicts = against_call(action[0], event, operation, call_id, walk.run, action[2])
        if conflicts:  # the row disagrees with its operation: raised, and a rule moving it on moves it to conflict
            walk.diagnostics += [diagnostic(table, code, event_id=event_id, tool_call_id=call_id) for code, event_id in conflicts]
            if anomaly is None:
                target = action[0].conflict_to
    if operation is None:
        walk._unopened.append(hash(call_id))  # (named with nothing open: see Walk.suspects)
    elif anomaly is None or target != state:  # (an anomaly may move the state too)
        operation.state = target
        if target in walk._storable:
            walk._settled.append(call_id)
    return True


def anomaly_at(
    walk: Any, index: int, anomaly: Any, event_id: str, call_id: str, tool_name: str | None, operation: OpenOperation | None,
    names_match: bool, target: str | None = None,
) -> None:
    """The event at `index` is an anomaly (`anomaly`: its diagnostic, or a tuple of them), diagnosed. `operation` is
    its call id's open operation, if any; when the result names another tool than its call, the detail says which.
    It is not replayed, unless its rule moves the operation to `target` too: then it stands with the operation's
    call, replayed once the operation has its response."""
    if operation is None:
        walk._unopened.append(walk.call_id_hash(call_id))  # (the hash walk.py names, as its loops record it)
    moves = operation is not None and target is not None and target != operation.state
    if moves:
        operation.state = target  # type: ignore[union-attr]
        if target in walk._storable:
            walk._settled.append(call_id)
    if moves and names_match:  # replayed with the call, once it has its response (a result naming another tool: never)
        operation.standing = [*(operation.standing or ()), index]  # type: ignore[union-attr]
    else:
        walk.not_replayed.append(index)
    misnamed = None if names_match else operation
    detail = None
    if misnamed is not None:
        detail = {"callToolName": misnamed.tool_name, "responseToolName": tool_name}
    walk.diagnostics += [
        diagnostic(walk.table, code, event_id=event_id, tool_call_id=call_id, tool_name=tool_name, detail=detail) for code in anomaly_codes(anomaly)
    ]


def answered(walk: Any, operation: OpenOperation, call_id: str, index: int, event: Any, is_error: bool, hidden: bool) -> None:
    """The result at `index` settled `operation` (a step without an anomaly). Only the settling result pairs with
    the call: one before it is superseded, not replayed. When one of the pair is hidden (`ProjectorTable.hidden`),
    the visible one is not replayed either (the replay would show half a pair), and the contract's code, if any,
    is raised for it after everything else."""
    if operation.call_hidden is not hidden:
        visible, visible_id = (index, event.id) if operation.call_hidden else (operation.call_index, operation.call_event_id)
        walk.not_replayed.append(visible)
        code = walk.table.hidden.code
        if code:
            walk.replay_diagnostics.append(diagnostic(walk.table, code, event_id=visible_id, tool_call_id=call_id, tool_name=operation.tool_name))
    if operation.response_index >= 0:
        walk.not_replayed.append(operation.response_index)
    operation.response_index = index
    operation.response_event_id = event.id
    table = walk.table
    if table.keeps_results:
        fields = table.result_fields
        held = fields is None or any(getattr(event, attribute) is not UNSET for attribute, _ in fields)
        operation.response_event = event if held else NO_FIELDS_READ
        if walk.store is not None and operation.state not in walk._storable:  # (a settled one: `Walk._store_settled`)
            walk._answered.append(operation)
    operation.response_is_error = is_error
    operation.response_hidden = hidden



def let_go_of_results(table: ProjectorTable, operations: list[OpenOperation]) -> None:
    """Each result kept for a later action event's check (`OpenOperation.response_event`) by an operation the walk
    still holds after a piece, kept as the JSON text of the fields the checks read alone (`ProjectorTable.result_fields`,
    about a hundred bytes): the event's free JSON is a view into its chunk, which it would keep."""
    fields = table.result_fields
    for operation in operations:
        event = operation.response_event
        if event is not None and event.__class__ is not msgspec.Raw:
            operation.response_event = kept_json(event, fields)
    operations.clear()


def diagnostic(
    table: ProjectorTable, code: str, *, event_id: str | None = None, tool_call_id: str | None = None,
    tool_name: str | None = None, detail: dict[str, Any] | None = None,
) -> Diagnostic:
    return Diagnostic(
        code=code, message=table.diagnostics[code][1], event_id=event_id, tool_call_id=tool_call_id, tool_name=tool_name, detail=detail
    )

