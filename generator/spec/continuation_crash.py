"""spec/lifecycle.yaml, schema-valid -> `ContinuationCrashSpec`: Phase 1's crash contract (the
continuation's lifecycle and its crash boundaries), with every reference and structure error at its file:line.

What is checked: the lifecycle's states and transitions name each other; no two states look the same on disk
(recovery reads the state from the header and the events); the executor's transitions are one path from the
initial state to a final one; every state an executor can be killed in has a recovery path to a final state; a
boundary follows an executor transition (one boundary per transition, in the executor's order), its recovery is a
path of recovery transitions from the state it leaves to a final state, and what recovery leaves is a header that
agrees with its terminal event; the replanning decision's reasons are the continuation decision's
(spec/continuation.yaml is required). A boundary id cannot be a Phase 0 failpoint's, with which it shares
RESUME_FAILPOINTS: the two schemas' id patterns are disjoint.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Mark, SpecError
from .continuation_model import ContinuationSpec
from .loader import LoadedFile
from .run_files import run_file_at

# A header's status agrees with its terminal event's when equal, or as the planner's `terminal_repair` says.
_AGREES = {"cancelled": ("aborted", "cancelled")}


@dataclass(frozen=True)
class LifecycleState:
    name: str
    header: str  # absent | created | terminal
    events: str  # none | start | run | terminal
    final: bool
    description: str
    mark: Mark


@dataclass(frozen=True)
class LifecycleTransition:
    name: str
    by: str  # executor | recovery
    sources: tuple[str, ...]
    target: str
    description: str
    mark: Mark


@dataclass(frozen=True)
class CrashBoundary:
    """One crash boundary: crossed once `after`'s writes returned, leaving the run in `state`."""

    id: str
    boundary: str
    after: str
    state: str
    replan_disposition: str
    replan_reasons: tuple[str, ...]
    recovery_takes: tuple[str, ...]
    terminal_event: str
    header: str
    failure_class: str | None
    mark: Mark


@dataclass(frozen=True)
class ContinuationCrashSpec:
    run_loop: str | None
    initial: str
    states: tuple[LifecycleState, ...]
    transitions: tuple[LifecycleTransition, ...]
    boundaries: tuple[CrashBoundary, ...]

    def state(self, name: str) -> LifecycleState:
        return next(state for state in self.states if state.name == name)

    def transition(self, name: str) -> LifecycleTransition:
        return next(transition for transition in self.transitions if transition.name == name)

    @property
    def executor_path(self) -> tuple[str, ...]:
        """The executor's transitions, in the order it takes them."""
        return tuple(transition.name for transition in self.transitions if transition.by == "executor")


# A state or transition becomes an attribute of a python-statemachine class: it must not shadow the library's
# own. Its public attributes (the schema allows no leading underscore), listed rather than read from the library:
# importing python-statemachine would cost `check` a third of a second; tests/test_continuation_lifecycle.py
# holds this list to the installed library's.
RESERVED_NAMES = frozenset({
    "activate_initial_state", "active_listeners", "add_listener", "allow_event_without_transition", "allowed_events",
    "atomic_configuration_update", "bind_events_to", "cancel_event", "catch_errors_as_events", "configuration",
    "configuration_values", "current_state", "current_state_value", "enable_self_transition_entries", "enabled_events",
    "events", "id", "is_terminated", "model", "name", "prepare", "raise_", "send", "start_configuration_values",
    "states", "states_map",
})


