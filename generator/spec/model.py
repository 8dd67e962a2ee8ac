"""The validated spec as frozen dataclasses: what every renderer reads, and nothing else does.

Each record keeps the `Mark` of its definition so that later checks and the review diff can name the line a
person has to edit. Ordering is the spec's own order everywhere; nothing depends on set or hash order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import Mark
from .continuation_crash import ContinuationCrashSpec
from .continuation_model import ContinuationSpec


@dataclass(frozen=True)
class WireField:
    """One declared field of the RuntimeEvent row or of a content kind."""

    name: str  # as written on the wire (camelCase)
    attribute: str  # the Python attribute of the decoding model (snake_case)
    type: str  # string | boolean | number | json | object | array | content
    required: bool
    enum: tuple[str, ...]
    description: str
    mark: Mark


@dataclass(frozen=True)
class ToolCall:
    """How a content kind takes part in tool state; fields are wire names of the kind's own fields."""

    role: str  # call (opens an operation) | result (settles one)
    call_id: str
    tool_name: str | None
    arguments: str | None
    error_flag: str | None


@dataclass(frozen=True)
class ContentKind:
    name: str
    class_name: str
    description: str
    fields: tuple[WireField, ...]
    tool_call: ToolCall | None
    mark: Mark

    def field(self, name: str) -> WireField:
        return next(field for field in self.fields if field.name == name)


@dataclass(frozen=True)
class WireRefusal:
    """A row the runtime refuses where `when` (an expression of `row`, compiled: (text, Python source)) holds."""

    when: tuple[str, str]
    message: str
    mark: Mark
    needs: tuple[str, ...] | None = None  # the optional top-level fields one of which a refused row holds


@dataclass(frozen=True)
class WireFormat:
    """spec/runtime_event.yaml: what one ledger row may hold, and what makes it partial or terminal."""

    unknown_keys: str  # reject | ignore
    fields: tuple[WireField, ...]
    content_tag: str
    content_kinds: tuple[ContentKind, ...]
    partial_flag: str
    terminal_statuses: tuple[str, ...]
    terminal_flag_field: str
    terminal_flag_key: str
    # Rows refused although every field has its type (`invalid_when`), and how their tests compare values
    semantics: str = "strict"
    refusals: tuple[WireRefusal, ...] = ()

    def field(self, name: str) -> WireField:
        return next(field for field in self.fields if field.name == name)

    def kind(self, name: str) -> ContentKind:
        return next(kind for kind in self.content_kinds if kind.name == name)


@dataclass(frozen=True)
class Failpoint:
    id: str
    boundary: str
    committed_prefix: str
    note: str | None
    mark: Mark


@dataclass(frozen=True)
class LedgerEvent:
    """One canonical event; `wire_by_outcome` is the full RuntimeEvent per outcome, as JSON text."""

    name: str
    wire_by_outcome: tuple[tuple[str, str], ...]
    mark: Mark

    def wire(self, outcome: str) -> str:
        return dict(self.wire_by_outcome)[outcome]


@dataclass(frozen=True)
class Prefix:
    name: str
    through: str | None
    length: int
    mark: Mark


@dataclass(frozen=True)
class CanonicalLedger:
    session_id: str
    run_id: str
    outcomes: tuple[tuple[str, str], ...]
    events: tuple[LedgerEvent, ...]
    prefixes: tuple[Prefix, ...]

    @property
    def outcome_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.outcomes)

    def prefix(self, name: str) -> Prefix:
        return next(prefix for prefix in self.prefixes if prefix.name == name)


@dataclass(frozen=True)
class Decision:
    prefix: str
    summary: str
    same_tool_decision_as: str | None
    disposition: str
    operation_statuses: tuple[tuple[str, tuple[str, ...]], ...]
    diagnostics: tuple[str, ...]
    rejection_reasons: tuple[str, ...]
    replay: tuple[str, ...]
    terminal_fact: bool
    mark: Mark
    # Where each of the decision's keys stands (a contradiction points at the line that says the wrong thing).
    key_marks: tuple[tuple[str, Mark], ...] = field(default=(), compare=False)

    def key_mark(self, key: str) -> Mark:
        return dict(self.key_marks).get(key, self.mark)

    def statuses(self, outcome: str) -> tuple[str, ...]:
        return dict(self.operation_statuses)[outcome]


