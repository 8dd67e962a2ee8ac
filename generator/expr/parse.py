"""Parse an expression's text into nodes, or say where and why it is not one.

Lark (a maintained, pure-Python parsing library) reads GRAMMAR with its LALR parser; the parser is built once
per process. A syntax error names the expression's own line and column, which `Origin` maps to the spec file.
"""

from __future__ import annotations

import re
from functools import cache

import lark

from . import nodes as n
from .grammar import GRAMMAR, RESERVED
from .nodes import Origin

__all__ = ["ExpressionSyntaxError", "Origin", "parse"]


class ExpressionSyntaxError(Exception):
    def __init__(self, at: n.At, message: str) -> None:
        super().__init__(message)
        self.at = at
        self.message = message


@cache
def _parser() -> lark.Lark:
    return lark.Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def parse(text: str) -> n.Node:
    """The nodes of `text`; ExpressionSyntaxError at the first place it stops being an expression."""
    if not text.strip():
        raise ExpressionSyntaxError((1, 1), "an empty expression")
    try:
        tree = _parser().parse(text)
    except lark.UnexpectedCharacters as error:
        found = text[error.pos_in_stream or 0]
        hint = " (equality is `==`)" if found == "=" else ""
        raise ExpressionSyntaxError((error.line, error.column), f"unexpected character {found!r}{hint}") from None
    except lark.UnexpectedToken as error:
        if error.token.type == "$END":
            raise ExpressionSyntaxError(_end(text), "the expression ends too early") from None
        raise ExpressionSyntaxError((error.line, error.column), f"unexpected {str(error.token)!r}") from None
    except lark.UnexpectedEOF:
        raise ExpressionSyntaxError(_end(text), "the expression ends too early") from None
    try:
        return _Build().transform(tree)
    except lark.exceptions.VisitError as error:  # what a rule's method raised, wrapped by Lark
        raise error.orig_exc from None


def _end(text: str) -> n.At:
    """Just past the expression's last character that is not a space."""
    text = text.rstrip()
    return (text.count("\n") + 1, len(text) - (text.rfind("\n") + 1) + 1)


def _at(meta: object) -> n.At:
    return (getattr(meta, "line", 1), getattr(meta, "column", 1))


# CEL's escapes in a quoted string (its octal escapes excepted); any other backslash is refused, as CEL does.
_ESCAPE = re.compile(r"\\(?:([\\\"'`?abfnrtv])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.?))", re.DOTALL)
_SIMPLE = {"\\": "\\", '"': '"', "'": "'", "`": "`", "?": "?", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _string(token: lark.Token) -> str:
    def unescape(match: re.Match[str]) -> str:
        simple, byte, short, long, other = match.groups()
        if simple is not None:
            return _SIMPLE[simple]
        code = int(byte or short or long or "-1", 16)
        if other is not None or not (0 <= code <= 0x10FFFF) or 0xD800 <= code <= 0xDFFF:
            column = (token.column or 1) + 1 + match.start()  # past the opening quote
            raise ExpressionSyntaxError((token.line or 1, column), f"an escape this language does not read: {match.group()!r}")
        return chr(code)

    return _ESCAPE.sub(unescape, str(token)[1:-1])


@lark.v_args(meta=True)
class _Build(lark.Transformer):
    """Lark's tree -> nodes. Each method is named after the grammar rule (or its alias) it builds."""

    def conditional(self, meta: object, children: list[n.Node]) -> n.Node:
        return n.Conditional(_at(meta), *children)

    def relation(self, meta: object, children: list) -> n.Node:
        left, operator, right = children  # a binary operator's node stands where the operator does
        return n.Binary((operator.line, operator.column), str(operator), left, right)

    or_ = and_ = arithmetic = relation

    def not_(self, meta: object, children: list[n.Node]) -> n.Node:
        return n.Unary(_at(meta), "!", children[0])

    def negate(self, meta: object, children: list[n.Node]) -> n.Node:
        operand = children[0]
        if isinstance(operand, n.Literal) and type(operand.value) in (int, float):  # -9223372036854775808 reads
            return n.Literal(_at(meta), -operand.value)  # type: ignore[operator]
        return n.Unary(_at(meta), "-", operand)

    def select(self, meta: object, children: list) -> n.Node:
        operand, field = children
        _not_reserved(field)
        return n.Select(_at(meta), operand, str(field), (field.line, field.column))

    def method(self, meta: object, children: list) -> n.Node:
        receiver, function, arguments = children
        return n.Call((function.line, function.column), str(function), tuple(arguments or ()), receiver)

    def index(self, meta: object, children: list[n.Node]) -> n.Node:
        return n.Index(_at(meta), *children)

    def name(self, meta: object, children: list[lark.Token]) -> n.Node:
        _not_reserved(children[0])
        return n.Name(_at(meta), str(children[0]))

    def call(self, meta: object, children: list) -> n.Node:
        function, arguments = children
        return n.Call(_at(meta), str(function), tuple(arguments or ()))

    def list_(self, meta: object, children: list) -> n.Node:
        return n.ListLiteral(_at(meta), tuple(children[0] or ()))

    def map_(self, meta: object, children: list) -> n.Node:
        return n.MapLiteral(_at(meta), tuple(children[0] or ()))

    def arguments(self, meta: object, children: list[n.Node]) -> tuple[n.Node, ...]:
        return tuple(children)

    def entries(self, meta: object, children: list[tuple[n.Node, n.Node]]) -> tuple[tuple[n.Node, n.Node], ...]:
        return tuple(children)

    def entry(self, meta: object, children: list[n.Node]) -> tuple[n.Node, n.Node]:
        return (children[0], children[1])

    def int_(self, meta: object, children: list[lark.Token]) -> n.Node:
        # CEL's ints are 64-bit; -2**63 is read as the negation of 2**63 (`negate` folds it)
        if len(children[0]) > 19 or int(children[0]) > 2**63:
            raise ExpressionSyntaxError(_at(meta), f"an integer past 64 bits: {str(children[0])[:30]}")
        return n.Literal(_at(meta), int(children[0]))

    def double(self, meta: object, children: list[lark.Token]) -> n.Node:
        value = float(children[0])
        if value in (float("inf"), float("-inf")):
            raise ExpressionSyntaxError(_at(meta), f"a number too large for a double: {str(children[0])[:30]}")
        return n.Literal(_at(meta), value)

    def string(self, meta: object, children: list[lark.Token]) -> n.Node:
        return n.Literal(_at(meta), _string(children[0]))

    def true(self, meta: object, children: list[object]) -> n.Node:
        return n.Literal(_at(meta), True)

    def false(self, meta: object, children: list[object]) -> n.Node:
        return n.Literal(_at(meta), False)

    def null(self, meta: object, children: list[object]) -> n.Node:
        return n.Literal(_at(meta), None)


def _not_reserved(token: lark.Token) -> None:
    if str(token) in RESERVED:
        raise ExpressionSyntaxError((token.line or 1, token.column or 1), f"'{token}' is a reserved word, not a name")
