"""spec/projector.yaml as a model, and the checks that make it a sound state machine.

Sound means: every name resolves, the generated StateMachine can use every state and event name, every
committed tool event matches exactly one event kind, and for every state x event exactly one rule applies
(whatever the tool names), every state is reachable from the initial one and can still reach a final one.
"""

from __future__ import annotations

import keyword
import unicodedata

from ..errors import Mark, SpecError
from .loader import LoadedFile
from .model import DiagnosticSpec, EventKind, Projector, Rule, State, ToolCall, WireFormat
from .tables import tool_event_shapes

CONDITIONS = ("name_matches", "name_differs")
# Names the generated StateMachine class already uses; a state or event called one of these would shadow it.
# The public names of python-statemachine's StateMachine (3.x), written out because importing the library
# costs `check` a sixth of its time; tests/test_fast_check.py holds this list to the installed library's.
STATEMACHINE_NAMES = frozenset({
    "TransitionNotAllowed", "activate_initial_state", "active_listeners", "add_listener", "allow_event_without_transition",
    "allowed_events", "atomic_configuration_update", "bind_events_to", "cancel_event", "catch_errors_as_events",
    "configuration", "configuration_values", "current_state", "current_state_value", "enable_self_transition_entries",
    "enabled_events", "events", "id", "is_terminated", "name", "prepare", "raise_", "send", "start_configuration_values",
    "states", "states_map",
})
_RESERVED_NAMES = STATEMACHINE_NAMES | set(CONDITIONS)


def projector_model(file: LoadedFile) -> Projector:
    """The projector as written, unchecked: `check_projector` says what is wrong with it."""
    data = file.data
    states = tuple(
        State(
            name=name,
            description=item["description"],
            status=item.get("status"),
            requires_verification=item.get("requires_verification", False),
            final=item.get("final", False),
            at_end=item.get("at_end"),
            mark=file.key_mark(("states", name)),
            absorbing=item.get("absorbing", False),
        )
        for name, item in data["states"].items()
    )
    events = tuple(
        EventKind(
            name=name,
            description=item["description"],
            content_kind=item.get("content_kind"),
            is_error=item.get("is_error", False),
            mark=file.key_mark(("events", name)),
        )
        for name, item in data["events"].items()
    )
    diagnostics = tuple(
        DiagnosticSpec(code=code, reason=item["reason"], message=item["message"], mark=file.key_mark(("diagnostics", code)))
        for code, item in data["diagnostics"].items()
    )
    rules = tuple(
        Rule(
            source=source,
            event=event,
            when=item.get("when"),
            target=item.get("to"),
            anomaly=_codes(item.get("anomaly"))[0] if item.get("anomaly") else None,
            mark=file.mark(("rules", index)),
            also=_codes(item.get("anomaly"))[1:],
            place=index,
        )
        for index, item in enumerate(data["rules"])
        for source in _codes(item["from"])  # (a rule `from` or `on` several is one rule for each pair)
        for event in _codes(item["on"])
    )
    anomalies = data["ledger_anomalies"]
    order = data.get("diagnostic_order", {})
    return Projector(
        initial=data["initial"],
        states=states,
        events=events,
        rules=rules,
        after_terminal_anomaly=anomalies.get("after_terminal"),
        diagnostics=diagnostics,
        reasons=tuple(data["reasons"].items()),
        directive=data["directive"],
        duplicate_id=anomalies.get("duplicate_id"),
        foreign_row=anomalies.get("foreign_row"),
        operations_first=order.get("first") == "operations",
        listed_last=tuple(order.get("last", ())),
    )


def _codes(names: str | list[str] | None) -> tuple[str, ...]:
    """A name, or a list of names, as a tuple."""
    return () if names is None else (names,) if isinstance(names, str) else tuple(names)


def check_projector(file: LoadedFile, projector: Projector, wire: WireFormat) -> list[SpecError]:
    """Every reference and structure error in the projector, in the order a reader meets them."""
    checks = _ProjectorChecks(file, projector, wire)
    checks.names()
    # Without a valid initial state nothing else about the machine can be judged.
    if checks.initial_exists():
        checks.states()
        checks.event_kinds()
        checks.exactly_one_rule_applies(checks.rules())
        checks.reachability()
        checks.diagnostics()
    return checks.errors


