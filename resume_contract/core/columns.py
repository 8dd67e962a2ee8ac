"""One attribute of every struct in a list (a column), read from C by `attrgetter`.

The walk and the reader read a dozen such columns of every chunk. (A list comprehension naming the attribute reads
it faster, but it would have to be compiled from source at run time, and nothing is: code specialised for a
contract is the generator's, in generated/, or not at all.)
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

Column = Callable[[Any], list[Any]]  # a sized iterable of objects -> their attribute, in order

_COLUMNS: dict[str, Column] = {}


def column(name: str) -> Column:
    """A function of a list of objects: the list of their attribute `name`, in order (one per name)."""
    reader = _COLUMNS.get(name)
    if reader is None:
        get = attrgetter(name)

        def read(items: Any) -> list[Any]:
            return list(map(get, items))

        reader = _COLUMNS[name] = read
    return reader
