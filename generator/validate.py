"""Turn loaded spec files into the frozen `Spec`, or raise `SpecInvalid` with every error found.

Three passes, each only when the one before found nothing, so one mistake is not reported five times:
schema (shape, names, allowed values) -> references and machine structure -> the decision table run
against the projector over the canonical ledger.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import keyword
from pathlib import Path
from types import MappingProxyType
from typing import Any

from resume_contract.projection import ProjectorTable, ResumePlan, ToolContentRead, project
from resume_contract.wire import RowRefused, WireModel

from .errors import Mark, SpecError, SpecInvalid
from .loader import LoadedFile, load_spec_file
from .schema_check import load_schema, schema_errors
from .spec_model import (
    CanonicalLedger,
    Decision,
    DiagnosticSpec,
    EventKind,
    Failpoint,
    Invariant,
    LedgerEvent,
    LedgerRules,
    Prefix,
    Projector,
    Rule,
    Scope,
    Spec,
    State,
    WireFormat,
)
from .wire_model import load_module
from .wire_spec import build_wire_format

SPEC_DIR = "spec"
SCHEMA_DIR = "spec/schema"
SPEC_FILES = ("failpoints", "runtime_event", "ledger", "decisions", "projector", "invariants", "scope")
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


def spec_sha256(root: Path) -> str:
    """sha256 over every spec YAML file's name and bytes, in name order."""
    digest = hashlib.sha256()
    for name in SPEC_FILES:
        path = root / SPEC_DIR / f"{name}.yaml"
        digest.update(f"{SPEC_DIR}/{name}.yaml\0".encode())
        digest.update(path.read_bytes() if path.exists() else b"<missing>")
        digest.update(b"\0")
    return digest.hexdigest()


def load_spec(root: Path) -> Spec:
    """Load, check and freeze the spec under `root/spec`; raise SpecInvalid listing every problem."""
    errors: list[SpecError] = []
    files: dict[str, LoadedFile] = {}
    spec_dir = root / SPEC_DIR
    if not spec_dir.is_dir():
        raise SpecInvalid([SpecError(Mark(SPEC_DIR, 1, 1), f"no spec directory at {spec_dir}")])
    for path in sorted(spec_dir.iterdir()):
        if path.is_file() and path.suffix in (".yaml", ".yml") and path.stem not in SPEC_FILES:
            allowed = ", ".join(f"{name}.yaml" for name in SPEC_FILES)
            errors.append(SpecError(Mark(f"{SPEC_DIR}/{path.name}", 1, 1), f"unknown spec file; the spec files are [{allowed}]"))
    for name in SPEC_FILES:
        display = f"{SPEC_DIR}/{name}.yaml"
        path = root / display
        if not path.is_file():
            errors.append(SpecError(Mark(display, 1, 1), "missing spec file"))
            continue
        loaded, load_errors = load_spec_file(path, display)
        errors.extend(load_errors)
        if loaded is None or load_errors:
            continue
        validator, schema_problems = load_schema(root / SCHEMA_DIR / f"{name}.schema.json", f"{SCHEMA_DIR}/{name}.schema.json")
        errors.extend(schema_problems)
        if validator is not None:
            errors.extend(schema_errors(loaded, validator))
        files[name] = loaded
    if errors:
        raise SpecInvalid(errors)
    wire, errors = build_wire_format(files["runtime_event"])
    if errors:
        raise SpecInvalid(errors)

    checker = _Checker(files, wire)
    spec = dataclasses.replace(checker.build(root), schemas=tuple((name, _canonical_schema(root, name)) for name in SPEC_FILES))
    if checker.errors:
        raise SpecInvalid(checker.errors)
    contradictions = check_decisions_against_projector(spec)
    if contradictions:
        raise SpecInvalid(contradictions)
    return spec


