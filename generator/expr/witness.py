"""A row that makes some tests of a contract hold and others fail: a well-formed action event, for the explorers.

An action probe (probes.py) holds only the paths its `when` asks `has(...)` of and its `key`: for maka's dispatch,
`{"actions": {"toolDispatch": {"providerToolCallId": "a"}}}`. The lane checks then find it malformed (no operation
id, refs that do not name it), so the explorers never reach what a well-formed dispatch does. `witness` fills a row
in, from the tests' trees alone, so that each test comes out as wanted:

- `a && b`, `a || b`, `!a`: both, either (the first), or the other way; a test that starts `has(P) && ...` with P
  not in the row does not apply to it (it is another lane's), and is left alone;
- `has(P)`: an object at P; `P == L`, `P in [L, ...]`: the literal (the first) at P; `P != L`: another value;
- `P == Q` of two paths: Q's value at P (or one string at both); `kind(P) == "string"`: a string at P;
- `P == E` where E reads no row: the value `evaluate(E)` gives (maka's hash of its call), when it gives one.

Anything else is left as it is: the caller checks the row with the compiled tests and drops one that missed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import nodes as n
from .parse import parse
from .probes import OTHER, _nodes, _path, _put

Evaluate = Callable[[n.Node], Any]  # an expression's value, or raises: the tree of one that reads no row
_UNKNOWN = object()


def witness(fields: dict[str, Any], hold: list[str], fail: list[str], evaluate: Evaluate) -> dict[str, Any]:
    """`fields` filled in so that each test of `hold` holds and each of `fail` fails, as far as their trees say."""
    for text in hold:
        _make(parse(text), True, fields, evaluate)
    for text in fail:
        _make(parse(text), False, fields, evaluate)
    return fields


def _get(fields: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = fields
    for field in path:
        if not isinstance(value, dict) or field not in value:
            return _UNKNOWN
        value = value[field]
    return value


def _applies(node: n.Node, fields: dict[str, Any]) -> bool:
    """False for `has(P) && ...` with P not in the row (a test of another lane)."""
    while isinstance(node, n.Binary) and node.operator == "&&":
        node = node.left
    if isinstance(node, n.Call) and node.function == "has" and node.receiver is None and len(node.arguments) == 1:
        path = _path(node.arguments[0], {}, roots=("row",))
        return path is None or _get(fields, path) is not _UNKNOWN
    return True


def _make(node: n.Node, want: bool, fields: dict[str, Any], evaluate: Evaluate) -> None:
    if isinstance(node, n.Unary) and node.operator == "!":
        _make(node.operand, not want, fields, evaluate)
    elif isinstance(node, n.Binary) and node.operator in ("&&", "||"):
        both = want == (node.operator == "&&")
        if not want and node.operator == "&&" and not _applies(node, fields):
            return
        if both:
            _make(node.left, want, fields, evaluate)
            _make(node.right, want, fields, evaluate)
        elif want:  # either: the first
            _make(node.left, want, fields, evaluate)
        else:  # `a && b` false: the guards on the left hold, so the rest must fail
            _make(node.right, want, fields, evaluate)
    elif isinstance(node, n.Call) and node.function == "has" and node.receiver is None and len(node.arguments) == 1:
        path = _path(node.arguments[0], {}, roots=("row",))
        if want and path is not None and _get(fields, path) is _UNKNOWN:
            _put(fields, path, {})
    elif isinstance(node, n.Binary) and node.operator in ("==", "!="):
        _compare(node.left, node.right, want == (node.operator == "=="), fields, evaluate)
    elif isinstance(node, n.Binary) and node.operator == "in" and isinstance(node.right, n.ListLiteral) and want:
        path = _path(node.left, {}, roots=("row",))
        first = node.right.items[0] if node.right.items else None
        values = [item.value for item in node.right.items if isinstance(item, n.Literal)]
        if path is not None and isinstance(first, n.Literal) and _get(fields, path) not in values:
            _put(fields, path, first.value)


def _compare(left: n.Node, right: n.Node, equal: bool, fields: dict[str, Any], evaluate: Evaluate) -> None:
    for side, other in ((left, right), (right, left)):
        kind_of = _kind_path(side)
        if kind_of is not None and isinstance(other, n.Literal) and other.value == "string":
            if equal and not isinstance(_get(fields, kind_of), str):
                _put(fields, kind_of, f"explore-{kind_of[-1]}")
            return
    paths = _path(left, {}, roots=("row",)), _path(right, {}, roots=("row",))
    if paths[0] is not None and paths[1] is not None:
        if equal:
            both = (paths[0], paths[1])
            values = [_get(fields, path) for path in both]
            value = next((value for value in values if value is not _UNKNOWN), f"explore-{both[0][-1]}")
            for path in both:
                _put(fields, path, value)
        return
    for at, other in ((paths[0], right), (paths[1], left)):
        if at is None:
            continue
        if isinstance(other, n.Literal):
            held = _get(fields, at)
            if equal or held is _UNKNOWN or held == other.value:  # (a value that already differs is kept)
                _put(fields, at, other.value if equal else OTHER)
        elif equal and not any(_path(node, {}, roots=("row", "first")) for node in _nodes(other)):
            try:
                _put(fields, at, evaluate(other))
            except Exception:  # noqa: BLE001 - a value it cannot give: the row is left, and checked by the caller
                pass
        return


def _kind_path(node: n.Node) -> tuple[str, ...] | None:
    if isinstance(node, n.Call) and node.function == "kind" and node.receiver is None and len(node.arguments) == 1:
        return _path(node.arguments[0], {}, roots=("row",))
    return None