def build_continuation_crash(
    file: LoadedFile, continuation: ContinuationSpec | None
) -> tuple[ContinuationCrashSpec | None, list[SpecError]]:
    """The model of the file, or None with every error found."""
    errors: list[SpecError] = []
    data = file.data
    lifecycle = data["lifecycle"]
    reserved = RESERVED_NAMES
    states = tuple(
        LifecycleState(name, item["header"], item["events"], bool(item.get("final", False)), item["description"], file.key_mark(("lifecycle", "states", name)))
        for name, item in lifecycle["states"].items()
    )
    names = {state.name for state in states}
    for state in states:
        if state.name in reserved:
            errors.append(SpecError(state.mark, f"state '{state.name}' would shadow python-statemachine's own attribute; rename it"))
    if lifecycle["initial"] not in names:
        errors.append(SpecError(file.mark(("lifecycle", "initial")), f"unknown state '{lifecycle['initial']}'; the states are [{', '.join(names)}]"))
    looks: dict[tuple[str, str], str] = {}
    for state in states:
        other = looks.setdefault((state.header, state.events), state.name)
        if other != state.name:
            errors.append(SpecError(state.mark, f"state '{state.name}' looks on disk like '{other}' (header {state.header}, events {state.events}): recovery could not tell them apart"))
    transitions = _transitions(file, names, reserved, errors)
    final = {state.name for state in states if state.final}
    for transition in transitions:
        for source in transition.sources:
            if source in final:
                errors.append(SpecError(transition.mark, f"transition '{transition.name}' leaves the final state '{source}'"))
    path = _executor_path(file, lifecycle["initial"], transitions, final, errors)
    recovery = {t.name: t for t in transitions if t.by == "recovery"}
    for state_name in path[1:]:
        if state_name not in final and _recovery_path(state_name, recovery, final) is None:
            errors.append(SpecError(next(s.mark for s in states if s.name == state_name), f"state '{state_name}' can be crashed in, but no recovery transitions lead from it to a final state"))
    executor_target = {t.name: t.target for t in transitions if t.by == "executor"}
    boundaries = _boundaries(file, executor_target, recovery, final, continuation, errors)
    if errors:
        return None, errors
    return ContinuationCrashSpec(run_file_at(data, ("run_loop",)), lifecycle["initial"], states, transitions, boundaries), []


def _transitions(file: LoadedFile, names: set[str], reserved: frozenset[str], errors: list[SpecError]) -> tuple[LifecycleTransition, ...]:
    transitions = []
    seen: set[str] = set()
    for index, item in enumerate(file.data["lifecycle"]["transitions"]):
        where = ("lifecycle", "transitions", index)
        name = item["name"]
        if name in seen or name in names:
            errors.append(SpecError(file.mark(where + ("name",)), f"'{name}' names another transition or a state already"))
        if name in reserved:
            errors.append(SpecError(file.mark(where + ("name",)), f"transition '{name}' would shadow python-statemachine's own attribute; rename it"))
        seen.add(name)
        for position, state in enumerate([*item["from"], item["to"]]):
            if state not in names:
                key = ("from", position) if position < len(item["from"]) else ("to",)
                errors.append(SpecError(file.mark(where + key), f"unknown state '{state}'; the states are [{', '.join(sorted(names))}]"))
        transitions.append(LifecycleTransition(name, item["by"], tuple(item["from"]), item["to"], item["description"], file.mark(where)))
    return tuple(transitions)


def _executor_path(file: LoadedFile, initial: str, transitions: tuple[LifecycleTransition, ...], final: set[str], errors: list[SpecError]) -> list[str]:
    """The states the executor passes through, initial first; an error unless its transitions, in the spec's
    order, each leave the state the one before reached, and the last reaches a final state."""
    current, visited = initial, [initial]
    for transition in (t for t in transitions if t.by == "executor"):
        if transition.sources != (current,):
            errors.append(SpecError(transition.mark, f"executor transition '{transition.name}' must leave '{current}' alone (the executor takes its transitions in order, one path)"))
            return visited
        current = transition.target
        visited.append(current)
    if current not in final:
        errors.append(SpecError(file.mark(("lifecycle", "transitions")), f"the executor's transitions end in '{current}', which is not a final state"))
    return visited


def _recovery_path(state: str, recovery: dict[str, LifecycleTransition], final: set[str]) -> list[str] | None:
    """The shortest run of recovery transitions from `state` to a final state (transition names), or None."""
    frontier: list[tuple[str, list[str]]] = [(state, [])]
    seen = {state}
    while frontier:
        current, taken = frontier.pop(0)
        if current in final:
            return taken
        for transition in recovery.values():
            if current in transition.sources and transition.target not in seen:
                seen.add(transition.target)
                frontier.append((transition.target, [*taken, transition.name]))
    return None


