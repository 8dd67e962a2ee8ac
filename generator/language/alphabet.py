"""The rows a language contract's ledgers are explored from (`diff`, `verify`): they look where the contracts look.

From both contracts' expressions (every class's test, every item's key, guards and report, the replay, every
decision check), read as trees (generator/expr), never as text: each path of a row they read — `row.P`, `V.P` for a
macro's variable over the events, `first(events).P`, `last(events).P` — and what they compare it with:

- `P == L`, `P != L`, `P in [L, ...]`: each literal, and another value of its type;
- `P < N` and the like: N - 1, N and N + 1 (for `x > 9`: 8, 9 and 10, and for the other side's `x > 1`: 0, 1, 2);
- `size(P) < N` and the like: a list (a string) of N - 1, N and N + 1 items (characters);
- `has(P)`: P present, and (a declared optional field) absent;
- `P.startsWith(S)`, `P.endsWith(S)`, `P.contains(S)`: S itself, and another string.

A path inside a field of free JSON builds the object it names: `row.payload.type == "function_call"` gives rows
whose payload is `{"type": "function_call"}`, and `{"type": "other"}`.

Each kind's letters: its row with every field at a plain value (a keyed field also at a second one, for `verify`:
two items of one lifecycle interleave); that row with one path the contracts read given each of its values in
turn (an optional field also left out); and, for each class of either contract, a row of the kind its test holds for and one its test
fails for (generator/expr/witness.py fills the row in from the test's tree). Letters are named by what they hold
apart from the plain row; equal rows are one letter; a kind has at most MOST_PER_KIND letters. A ledger's ids are
written as the contract's scenarios write theirs (`e1`, `1`, ...), by position.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

from resume_contract.core.explore import Alphabet, Letter

from ..expr import nodes as n
from ..expr.parse import parse
from ..expr.probes import OTHER, _nodes, _put
from ..expr.witness import witness
from .model import LanguageSpec, RowField, RowKind, walk_fields
from .row_shape import (
    ABSENT,
    at,
    encoded_paths,
    field_at,
    kind_of_row,
    leaves,
    plain_value,
    put,
    read_back,
    tag_values,
    typed,
    written,
)

MOST_PER_KIND = 40  # letters of one kind, at most: each costs depth (a stated bound on what `diff` explores)
POSITIONS = 4  # the positions a key naming a row's id takes (the deepest `diff` explores: generator/review/evidence.py)
NOT_ROWS = frozenset({"events", "items", "fact", "input", "plan"})  # the names an expression reads that are not a row
_ROW_CALLS = frozenset({"first", "last"})  # `first(events).P`: a path of a row
Path = tuple[str, ...]
_ABSENT = object()


def alphabet_of(base: LanguageSpec, head: LanguageSpec, *, keys: int = 1) -> Alphabet:
    """The letters as an Alphabet (each its own class: a letter differs from another where some contract reads)."""
    letters = letters_of(base, head, keys=keys)
    return Alphabet(tuple(letters), tuple((index,) for index in range(len(letters))))


def rows_of(alphabet: Alphabet, word: tuple[int, ...], id_field: str | None, ids: str = "e{}") -> list[dict[str, Any]]:
    """The ledger a word spells, as rows: each letter's fields, its id (at `id_field`, a dotted path; None: rows
    have none) by position as `ids` writes it (`id_style`)."""
    rows = []
    for position, symbol in enumerate(word, 1):
        row = copy.deepcopy(dict(alphabet.letter(symbol).fields))
        if id_field is not None:
            put(row, tuple(id_field.split(".")), _id(ids, position))
        rows.append(row)
    return rows


def id_style(spec: LanguageSpec) -> str:
    """How the contract's scenarios write a row's id, as a pattern of its position: `{}` for digits (`"1"`), `#`
    for a number, else a prefix before digits (`e{}`); `e{}` when they say nothing; `#` where rows have no id
    (a reference names a row by its position)."""
    if spec.rows.id is None:
        return "#"
    written = [at(row, tuple(spec.rows.id.split("."))) for scenario in spec.scenarios for row, _ in scenario.rows]
    if written and all(isinstance(value, int) and not isinstance(value, bool) for value in written):
        return "#"
    found = [re.fullmatch(r"(\D*)\d+", value) for value in written if isinstance(value, str)]
    prefixes = {match.group(1) for match in found if match}
    return f"{prefixes.pop()}{{}}" if found and all(found) and len(prefixes) == 1 else "e{}"


def _id(pattern: str, position: int) -> Any:
    return position if pattern == "#" else pattern.format(position)


class _Reads:
    """Every path the contracts read of a row, with the values they compare it with (in the order first found)."""

    def __init__(self) -> None:
        self.values: dict[Path, list[Any]] = {}
        self.sizes: dict[Path, list[int]] = {}
        self.present: dict[Path, None] = {}

    def read(self, path: Path, *values: Any) -> None:
        listed = self.values.setdefault(path, [])
        listed += [value for value in values if not any(value == held and type(value) is type(held) for held in listed)]

    def collect(self, text: str) -> None:
        tree = parse(text)
        for path in row_paths(tree):
            self.read(path)
        for node in _nodes(tree):
            self._compared(node)

    def _compared(self, node: n.Node) -> None:
        if isinstance(node, n.Call) and node.function == "has" and node.receiver is None and len(node.arguments) == 1:
            path = _row_path(node.arguments[0])
            if path is not None:
                self.present[path] = None
        elif isinstance(node, n.Call) and node.function in ("startsWith", "endsWith", "contains") and node.receiver is not None:
            path = _row_path(node.receiver)
            literal = node.arguments[0] if node.arguments else None
            if path is not None and isinstance(literal, n.Literal) and isinstance(literal.value, str):
                self.read(path, literal.value, OTHER)
        elif isinstance(node, n.Binary) and node.operator in ("==", "!=", "<", "<=", ">", ">="):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                literal = _literal(other)
                if literal is _ABSENT:
                    continue
                sized = _sized(side)
                if sized is not None and isinstance(literal, int) and not isinstance(literal, bool):
                    self.sizes.setdefault(sized, [])
                    self.sizes[sized] += [size for size in (literal - 1, literal, literal + 1) if size >= 0 and size not in self.sizes[sized]]
                path = _row_path(side)
                if path is not None:
                    self.read(path, *_around(literal, ordered=node.operator not in ("==", "!=")))
        elif isinstance(node, n.Binary) and node.operator == "in" and isinstance(node.right, n.ListLiteral):
            path = _row_path(node.left)
            if path is not None:
                self.read(path, *(item.value for item in node.right.items if isinstance(item, n.Literal)), OTHER)


def _literal(node: n.Node) -> Any:
    if isinstance(node, n.Literal):
        return node.value
    if isinstance(node, n.Unary) and node.operator == "-" and isinstance(node.operand, n.Literal) and isinstance(node.operand.value, (int, float)):
        return -node.operand.value
    return _ABSENT


def _around(literal: Any, *, ordered: bool) -> list[Any]:
    """The values a comparison with `literal` is explored with: it and another of its type; a number's neighbours."""
    if isinstance(literal, bool) or literal is None:
        return [literal, not literal] if isinstance(literal, bool) else [None, OTHER]
    if isinstance(literal, int):
        return [literal - 1, literal, literal + 1]
    if isinstance(literal, float):
        return [literal - 0.5, literal, literal + 0.5]
    return [literal] if ordered else [literal, OTHER]


