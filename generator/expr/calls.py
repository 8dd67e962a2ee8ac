"""Calls: the library's functions, the string methods and CEL's macros, typed and compiled (see library.py)."""

from __future__ import annotations

from typing import Protocol

from . import nodes as n
from .grammar import RESERVED
from .library import FUNCTIONS, MACROS, METHODS
from .parse import ExpressionSyntaxError
from .types import BOOL, INT, JSON, STRING, Environment, Type, list_of


class Compiler(Protocol):
    env: Environment
    js: bool
    scope: dict[str, tuple[str, Type]]

    def visit(self, node: n.Node) -> tuple[str, Type]: ...

    def condition(self, node: n.Node) -> str: ...

    def field(self, node: n.Node, source: str, type_: Type, name: str) -> tuple[str, Type]: ...


def _fail(node: n.Node, message: str) -> ExpressionSyntaxError:
    return ExpressionSyntaxError(node.at, message)


def _arity(node: n.Call, count: int, form: str) -> None:
    if len(node.arguments) != count:
        raise _fail(node, f"{form} takes {count} argument{'s' if count != 1 else ''}, not {len(node.arguments)}")


def call(compiler: Compiler, node: n.Call) -> tuple[str, Type]:
    if node.receiver is None:
        if node.function == "has":
            return _has(compiler, node)
        if node.function not in FUNCTIONS:
            raise _fail(node, f"unknown function '{node.function}' (the functions: {', '.join(sorted([*FUNCTIONS, 'has']))})")
        return _function(compiler, node)
    if node.function in MACROS and node.function != "has":
        return _macro(compiler, node)
    if node.function in ("distinct", "sort"):
        _arity(node, 0, METHODS[node.function].form)
        receiver, receiver_type = compiler.visit(node.receiver)
        if receiver_type.kind not in ("list", "json"):
            raise _fail(node.receiver, f"{METHODS[node.function].form} is about lists, and this is {receiver_type}")
        return f"_x.{node.function}({receiver}, {compiler.js})", receiver_type.not_null() if receiver_type.kind == "list" else list_of(JSON)
    if node.function in METHODS:
        _arity(node, 1, METHODS[node.function].form)
        receiver, receiver_type = compiler.visit(node.receiver)
        part, part_type = compiler.visit(node.arguments[0])
        for place, type_ in ((node.receiver, receiver_type), (node.arguments[0], part_type)):
            if type_.kind not in ("string", "json"):
                raise _fail(place, f"{METHODS[node.function].form} is about strings, and this is {type_}")
        return f"_x.text_test({node.function!r}, {receiver}, {part})", BOOL
    known = ", ".join(sorted(name for name in [*MACROS, *METHODS] if name != "has"))
    raise _fail(node, f"unknown method '{node.function}' (the methods: {known})")


def _has(compiler: Compiler, node: n.Call) -> tuple[str, Type]:
    _arity(node, 1, "has(x.f)")
    argument = node.arguments[0]
    if not isinstance(argument, n.Select):
        raise _fail(node, "has() takes a field, as in has(x.f)")
    source, type_ = compiler.visit(argument.operand)
    compiler.field(argument, source, type_, argument.field)  # the field must be one the type has
    return f"_x.has({source}, {argument.field!r})", BOOL