def _boundaries(
    file: LoadedFile,
    executor_target: dict[str, str],
    recovery: dict[str, LifecycleTransition],
    final: set[str],
    continuation: ContinuationSpec | None,
    errors: list[SpecError],
) -> tuple[CrashBoundary, ...]:
    order = list(executor_target)
    reasons = None if continuation is None else {name for name, _ in continuation.reasons}
    if continuation is None:
        errors.append(SpecError(Mark(file.name, 1, 1), "crash boundaries of a continuation need its decision: spec/continuation.yaml is missing"))
    boundaries: list[CrashBoundary] = []
    ids: dict[str, Mark] = {}
    after_seen: dict[str, str] = {}
    for index, item in enumerate(file.data["boundaries"]):
        where = ("boundaries", index)
        boundary_id, after = item["id"], item["after"]
        if boundary_id in ids:
            errors.append(SpecError(file.mark(where + ("id",)), f"duplicate boundary id '{boundary_id}' (first defined at {ids[boundary_id]})"))
        ids.setdefault(boundary_id, file.mark(where))
        if after not in executor_target:
            errors.append(SpecError(file.mark(where + ("after",)), f"'{after}' is not an executor transition; they are [{', '.join(order)}]"))
            continue
        if after in after_seen:
            errors.append(SpecError(file.mark(where + ("after",)), f"boundary '{after_seen[after]}' already follows '{after}'"))
        elif boundaries and order.index(after) < order.index(boundaries[-1].after):
            errors.append(SpecError(file.mark(where + ("after",)), f"boundary '{boundary_id}' is out of order: boundaries follow the executor's transitions ({', '.join(order)})"))
        after_seen.setdefault(after, boundary_id)
        replan, leaves = item["replan"], item["recovery"]
        for position, reason in enumerate(replan["reasons"]):
            if reasons is not None and reason not in reasons:
                errors.append(SpecError(file.mark(where + ("replan", "reasons", position)), f"'{reason}' is not a reason of the continuation decision (spec/continuation.yaml)"))
        if (replan["disposition"] == "park") != bool(replan["reasons"]):
            errors.append(SpecError(file.mark(where + ("replan",)), "a park carries its reasons, and a continue none"))
        state = executor_target[after]
        _check_recovery(file, where, state, leaves, recovery, final, errors)
        boundaries.append(
            CrashBoundary(
                id=boundary_id,
                boundary=item["boundary"],
                after=after,
                state=state,
                replan_disposition=replan["disposition"],
                replan_reasons=tuple(replan["reasons"]),
                recovery_takes=tuple(leaves["takes"]),
                terminal_event=leaves["terminal_event"],
                header=leaves["header"],
                failure_class=leaves.get("failure_class"),
                mark=file.mark(where),
            )
        )
    return tuple(boundaries)


def _check_recovery(
    file: LoadedFile, where: tuple[str | int, ...], state: str, leaves: dict, recovery: dict[str, LifecycleTransition], final: set[str], errors: list[SpecError]
) -> None:
    current = state
    for position, name in enumerate(leaves["takes"]):
        transition = recovery.get(name)
        if transition is None:
            errors.append(SpecError(file.mark(where + ("recovery", "takes", position)), f"'{name}' is not a recovery transition; they are [{', '.join(recovery)}]"))
            return
        if current not in transition.sources:
            errors.append(SpecError(file.mark(where + ("recovery", "takes", position)), f"recovery transition '{name}' does not leave '{current}'"))
            return
        current = transition.target
    if current not in final:
        errors.append(SpecError(file.mark(where + ("recovery", "takes")), f"recovery ends in '{current}', which is not a final state"))
    header, event = leaves["header"], leaves["terminal_event"]
    if event != header and event not in _AGREES.get(header, ()):
        errors.append(SpecError(file.mark(where + ("recovery", "header")), f"a {header} header disagrees with a {event} terminal event: the run's terminal repair would fail"))
