"""The walk's loop compiled for one table: what `walk.Walk` does with each event, for the events most ledgers
hold, in one interpreted loop whose source names each tool content class and attribute.

The generic loop (`Walk._walk`) reads a tool event through a lookup of its class and a function call, and looks
its step up by (state, event kind, names match). Compiled, the class is compared by identity, its attributes
are read in place, a call that opens a new operation takes a step known when compiling, and a result takes its
step from a dict keyed by the state alone: about 60% of the generic loop's time (37 against 63 microseconds for
200 events).

Only the common cases are compiled: a partial event; and, for an event with neither a status nor the terminal
flag's field, a call that opens an operation, a result that settles one without an anomaly, and a content kind
the walk does not read. Any other event (one that may be terminal, any after the terminal one, a repeated call
id, a result for no call or for another tool, an anomaly, a class first seen after compiling) is handed to the
generic loop, alone, after `Walk._find_terminal` looked at it, so the two cannot disagree on it. (The generic
walk looks for the terminal event in each piece before walking it; the compiled loop, as it comes to each
event that may be it.)

Only plain ASCII identifiers are compiled; a table naming anything else keeps the generic loop, as does a walk
that traces its steps or asks a state machine for them (`KindReads.step` not a dict). tests/test_walk_loop.py
holds the two loops equal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from .columns import compiled_source
from .walk_reads import OpenOperation

if TYPE_CHECKING:
    from .walk_reads import KindReads

Loop = Callable[[Any, Any, int], None]  # (a walk.Walk, events, index of the first) -> None; as Walk._walk

# Events walked by the generic loop (over all walks of a table) before the loop is compiled: compiling costs
# about what the compiled loop saves over 2,000 events, so a plan of a few hundred never compiles it.
COMPILE_AFTER = 2_000


def compiled_loop(reads: KindReads) -> Loop | None:
    """The loop for `reads.table`, reading the content classes `reads` has learned; None when the table names
    an attribute that is not a plain ASCII identifier (or is a keyword), or its steps are not a plain dict."""
    table = reads.table
    step = reads.step
    if type(step) is not dict or table.hidden is not None:  # (a hidden call's replayed result: the generic loop's)
        return None
    states = {state for state, _, _ in step}
    namespace: dict[str, Any] = {"OpenOperation": OpenOperation, "Raw": msgspec.Raw, "UNSET": msgspec.UNSET}
    namespace["SKIPPED"] = frozenset(cls for cls, read in reads.known.items() if read is None)
    branches: list[str] = []
    for number, (cls, read) in enumerate((cls, read) for cls, read in reads.known.items() if read is not None):
        spec = table.tool_contents[cls.KIND]  # type: ignore[attr-defined]  # (a class the walk reads has one)
        names = [name for name in (spec.call_id, spec.tool_name, spec.arguments, spec.error_flag) if name is not None]
        if not all(name.isascii() and name.isidentifier() for name in names):
            return None
        opens, _, kind_ok, kind_error = read
        namespace[f"Class{number}"] = cls
        branches.append(f"        {'if' if not branches else 'elif'} cls is Class{number}:")
        branches += _branch(number, spec.call_id, spec.tool_name, spec.arguments, spec.error_flag, opens)
        if opens:
            namespace[f"OPEN{number}"] = step.get((table.initial_state, kind_ok, True), (None, "no step"))
            if kind_error is not None:
                namespace[f"OPEN{number}_FAILED"] = step.get((table.initial_state, kind_error, True), (None, "no step"))
        else:
            namespace[f"STEPS{number}"] = _by_state(step, states, kind_ok)
            if kind_error is not None:
                namespace[f"STEPS{number}_FAILED"] = _by_state(step, states, kind_error)
    # A row an action event or a row check may test is the generic loop's too: it holds one of the fields they need.
    tested = [action.needs for action in table.action_kinds] + [check.needs for check in table.row_checks]
    if any(needs is None for needs in tested):
        return None
    unset = dict.fromkeys(["status", table.terminal_flag[0], *(name for needs in tested for name, _ in needs or ())])
    if not all(name.isascii() and name.isidentifier() for name in (table.partial_attribute, *unset)):
        return None
    lines = [
        "def loop(walk, events, first_index):",
        "    operations = walk.operations",
        "    find_operation = operations.get",
        "    storable = walk._storable",
        "    settled = walk._settled",
        "    not_replayed = walk.not_replayed",
        "    opened = walk._opened.append if walk.store is not None else None",
        "    hash = walk.call_id_hash",
        "    copy_arguments = walk.copy_arguments",
        "    terminal_index = walk.terminal_index",
        "    next_index = walk._next_index",
        "    index = first_index - 1",
        "    for event in events:",
        "        index += 1",
        f"        if event.{table.partial_attribute}:",
        "            not_replayed.append(index)",
        "            continue",
        f"        if index <= terminal_index and {' and '.join(f'event.{name} is UNSET' for name in unset)}:",
        "            content = event.content",
        "            cls = type(content)",
        *("    " + line for line in branches),
        f"            {'elif' if branches else 'if'} cls in SKIPPED:",
        "                continue",
        "        walk._next_index = next_index",  # anything else: the generic loop, for this event alone
        "        if walk.terminal_event_id is None:",
        "            walk._find_terminal((event,), index)",
        "        walk._walk((event,), index)",
        "        next_index = walk._next_index",
        "        terminal_index = walk.terminal_index",
        "    walk._next_index = next_index",
    ]
    loop: Loop | None = compiled_source("\n".join(lines) + "\n", namespace, "loop")
    return loop


def loop_for(reads: KindReads, events: int) -> Loop | None:
    """The compiled loop of `reads`' table once COMPILE_AFTER events were walked without it, counting `events`
    more; None before that, or when the table cannot have one (its walks keep the generic loop)."""
    loop = reads.loop
    if loop is None:
        reads.walked += events
        if reads.walked < COMPILE_AFTER:
            return None
        loop = reads.loop = compiled_loop(reads) or _GENERIC
    return None if loop is _GENERIC else loop


def _generic(walk: Any, events: Any, first_index: int) -> None:
    walk._walk(events, first_index)


_GENERIC: Loop = _generic  # what a table without a compiled loop keeps in `KindReads.loop`


def _branch(number: int, call_id: str, tool_name: str | None, arguments: str | None, error_flag: str | None, opens: bool) -> list[str]:
    """The statements for one tool content class; each common case ends in `continue`."""
    failed = f"content.{error_flag} is True" if error_flag is not None else "False"
    name = f"content.{tool_name}" if tool_name is not None else "None"
    if opens:
        lines = [
            f"    call_id = content.{call_id}",
            f"    target, anomaly = OPEN{number}_FAILED if {failed} else OPEN{number}" if error_flag is not None else f"    target, anomaly = OPEN{number}",
            "    if anomaly is None and find_operation(call_id) is None:",
            f"        args = content.{arguments}" if arguments is not None else "        args = None",
            "        if copy_arguments and type(args) is Raw:",
            "            args = args.copy()  # not a view into the chunk it was decoded from",
            f"        operations[call_id] = OpenOperation(target, {name} or '', args, index, event.id, next_index)",
            "        next_index += 1",
            "        if opened is not None:",
            "            opened(hash(call_id))",
            "        continue",
        ]
    else:
        lines = [
            f"    operation = find_operation(content.{call_id})",
            f"    if operation is not None{'' if tool_name is None else f' and operation.tool_name == {name}'}:",
            f"        failed = {failed}",
            f"        target, anomaly = (STEPS{number}_FAILED if failed else STEPS{number}).get(operation.state, (None, 'no step'))"
            if error_flag is not None
            else f"        target, anomaly = STEPS{number}.get(operation.state, (None, 'no step'))",
            "        if anomaly is None:",
            "            operation.state = target",
            "            if target in storable:",
            f"                settled.append(content.{call_id})",
            "            if operation.response_index >= 0:",
            "                not_replayed.append(operation.response_index)  # superseded: only the settling result pairs",
            "            operation.response_index = index",
            "            operation.response_event_id = event.id",
            "            operation.response_is_error = failed",
            "            continue",
        ]
    return ["        " + line for line in lines]


def _by_state(step: Mapping[tuple[str, str, bool], tuple[str, str | None]], states: set[str], kind: str) -> dict[str, tuple[str, str | None]]:
    """The steps of one event kind whose result names the call's tool, by the state it is taken from."""
    return {state: step[(state, kind, True)] for state in sorted(states) if (state, kind, True) in step}
