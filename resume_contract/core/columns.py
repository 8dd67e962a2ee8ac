"""Attributes read by the interpreter rather than by `attrgetter`: one attribute of every struct in a list (a
column), and a few attributes of one struct at a time (`compiled_function`).

`list(map(attrgetter(name), structs))` reads each attribute through the generic lookup, from C: about 350
instructions a struct. A list comprehension reads it with the interpreter's specialised attribute load, in
less than half of that; the reader and the walk read a dozen such columns of every chunk. The comprehension
must name the attribute in its source, so it is compiled, from nothing but plain ASCII identifiers, once
its column has been asked for COMPILE_AFTER items in the process: compiling costs about 200 k instructions,
which a plan of a few hundred events would not win back.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

Column = Callable[[Any], list[Any]]  # a sized iterable of objects -> their attribute, in order

COMPILE_AFTER = 2_000  # items: about what compiling the comprehension costs, at 100-200 instructions an item saved

_COLUMNS: dict[str, Column] = {}


def column(name: str) -> Column:
    """A function of a list of objects: the list of their attribute `name`, in order (one per name)."""
    reader = _COLUMNS.get(name)
    if reader is None:
        reader = _COLUMNS[name] = _column(name)
    return reader


def _column(name: str) -> Column:
    get = attrgetter(name)
    compiled: Column | None = None
    asked = 0

    def read(items: Any) -> list[Any]:
        nonlocal compiled, asked
        if compiled is None:
            asked += len(items)
            if asked < COMPILE_AFTER:
                return list(map(get, items))
            compiled = compiled_function("items", f"[item.{name} for item in items]", [name]) or (lambda items: list(map(get, items)))
        return compiled(items)

    return read


def compiled_function(argument: str, expression: str, names: list[str]) -> Callable[[Any], Any] | None:
    """`lambda argument: expression`, compiled, when each of `names` (every name the expression reads of its
    argument) is a plain ASCII identifier; None when one is not, or is a keyword."""
    if not all(name.isascii() and name.isidentifier() for name in names):
        return None
    function: Callable[[Any], Any] | None = compiled_source(f"def function({argument}):\n    return {expression}\n", {}, "function")
    return function


def compiled_source(source: str, namespace: dict[str, Any], name: str) -> Any:
    """The function `name` that `source` defines, executed in `namespace`; None when it does not compile (a name
    in it is a keyword). The one place generated source runs: its callers build it from checked plain ASCII
    identifiers, fixed statements and integers only, and pass every other value in `namespace`."""
    try:
        exec(source, namespace)
    except SyntaxError:
        return None
    return namespace[name]