def _function(compiler: Compiler, node: n.Call) -> tuple[str, Type]:
    name = node.function
    _arity(node, 1, FUNCTIONS[name].form)
    source, type_ = compiler.visit(node.arguments[0])
    wanted = {
        "size": ("string", "list", "map", "json"),
        "first": ("list", "json"),
        "last": ("list", "json"),
        "normalise_path": ("string", "json"),
        "sha256": ("string", "json"),
        "sha256_frames": ("list", "json"),
        "range": ("int", "double", "json"),
    }.get(name)
    if wanted is not None and type_.kind not in wanted:
        raise _fail(node.arguments[0], f"{FUNCTIONS[name].form} takes a {' or a '.join(k for k in wanted if k != 'json')}, not {type_}")
    if name == "truthy":
        return f"_x.truthy({source})", BOOL
    if name == "kind":
        return f"_x.kind({source})", STRING
    if name in ("first", "last"):
        return f"_x.{name}({source})", (type_.item or JSON).or_null() if type_.kind == "list" else JSON
    if name == "size":
        return f"_x.size({source}, {compiler.js})", INT
    if name == "string":
        if not compiler.js and type_.kind not in ("string", "bool", "int", "json"):
            raise _fail(node.arguments[0], f"string() takes a string, a bool or an int under `semantics: strict`, not {type_}")
        return f"_x.string({source}, {compiler.js})", STRING
    if name == "sha256_json":
        return f"_x.sha256_json({source})", STRING
    if name == "json_mainline_v1":
        return f"_x.json_mainline_v1({source})", STRING
    if name == "sha256":
        return f"_x.sha256({source})", STRING
    if name == "json_stable":
        return f"_x.json_stable({source})", STRING
    if name == "sha256_frames":
        _frames_only(node.arguments[0], type_)
        return f"_x.sha256_frames({source})", STRING
    if name == "range":
        argument = node.arguments[0]
        if isinstance(argument, n.Literal) and not (isinstance(argument.value, int) and not isinstance(argument.value, bool) and 0 <= argument.value <= 1_000_000):
            raise _fail(argument, f"range(n) takes an integer from 0 to 1000000, not {argument.value!r}")
        return f"_x.range_of({source})", list_of(INT)
    return f"_x.normalise_path({source})", STRING


def _frames_only(node: n.Node, type_: Type) -> None:
    """sha256_frames' items are strings, integers and lists of them: an item type that is none of those (a bool, a
    map, null, a double) can never be framed, and is refused here rather than at run time."""
    item = type_.item if type_.kind == "list" else None
    while item is not None and item.kind == "list":
        item = item.item
    if item is not None and item.kind not in ("string", "int", "json"):
        raise _fail(node, f"sha256_frames(list) frames strings, integers and lists of them, not a list of {item}")


def _macro(compiler: Compiler, node: n.Call) -> tuple[str, Type]:
    form = MACROS[node.function].form
    _arity(node, 2, form)
    variable, body = node.arguments
    if not isinstance(variable, n.Name) or variable.name in RESERVED:
        raise _fail(variable, f"{form}: its first argument names the item, as in {form}")
    assert node.receiver is not None
    source, type_ = compiler.visit(node.receiver)
    if type_.kind == "list" and not type_.nullable:
        iterable, item_type = source, type_.item or JSON
    elif type_.kind in ("list", "map", "json"):
        iterable, item_type = f"_x.items({source})", STRING if type_.kind == "map" else (type_.item or JSON) if type_.kind == "list" else JSON
    else:
        raise _fail(node.receiver, f"{form} ranges over a list or a map, not {type_}")
    if sum(1 for name, _ in compiler.scope.values() if name.startswith("_v")) >= 2:
        raise _fail(node, f"{form} inside two other macros: the work grows as the lists' sizes multiplied; declare a fact for the inner part")
    python_name = f"_v{len(compiler.scope)}_{variable.name}"
    saved = compiler.scope.get(variable.name)
    compiler.scope[variable.name] = (python_name, item_type)
    try:
        if node.function == "map":
            value, value_type = compiler.visit(body)
            return f"[{value} for {python_name} in {iterable}]", list_of(value_type)
        test = compiler.condition(body)
    finally:
        if saved is None:
            del compiler.scope[variable.name]
        else:
            compiler.scope[variable.name] = saved
    if node.function == "filter":
        return f"[{python_name} for {python_name} in {iterable} if {test}]", list_of(item_type)
    return f"{'any' if node.function == 'exists' else 'all'}({test} for {python_name} in {iterable})", BOOL


__all__ = ["call", "Compiler", "STRING"]