@dataclass(frozen=True)
class LedgerRules:
    high_water_rule: str
    high_water_diagnostic: str
    corruption_rule: str
    corruption_kinds: tuple[tuple[str, str], ...]
    # Where a Phase 0 reference may decide otherwise (for `conform --strictness reference`; not reviewed).
    reference_anomalies: tuple[str, ...] = ()
    reference_corruption_kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class State:
    name: str
    description: str
    status: str | None
    requires_verification: bool
    final: bool
    at_end: str | None
    mark: Mark
    # A state the operation never leaves, diagnosed at the end (a dead end by design: parked, corruption)
    absorbing: bool = False


@dataclass(frozen=True, repr=False)
class EventKind:
    """A class of committed events that drives an operation: a tool content kind (split by `when`, a test of the run's
    facts), or, without `content_kind`, an action event told by `when` over the row, naming its operation by `key`."""

    def __repr__(self) -> str:
        # The fields an event kind always had, then only the tests it has (a finding's fingerprint hashes this text)
        fields = [f"{name}={getattr(self, name)!r}" for name in ("name", "description", "content_kind", "is_error", "mark")]
        fields += [f"{name}={getattr(self, name)[0]!r}" for name in ("when", "key") if getattr(self, name) is not None]
        fields += [f"against_call={[(c.when[0], c.anomaly) + ((c.at,) if c.at != 'row' else ()) for c in self.against_call]!r}, conflict_to={self.conflict_to!r}"] if self.against_call else []
        return f"EventKind({', '.join(fields)})"

    name: str
    description: str
    content_kind: str | None
    is_error: bool
    mark: Mark
    when: tuple[str, str] | None = None
    key: tuple[str, str] | None = None
    needs: tuple[str, ...] | None = None  # the top-level fields one of which an action event's row holds (None: any)
    against_call: tuple[RowCheck, ...] = ()  # `against_call`: its checks of its operation (each that holds raises)
    conflict_to: str | None = None  # and the state one that holds moves it to (where its rule moves it on)


@dataclass(frozen=True)
class RowCheck:
    """A diagnostic raised at every committed row where `when` (an expression over the row) holds."""

    when: tuple[str, str]
    anomaly: str
    mark: Mark
    needs: tuple[str, ...] | None = None
    skip: bool = False  # the row takes no part in tool state, nor in the replay
    at: str = "row"  # an `against_call` check: the row its diagnostic names (`row`, or `response`: the operation's)


@dataclass(frozen=True)
class Rule:
    """A transition (`target`), an anomaly (`anomaly`, the state is kept), or both (the state moves and the anomaly is
    raised) for one state x event x condition; `also`: more diagnostics the anomaly raises, after it."""

    source: str
    event: str
    when: str | None
    target: str | None
    anomaly: str | None
    mark: Mark
    also: tuple[str, ...] = ()
    place: int = 0  # its index in spec/projector.yaml's rules (a rule `from` several states is one Rule each)

    @property
    def codes(self) -> tuple[str, ...]:
        """Every diagnostic the rule raises, in order (none: a plain transition)."""
        return () if self.anomaly is None else (self.anomaly, *self.also)

    @property
    def step_anomaly(self) -> str | tuple[str, ...] | None:
        """The anomaly as the projector table holds it: its code, or its codes when it raises several."""
        return self.codes if self.also else self.anomaly

    @property
    def next_state(self) -> str:
        return self.target if self.target is not None else self.source


@dataclass(frozen=True)
class DiagnosticSpec:
    code: str
    reason: str
    message: str
    mark: Mark


