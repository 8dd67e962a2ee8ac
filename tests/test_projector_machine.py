"""The generated python-statemachine class and the hot-path table say the same thing."""

from __future__ import annotations

import pytest
import spec_names as names
from resume_contract_generated.projector_machine import ToolOperationMachine
from resume_contract_generated.projector_table import INITIAL_STATE, STATES, STEP
from statemachine import StateChart, StateMachine
from statemachine.exceptions import TransitionNotAllowed


def _step_table_read_from_class() -> dict[tuple[str, str, bool], tuple[str, str | tuple[str, ...] | None]]:
    table: dict[tuple[str, str, bool], tuple[str, str | tuple[str, ...] | None]] = {}
    for state in ToolOperationMachine.states:
        for transition in state.transitions:
            guards = [spec.func for spec in transition.cond]
            actions = [spec.func for spec in transition.on if not spec.is_convention]
            codes = tuple(action.removeprefix("raise_") for action in actions)
            anomaly = None if not codes else codes[0] if len(codes) == 1 else codes  # (a rule may raise several)
            matches = {"name_matches": (True,), "name_differs": (False,)}[guards[0]] if guards else (True, False)
            for event in transition.events:
                for names_match in matches:
                    key = (transition.source.id, str(event), names_match)
                    assert key not in table, f"two transitions for {key}"
                    table[key] = (transition.target.id, anomaly)
    return table


def test_the_table_literal_equals_the_transitions_of_the_class() -> None:
    assert _step_table_read_from_class() == dict(STEP)


def test_the_states_and_initial_state_agree() -> None:
    assert [state.id for state in ToolOperationMachine.states] == list(STATES)
    assert ToolOperationMachine.initial_state.id == INITIAL_STATE


def test_the_machine_has_strict_semantics() -> None:
    assert issubclass(ToolOperationMachine, StateMachine)
    assert ToolOperationMachine.allow_event_without_transition is False
    assert StateChart.allow_event_without_transition is True  # what strict mode protects us from
    machine = ToolOperationMachine()
    with pytest.raises(TransitionNotAllowed):
        machine.send("no_such_event")


def test_a_call_then_a_response_naming_another_tool_is_an_anomaly() -> None:
    machine = ToolOperationMachine()
    machine.call_tool_name = "write_file"
    machine.send("function_call", tool_name="write_file")
    machine.send("function_response", tool_name="delete_file")
    assert machine.raised == list(names.MISNAMED)
    assert [state.id for state in machine.configuration] == ["indeterminate"]
    machine.send("function_response", tool_name="write_file")
    assert [state.id for state in machine.configuration] == ["succeeded"]
