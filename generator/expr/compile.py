"""Type-check an expression against its environment and compile it to one Python expression, in one pass.

`compile_text(text, env)` gives the Python source and the expression's type, or raises ExpressionError at the
node that is wrong, with the expression's own line and column. The source calls `_x` (resume_contract.core.
expressions) only where a value's kind is known at run time alone; where the types settle it, it is plain Python.
The generator writes the source into generated/; nothing here runs at run time.
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from . import nodes as n
from .calls import call
from .parse import ExpressionSyntaxError, parse
from .types import BOOL, DOUBLE, INT, JSON, NULL, NUMBERS, STRING, Environment, Type, list_of, map_of

ExpressionError = ExpressionSyntaxError  # one error type for every problem: where, and what


@dataclass(frozen=True)
class Compiled:
    source: str
    type: Type


_SCALAR_KINDS = ("bool", "int", "double", "string", "null")


def compile_text(text: str, env: Environment) -> Compiled:
    for name in env.names:
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ValueError(f"{name!r} cannot be an expression's name")
    source, type_ = _Compiler(env).visit(_parsed(text))
    return Compiled(source, type_)


def compile_condition(text: str, env: Environment) -> Compiled:
    """An expression used as a condition: true or false under the environment's semantics."""
    compiler = _Compiler(env)
    return Compiled(compiler.condition(_parsed(text)), BOOL)


def compile_node(node: n.Node, env: Environment) -> Compiled:
    """A node of a parsed expression, compiled alone (probes evaluate a part of a test)."""
    source, type_ = _Compiler(env).visit(node)
    return Compiled(source, type_)


MAX_DEPTH = 64  # Python refuses source nested 200 parentheses deep; each level of an expression may add two


