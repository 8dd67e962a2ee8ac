"""Every small ledger, over an alphabet derived from a contract: never a hand-written list of kinds or statuses.

The letters are read off a decoding model and its projector table (both generated from the spec, or built
from it in memory), so a spec edit that adds or removes a content kind, a status or a flag changes what is
explored:

- every tool event the projector names: each content kind that opens an operation, for call ids `a` and `b`;
  each kind that settles one, for `a` and `b`, with its error flag and without, and (for `a`) naming another
  tool than the call;
- every other content kind, and an event with no content;
- an event with each value of `status` (terminal or not), and one with the terminal flag set;
- every letter above again as a partial event;
- the rows that exercise the contract's expressions (`ProjectorTable.probes`: an action event, a value a test
  compares a field with), each a class of its own.

A row holds only the fields its letter needs and the required ones (with a plain value of their type).
Letters that every projector involved (and, for `verify`, the oracle) reads alike are explored once, through
the first of them (`Alphabet.reduced`): what decides a plan is what the walk reads of an event
(`walk_reads.reading`), so a ledger of the other letters decides exactly as its representative's. Words are
produced shortest first, then in letter order, so the first word found with a property is a shortest one.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from ..errors import ExpressionFailed, RowRefused
from .letters import CALL_IDS, ID_FIELD, STATUS_ATTRIBUTE, TELLING_ARGS, TOOLS, Letter, Shape, Wire, struct_config
from .table import ProjectorTable
from .walk_reads import reading
from .wire import WireModel

__all__ = ["CALL_IDS", "ID_FIELD", "TOOLS", "Alphabet", "Letter", "Wire", "deepest", "letters_of", "projector_view", "union"]

MAX_HIDDEN_FORMS = 15  # combinations of the hidden test's fields each tool letter is explored with
_ABSENT = object()


def letters_of(
    table: ProjectorTable, model: WireModel, *, statuses: Sequence[str] = (), flags: Sequence[tuple[str, str]] = ()
) -> tuple[Letter, ...]:
    """Every letter the contract of `table` and `model` declares (see the module's docstring), plus an event
    with each of `statuses` and each (field, key) of `flags` (wire names) that the model reads: another
    reader's idea of what is terminal, such as the oracle's."""
    shape = Shape(model, table)
    letters = _tool_letters(shape)
    letters += _hidden_letters(table, shape, letters) + _result_letters(table, shape, letters)
    letters += _plain_letters(shape) + _status_letters(shape, statuses, flags)
    partial = shape.wire_name(table.partial_attribute)
    letters += [Letter(f"partial {letter.name}", tuple({**dict(letter.fields), partial: True}.items())) for letter in letters]
    # The rows that exercise the contract's expressions; partial too where a run's first row is read through one
    # (its facts are read from it, partial or not): a letter each costs depth
    for name, fields, first in table.probes:
        letters.append(Letter(name, shape.event(**json.loads(fields))))
        if first:
            letters.append(Letter(f"partial {name}", shape.event(**json.loads(fields), **{partial: True})))
    unique: dict[str, Letter] = {}
    for letter in letters:
        unique.setdefault(letter.key, letter)
    return tuple(letter for letter in unique.values() if _reads(model, letter))


def _hidden_letters(table: ProjectorTable, shape: Shape, tool_letters: list[Letter]) -> list[Letter]:
    """Each tool letter again holding each combination of the values the hidden test is exercised with
    (`ProjectorTable.hidden_probes`: its literals, another value, an empty object) and of those fields' declared
    values, each field also absent (at most MAX_HIDDEN_FORMS combinations): rows the test hides and rows it
    leaves visible that another reader (the oracle, the other side of a diff) may judge otherwise."""
    if table.hidden is None:
        return []
    values: dict[str, list[Any]] = {}
    for probe in table.hidden_probes:
        for name, value in json.loads(probe).items():
            values.setdefault(name, [])
            if value not in values[name]:
                values[name].append(value)
    for name, listed in values.items():
        listed += [value for value in shape.declared_values(name) if value not in listed]
    names = sorted(values)
    forms = itertools.product(*([_ABSENT, *values[name]] for name in names))
    letters = []
    for form in itertools.islice(forms, 1, MAX_HIDDEN_FORMS + 1):  # (the first is every field absent: the letter itself)
        held = {name: value for name, value in zip(names, form) if value is not _ABSENT}
        said = ", ".join(f"{name} {json.dumps(value)}" for name, value in held.items())
        letters += [Letter(f"{said} {letter.name}", tuple({**dict(letter.fields), **held}.items())) for letter in tool_letters]
    return letters


def _result_letters(table: ProjectorTable, shape: Shape, tool_letters: list[Letter]) -> list[Letter]:
    """Each result letter again holding the fields a check of a later action event reads of an operation's result
    (`ProjectorTable.result_fields`), as each probe of the contract holds them (maka's dispatch names its operation
    in its refs), and as an empty object: a result that such a check finds its operation's, and one it does not.
    (A check reading the whole result: none; the letters as they are.)"""
    fields = table.result_fields
    if not fields:
        return []
    names = [name for _, name in fields]
    rows = [json.loads(probe) for _, probe, _ in table.probes]
    candidates = [{name: value for name, value in row.items() if name in names} for row in rows] + [dict.fromkeys(names, {})]
    # One result for each way the checks judge it against the probes (the others explore nothing more)
    variants: dict[tuple[Any, ...], dict[str, Any]] = {}
    for held in candidates:
        if held:
            variants.setdefault(_judged(table, rows, held), held)
    results = [letter for letter in tool_letters if not table.tool_contents[letter.name.split("(")[0]].opens]
    return [
        Letter(f"{', '.join(f'{name} {json.dumps(value, sort_keys=True)}' for name, value in held.items())} {letter.name}", tuple({**dict(letter.fields), **held}.items()))
        for held in variants.values() for letter in results
    ]


def _judged(table: ProjectorTable, rows: list[dict[str, Any]], response: dict[str, Any]) -> tuple[Any, ...]:
    """How each check of an operation's result judges `response` with each probe row as the action event."""
    call = {"id": CALL_IDS[0], "name": TOOLS[0], "args": None}
    verdicts: list[Any] = []
    for action in table.action_kinds:
        for _, when, _ in action.against_call:
            for row in rows:
                try:
                    verdicts.append(bool(when(row, call, response, row, {})))
                except ExpressionFailed:
                    verdicts.append(None)
    return tuple(verdicts)


def _hides(table: ProjectorTable, row: dict[str, Any]) -> bool:
    """Whether the contract's hidden test holds for a row (its fields as JSON); one it cannot judge is not hidden."""
    if table.hidden is None:
        return False
    try:
        return bool(table.hidden.when(row, row, {}))
    except ExpressionFailed:
        return False


def _reads(model: WireModel, letter: Letter) -> bool:
    try:
        model.decode_row(letter.row("e1"))
    except RowRefused:
        return False
    return True


def _tool_letters(shape: Shape) -> list[Letter]:
    letters, telling_calls = [], []
    for kind in shape.kinds:
        tag = struct_config(kind).tag
        read = shape.table.tool_contents.get(tag)
        if read is None or shape.content_field is None:
            continue
        forms: list[tuple[str, str, bool]] = [(CALL_IDS[0], TOOLS[0], False), (CALL_IDS[1], TOOLS[0], False)]
        telling = read.opens and read.arguments is not None and any(action.against_call for action in shape.table.action_kinds)
        if not read.opens:
            other = [(CALL_IDS[0], TOOLS[1], False)] if read.tool_name else []
            forms = [forms[0], *other, forms[1]]
            if read.error_flag:
                forms = [form for call_id, tool, _ in forms for form in ((call_id, tool, False), (call_id, tool, True))]
        error_name = {f.name: f.encode_name for f in msgspec.structs.fields(kind)}.get(read.error_flag or "")
        for call_id, tool, failed in forms:
            fields: dict[str, Any] = {read.call_id: call_id}
            if read.tool_name:
                fields[read.tool_name] = tool
            if failed and read.error_flag:
                fields[read.error_flag] = True
            details = [call_id] + (["other tool"] if tool != TOOLS[0] else []) + ([error_name] if failed and error_name else [])
            content = shape.content(kind, **fields)
            letters.append(Letter(f"{tag}({', '.join(details)})", shape.event(**{shape.content_field: content})))
        if telling and read.arguments is not None:  # a call whose arguments every canonical encoding writes otherwise (letters.TELLING_ARGS)
            telling_fields: dict[str, Any] = {read.call_id: CALL_IDS[0], read.arguments: TELLING_ARGS}
            if read.tool_name:
                telling_fields[read.tool_name] = TOOLS[0]
            content = shape.content(kind, **telling_fields)
            telling_calls.append(Letter(f"{tag}({CALL_IDS[0]}, telling args)", shape.event(**{shape.content_field: content})))
    return letters + telling_calls


def _plain_letters(shape: Shape) -> list[Letter]:
    letters = []
    for kind in shape.kinds:
        tag = struct_config(kind).tag
        if tag not in shape.table.tool_contents and shape.content_field is not None:
            letters.append(Letter(tag, shape.event(**{shape.content_field: shape.content(kind)})))
    return [*letters, Letter("no content", shape.event())]


def _status_letters(shape: Shape, extra_statuses: Sequence[str], extra_flags: Sequence[tuple[str, str]]) -> list[Letter]:
    letters = []
    if STATUS_ATTRIBUTE in shape.by_attribute:
        status = shape.wire_name(STATUS_ATTRIBUTE)
        for value in dict.fromkeys([*shape.statuses, *sorted(shape.table.terminal_statuses), *extra_statuses]):
            letters.append(Letter(f"{status} {value}", shape.event(**{status: value})))
    attribute, key = shape.table.terminal_flag
    # Another reader's flags first: where a spec renamed the flag, the shortest ledger found names the flag that
    # no longer ends the run.
    for field, flag in dict.fromkeys([*extra_flags, (shape.wire_name(attribute), key)]):
        letters.append(Letter(f"{field}.{flag}", shape.event(**{field: {flag: True}})))
    return letters


def union(base: Sequence[Letter], head: Sequence[Letter]) -> tuple[Letter, ...]:
    """Both sides' letters, by name (a name says what the letter is: its kind, call id, tool, flag, status): a
    letter both declare is one letter, written by each side its own way; one that a side lacks is written as
    the side that declares it writes it, and read (or refused) by the other."""
    head_by_name = {letter.name: letter for letter in head}
    merged = {}
    for letter in base:
        other = head_by_name.get(letter.name)
        if other is None:
            merged[letter.name] = letter
        else:
            merged[letter.name] = Letter(letter.name, other.fields, None if other.fields == letter.fields else letter.fields)
    for letter in head:
        merged.setdefault(letter.name, letter)
    return tuple(merged.values())


View = Callable[[Letter], Hashable]


def projector_view(table: ProjectorTable, model: WireModel, *, base: bool = False) -> View:
    """What one side's walk reads of a letter's row (the base's way of writing it, with `base`): the corruption
    it is refused with, or `walk_reads.reading`."""

    probes = {name for name, _, _ in table.probes} | {f"partial {name}" for name, _, first in table.probes if first}

    def view(letter: Letter) -> Hashable:
        if letter.name in probes:
            return ("probe", letter.name)  # (what an expression reads of it: its own class)
        try:
            read = reading(table, model.decode_row(letter.row("e1", base=base)))
        except RowRefused as refused:
            return ("refused", refused.kind)
        return ("hidden", read) if _hides(table, dict(letter.fields)) else read

    return view


@dataclass(frozen=True)
class Alphabet:
    """The letters explored: every letter, in classes that every view reads alike; words spell representatives."""

    letters: tuple[Letter, ...]
    classes: tuple[tuple[int, ...], ...]  # indexes into `letters`; a class's first letter is its representative

    @classmethod
    def reduced(cls, letters: Sequence[Letter], views: Sequence[View]) -> Alphabet:
        groups: dict[tuple[Hashable, ...], list[int]] = {}
        for index, letter in enumerate(letters):
            groups.setdefault(tuple(view(letter) for view in views), []).append(index)
        return cls(tuple(letters), tuple(tuple(group) for group in groups.values()))

    @property
    def representatives(self) -> tuple[Letter, ...]:
        return tuple(self.letters[group[0]] for group in self.classes)

    def __len__(self) -> int:
        return len(self.classes)

    def letter(self, symbol: int) -> Letter:
        return self.letters[self.classes[symbol][0]]

    def wires(self, word: tuple[int, ...]) -> list[Wire]:
        """The ledger `word` spells, as JSON values; ids are e1, e2, ... by position."""
        return [self.letter(symbol).wire(f"e{position}") for position, symbol in enumerate(word, 1)]

    def rows(self, word: tuple[int, ...], *, base: bool = False) -> tuple[bytes, ...]:
        """The ledger as rows, written as the head (or, with `base`, the base) writes each letter."""
        return tuple(self.letter(symbol).row(f"e{position}", base=base) for position, symbol in enumerate(word, 1))

    def spell(self, word: tuple[int, ...]) -> str:
        return ", ".join(self.letter(symbol).name for symbol in word) or "(empty ledger)"

    def words(self, max_length: int) -> Iterator[tuple[int, ...]]:
        """Every word of length 0..max_length, shortest first."""
        for length in range(max_length + 1):
            yield from itertools.product(range(len(self.classes)), repeat=length)

    def count(self, max_length: int) -> int:
        return sum(len(self.classes) ** length for length in range(max_length + 1))

    def describe(self) -> str:
        """`36 letters in 11 classes`, for a report."""
        return f"{len(self.letters)} letters in {len(self.classes)} classes"

    def listing(self) -> list[tuple[str, list[str]]]:
        """Each class as (its representative's name, the names of the others)."""
        return [(self.letters[group[0]].name, [self.letters[i].name for i in group[1:]]) for group in self.classes]


def deepest(alphabet: Alphabet, budget: int, ceiling: int) -> int:
    """The greatest depth up to `ceiling` whose words number at most `budget` (at least 1)."""
    depth = 1
    while depth < ceiling and alphabet.count(depth + 1) <= budget:
        depth += 1
    return depth
