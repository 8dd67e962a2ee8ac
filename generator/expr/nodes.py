"""The parsed expression: frozen nodes, each knowing where it stands in the expression's text.

`at` is the node's 1-based (line, column) inside the expression; `parse.Origin` turns it into the spec file's
file:line:col. The nodes are syntax only: `check.py` gives them types, `emit.py` turns them into Python.
"""

from __future__ import annotations

from dataclasses import dataclass

At = tuple[int, int]


@dataclass(frozen=True)
class Node:
    at: At


@dataclass(frozen=True)
class Literal(Node):
    value: None | bool | int | float | str


@dataclass(frozen=True)
class Name(Node):
    name: str


@dataclass(frozen=True)
class Select(Node):
    """`operand.field`; `at` is where the operand starts, `field_at` where the field's name does."""

    operand: Node
    field: str
    field_at: At = (1, 1)


@dataclass(frozen=True)
class Index(Node):
    """`operand[index]`."""

    operand: Node
    index: Node


@dataclass(frozen=True)
class Call(Node):
    """`function(arguments)`, or `receiver.function(arguments)` (a method, or one of the macros)."""

    function: str
    arguments: tuple[Node, ...]
    receiver: Node | None = None


@dataclass(frozen=True)
class Unary(Node):
    operator: str  # "!" or "-"
    operand: Node


@dataclass(frozen=True)
class Binary(Node):
    operator: str  # "||" "&&" "==" "!=" "<" "<=" ">" ">=" "in" "+" "-" "*" "/" "%"
    left: Node
    right: Node


@dataclass(frozen=True)
class Conditional(Node):
    condition: Node
    then: Node
    otherwise: Node


@dataclass(frozen=True)
class ListLiteral(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True)
class MapLiteral(Node):
    entries: tuple[tuple[Node, Node], ...]


@dataclass(frozen=True)
class Origin:
    """Where an expression's text stands in a spec file: the mark of its first character, and whether each of its
    lines starts at that column (a plain or quoted one-line value) or at `indent` (a `|` block)."""

    file: str
    line: int
    column: int
    indent: int | None = None
    exact: bool = True  # False: the text is not the file's characters one for one (folded, escaped): the value's start

    def place(self, at: At) -> tuple[int, int]:
        line, column = at
        if not self.exact:
            return (self.line, self.column)
        if line == 1:
            return (self.line, self.column + column - 1)
        return (self.line + line - 1, (self.indent or 1) + column - 1)