def _row_path(node: n.Node) -> Path | None:
    """P of `row.P`, `V.P` (V a macro's variable: a row of the events), `first(events).P` or `last(events).P`."""
    fields: list[str] = []
    while isinstance(node, n.Select):
        fields.append(node.field)
        node = node.operand
    if not fields:
        return None
    if isinstance(node, n.Name) and node.name not in NOT_ROWS:
        return tuple(reversed(fields))
    if isinstance(node, n.Call) and node.function in _ROW_CALLS and node.receiver is None:
        return tuple(reversed(fields))
    return None


def row_paths(tree: n.Node) -> list[Path]:
    """Every path of a row the tree reads whole (`row.a.b`, not also `row.a`), in the order first read."""
    inner = {id(node.operand) for node in _nodes(tree) if isinstance(node, n.Select)}
    paths = [path for node in _nodes(tree) if id(node) not in inner and (path := _row_path(node)) is not None]
    return list(dict.fromkeys(paths))


def _sized(node: n.Node) -> Path | None:
    """P of `size(P)` or `P.size()`, P a path of a row."""
    if isinstance(node, n.Call) and node.function == "size":
        argument = node.receiver if node.receiver is not None else (node.arguments[0] if node.arguments else None)
        return None if argument is None else _row_path(argument)
    return None


