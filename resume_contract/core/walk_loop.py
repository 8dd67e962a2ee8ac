"""What the walk's loop specialised for a contract needs at run time, as data.

The generator writes that loop into generated/ (`projector_table.walk_loop`, generator/render/walk_loop.py): one
interpreted loop whose source names each tool content class and attribute, reviewed and drift-checked like the
rest of generated/; nothing is compiled at run time. It takes the common cases (a partial event; for an event with
neither a status, the terminal flag's field nor a field a test of the contract needs: a call that opens an
operation, a result that settles one without an anomaly, a content kind the walk does not read) and hands any
other event over alone (`walk_one`): to `walk_row` when it holds no content (an action event), else to the generic
loop (`Walk._walk`). A run's facts may choose its event kinds (a kind guard), so the steps it takes are read here
from the run's own table, once per table (`loop_steps`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from .walk_actions import walk_row
from .walk_reads import TRUE
from .wire import holds_any

if TYPE_CHECKING:
    from .walk_reads import KindReads

NO_STEP = (None, "no step")  # a step the table lacks: the loop hands the event to the generic loop


def loop_steps(reads: KindReads, kinds: tuple[str, ...]) -> tuple[tuple[Any, Any], ...]:
    """For each content kind of `kinds` (in order), the steps the generated loop takes, from `reads.table`: a kind
    that opens an operation, (the step of a new call, of a new failed call); a result, (its steps by the state it
    is taken from, its failed steps by state). Made once per table."""
    cached = reads.loop_steps.get(kinds)
    if cached is not None:
        return cached
    table, step = reads.table, reads.step
    states = sorted({state for state, _, _ in step})
    made: list[tuple[Any, Any]] = []
    for kind in kinds:
        read = table.tool_contents[kind]
        ok, failed = table.event_kinds[(kind, False)], table.event_kinds.get((kind, True))
        if read.opens:
            made.append((step.get((table.initial_state, ok, True), NO_STEP), step.get((table.initial_state, failed, True), NO_STEP) if failed else None))
        else:
            made.append((_by_state(step, states, ok), _by_state(step, states, failed) if failed else None))
    reads.loop_steps[kinds] = result = tuple(made)
    return result


def _by_state(step: Mapping[tuple[str, str, bool], tuple[str, str | None]], states: list[str], kind: str) -> dict[str, tuple[str, str | None]]:
    """The steps of one event kind whose result names the call's tool, by the state it is taken from."""
    return {state: step[(state, kind, True)] for state in states if (state, kind, True) in step}


def walk_one(walk: Any, event: Any, index: int) -> None:
    """`walk._walk((event,), index)` (`walk`: a walk.Walk, which imports the generated loop's module), for an event
    the generated loop hands over, once its terminal event is noted if it is the first (`Walk._find_terminal` of one
    event, read here at once): a committed row without content that the hidden test cannot hold for (an action
    event, a marker) is `walk_row`'s alone, without the generic loop's set-up (its columns, its tested and hidden
    rows); any other row is the generic loop's."""
    table = walk.table
    if walk.terminal_event_id is None and not getattr(event, table.partial_attribute):
        flags = getattr(event, table.terminal_flag[0])
        if event.status in table.terminal_statuses or (flags and flags.get(table.terminal_flag[1]) == TRUE):
            walk.terminal_event_id, walk.terminal_index = event.id, index
    hidden = table.hidden
    if (
        event.content is UNSET and not getattr(event, table.partial_attribute) and not (walk.flagged and index in walk.flagged)
        and (hidden is None or (hidden.needs is not None and not holds_any(event, hidden.needs)))
    ):
        tested = table.tested_fields
        if index > walk.terminal_index or tested is None or any(getattr(event, name) is not UNSET for name in tested):
            walk_row(walk, event, index)
        return
    walk._walk((event,), index)
