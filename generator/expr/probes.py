"""Rows that exercise a contract's expressions, for the explorers (`diff`'s evidence, `verify`): the letters an
alphabet read off the wire format alone would never spell, because only an expression tells what they are.

From the expressions' trees, never from their values:
- an action event, its `has(...)` paths present and its `key`'s path holding call id `a`;
- every path of a row (`row.P`, `first.P`, or `fact.N` where fact N is `first.P`) that a test compares with
  a literal (`==`, `!=`, `in [...]`, `<` and the like (a number: also the one after it), or a string method:
  `startsWith`, `endsWith`, `contains`, through `string()`): a row holding each literal there (the first
  MAX_VALUES of them), and one holding another value;
- every path a test asks `has(...)` of and compares with nothing: a row holding an empty object there.

A probe is named by what it holds (an action's by its row too): two specs' probes of one name are one row, so
each side's rows are read by the other side too. Each probe says whether a run's first row is read through it (its path is read through `first` or a fact): the
explorers then also explore it partial, since a run's facts are read from its first row, partial or not.

    probe_rows({"tool_dispatch": ("has(row.actions.toolDispatch) && !has(row.content)",
                                  "row.actions.toolDispatch.providerToolCallId")}, {}, [])
    # [('tool_dispatch(a) {"actions":{"toolDispatch":{"providerToolCallId":"a"}}}',
    #   {"actions": {"toolDispatch": {"providerToolCallId": "a"}}}, False)]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from . import nodes as n
from .parse import parse

CALL_ID = "a"  # the call id an action probe names: the explorers' first call id (core.explore.CALL_IDS)
OTHER = "explore-other"  # a value no literal of a contract is likely to be
MAX_VALUES = 4  # literals explored per path: each is a letter, and letters cost depth
STRING_METHODS = ("startsWith", "endsWith", "contains")
ROOTS = ("row", "first")

Path = tuple[str, ...]


def probe_rows(
    actions: Mapping[str, tuple[str, str]], facts: Mapping[str, str], tests: Iterable[str]
) -> list[tuple[str, dict[str, Any], bool]]:
    """(name, the row's fields, whether it is read as a run's first row) of each probe: `actions` maps an action event kind to its (when, key) texts,
    `facts` a fact's name to its expression, `tests` are every other test (kind guards, row checks)."""
    aliases = {name: path for name, text in facts.items() if (path := _path(parse(text), {})) is not None}
    rows: list[tuple[str, dict[str, Any], bool]] = []
    first_paths = set(aliases.values())
    for text in [*tests, *(part for pair in actions.values() for part in pair)]:
        first_paths |= {path for node in _nodes(parse(text)) if (path := _path(node, {}, roots=("first",))) is not None}
    spelt: list[Path] = []  # the paths the action probes already hold
    for kind, (when, key) in actions.items():
        fields: dict[str, Any] = {}
        for path in _present(parse(when), aliases):
            _put(fields, path, {})
            spelt.append(path)
        key_path = _path(parse(key), aliases)
        if key_path is not None:
            _put(fields, key_path, CALL_ID)
            spelt.append(key_path)
            rows.append((f"{kind}({CALL_ID}) {json.dumps(fields, separators=(',', ':'), sort_keys=True)}", fields, False))
    compared: dict[Path, list[Any]] = {}
    present: dict[Path, None] = {}
    for text in [*tests, *(when for when, _ in actions.values())]:
        tree = parse(text)
        for path, value in _comparisons(tree, aliases):
            compared.setdefault(path, [])
            if value not in compared[path]:
                compared[path].append(value)
        present.update(dict.fromkeys(_present(tree, aliases)))
    for path, values in compared.items():
        for value in [*values[:MAX_VALUES], OTHER]:
            fields = {}
            _put(fields, path, value)
            shown = "other" if value == OTHER else _shown(value)
            rows.append((f"{'.'.join(path)} {shown}", fields, _read_first(path, first_paths)))
    for path in present:
        if not any(path == other[: len(path)] for other in [*compared, *spelt]):
            fields = {}
            _put(fields, path, {})
            rows.append((f"{'.'.join(path)} present", fields, _read_first(path, first_paths)))
    return rows


def read_fields(text: str) -> list[str]:
    """The top-level fields of `row` an expression reads anywhere (compared, tested or used as a value)."""
    fields = [path[0] for node in _nodes(parse(text)) if (path := _path(node, {}, roots=("row",))) is not None]
    return list(dict.fromkeys(fields))


