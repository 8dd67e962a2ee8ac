"""The frozen model of a language contract (spec/contract.yaml), checked and with its expressions compiled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RowField:
    """A field of a row: its wire name, type (string, integer, number, boolean, json, object, array; `json` for a
    union of scalar types, listed in `types`), allowed values, and what the row model says beyond its type."""

    name: str
    type: str
    optional: bool
    enum: tuple[str, ...]
    description: str
    types: tuple[str, ...] = ()  # a union's scalar types ([string, integer]); empty for one type
    fields: tuple[RowField, ...] | None = None  # an object's declared fields (None: a free object)
    encoded: bool = False  # the wire holds the value as JSON text in a string (`encoded: json`)
    refers: tuple[str, tuple[str, ...]] | None = None  # (`id` or `position`, the kinds it may name; () any)


@dataclass(frozen=True)
class RowKind:
    """One kind of row, told by the tag field's value: its own fields (beside every row's)."""

    name: str
    description: str
    fields: tuple[RowField, ...]
    # (a tag path, the values it holds in a row of this kind), per path of `rows.tag` the kind constrains
    match: tuple[tuple[str, tuple[Any, ...]], ...] = ()


def walk_fields(fields: tuple[RowField, ...], at: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], RowField]]:
    """Every declared field, nested ones too, with its path."""
    found = []
    for one in fields:
        found.append(((*at, one.name), one))
        found += walk_fields(one.fields or (), (*at, one.name))
    return found


def field_at(fields: tuple[RowField, ...] | None, path: tuple[str, ...]) -> RowField | None:
    """The field `path` names through declared objects' fields; None where it leads nowhere or into free JSON."""
    found = None
    for name in path:
        if fields is None:
            return None
        found = next((one for one in fields if one.name == name), None)
        if found is None:
            return None
        fields = found.fields
    return found


def struct_name(kind: str) -> str:
    """A kind's struct in the generated row model (`tool_result` -> `ToolResultRow`)."""
    return "".join(part.capitalize() for part in kind.split("_")) + "Row"


@dataclass(frozen=True)
class Rows:
    """How a row of the runtime's ledger maps to the language."""

    id: str | None  # the path (dotted) holding a row's id; None: a row's id is its position in its run, from 1
    run: tuple[str, ...]  # the names of a run's identity, in order
    tag: tuple[str, ...]  # the paths (dotted) whose values tell a row's kind
    partial: str | None  # a boolean field marking streaming chunks (never an item's, never replayed)
    unknown_keys: str  # reject or ignore
    fields: tuple[RowField, ...]  # every row's
    kinds: tuple[RowKind, ...]
    layout: str | None = None  # where a run's rows live in a workspace: a relative path naming each run part as {NAME}
    # Per run name: where its value is read: ("rows", path) every row holds it alike, ("first_row", path) the run's
    # first row holds it, ("layout", "") the file's place in the workspace
    run_from: tuple[tuple[str, str, str], ...] = ()
    order: tuple[str, str] | None = None  # (a path whose values increase row to row, the corruption's message)

    def id_said(self) -> str:
        """How a row's id is named in a message: its field, or its position."""
        return self.id if self.id is not None else "position"


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
    keys: tuple[tuple[str, Expr], ...] = ()  # per class of row, its own key (`key: {CLASS: EXPR}`); `key` the first

    @property
    def key_texts(self) -> tuple[str, ...]:
        return tuple(expr.text for _, expr in self.keys) if self.keys else (self.key.text,)

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