def _canonical_schema(root: Path, name: str) -> str:
    """A spec file's schema as canonical JSON (sorted keys), so a reformatting is no change."""
    value = json.loads((root / SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def rule_steps(rule: Rule) -> tuple[tuple[str, str, bool], ...]:
    """The (state, event kind, names match) table keys a rule decides; a rule without `when` decides both."""
    matches = (True, False) if rule.when is None else (rule.when == "name_matches",)
    return tuple((rule.source, rule.event, names_match) for names_match in matches)


def wire_model(wire: WireFormat) -> WireModel:
    """The decoding model rendered from the spec, loaded in memory (the code `generate` writes)."""
    return WireModel(load_module(wire))


def tool_event_shapes(wire: WireFormat) -> tuple[tuple[str, bool], ...]:
    """Every (content kind, error flag) a committed tool event can have; each needs exactly one event kind."""
    shapes: list[tuple[str, bool]] = []
    for kind in wire.content_kinds:
        if kind.tool_call is not None:
            shapes.append((kind.name, False))
            if kind.tool_call.error_flag is not None:
                shapes.append((kind.name, True))
    return tuple(shapes)


def tool_content_reads(wire: WireFormat) -> dict[str, ToolContentRead]:
    """Content kind -> which attributes of its struct carry the call id, tool name, arguments and error flag."""

    def attribute(kind_name: str, field: str | None) -> str | None:
        return None if field is None else wire.kind(kind_name).field(field).attribute

    return {
        kind.name: ToolContentRead(
            opens=kind.tool_call.role == "call",
            call_id=attribute(kind.name, kind.tool_call.call_id) or "",
            tool_name=attribute(kind.name, kind.tool_call.tool_name),
            arguments=attribute(kind.name, kind.tool_call.arguments),
            error_flag=attribute(kind.name, kind.tool_call.error_flag),
        )
        for kind in wire.content_kinds
        if kind.tool_call is not None
    }


def projector_table(projector: Projector, rules: LedgerRules, wire: WireFormat) -> ProjectorTable:
    """The hot-path lookup tables for `resume_contract.projection.project`, built from the spec model."""
    return ProjectorTable(
        initial_state=projector.initial,
        tool_contents=tool_content_reads(wire),
        partial_attribute=wire.field(wire.partial_flag).attribute,
        terminal_statuses=frozenset(wire.terminal_statuses),
        terminal_flag=(wire.field(wire.terminal_flag_field).attribute, wire.terminal_flag_key),
        step={key: (rule.next_state, rule.anomaly) for rule in projector.rules for key in rule_steps(rule)},
        event_kinds={(kind.content_kind, kind.is_error): kind.name for kind in projector.events},
        state_status={state.name: state.status for state in projector.states},
        settled_states=frozenset(state.name for state in projector.states if state.final),
        verification_states=frozenset(state.name for state in projector.states if state.requires_verification),
        at_end={state.name: state.at_end for state in projector.states if state.at_end is not None},
        diagnostics={diagnostic.code: (diagnostic.reason, diagnostic.message) for diagnostic in projector.diagnostics},
        reason_order=tuple(name for name, _ in projector.reasons),
        after_terminal_diagnostic=projector.after_terminal_anomaly,
        high_water_diagnostic=rules.high_water_diagnostic,
        directive=projector.directive,
    )


def canonical_events(spec: Spec, outcome: str, length: int) -> list[Any]:
    """The first `length` canonical events for `outcome`, decoded by the spec's own decoding model."""
    model = wire_model(spec.wire)
    return [model.decode_row(event.wire(outcome).encode("utf-8")) for event in spec.ledger.events[:length]]


def check_decisions_against_projector(spec: Spec) -> list[SpecError]:
    """Run every canonical prefix through the projector; report each field that contradicts the decision table."""
    table = projector_table(spec.projector, spec.ledger_rules, spec.wire)
    rule_by_step = {key: rule for rule in spec.projector.rules for key in rule_steps(rule)}
    errors = []
    for decision in spec.decisions:
        prefix = spec.ledger.prefix(decision.prefix)
        for outcome in spec.ledger.outcome_names:
            trace: list[tuple[str, str, bool]] = []
            events = canonical_events(spec, outcome, prefix.length)
            plan = project(events, table, trace=trace)
            fired = [rule_by_step[step] for step in trace]
            deciding = f"the projector ({', '.join(str(rule.mark) for rule in fired)})" if fired else "the projector (no rule fired)"
            for field, expected, actual in _decision_fields(spec, decision, outcome, plan):
                if expected != actual:
                    errors.append(
                        SpecError(
                            decision.mark,
                            f"prefix '{decision.prefix}' with outcome '{outcome}': the decision table says {field} "
                            f"{_show(expected)} but {deciding} gives {_show(actual)}",
                        )
                    )
    return errors


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return repr(value) if isinstance(value, str) else str(value).lower()


def expected_replay_ids(spec: Spec, decision: Decision, outcome: str) -> tuple[str, ...]:
    """The event ids the decision table says the provider replay keeps."""
    ids = {event.name: json.loads(event.wire(outcome))["id"] for event in spec.ledger.events}
    return tuple(ids[name] for name in decision.replay)


def _decision_fields(spec: Spec, decision: Decision, outcome: str, plan: ResumePlan) -> list[tuple[str, Any, Any]]:
    return [
        ("disposition", decision.disposition, plan.disposition),
        ("operation statuses", decision.statuses(outcome), tuple(operation.status for operation in plan.operations)),
        ("diagnostics", decision.diagnostics, tuple(diagnostic.code for diagnostic in plan.diagnostics)),
        ("rejection reasons", decision.rejection_reasons, plan.rejection_reasons),
        ("replay", expected_replay_ids(spec, decision, outcome), plan.replay_event_ids),
        ("terminal fact", decision.terminal_fact, plan.terminal_runtime_event_id is not None),
    ]


class _Checker:
    """Builds the model from schema-valid data, collecting reference and structure errors on the way."""

    def __init__(self, files: dict[str, LoadedFile], wire: WireFormat) -> None:
        self.files = files
        self.wire = wire
        self.model = wire_model(wire)
        self.errors: list[SpecError] = []

    def error(self, mark: Mark, message: str) -> None:
        self.errors.append(SpecError(mark, message))

    def build(self, root: Path) -> Spec:
        ledger = self._ledger(self.files["ledger"])
        projector = self._projector(self.files["projector"])
        decisions, rules = self._decisions(self.files["decisions"], ledger, projector)
        failpoints = self._failpoints(self.files["failpoints"], ledger)
        self._unused(ledger, projector, failpoints, rules)
        invariants = self._invariants(self.files["invariants"], projector)
        scope_data = self.files["scope"].data
        scope = Scope(
            phase=scope_data["phase"],
            summary=scope_data["summary"],
            pipeline=tuple(scope_data["pipeline"]),
            harness_scope=scope_data["harness_scope"],
            out_of_scope=tuple(scope_data["out_of_scope"]),
        )
        return Spec(
            failpoints=failpoints,
            wire=self.wire,
            ledger=ledger,
            decisions=decisions,
            ledger_rules=rules,
            projector=projector,
            invariants=invariants,
            scope=scope,
            source_files=tuple(f"{SPEC_DIR}/{name}.yaml" for name in SPEC_FILES),
            sha256=spec_sha256(root),
            locations=MappingProxyType(
                {
                    f"{name}:{'/'.join(str(step) for step in path)}": mark
                    for name, file in self.files.items()
                    for path, mark in sorted(file.key_marks.items(), key=lambda item: item[1])
                }
            ),
        )

    # -- ledger ---------------------------------------------------------------------------------------------
    def _ledger(self, file: LoadedFile) -> CanonicalLedger:
        data = file.data
        outcomes = tuple(data["outcomes"].items())
        outcome_names = [name for name, _ in outcomes]
        events: list[LedgerEvent] = []
        seen_names: dict[str, Mark] = {}
        seen_ids: dict[tuple[str, str], Mark] = {}
        for index, item in enumerate(data["events"]):
            path = ("events", index)
            mark = file.mark(path)
            name = item["name"]
            if name in seen_names:
                self.error(file.mark(path + ("name",)), f"duplicate event name '{name}' (first defined at {seen_names[name]})")
            seen_names.setdefault(name, mark)
            if ("event" in item) == ("by_outcome" in item):
                self.error(mark, f"event '{name}' needs exactly one of 'event' or 'by_outcome'")
                continue
            if "by_outcome" in item:
                given = list(item["by_outcome"])
                if sorted(given) != sorted(outcome_names):
                    self.error(
                        file.mark(path + ("by_outcome",)),
                        f"event '{name}' gives outcomes [{', '.join(given)}]; the outcomes are [{', '.join(outcome_names)}]",
                    )
                    continue
                raw = {outcome: (item["by_outcome"][outcome], path + ("by_outcome", outcome)) for outcome in outcome_names}
            else:
                raw = {outcome: (item["event"], path + ("event",)) for outcome in outcome_names}
            wires = []
            for outcome, (fields, field_path) in raw.items():
                wire = {**data["common"], **fields}
                try:
                    event = self.model.event_from_wire(wire)
                except RowRefused as error:
                    self.error(file.mark(field_path), f"event '{name}' is not a valid RuntimeEvent (spec/runtime_event.yaml): {error.detail}")
                    continue
                if event.session_id != data["session_id"] or event.run_id != data["run_id"]:
                    self.error(file.mark(field_path), f"event '{name}' must carry sessionId '{data['session_id']}' and runId '{data['run_id']}'")
                if (outcome, event.id) in seen_ids:
                    self.error(file.mark(field_path), f"event id '{event.id}' is used twice (first at {seen_ids[(outcome, event.id)]})")
                seen_ids.setdefault((outcome, event.id), file.mark(field_path))
                wires.append((outcome, json.dumps(wire, ensure_ascii=False, separators=(",", ":"))))
            events.append(LedgerEvent(name=name, wire_by_outcome=tuple(wires), mark=mark))
        names = [event.name for event in events]
        prefixes = []
        for prefix_name, prefix_data in data["prefixes"].items():
            through = prefix_data["through"]
            mark = file.key_mark(("prefixes", prefix_name))
            if through is not None and through not in names:
                self.error(file.mark(("prefixes", prefix_name, "through")), f"prefix '{prefix_name}' ends at unknown event '{through}'; the events are [{', '.join(names)}]")
                continue
            length = 0 if through is None else names.index(through) + 1
            prefixes.append(Prefix(name=prefix_name, through=through, length=length, mark=mark))
        longest = max((prefix.length for prefix in prefixes), default=0)
        for event in events[longest:]:
            self.error(event.mark, f"event '{event.name}' is in no prefix")
        return CanonicalLedger(
            session_id=data["session_id"],
            run_id=data["run_id"],
            outcomes=outcomes,
            events=tuple(events),
            prefixes=tuple(prefixes),
        )

    # -- projector ------------------------------------------------------------------------------------------
    def _projector(self, file: LoadedFile) -> Projector:
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
            )
            for name, item in data["states"].items()
        )
        events = tuple(
            EventKind(
                name=name,
                description=item["description"],
                content_kind=item["content_kind"],
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
                source=item["from"],
                event=item["on"],
                when=item.get("when"),
                target=item.get("to"),
                anomaly=item.get("anomaly"),
                mark=file.mark(("rules", index)),
            )
            for index, item in enumerate(data["rules"])
        )
        projector = Projector(
            initial=data["initial"],
            states=states,
            events=events,
            rules=rules,
            after_terminal_anomaly=data["ledger_anomalies"]["after_terminal"],
            diagnostics=diagnostics,
            reasons=tuple(data["reasons"].items()),
            directive=data["directive"],
        )
        self._check_projector(file, projector)
        return projector

    def _check_projector(self, file: LoadedFile, projector: Projector) -> None:
        state_names = [state.name for state in projector.states]
        event_names = [event.name for event in projector.events]
        codes = [diagnostic.code for diagnostic in projector.diagnostics]
        reason_names = [name for name, _ in projector.reasons]

        # The generated machine also has a `raise_<code>` method per anomaly, and `call_tool_name` and `raised`.
        generated = {"raise_" + rule.anomaly for rule in projector.rules if rule.anomaly} | {"call_tool_name", "raised"}
        for name, mark in [(state.name, state.mark) for state in projector.states] + [(event.name, event.mark) for event in projector.events]:
            if keyword.iskeyword(name) or name in _RESERVED_NAMES or name in generated:
                self.error(mark, f"'{name}' is reserved in the generated state machine; choose another name")
        for name in set(state_names) & set(event_names):
            self.error(file.key_mark(("events", name)), f"'{name}' names both a state and an event")

        if projector.initial not in state_names:
            self.error(file.mark(("initial",)), f"unknown initial state '{projector.initial}'; the states are [{', '.join(state_names)}]")
            return
        for state in projector.states:
            if state.name == projector.initial and (state.status is not None or state.requires_verification or state.at_end or state.final):
                self.error(state.mark, f"initial state '{state.name}' stands for 'no operation yet': it takes no status, requires_verification, at_end or final")
            if state.name != projector.initial and state.status is None:
                self.error(state.mark, f"state '{state.name}' needs a status: only the initial state has no operation")
            if state.at_end is not None and state.at_end not in codes:
                self.error(file.mark(("states", state.name, "at_end")), f"unknown diagnostic '{state.at_end}'; the diagnostics are [{', '.join(codes)}]")
            if state.final and (state.requires_verification or state.at_end):
                self.error(state.mark, f"final state '{state.name}' is settled: it cannot require verification or raise at_end")

        shapes: dict[tuple[str, bool], EventKind] = {}
        tool_kinds = [kind.name for kind in self.wire.content_kinds if kind.tool_call is not None]
        for event in projector.events:
            declared = [kind.name for kind in self.wire.content_kinds if kind.name == event.content_kind]
            if not declared:
                self.error(
                    file.mark(("events", event.name, "content_kind")),
                    f"unknown content kind '{event.content_kind}'; spec/runtime_event.yaml declares [{', '.join(k.name for k in self.wire.content_kinds)}]",
                )
                continue
            tool_call = self.wire.kind(event.content_kind).tool_call
            if tool_call is None:
                self.error(
                    file.mark(("events", event.name, "content_kind")),
                    f"content kind '{event.content_kind}' takes no part in tool state (no tool_call in spec/runtime_event.yaml); the tool kinds are [{', '.join(tool_kinds)}]",
                )
                continue
            if event.is_error and tool_call.error_flag is None:
                self.error(file.mark(("events", event.name, "is_error")), f"content kind '{event.content_kind}' has no error_flag in spec/runtime_event.yaml; only kinds with one may set is_error")
                continue
            shape = (event.content_kind, event.is_error)
            if shape in shapes:
                self.error(event.mark, f"events '{shapes[shape].name}' and '{event.name}' match the same committed events")
            shapes.setdefault(shape, event)
        for shape in tool_event_shapes(self.wire):
            if shape not in shapes:
                self.error(file.mark(("events",)), f"no event kind matches content_kind {shape[0]} with is_error {str(shape[1]).lower()}")
        kind_of = {event.name: event for event in projector.events}
        state_of = {state.name: state for state in projector.states}

        rules_by_pair: dict[tuple[str, str], list[Rule]] = {}
        for index, rule in enumerate(projector.rules):
            ok = True
            if rule.source not in state_names:
                self.error(file.mark(("rules", index, "from")), f"unknown state '{rule.source}'; the states are [{', '.join(state_names)}]")
                ok = False
            if rule.event not in event_names:
                self.error(file.mark(("rules", index, "on")), f"unknown event '{rule.event}'; the events are [{', '.join(event_names)}]")
                ok = False
            if (rule.target is None) == (rule.anomaly is None):
                self.error(rule.mark, "a rule needs exactly one of 'to' (a transition) or 'anomaly' (a diagnostic)")
                ok = False
            if rule.target is not None and rule.target not in state_names:
                self.error(file.mark(("rules", index, "to")), f"unknown state '{rule.target}'; the states are [{', '.join(state_names)}]")
                ok = False
            if rule.anomaly is not None and rule.anomaly not in codes:
                self.error(file.mark(("rules", index, "anomaly")), f"unknown diagnostic '{rule.anomaly}'; the diagnostics are [{', '.join(codes)}]")
                ok = False
            if not ok:
                continue
            source = state_of[rule.source]
            kind = kind_of[rule.event]
            tool_call = self._tool_call(kind)
            opens = tool_call is not None and tool_call.role == "call"
            if rule.when is not None and (source.status is None or opens or tool_call is None or tool_call.tool_name is None):
                self.error(file.mark(("rules", index, "when")), f"'when: {rule.when}' compares a result's tool name with its call's: it needs a result event that names a tool (tool_call.tool_name) from a state with a status")
            if rule.target is not None:
                target = state_of[rule.target]
                if rule.target == projector.initial:
                    self.error(file.mark(("rules", index, "to")), f"no rule may return to the initial state '{rule.target}': an operation, once created, exists")
                elif source.final and rule.target != rule.source:
                    self.error(rule.mark, f"final state '{rule.source}' is settled: its rules must be anomalies, not a transition to '{rule.target}'")
                elif source.status is None and not opens:
                    self.error(rule.mark, f"only a call (tool_call.role: call) can create an operation; '{rule.event}' cannot leave '{rule.source}'")
                elif source.status is not None and opens and rule.target != rule.source:
                    self.error(rule.mark, f"a call for an existing operation cannot move '{rule.source}' to '{target.name}'")
            rules_by_pair.setdefault((rule.source, rule.event), []).append(rule)

        # Deterministic and complete: for every state x event exactly one rule applies, whatever the names.
        for state in projector.states:
            for event in projector.events:
                rules = rules_by_pair.get((state.name, event.name), [])
                if not rules:
                    self.error(file.mark(("rules",)), f"incomplete machine: no rule for state '{state.name}' on event '{event.name}'")
                    continue
                seen: dict[str | None, Rule] = {}
                for rule in rules:
                    clash = [other for when, other in seen.items() if when is None or rule.when is None or when == rule.when]
                    if clash:
                        self.error(rule.mark, f"nondeterministic machine: this rule and the one at {clash[0].mark} both apply to state '{state.name}' on event '{event.name}'")
                    seen.setdefault(rule.when, rule)
                if None not in seen and set(seen) != set(CONDITIONS):
                    missing = [condition for condition in CONDITIONS if condition not in seen]
                    self.error(rules[0].mark, f"incomplete machine: state '{state.name}' on event '{event.name}' has no rule for when: {', '.join(missing)}")

        transitions = {(rule.source, rule.target) for rule in projector.rules if rule.target is not None and rule.target in state_names}
        reachable = _closure({projector.initial}, transitions)
        for state in projector.states:
            if state.name not in reachable:
                self.error(state.mark, f"unreachable state '{state.name}': no transition leads to it from '{projector.initial}'")
            elif not state.final and not (_closure({state.name}, transitions) & {s.name for s in projector.states if s.final}):
                self.error(state.mark, f"trap state '{state.name}': it is not final and no transition leads from it to a final state")

        for diagnostic in projector.diagnostics:
            if diagnostic.reason not in reason_names:
                self.error(file.mark(("diagnostics", diagnostic.code, "reason")), f"unknown reason '{diagnostic.reason}'; the reasons are [{', '.join(reason_names)}]")
        if projector.after_terminal_anomaly not in codes:
            self.error(file.mark(("ledger_anomalies", "after_terminal")), f"unknown diagnostic '{projector.after_terminal_anomaly}'; the diagnostics are [{', '.join(codes)}]")

    def _tool_call(self, kind: EventKind):  # noqa: ANN202 - ToolCall | None
        declared = [k for k in self.wire.content_kinds if k.name == kind.content_kind]
        return declared[0].tool_call if declared else None

    # -- decisions ------------------------------------------------------------------------------------------
    def _decisions(self, file: LoadedFile, ledger: CanonicalLedger, projector: Projector) -> tuple[tuple[Decision, ...], LedgerRules]:
        data = file.data
        prefix_names = [prefix.name for prefix in ledger.prefixes]
        codes = [diagnostic.code for diagnostic in projector.diagnostics]
        reasons = [name for name, _ in projector.reasons]
        decisions = []
        for name, item in data["prefixes"].items():
            path = ("prefixes", name)
            if name not in prefix_names:
                self.error(file.key_mark(path), f"decision for unknown prefix '{name}'; the prefixes are [{', '.join(prefix_names)}]")
                continue
            statuses = item["operation_statuses"]
            if sorted(statuses) != sorted(ledger.outcome_names):
                self.error(file.mark(path + ("operation_statuses",)), f"operation_statuses gives outcomes [{', '.join(statuses)}]; the outcomes are [{', '.join(ledger.outcome_names)}]")
            for index, code in enumerate(item["diagnostics"]):
                if code not in codes:
                    self.error(file.mark(path + ("diagnostics", index)), f"unknown diagnostic '{code}'; the diagnostics are [{', '.join(codes)}]")
            for index, reason in enumerate(item["rejection_reasons"]):
                if reason not in reasons:
                    self.error(file.mark(path + ("rejection_reasons", index)), f"unknown reason '{reason}'; the reasons are [{', '.join(reasons)}]")
            prefix = ledger.prefix(name)
            in_prefix = [event.name for event in ledger.events[: prefix.length]]
            for index, event_name in enumerate(item["replay"]):
                if event_name not in in_prefix:
                    self.error(file.mark(path + ("replay", index)), f"replay names '{event_name}', which is not in prefix '{name}' [{', '.join(in_prefix)}]")
            decisions.append(
                Decision(
                    prefix=name,
                    summary=item["summary"],
                    same_tool_decision_as=item.get("same_tool_decision_as"),
                    disposition=item["disposition"],
                    operation_statuses=tuple((outcome, tuple(statuses.get(outcome, ()))) for outcome in ledger.outcome_names),
                    diagnostics=tuple(item["diagnostics"]),
                    rejection_reasons=tuple(item["rejection_reasons"]),
                    replay=tuple(item["replay"]),
                    terminal_fact=item["terminal_fact"],
                    mark=file.key_mark(path),
                )
            )
        decided = {decision.prefix for decision in decisions}
        for prefix in ledger.prefixes:
            if prefix.name not in decided and prefix.name not in data["prefixes"]:
                self.error(prefix.mark, f"prefix '{prefix.name}' has no decision in spec/decisions.yaml")
        by_name = {decision.prefix: decision for decision in decisions}
        for decision in decisions:
            other_name = decision.same_tool_decision_as
            if other_name is None:
                continue
            other = by_name.get(other_name)
            if other is None:
                self.error(file.mark(("prefixes", decision.prefix, "same_tool_decision_as")), f"unknown prefix '{other_name}'; the prefixes are [{', '.join(by_name)}]")
                continue
            for field in ("disposition", "operation_statuses", "diagnostics", "rejection_reasons"):
                if getattr(decision, field) != getattr(other, field):
                    self.error(decision.mark, f"prefix '{decision.prefix}' claims the same tool decision as '{other_name}' ({other.mark}) but its {field.replace('_', ' ')} differ")
        rules_data = data["ledger_rules"]
        diagnostic = rules_data["high_water_mismatch"]["diagnostic"]
        if diagnostic not in codes:
            self.error(file.mark(("ledger_rules", "high_water_mismatch", "diagnostic")), f"unknown diagnostic '{diagnostic}'; the diagnostics are [{', '.join(codes)}]")
        kinds = tuple(rules_data["storage_corruption"]["kinds"].items())
        differences = data.get("reference_differences", {"anomalies": [], "corruption_kinds": []})
        anomalies = {rule.anomaly for rule in projector.rules if rule.anomaly} | {projector.after_terminal_anomaly}
        for index, code in enumerate(differences["anomalies"]):
            if code not in anomalies:
                self.error(file.mark(("reference_differences", "anomalies", index)), f"'{code}' is not an anomaly; the anomalies are [{', '.join(sorted(anomalies))}]")
        for index, kind in enumerate(differences["corruption_kinds"]):
            if kind not in dict(kinds):
                self.error(file.mark(("reference_differences", "corruption_kinds", index)), f"unknown corruption kind '{kind}'; the kinds are [{', '.join(dict(kinds))}]")
        rules = LedgerRules(
            high_water_rule=rules_data["high_water_mismatch"]["rule"],
            high_water_diagnostic=diagnostic,
            corruption_rule=rules_data["storage_corruption"]["rule"],
            corruption_kinds=kinds,
            reference_anomalies=tuple(differences["anomalies"]),
            reference_corruption_kinds=tuple(differences["corruption_kinds"]),
        )
        return tuple(decisions), rules

    # -- invariants -----------------------------------------------------------------------------------------
    def _invariants(self, file: LoadedFile, projector: Projector) -> tuple[Invariant, ...]:
        anomalies = {rule.anomaly for rule in projector.rules if rule.anomaly} | {projector.after_terminal_anomaly}
        invariants = []
        for name, item in file.data["invariants"].items():
            exempt = tuple(item.get("exempt_diagnostics", ()))
            if exempt and name != "monotonic_evidence":
                self.error(file.mark(("invariants", name, "exempt_diagnostics")), "only monotonic_evidence takes exempt_diagnostics")
            for index, code in enumerate(exempt):
                if code not in anomalies:
                    self.error(file.mark(("invariants", name, "exempt_diagnostics", index)), f"'{code}' is not an anomaly; the anomalies are [{', '.join(sorted(anomalies))}]")
            invariants.append(Invariant(name=name, description=item["description"], exempt_diagnostics=exempt, mark=file.key_mark(("invariants", name))))
        return tuple(invariants)

    # -- failpoints -----------------------------------------------------------------------------------------
    def _failpoints(self, file: LoadedFile, ledger: CanonicalLedger) -> tuple[Failpoint, ...]:
        prefix_names = [prefix.name for prefix in ledger.prefixes]
        failpoints = []
        seen: dict[str, Mark] = {}
        previous = -1
        for index, item in enumerate(file.data["failpoints"]):
            path = ("failpoints", index)
            mark = file.mark(path)
            failpoint_id = item["id"]
            if failpoint_id in seen:
                self.error(file.mark(path + ("id",)), f"duplicate failpoint id '{failpoint_id}' (first defined at {seen[failpoint_id]})")
            elif int(failpoint_id[1:]) <= previous:
                self.error(file.mark(path + ("id",)), f"failpoint '{failpoint_id}' is out of order: ids increase down the table")
            seen.setdefault(failpoint_id, mark)
            previous = max(previous, int(failpoint_id[1:]))
            if item["committed_prefix"] not in prefix_names:
                self.error(file.mark(path + ("committed_prefix",)), f"unknown prefix '{item['committed_prefix']}'; the prefixes are [{', '.join(prefix_names)}]")
            failpoints.append(
                Failpoint(id=failpoint_id, boundary=item["boundary"], committed_prefix=item["committed_prefix"], note=item.get("note"), mark=mark)
            )
        return tuple(failpoints)

    # -- defined but unused ---------------------------------------------------------------------------------
    def _unused(self, ledger: CanonicalLedger, projector: Projector, failpoints: tuple[Failpoint, ...], rules: LedgerRules) -> None:
        used_prefixes = {failpoint.committed_prefix for failpoint in failpoints}
        for prefix in ledger.prefixes:
            if prefix.name not in used_prefixes:
                self.error(prefix.mark, f"prefix '{prefix.name}' is defined but no failpoint commits it")
        used_codes = {rule.anomaly for rule in projector.rules} | {state.at_end for state in projector.states}
        used_codes |= {projector.after_terminal_anomaly, rules.high_water_diagnostic}
        for diagnostic in projector.diagnostics:
            if diagnostic.code not in used_codes:
                self.error(diagnostic.mark, f"diagnostic '{diagnostic.code}' is defined but nothing raises it")
        used_reasons = {diagnostic.reason for diagnostic in projector.diagnostics}
        file = self.files["projector"]
        for name, _ in projector.reasons:
            if name not in used_reasons:
                self.error(file.key_mark(("reasons", name)), f"reason '{name}' is defined but no diagnostic rejects with it")


def _closure(start: set[str], edges: set[tuple[str, str | None]]) -> set[str]:
    seen = set(start)
    frontier = list(start)
    while frontier:
        current = frontier.pop()
        for source, target in edges:
            if source == current and target is not None and target not in seen:
                seen.add(target)
                frontier.append(target)
    return seen
