"""What a contract's expressions read of a run: its first event (as JSON), the facts read from it, and the table
those facts make (an event kind split off by a test of the facts is the kind of its content in this run only).

Read once per run, before its first event is walked: a contract without expressions never comes here.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from .table import ProjectorTable
from .wire import as_json


class RunView(NamedTuple):
    table: ProjectorTable  # the contract's table as this run's facts resolve it
    first: Any  # the run's first event, as JSON
    fact: dict[str, Any]  # the run's facts, by name


# Tables resolved for a valuation of the kind guards, by (the table's identity, the valuation): few per contract.
_RESOLVED: dict[tuple[int, tuple[bool, ...]], tuple[ProjectorTable, ProjectorTable]] = {}


def for_run(table: ProjectorTable, first_event: Any) -> RunView:
    """The view of the run whose first event (partial or not) is `first_event`."""
    first = as_json(first_event)
    fact = {name: function(first) for name, function in table.facts.items()}
    if not table.kind_guards:
        return RunView(table, first, fact)
    valuation = tuple(bool(guard(fact)) for _, _, guard in table.kind_guards)
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