def letters_of(base: LanguageSpec, head: LanguageSpec, *, keys: int = 1) -> list[Letter]:
    """One letter per kind of either side and each value of each path the contracts read (see the module's
    docstring), named by what it holds apart from the kind's plain row (`action(attempt=9)`)."""
    reads = _Reads()
    tests: list[str] = []
    keyed: set[Path] = set()
    for spec in (base, head):
        for text in _texts(spec):
            reads.collect(text)
        tests += [row_class.test.text for row_class in spec.classes if row_class.test is not None]
        for item in spec.items:
            keyed |= {path for text in item.key_texts for path in row_paths(parse(text))}
    letters: list[Letter] = []
    seen: set[str] = set()
    for spec in (head, base):
        for kind in spec.rows.kinds:
            if kind.name in seen:
                continue
            seen.add(kind.name)
            fields = {field.name: field for field in spec.rows.fields + kind.fields}
            letters += _kind_letters(spec, kind, fields, reads, tests, keyed, keys, id_style(head))
    return letters


def _kind_letters(spec: LanguageSpec, kind: RowKind, fields: dict[str, RowField], reads: _Reads, tests: list[str], keyed: set[Path], keys: int, ids: str) -> list[Letter]:
    rows = spec.rows
    fixed = tag_values(kind) | {tuple(path.split(".")): "r" for _, source, path in rows.run_from if source == "rows"}
    id_path = tuple(rows.id.split(".")) if rows.id is not None else None
    held = set(fixed) | ({id_path} if id_path else set())  # (paths no letter varies)
    encoded = encoded_paths(fields)
    plain = _written(spec, kind.name, encoded, id_path) or {}
    read = {**{path: [] for path in reads.present}, **reads.values}
    for name, field in fields.items():
        if name not in plain and (name,) not in held and not field.optional:
            plain[name] = plain_value(field, read, (name,))
    for path, value in fixed.items():
        put(plain, path, value)
    forms = [("", plain)]
    written_kind = _written(spec, kind.name, encoded, id_path) is not None
    for name, field in fields.items():  # an optional field the contracts read (one a `has` asks of, always): present
        asked = any(path[0] == name for path in reads.present)
        if field.optional and name not in plain and (name,) not in held and _is_read(reads, name) and (asked or not written_kind):
            forms.append(_with(plain, (name,), plain_value(field, read, (name,))))
    # A kind the scenarios write holds the optional fields its written row holds: those, and every required one, vary.
    varied = {name: field for name, field in fields.items() if not written_kind or name in plain or not field.optional}
    forms += [*_witnesses(plain, tests, list(fixed)), *_values(plain, varied, reads, held)]
    # A second item of a lifecycle; and where a key is a row's id or a field refers to a row, one naming the row at
    # each position (an item a row opens by its own id, and a later row names: an activity's start naming its
    # schedule row).
    by_id = id_path in keyed
    refers = [(path, field.refers[0]) for path, field in walk_fields(tuple(fields.values())) if field.refers is not None]
    for path in keyed:
        if path[0] in varied and path not in held and not any(path == ref for ref, _ in refers):
            values = [_id(ids, position) for position in range(1, POSITIONS + 1)] if by_id else [f"k{number}" for number in range(2, keys + 1)]
            forms += [_with(plain, path, value) for value in values]
    for path, to in refers:
        forms += [_with(plain, path, position if to == "position" else _id(ids, position)) for position in range(1, POSITIONS + 1)]
    letters: list[Letter] = []
    unique: set[str] = set()
    for said, form in forms:
        made = written(form, encoded)
        key = json.dumps(made, sort_keys=True)
        if key not in unique:
            unique.add(key)
            letters.append(Letter(f"{kind.name}({said})" if said else kind.name, tuple(sorted(made.items()))))
    return letters[:MOST_PER_KIND]


