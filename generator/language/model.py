"""The frozen model of a language contract (spec/contract.yaml), checked and with its expressions compiled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RowField:
    """A field of a row: its wire name, type (string, boolean, number, json, object, array), allowed values."""

    name: str
    type: str
    optional: bool
    enum: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class RowKind:
    """One kind of row, told by the tag field's value: its own fields (beside every row's)."""

    name: str
    description: str
    fields: tuple[RowField, ...]


def struct_name(kind: str) -> str:
    """A kind's struct in the generated row model (`tool_result` -> `ToolResultRow`)."""
    return "".join(part.capitalize() for part in kind.split("_")) + "Row"


@dataclass(frozen=True)
class Rows:
    """How a row of the runtime's ledger maps to the language."""

    id: str  # the field holding the event's id
    run: tuple[str, ...]  # the fields every row of one run holds alike
    tag: str  # the field whose value is the row's kind
    partial: str | None  # a boolean field marking streaming chunks (never an item's, never replayed)
    unknown_keys: str  # reject or ignore
    fields: tuple[RowField, ...]  # every row's
    kinds: tuple[RowKind, ...]
    layout: str | None = None  # where a run's rows live in a workspace: a relative path naming each run field as {FIELD}


@dataclass(frozen=True)
class Expr:
    """An expression: its text in the spec and the Python the generator compiled it to."""

    text: str
    source: str


@dataclass(frozen=True)
class RowClass:
    """A class of rows: a kind (`test` None), `any` row, or a test over a row (`classes:`)."""

    name: str
    kinds: tuple[str, ...]  # the kinds a row of the class may be
    test: Expr | None


@dataclass(frozen=True)
class State:
    name: str
    description: str
    status: str | None  # reported in the decision's items when set
    at_end: str | None  # the diagnostic raised when an item ends the prefix in this state
    replay_opener: bool  # whether the row that opened an item ending here is replayed


@dataclass(frozen=True)
class Entry:
    """One entry of an item's `on`: for a row of `row_class` moving an item in one of `sources`, when `when` holds."""

    row_class: str
    sources: tuple[str, ...]
    when: Expr | None
    to: str | None
    anomaly: str | None
    corrupt: str | None


@dataclass(frozen=True)
class Item:
    """A keyed lifecycle."""

    name: str
    key: Expr
    initial: str
    states: tuple[State, ...]
    entries: tuple[Entry, ...]
    report: tuple[tuple[str, Expr], ...] = ()  # what a decision says of each item, read from the row that opened it

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(entry.row_class for entry in self.entries))


@dataclass(frozen=True)
class Decision:
    proceed: str
    stop: str
    diagnostics: tuple[tuple[str, str, str], ...]  # (code, reason, message)
    reasons: tuple[tuple[str, str], ...]  # (reason, meaning), in the order a decision lists them
    offset_mismatch: str | None = None  # the diagnostic when the caller's expected high-water is not the rows'
    checks: tuple[tuple[Expr, str], ...] = ()  # (a condition over the prefix, the diagnostic it raises), in order


@dataclass(frozen=True)
class Expect:
    """What a scenario says the contract decides after a prefix: a decision (its word, reasons in order, and when
    given the items as `item/key=status`), or that the rows are corrupt."""

    decision: str | None
    reasons: tuple[str, ...]
    items: tuple[str, ...] | None
    corrupt: bool

    def as_json(self) -> dict:
        if self.corrupt:
            return {"corrupt": True}
        return {"decision": self.decision, "reasons": list(self.reasons), **({} if self.items is None else {"items": list(self.items)})}


@dataclass(frozen=True)
class Scenario:
    """A ledger the contract decides row by row: `generate` checks it, the generated tests and `crash` run it."""

    name: str
    description: str
    start: Expect  # the empty prefix
    rows: tuple[tuple[dict, Expect], ...]  # each row (as JSON) and the decision once it is committed


@dataclass(frozen=True)
class LanguageSpec:
    name: str
    phase: str
    summary: str
    semantics: str
    rows: Rows
    classes: tuple[RowClass, ...]
    items: tuple[Item, ...]
    replay: Expr | None  # which committed rows the model may see again (besides the hidden openers)
    decision: Decision
    sha256: str
    scenarios: tuple[Scenario, ...] = ()

    @property
    def source_files(self) -> tuple[str, ...]:
        return ("spec/contract.yaml",)

    # Groups of classes no row may be in two of: (the classes, "anomaly" or "corrupt", the diagnostic or message)
    exclusive: tuple[tuple[tuple[str, ...], str, str], ...] = ()
    oracle: str | None = None  # the project's independent oracle (a Python file), which `verify` compares with
    # Where each key stands in spec/contract.yaml (a path of keys -> its Mark): `diff` names a change's place by it.
    key_marks: Any = field(default=None, compare=False, repr=False)
    # What a catalogue contract names and a language contract does not: its run loops.
    run_loop = None
    continuation_crash = None