class _ProjectorChecks:
    def __init__(self, file: LoadedFile, projector: Projector, wire: WireFormat) -> None:
        self.file = file
        self.projector = projector
        self.wire = wire
        self.errors: list[SpecError] = []
        self.state_names = [state.name for state in projector.states]
        self.event_names = [event.name for event in projector.events]
        self.codes = [diagnostic.code for diagnostic in projector.diagnostics]
        self.state_of = {state.name: state for state in projector.states}
        self.kind_of = {event.name: event for event in projector.events}

    def error(self, mark: Mark, message: str) -> None:
        self.errors.append(SpecError(mark, message))

    def unknown(self, path: tuple[str | int, ...], what: str, name: str | None, known: list[str]) -> None:
        self.error(self.file.mark(path), f"unknown {what} '{name}'; the {what}s are [{', '.join(known)}]")

    # -- names ----------------------------------------------------------------------------------------------
    def names(self) -> None:
        """State and event names become attributes of the generated machine: none may shadow another."""
        projector = self.projector
        # The generated machine also has a `raise_<code>` method per anomaly, and `call_tool_name` and `raised`.
        generated = {"raise_" + code for rule in projector.rules for code in rule.codes} | {"call_tool_name", "raised"}
        named = [(state.name, state.mark) for state in projector.states] + [(event.name, event.mark) for event in projector.events]
        for name, mark in named:
            if keyword.iskeyword(name) or name in _RESERVED_NAMES or name in generated:
                self.error(mark, f"'{name}' is reserved in the generated state machine; choose another name")
        self._identifiers(named)
        for name in set(self.state_names) & set(self.event_names):
            self.error(self.file.key_mark(("events", name)), f"'{name}' names both a state and an event")

    def _identifiers(self, named: list[tuple[str, Mark]]) -> None:
        # Python reads an identifier NFKC-normalised: `ｆailed` (fullwidth f) *is* `failed` in generated code, so
        # two names a reviewer tells apart would be one attribute of the machine. Held here, whatever the
        # project's schema allows.
        first: dict[str, str] = {}
        for name, mark in named:
            python_name = unicodedata.normalize("NFKC", name)
            if not name.isidentifier():
                self.error(mark, f"{name!r} cannot be a Python name in the generated state machine; choose another name")
            elif python_name != name:
                clash = f", the name of {first[python_name]!r} too" if python_name in first else ""
                self.error(mark, f"{name!r} is {python_name!r} to Python (identifiers are NFKC-normalised){clash}; write it as it is read")
            first.setdefault(python_name, name)

    def initial_exists(self) -> bool:
        if self.projector.initial in self.state_names:
            return True
        self.error(self.file.mark(("initial",)), f"unknown initial state '{self.projector.initial}'; the states are [{', '.join(self.state_names)}]")
        return False

    # -- states ---------------------------------------------------------------------------------------------
    def states(self) -> None:
        for state in self.projector.states:
            if state.name == self.projector.initial:
                self._initial_state(state)
            elif state.status is None:
                self.error(state.mark, f"state '{state.name}' needs a status: only the initial state has no operation")
            if state.at_end is not None and state.at_end not in self.codes:
                self.unknown(("states", state.name, "at_end"), "diagnostic", state.at_end, self.codes)
            if state.absorbing and (state.final or state.at_end is None):
                self.error(state.mark, f"absorbing state '{state.name}' is a dead end diagnosed at the end: it needs at_end, and cannot be final")
            if state.final and (state.requires_verification or state.at_end):
                self.error(state.mark, f"final state '{state.name}' is settled: it cannot require verification or raise at_end")

    def _initial_state(self, state: State) -> None:
        if state.status is not None or state.requires_verification or state.at_end or state.final:
            self.error(state.mark, f"initial state '{state.name}' stands for 'no operation yet': it takes no status, requires_verification, at_end or final")

    # -- event kinds ----------------------------------------------------------------------------------------
    def event_kinds(self) -> None:
        """Every committed tool event must match exactly one event kind: of the kinds of one content kind and error
        flag, each but the last is split off by `when` (a test of the run's facts), and the last takes the rest."""
        shapes: dict[tuple[str, bool], EventKind] = {}
        for event in self.projector.events:
            if event.content_kind is None:
                if event.is_error:
                    self.error(self.file.mark(("events", event.name, "is_error")), f"event '{event.name}' is an action event (no content_kind): is_error tells results apart, and it is none")
                continue
            if not self._event_kind_resolves(event):
                continue
            shape = (event.content_kind, event.is_error)
            if shape in shapes and shapes[shape].when is None:
                self.error(event.mark, f"events '{shapes[shape].name}' and '{event.name}' match the same committed events ('{shapes[shape].name}' has no `when` that leaves any to '{event.name}')")
            shapes[shape] = event
        for shape, last in shapes.items():
            if last.when is not None:
                self.error(last.mark, f"event '{last.name}' is the last kind of content_kind {shape[0]} (is_error {str(shape[1]).lower()}) and has a `when`: the events it does not take need a kind without one, after it")
        for shape in tool_event_shapes(self.wire):
            if shape not in shapes:
                self.error(self.file.mark(("events",)), f"no event kind matches content_kind {shape[0]} with is_error {str(shape[1]).lower()}")

    def _event_kind_resolves(self, event: EventKind) -> bool:
        """Whether the event's content kind is a declared tool kind, with an error flag if the event needs one."""
        content_kinds = self.wire.content_kinds
        path = ("events", event.name, "content_kind")
        if event.content_kind is None:
            return True  # (an action event: told apart by its `when`)
        if not any(kind.name == event.content_kind for kind in content_kinds):
            self.error(self.file.mark(path), f"unknown content kind '{event.content_kind}'; spec/runtime_event.yaml declares [{', '.join(k.name for k in content_kinds)}]")
            return False
        tool_call = self.wire.kind(event.content_kind).tool_call
        if tool_call is None:
            tool_kinds = ", ".join(kind.name for kind in content_kinds if kind.tool_call is not None)
            self.error(self.file.mark(path), f"content kind '{event.content_kind}' takes no part in tool state (no tool_call in spec/runtime_event.yaml); the tool kinds are [{tool_kinds}]")
            return False
        if event.is_error and tool_call.error_flag is None:
            self.error(self.file.mark(("events", event.name, "is_error")), f"content kind '{event.content_kind}' has no error_flag in spec/runtime_event.yaml; only kinds with one may set is_error")
            return False
        return True

    # -- rules ----------------------------------------------------------------------------------------------
    def rules(self) -> dict[tuple[str, str], list[Rule]]:
        """Check each rule on its own; return the rules whose names resolve, by (state, event)."""
        rules_by_pair: dict[tuple[str, str], list[Rule]] = {}
        for rule in self.projector.rules:
            if self._rule_references_resolve(rule.place, rule):
                self._rule_behaviour(rule.place, rule)
                rules_by_pair.setdefault((rule.source, rule.event), []).append(rule)
        return rules_by_pair

    def _rule_references_resolve(self, index: int, rule: Rule) -> bool:
        before = len(self.errors)
        if rule.source not in self.state_names:
            self.unknown(("rules", index, "from"), "state", rule.source, self.state_names)
        if rule.event not in self.event_names:
            self.unknown(("rules", index, "on"), "event", rule.event, self.event_names)
        if rule.target is None and rule.anomaly is None:
            self.error(rule.mark, "a rule needs 'to' (a transition), 'anomaly' (a diagnostic), or both (the state moves and the diagnostic is raised)")
        if rule.target is not None and rule.target not in self.state_names:
            self.unknown(("rules", index, "to"), "state", rule.target, self.state_names)
        for code in rule.codes:
            if code not in self.codes:
                self.unknown(("rules", index, "anomaly"), "diagnostic", code, self.codes)
        return len(self.errors) == before

    def _rule_behaviour(self, index: int, rule: Rule) -> None:
        """What a rule may do given its source state and whether its event opens an operation or settles one."""
        source = self.state_of[rule.source]
        tool_call = self._tool_call(self.kind_of[rule.event])
        opens = tool_call is not None and tool_call.role == "call"
        names_a_result = tool_call is not None and not opens and tool_call.tool_name is not None
        if rule.when is not None and (source.status is None or not names_a_result):
            self.error(self.file.mark(("rules", index, "when")), f"'when: {rule.when}' compares a result's tool name with its call's: it needs a result event that names a tool (tool_call.tool_name) from a state with a status")
        if rule.target is not None and rule.anomaly is not None and source.status is None:
            self.error(self.file.mark(("rules", index, "to")), f"an anomaly creates no operation: from '{rule.source}' a rule raising one cannot also move to '{rule.target}'")
        elif rule.target is not None:
            self._transition(index, rule, source, self.state_of[rule.target], opens)

    def _transition(self, index: int, rule: Rule, source: State, target: State, opens: bool) -> None:
        if source.absorbing and rule.target != rule.source and rule.anomaly is None:
            self.error(self.file.mark(("rules", index, "to")), f"absorbing state '{rule.source}' is left only by an anomaly: a plain transition cannot move it to '{rule.target}'")
        elif rule.target == self.projector.initial:
            self.error(self.file.mark(("rules", index, "to")), f"no rule may return to the initial state '{rule.target}': an operation, once created, exists")
        elif source.final and rule.target != rule.source and rule.anomaly is None:
            self.error(rule.mark, f"final state '{rule.source}' is settled: only an anomaly may move it (to '{rule.target}'), not a plain transition")
        elif source.status is None and not opens:
            self.error(rule.mark, f"only a call (tool_call.role: call) can create an operation; '{rule.event}' cannot leave '{rule.source}'")
        elif source.status is not None and opens and rule.target != rule.source and rule.anomaly is None:
            self.error(rule.mark, f"a call for an existing operation cannot move '{rule.source}' to '{target.name}'")
        elif self.kind_of[rule.event].content_kind is None and target.final and rule.target != rule.source:
            self.error(rule.mark, f"'{rule.event}' is an action event: it carries no result, so it cannot settle an operation ('{target.name}' is final)")

    def _tool_call(self, kind: EventKind) -> ToolCall | None:
        if kind.content_kind is None:
            return None  # an action event: it neither opens an operation nor settles one
        declared = [k for k in self.wire.content_kinds if k.name == kind.content_kind]
        return declared[0].tool_call if declared else None

    # -- the machine as a whole -----------------------------------------------------------------------------
    def exactly_one_rule_applies(self, rules_by_pair: dict[tuple[str, str], list[Rule]]) -> None:
        """Deterministic and complete: for every state x event exactly one rule applies, whatever the names."""
        for state in self.projector.states:
            for event in self.projector.events:
                rules = rules_by_pair.get((state.name, event.name), [])
                if rules:
                    self._one_rule_for(state, event, rules)
                else:
                    self.error(self.file.mark(("rules",)), f"incomplete machine: no rule for state '{state.name}' on event '{event.name}'")

    def _one_rule_for(self, state: State, event: EventKind, rules: list[Rule]) -> None:
        seen: dict[str | None, Rule] = {}
        for rule in rules:
            clash = [other for when, other in seen.items() if when is None or rule.when is None or when == rule.when]
            if clash:
                self.error(rule.mark, f"nondeterministic machine: this rule and the one at {clash[0].mark} both apply to state '{state.name}' on event '{event.name}'")
            seen.setdefault(rule.when, rule)
        # Rules split by `when` must cover both conditions, or some tool names would find no rule.
        if None not in seen and set(seen) != set(CONDITIONS):
            missing = [condition for condition in CONDITIONS if condition not in seen]
            self.error(rules[0].mark, f"incomplete machine: state '{state.name}' on event '{event.name}' has no rule for when: {', '.join(missing)}")

    def reachability(self) -> None:
        projector = self.projector
        transitions = {(rule.source, rule.target) for rule in projector.rules if rule.target is not None and rule.target in self.state_names}
        reachable = _closure({projector.initial}, transitions)
        finals = {state.name for state in projector.states if state.final}
        for state in projector.states:
            if state.name not in reachable:
                self.error(state.mark, f"unreachable state '{state.name}': no transition leads to it from '{projector.initial}'")
            elif not state.final and not state.absorbing and not (_closure({state.name}, transitions) & finals):
                self.error(state.mark, f"trap state '{state.name}': it is not final and no transition leads from it to a final state")

    def diagnostics(self) -> None:
        projector = self.projector
        reason_names = [name for name, _ in projector.reasons]
        for diagnostic in projector.diagnostics:
            if diagnostic.reason not in reason_names:
                self.unknown(("diagnostics", diagnostic.code, "reason"), "reason", diagnostic.reason, reason_names)
        if projector.after_terminal_anomaly is not None and projector.after_terminal_anomaly not in self.codes:
            self.unknown(("ledger_anomalies", "after_terminal"), "diagnostic", projector.after_terminal_anomaly, self.codes)
        if projector.hidden is not None and projector.hidden.anomaly and projector.hidden.anomaly not in self.codes:
            self.unknown(("replay", "unpaired_result"), "diagnostic", projector.hidden.anomaly, self.codes)
        for index, check in enumerate(projector.row_checks):
            if check.anomaly not in self.codes:
                self.unknown(("ledger_anomalies", "rows", index, "raise"), "diagnostic", check.anomaly, self.codes)
        for key in ("duplicate_id", "foreign_row"):
            code = getattr(projector, key)
            if code is not None and code not in self.codes:
                self.unknown(("ledger_anomalies", key), "diagnostic", code, self.codes)
        for index, code in enumerate(projector.listed_last):
            if code not in self.codes:
                self.unknown(("diagnostic_order", "last", index), "diagnostic", code, self.codes)


def _closure(start: set[str], edges: set[tuple[str, str]]) -> set[str]:
    seen = set(start)
    frontier = list(start)
    while frontier:
        current = frontier.pop()
        for source, target in edges:
            if source == current and target not in seen:
                seen.add(target)
                frontier.append(target)
    return seen