@dataclass(frozen=True)
class Projector:
    initial: str
    states: tuple[State, ...]
    events: tuple[EventKind, ...]
    rules: tuple[Rule, ...]
    after_terminal_anomaly: str | None  # `ledger_anomalies.after_terminal` (None: a row after it raises nothing)
    diagnostics: tuple[DiagnosticSpec, ...]
    reasons: tuple[tuple[str, str], ...]
    directive: str
    # The language's expressions (docs/language.md): the value rule, the run's facts (name -> (text, Python)),
    # the checks of each row
    semantics: str = "strict"
    facts: tuple[tuple[str, tuple[str, str]], ...] = ()
    row_checks: tuple[RowCheck, ...] = ()
    # `replay.hidden` (a row never replayed, though it drives tool state), its `unpaired_result` as `anomaly`
    # ("" when the contract names none)
    hidden: RowCheck | None = None
    # `ledger_anomalies.duplicate_id` / `foreign_row`: the diagnostic of a repeated event id / another run's row
    # (None: the reader refuses the ledger)
    duplicate_id: str | None = None
    foreign_row: str | None = None
    # `diagnostic_order`: the operations' diagnostics before those raised in ledger order; codes listed last
    operations_first: bool = False
    listed_last: tuple[str, ...] = ()

    @property
    def action_events(self) -> tuple[tuple[EventKind, tuple[str, str], tuple[str, str]], ...]:
        """(event kind, its `when`, its `key`) of each action event (an event kind without a content kind: its
        compiled parts are (text, Python source); docs/language.md)."""
        return tuple((kind, kind.when, kind.key) for kind in self.events if kind.content_kind is None and kind.when is not None and kind.key is not None)

    @property
    def anomalies(self) -> tuple[str, ...]:
        """Every diagnostic raised for one event out of place: the rules', after the terminal event, the row checks'."""
        codes = [code for rule in self.rules for code in rule.codes] + [code for code in (self.after_terminal_anomaly,) if code]
        hidden = [self.hidden.anomaly] if self.hidden is not None and self.hidden.anomaly else []
        ledger = [code for code in (self.duplicate_id, self.foreign_row) if code]
        against_call = [check.anomaly for kind in self.events for check in kind.against_call]
        return tuple(dict.fromkeys(codes + [check.anomaly for check in self.row_checks] + hidden + ledger + against_call))

    def state(self, name: str) -> State:
        return next(state for state in self.states if state.name == name)


@dataclass(frozen=True)
class Invariant:
    """A property `resume-contract verify` checks on every explored ledger."""

    name: str
    description: str
    exempt_diagnostics: tuple[str, ...]
    mark: Mark


@dataclass(frozen=True)
class Scope:
    name: str  # the contract's name (with the phase and the spec's sha256: its identity)
    phase: str
    summary: str
    pipeline: tuple[str, ...]
    harness_scope: str
    out_of_scope: tuple[str, ...]


@dataclass(frozen=True)
class Spec:
    """The whole validated contract, plus the files it came from and their combined sha256."""

    failpoints: tuple[Failpoint, ...]
    wire: WireFormat
    ledger: CanonicalLedger
    decisions: tuple[Decision, ...]
    ledger_rules: LedgerRules
    projector: Projector
    invariants: tuple[Invariant, ...]
    scope: Scope
    source_files: tuple[str, ...]
    sha256: str
    # Files of the project the spec names, relative to its root: the run loop the crash harness kills (None:
    # none declared) and the oracle `matches_oracle` compares with (None: the packaged Phase 0 oracle).
    run_loop: str | None = None
    oracle: str | None = None
    # spec/invariants.yaml `packaged_oracle`: the edition of the packaged oracle (when `oracle` names no file)
    packaged_oracle: str = "tool-boundary"
    # "file:key/path" -> where that key stands, e.g. "projector:diagnostics/pending_tool_result/message".
    locations: Mapping[str, Mark] = field(default_factory=dict)
    # (spec file name, its JSON Schema as canonical JSON): what the spec is checked against, for the review.
    schemas: tuple[tuple[str, str], ...] = ()
    # spec/continuation.yaml, the Phase 1 continuation decision (None: a Phase 0 contract, without it).
    continuation: ContinuationSpec | None = None
    # spec/lifecycle.yaml, Phase 1's crash contract (None: the contract has none).
    continuation_crash: ContinuationCrashSpec | None = None
    # spec/failpoints.yaml `sqlite`: the SQLite store's crash boundaries (none: the contract declares no SQLite
    # store), and the run loop that writes it (None: the packaged one).
    sqlite_failpoints: tuple[Failpoint, ...] = ()
    sqlite_run_loop: str | None = None

    def decision(self, prefix: str) -> Decision:
        return next(decision for decision in self.decisions if decision.prefix == prefix)

    def location(self, file: str, *path: str | int) -> Mark:
        """The mark of a key, or of its nearest enclosing key, or the file's first line."""
        steps = [str(step) for step in path]
        while steps:
            mark = self.locations.get(f"{file}:{'/'.join(steps)}")
            if mark is not None:
                return mark
            steps.pop()
        return Mark(f"spec/{file}.yaml", 1, 1)