def _written(spec: LanguageSpec, kind: str, encoded: list[Path], id_path: Path | None) -> dict[str, Any] | None:
    """The kind's first row in the contract's scenarios (a row as the runtime writes it: the fields it holds, their
    shapes), read as expressions read it, its id left out; None when no scenario holds one."""
    for scenario in spec.scenarios:
        for row, _ in scenario.rows:
            if kind_of_row(spec, row) == kind:
                made = read_back(row, encoded)
                if id_path is not None and len(id_path) == 1:
                    made.pop(id_path[0], None)
                return made
    return None


def _witnesses(plain: dict[str, Any], tests: list[str], tags: list[Path]) -> list[tuple[str, dict[str, Any]]]:
    """A row of the plain row's kind each class's test holds for, and one it fails for, where they differ from it."""
    forms = []
    for test in tests:
        for want in (True, False):
            made = witness(copy.deepcopy(plain), [test] if want else [], [] if want else [test], _no_value)
            if all(at(made, path) == at(plain, path) for path in tags) and made != plain:
                forms.append((_said(plain, made), made))
    return forms


def _values(plain: dict[str, Any], fields: dict[str, RowField], reads: _Reads, held: set[Path]) -> list[tuple[str, dict[str, Any]]]:
    """The plain row with one path the contracts read given each of its values in turn, or left out."""
    forms = []
    for path, values in [*reads.values.items(), *((path, _sizes(sizes)) for path, sizes in reads.sizes.items())]:
        if path[0] not in fields or any(path[: len(fixed)] == fixed for fixed in held):
            continue
        field = field_at(fields, path)
        forms += [_with(plain, path, value) for value in typed(field, values)]
        if field is not None and field.optional:  # (inside free JSON the row model says nothing of what is there)
            made = copy.deepcopy(plain)
            if _drop(made, path):
                forms.append((_said(plain, made), made))
    return forms


def _with(plain: dict[str, Any], path: Path, value: Any) -> tuple[str, dict[str, Any]]:
    made = copy.deepcopy(plain)
    _put(made, path, value)
    return _said(plain, made), made


def _no_value(node: n.Node) -> Any:
    raise ValueError("an expression's value is not explored")


def _is_read(reads: _Reads, name: str) -> bool:
    return any(path[0] == name for path in [*reads.values, *reads.sizes, *reads.present])


def _sizes(sizes: list[int]) -> list[Any]:
    """A list of each size (a string of each length too: `size` reads both)."""
    return [*(["x"] * size for size in sizes), *("x" * size for size in sizes)]


def _drop(fields: dict[str, Any], path: Path) -> bool:
    for field in path[:-1]:
        fields = fields.get(field)  # type: ignore[assignment]
        if not isinstance(fields, dict):
            return False
    return fields.pop(path[-1], _ABSENT) is not _ABSENT


def _said(plain: dict[str, Any], made: dict[str, Any]) -> str:
    """What a row holds apart from the plain one: `attempt=9, payload.type="function_call"`, `error absent`."""
    parts = []
    for path, value in leaves(made):
        if at(plain, path) != value or type(at(plain, path)) is not type(value):
            parts.append(f"{'.'.join(path)}={json.dumps(value, sort_keys=True)}")
    for path, _ in leaves(plain):
        if at(made, path) is ABSENT:
            parts.append(f"{'.'.join(path)} absent")
    return ", ".join(parts)


def _texts(spec: LanguageSpec) -> Iterator[str]:
    for row_class in spec.classes:
        if row_class.test is not None:
            yield row_class.test.text
    for item in spec.items:
        yield from item.key_texts
        yield from (entry.when.text for entry in item.entries if entry.when is not None)
        yield from (expr.text for _, expr in item.report)
    if spec.replay is not None:
        yield spec.replay.text
    yield from (expr.text for expr, _ in spec.decision.checks)

