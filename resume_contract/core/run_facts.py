"""What a contract's expressions read of a run: its first event (as JSON), the facts read from it, and the table
those facts make (an event kind split off by a test of the facts is the kind of its content in this run only).

Read once per run, before its first event is walked: a contract without expressions never comes here.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from ..errors import ExpressionFailed
from .table import ProjectorTable
from .wire import as_json


class RunView(NamedTuple):
    table: ProjectorTable  # the contract's table as this run's facts resolve it
    first: Any  # the run's first event, as JSON
    fact: dict[str, Any]  # the run's facts, by name


def _holds(kind: str, guard: Any, fact: dict[str, Any]) -> bool:
    try:
        return bool(guard(fact))
    except ExpressionFailed as failed:
        raise ExpressionFailed(f"the `when` of event kind '{kind}': {failed}") from None


# Tables resolved for a valuation of the kind guards, by (the table's identity, the valuation): few per contract.
_RESOLVED: dict[tuple[int, tuple[bool, ...]], tuple[ProjectorTable, ProjectorTable]] = {}


def for_run(table: ProjectorTable, first_event: Any) -> RunView:
    """The view of the run whose first event (partial or not) is `first_event`."""
    first = as_json(first_event)
    fact = {}
    for name, function in table.facts.items():
        try:
            fact[name] = function(first)
        except ExpressionFailed as failed:
            raise ExpressionFailed(f"fact '{name}', of the run's first event {first_event.id!r}: {failed}") from None
    if not table.kind_guards:
        return RunView(table, first, fact)
    valuation = tuple(_holds(kind, guard, fact) for _, kind, guard in table.kind_guards)
    key = (id(table), valuation)
    kept = _RESOLVED.get(key)
    if kept is None or kept[0] is not table:
        kinds = dict(table.event_kinds)
        for (shape, kind, _), holds in reversed(tuple(zip(table.kind_guards, valuation))):
            if holds:
                kinds[shape] = kind  # (in reverse: the first kind whose test holds is the one left)
        if len(_RESOLVED) >= 64:
            _RESOLVED.clear()
        kept = _RESOLVED[key] = (table, msgspec.structs.replace(table, event_kinds=kinds, kind_guards=()))
    return RunView(kept[1], first, fact)