def _parsed(text: str) -> n.Node:
    try:
        tree = parse(text)
    except RecursionError:
        raise ExpressionError((1, 1), f"nested more than {MAX_DEPTH} deep: split it into facts") from None
    pending = [(tree, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise ExpressionError(node.at, f"nested more than {MAX_DEPTH} deep: split it into facts")
        for value in vars(node).values():
            children = value if isinstance(value, tuple) else (value,)
            for child in children:
                for item in child if isinstance(child, tuple) else (child,):
                    if isinstance(item, n.Node):
                        pending.append((item, depth + 1))
    return tree


def unify(left: Type, right: Type) -> Type:
    if left.kind == "null":
        return right.or_null()
    if right.kind == "null":
        return left.or_null()
    if left.not_null() == right.not_null():
        return left.or_null() if right.nullable else left
    if left.kind in NUMBERS and right.kind in NUMBERS:
        result = DOUBLE
        return result.or_null() if left.nullable or right.nullable else result
    return JSON


def _comparable(left: Type, right: Type) -> bool:
    kinds = {left.kind, right.kind}
    return "json" in kinds or "null" in kinds or len(kinds) == 1 or kinds <= set(NUMBERS)


class _Compiler:
    def __init__(self, env: Environment) -> None:
        self.env = env
        self.js = env.semantics == "javascript"
        self.scope: dict[str, tuple[str, Type]] = {}

    def visit(self, node: n.Node) -> tuple[str, Type]:
        method = getattr(self, "_" + type(node).__name__.lower())
        return method(node)

    def fail(self, node: n.Node, message: str) -> ExpressionError:
        return ExpressionError(node.at, message)

    def condition(self, node: n.Node) -> str:
        source, type_ = self.visit(node)
        if type_ == BOOL:
            return source
        if self.js:
            return f"_x.truthy({source})"
        if type_.kind in ("bool", "json"):
            return f"_x.boolean({source})"
        raise self.fail(node, f"a condition must be true or false, and this is {type_}: compare it (`!= null`, `size(x) > 0`) or write truthy(x)")

    def _literal(self, node: n.Literal) -> tuple[str, Type]:
        value = node.value
        if value is None:
            return "None", NULL
        if isinstance(value, bool):
            return repr(value), BOOL
        if isinstance(value, int):
            if not -(2**63) <= value < 2**63:
                raise self.fail(node, f"an integer past 64 bits: {value}")
            return repr(value), INT
        if isinstance(value, float):
            return repr(value), DOUBLE
        return repr(value), STRING

    def _name(self, node: n.Name) -> tuple[str, Type]:
        if node.name in self.scope:
            return self.scope[node.name]
        if node.name in self.env.names:
            return node.name, self.env.names[node.name]
        known = sorted([*self.scope, *self.env.names])
        raise self.fail(node, f"unknown name '{node.name}' (the names here: {', '.join(known) or 'none'})")

    def _select(self, node: n.Select) -> tuple[str, Type]:
        source, type_ = self.visit(node.operand)
        return self.field(node, source, type_, node.field)

    def field(self, node: n.Node, source: str, type_: Type, name: str) -> tuple[str, Type]:
        if type_.kind == "object":
            found = type_.field(name)
            if found is None:
                fields = ", ".join(field[0] for field in type_.fields) or "none"
                place = n.Node(node.field_at) if isinstance(node, n.Select) else node
                raise self.fail(place, f"'{name}' is no field of {type_.name or 'this object'} (its fields: {fields})")
            field_type, optional = found
            if type_.nullable:
                return f"_x.get({source}, {name!r})", field_type.or_null()
            if optional:
                return f"{source}.get({name!r})", field_type.or_null()
            return f"{source}[{name!r}]", field_type
        if type_.kind == "map":
            return f"_x.get({source}, {name!r})", (type_.item or JSON).or_null()
        if type_.kind == "json":
            return f"_x.get({source}, {name!r})", JSON
        raise self.fail(n.Node(node.field_at) if isinstance(node, n.Select) else node, f"no field '{name}' here: this is {type_}")

    def _index(self, node: n.Index) -> tuple[str, Type]:
        source, type_ = self.visit(node.operand)
        key_source, key_type = self.visit(node.index)
        if type_.kind == "object" and isinstance(node.index, n.Literal) and isinstance(node.index.value, str):
            return self.field(node, source, type_, node.index.value)
        wanted = {"list": ("int", "json"), "map": ("string", "json"), "json": ("int", "double", "string", "json")}.get(type_.kind)
        if wanted is None:
            raise self.fail(node, f"only a list, a map or a json value is indexed, and this is {type_}")
        if key_type.kind not in wanted:
            raise self.fail(node.index, f"a {type_.kind} is indexed by {' or '.join(k for k in wanted if k != 'json')}, not {key_type}")
        return f"_x.index({source}, {key_source})", (type_.item or JSON).or_null() if type_.kind != "json" else JSON

    def _unary(self, node: n.Unary) -> tuple[str, Type]:
        if node.operator == "!":
            return f"(not {self.condition(node.operand)})", BOOL
        source, type_ = self.visit(node.operand)
        if type_.kind in NUMBERS and not type_.nullable:
            return f"(-{source})", type_
        if type_.kind in (*NUMBERS, "json"):
            return f"_x.negate({source})", DOUBLE if type_.kind == "json" else type_.not_null()
        raise self.fail(node, f"only a number is negated, and this is {type_}")

    def _binary(self, node: n.Binary) -> tuple[str, Type]:
        if node.operator in ("&&", "||"):
            word = "and" if node.operator == "&&" else "or"
            return f"({self.condition(node.left)} {word} {self.condition(node.right)})", BOOL
        left, left_type = self.visit(node.left)
        right, right_type = self.visit(node.right)
        if node.operator in ("==", "!="):
            return self.equality(node, left, left_type, right, right_type)
        if node.operator in ("<", "<=", ">", ">="):
            return self.order(node, left, left_type, right, right_type)
        if node.operator == "in":
            if right_type.kind not in ("list", "map", "json"):
                raise self.fail(node, f"`in` needs a list or a map on its right, not {right_type}")
            return f"_x.member({left}, {right}, {self.js})", BOOL
        return self.arithmetic(node, left, left_type, right, right_type)

    def equality(self, node: n.Binary, left: str, left_type: Type, right: str, right_type: Type) -> tuple[str, Type]:
        if not _comparable(left_type, right_type):
            raise self.fail(node, f"compares {left_type} with {right_type}: never equal")
        numbers = left_type.kind in NUMBERS or right_type.kind in NUMBERS
        if left_type.kind in _SCALAR_KINDS and right_type.kind in _SCALAR_KINDS and not (self.js and numbers):
            source = f"({left} {node.operator} {right})"
        else:
            test = f"_x.{'js_eq' if self.js else 'eq'}({left}, {right})"
            source = test if node.operator == "==" else f"(not {test})"
        return source, BOOL

    def order(self, node: n.Binary, left: str, left_type: Type, right: str, right_type: Type) -> tuple[str, Type]:
        kinds = {left_type.kind, right_type.kind} - {"json"}
        if not (kinds <= set(NUMBERS) or kinds == {"string"}):
            raise self.fail(node, f"orders {left_type} and {right_type}: only two numbers or two strings have an order")
        if node.operator in (">", ">="):
            left, right = right, left
        plain = not left_type.nullable and not right_type.nullable and "json" not in (left_type.kind, right_type.kind)
        if plain and not self.js:  # JavaScript compares numbers as doubles, strings by UTF-16 code units
            return f"({left} {node.operator.replace('>', '<')} {right})", BOOL
        function = "less" if node.operator in ("<", ">") else "less_or_equal"
        return f"_x.{function}({left}, {right}, {self.js})", BOOL

    def arithmetic(self, node: n.Binary, left: str, left_type: Type, right: str, right_type: Type) -> tuple[str, Type]:
        operator = node.operator
        kinds = {left_type.kind, right_type.kind}
        nullable = left_type.nullable or right_type.nullable
        if kinds <= set(NUMBERS):
            result = DOUBLE if kinds != {"int"} or self.js and operator in "/%" else INT
            if operator in "+-*" and not nullable and not self.js and len(kinds) == 1:  # else _x: doubles, overflow
                return f"({left} {operator} {right})", result
        elif operator == "+" and len(kinds) == 1 and kinds <= {"string", "list"}:
            result = left_type.not_null() if left_type.kind == "string" else list_of(unify(left_type.item or JSON, right_type.item or JSON))
            if not nullable:
                return f"({left} + {right})", result
        elif "json" in kinds and kinds - {"json"} <= {*NUMBERS, "string", "list"}:
            result = JSON
        elif self.js and operator == "+" and "string" in kinds:
            return f"_x.add({left}, {right}, True)", STRING
        else:
            raise self.fail(node, f"cannot apply {operator} to {left_type} and {right_type}")
        if operator == "+":
            return f"_x.add({left}, {right}, {self.js})", result
        return f"_x.arithmetic({operator!r}, {left}, {right}, {self.js})", result

    def _conditional(self, node: n.Conditional) -> tuple[str, Type]:
        condition = self.condition(node.condition)
        then, then_type = self.visit(node.then)
        otherwise, otherwise_type = self.visit(node.otherwise)
        return f"({then} if {condition} else {otherwise})", unify(then_type, otherwise_type)

    def _listliteral(self, node: n.ListLiteral) -> tuple[str, Type]:
        parts = [self.visit(item) for item in node.items]
        item_type = NULL
        for _, type_ in parts:
            item_type = unify(item_type, type_)
        return "[" + ", ".join(source for source, _ in parts) + "]", list_of(item_type if parts else JSON)

    def _mapliteral(self, node: n.MapLiteral) -> tuple[str, Type]:
        entries, value_type = [], NULL
        for key, value in node.entries:
            key_source, key_type = self.visit(key)
            if key_type != STRING:
                raise self.fail(key, f"a map's key is a string, not {key_type}")
            value_source, type_ = self.visit(value)
            entries.append(f"{key_source}: {value_source}")
            value_type = unify(value_type, type_)
        return "{" + ", ".join(entries) + "}", map_of(value_type if entries else JSON)

    def _call(self, node: n.Call) -> tuple[str, Type]:
        return call(self, node)


MAX_MACRO_NESTING = 2  # a macro inside a macro inside a macro multiplies the lists' sizes: n**3 items over events
