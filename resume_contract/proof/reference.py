"""The plan computed by the generated python-statemachine class itself: slow, for debugging and as a reference.

`project()` takes its transitions from a mapping; here that mapping asks a `ToolOperationMachine`, started in
the operation's current state, to take each step. Everything else (the walk, the assembly) is shared, so a
difference between the two plans can only come from the table and the class disagreeing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgspec

from ..contract import Contract, active
from ..core.plan import ResumePlan
from ..core.project import project
from ..core.table import ProjectorTable

_CALL_TOOL = "call_tool"
_OTHER_TOOL = "other_tool"


class MachineSteps(Mapping[tuple[str, str, bool], tuple[str, Any]]):
    """(state, event kind, names match) -> (next state, anomaly), each answer computed by the machine class.

    With `memoize`, each distinct step asks the class once: the machine is started afresh in the given state
    for every step, so a step's answer cannot depend on anything else, and the cache changes no answer.
    """

    def __init__(self, contract: Contract, memoize: bool = False) -> None:
        self._machine = contract.machine_class()
        self._keys = contract.table.step
        self._cache: dict[tuple[str, str, bool], tuple[str, Any]] | None = {} if memoize else None

    def __getitem__(self, key: tuple[str, str, bool]) -> tuple[str, Any]:
        if self._cache is not None:
            if key not in self._cache:
                self._cache[key] = self._ask(key)
            return self._cache[key]
        return self._ask(key)

    def _ask(self, key: tuple[str, str, bool]) -> tuple[str, Any]:
        state, kind, names_match = key
        machine = self._machine(start_value=state, call_tool_name=_CALL_TOOL)
        machine.send(kind, tool_name=_CALL_TOOL if names_match else _OTHER_TOOL)
        (current,) = machine.configuration
        raised = machine.raised
        return current.id, (None if not raised else raised[0] if len(raised) == 1 else tuple(raised))

    def __iter__(self) -> Iterator[tuple[str, str, bool]]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def build_resume_plan_with_machine(
    events: Sequence[Any],
    expected_high_water: int | None = None,
    *,
    memoize: bool = False,
    rows: Sequence[msgspec.Raw] | None = None,
    contract: Contract | None = None,
) -> ResumePlan:
    """The same plan as `build_resume_plan`, with every transition taken by python-statemachine."""
    return project(events, _machine_table(contract or active(), memoize), expected_high_water, rows=rows)


# Per contract, its table with every step asked of the machine class: a memoized one keeps its answers for the
# life of the process (verify plans millions of ledgers with it).
_MACHINE_TABLES: dict[tuple[int, bool], tuple[Contract, ProjectorTable]] = {}


def _machine_table(contract: Contract, memoize: bool) -> ProjectorTable:
    key = (id(contract), memoize)
    cached = _MACHINE_TABLES.get(key)
    if cached is None or cached[0] is not contract:
        cached = _MACHINE_TABLES[key] = (contract, msgspec.structs.replace(contract.table, step=MachineSteps(contract, memoize=memoize)))
    return cached[1]
