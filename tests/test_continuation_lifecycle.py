"""The continuation's lifecycle is generated on python-statemachine as spec/lifecycle.yaml declares it: the
same states (initial and final), and each transition taken from each of its sources to its target and from no
other state. The generator's list of the library's own attribute names (which a state or transition must not
shadow) covers the installed library's."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO
from resume_contract_generator.spec.continuation_crash import RESERVED_NAMES
from statemachine import StateMachine
from statemachine.exceptions import TransitionNotAllowed

from resume_contract.contract import packaged

LIFECYCLE = yaml.safe_load((REPO / "spec" / "lifecycle.yaml").read_text(encoding="utf-8"))["lifecycle"]
MACHINE = packaged().lifecycle_class()


def test_the_generated_machine_has_the_specs_states() -> None:
    states = {state.value: state for state in MACHINE.states}
    assert list(states) == list(LIFECYCLE["states"])
    assert [name for name, state in states.items() if state.initial] == [LIFECYCLE["initial"]]
    assert [name for name, state in states.items() if state.final] == [name for name, item in LIFECYCLE["states"].items() if item.get("final")]


@pytest.mark.parametrize("transition", LIFECYCLE["transitions"], ids=[t["name"] for t in LIFECYCLE["transitions"]])
def test_each_transition_leaves_exactly_its_sources_for_its_target(transition: dict) -> None:
    for state in LIFECYCLE["states"]:
        if LIFECYCLE["states"][state].get("final"):
            continue
        machine = MACHINE(start_value=state)
        if state in transition["from"]:
            machine.send(transition["name"])
            assert machine.current_state_value == transition["to"]
        else:
            with pytest.raises(TransitionNotAllowed):
                machine.send(transition["name"])


def test_the_reserved_names_cover_the_librarys_public_attributes() -> None:
    public = {name for name in dir(StateMachine) if name[:1].islower()}
    assert public <= RESERVED_NAMES
