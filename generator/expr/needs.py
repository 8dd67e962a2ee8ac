"""Which fields of a name an expression cannot hold without: what lets a walk test a row's class only on the rows
that have one of them (a row without any is known not to match, unread). A field is a top-level one, or a key of
one (`F.K`), as far as `has()` names it.

    needs('has(row.actions.toolDispatch) && !has(row.content)', 'row')   # ('actions.toolDispatch',)
    needs('row.kind == "action"', 'row')                                  # ('kind',): absent, it reads null
    needs('row.kind != "action"', 'row')                                  # None: any row may match
"""

from __future__ import annotations

from . import nodes as n
from .parse import parse
from .probes import _children


def needs(text: str, name: str) -> tuple[str, ...] | None:
    """The fields of `name` one of which is present wherever `text` holds; None when no such set is evident (the
    text must already compile: this reads its tree only)."""
    return _needs(parse(text), name)


def _needs(node: n.Node, name: str) -> tuple[str, ...] | None:
    if isinstance(node, n.Binary) and node.operator == "&&":
        return _needs(node.left, name) or _needs(node.right, name)
    if isinstance(node, n.Binary) and node.operator == "||":
        left, right = _needs(node.left, name), _needs(node.right, name)
        return None if left is None or right is None else tuple(sorted({*left, *right}))
    if isinstance(node, n.Call) and node.function == "has" and node.receiver is None and len(node.arguments) == 1:
        top = _top_field(node.arguments[0], name)
        return None if top is None else (top,)
    if isinstance(node, n.Binary) and node.operator in ("==", "in"):
        # `F... == L` or `F... in [L, ...]`, every L not null: an absent field reads null, equal to none of them
        literals = [node.right] if node.operator == "==" else list(node.right.items) if isinstance(node.right, n.ListLiteral) else []
        if literals and all(isinstance(item, n.Literal) and item.value is not None for item in literals):
            top = _top_field(node.left, name)
            return None if top is None else (top.split(".")[0],)
    return None


def _top_field(node: n.Node, name: str) -> str | None:
    """`F` of `name.F`, `F.K` of `name.F.K...` (a field chain rooted at `name`), else None."""
    fields: list[str] = []
    while isinstance(node, n.Select):
        fields.append(node.field)
        node = node.operand
    if not isinstance(node, n.Name) or node.name != name or not fields:
        return None
    return ".".join(reversed(fields[-2:]))


def reads(text: str, name: str) -> tuple[str, ...] | None:
    """The top-level fields of `name` that `text` reads (`name.F...`), sorted; None when it reads `name` otherwise
    too (as a whole: `kind(name)`, `name == null`, `name["F"]`), so that all of it is needed."""
    fields: set[str] = set()
    whole = False

    def visit(node: n.Node) -> None:
        nonlocal whole
        if isinstance(node, n.Select):
            chain: n.Node = node
            first = node
            while isinstance(chain, n.Select):
                first, chain = chain, chain.operand
            if isinstance(chain, n.Name) and chain.name == name:
                fields.add(first.field)
                return
        if isinstance(node, n.Name) and node.name == name:
            whole = True
            return
        for child in _children(node):
            visit(child)

    visit(parse(text))
    return None if whole else tuple(sorted(fields))