def _read_first(path: Path, first_paths: set[Path]) -> bool:
    return any(path[: len(other)] == other or other[: len(path)] == path for other in first_paths)


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _path(node: n.Node, aliases: Mapping[str, Path], roots: tuple[str, ...] = ROOTS) -> Path | None:
    """P of `row.P` or `first.P` (of `roots`), or of `fact.N` where fact N is `first.P`; else None."""
    fields: list[str] = []
    while isinstance(node, n.Select):
        fields.append(node.field)
        node = node.operand
    if not isinstance(node, n.Name) or not fields:
        return None
    fields.reverse()
    if node.name in roots:
        return tuple(fields)
    if node.name == "fact" and fields[0] in aliases:
        return (*aliases[fields[0]], *fields[1:])
    return None


def _children(node: n.Node) -> list[n.Node]:
    found: list[n.Node] = []
    for value in vars(node).values():
        if isinstance(value, n.Node):
            found.append(value)
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, n.Node):
                    found.append(item)
                elif isinstance(item, tuple):
                    found += [inner for inner in item if isinstance(inner, n.Node)]
    return found


def _nodes(node: n.Node) -> Iterable[n.Node]:
    yield node
    for child in _children(node):
        yield from _nodes(child)


def _present(tree: n.Node, aliases: Mapping[str, Path]) -> list[Path]:
    """The paths `has(...)` asks of, where it is not negated."""
    paths: list[Path] = []

    def visit(node: n.Node, negated: bool) -> None:
        if isinstance(node, n.Unary) and node.operator == "!":
            visit(node.operand, not negated)
            return
        if isinstance(node, n.Call) and node.function == "has" and node.receiver is None and len(node.arguments) == 1:
            path = _path(node.arguments[0], aliases)
            if path is not None and not negated:
                paths.append(path)
            return
        for child in _children(node):
            visit(child, negated)

    visit(tree, False)
    return paths


def _comparisons(tree: n.Node, aliases: Mapping[str, Path]) -> list[tuple[Path, Any]]:
    """(path, literal) of every `P == L`, `P != L` (either way round) and `P in [L, ...]` in the tree; of `P < L`
    and the like, the literal and, a number, the number after it."""
    found: list[tuple[Path, Any]] = []
    for node in _nodes(tree):
        if isinstance(node, n.Call) and node.function in STRING_METHODS and node.receiver is not None and len(node.arguments) == 1:
            found += _string_method(node, aliases)
        if not isinstance(node, n.Binary):
            continue
        if node.operator in ("==", "!="):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                path = _path(side, aliases)
                if path is not None and isinstance(other, n.Literal):
                    found.append((path, other.value))
        elif node.operator in ("<", "<=", ">", ">="):  # the literal, and the number just past it: either side of it
            for side, other in ((node.left, node.right), (node.right, node.left)):
                path = _path(side, aliases)
                if path is not None and isinstance(other, n.Literal) and other.value is not None and not isinstance(other.value, bool):
                    found.append((path, other.value))
                    if isinstance(other.value, (int, float)):
                        found.append((path, other.value + 1))
        elif node.operator == "in" and isinstance(node.right, n.ListLiteral):
            path = _path(node.left, aliases)
            if path is not None:
                found += [(path, item.value) for item in node.right.items if isinstance(item, n.Literal)]
    return found


def _string_method(node: n.Call, aliases: Mapping[str, Path]) -> list[tuple[Path, Any]]:
    """(path, literal) of `P.startsWith(L)` and the like, `string(P)` read as P."""
    receiver = node.receiver
    if isinstance(receiver, n.Call) and receiver.function == "string" and receiver.receiver is None and len(receiver.arguments) == 1:
        receiver = receiver.arguments[0]
    path = None if receiver is None else _path(receiver, aliases)
    argument = node.arguments[0]
    return [(path, argument.value)] if path is not None and isinstance(argument, n.Literal) and isinstance(argument.value, str) else []


def _put(fields: dict[str, Any], path: Path, value: Any) -> None:
    """Set `path` in `fields`, making the objects on the way (a deeper value already there is kept)."""
    for field in path[:-1]:
        inner = fields.get(field)
        if not isinstance(inner, dict):
            inner = fields[field] = {}
        fields = inner
    if not (isinstance(fields.get(path[-1]), dict) and value == {}):
        fields[path[-1]] = value
