"""How many keys a list of decoded structs hold, and where their free JSON sits: what the reader's proof that no
row repeats a key compares with the rows' bytes (ledger.proofs.keys_proven).

msgspec keeps the last of two equal keys, so a row that repeats one decodes to a struct holding one key fewer
than the row wrote. The counter is worked out once from the model's type info (`key_counter`), and runs in one
of two forms that count alike: compiled, one interpreted loop over the structs whose source names each field
(about 60% of the generic form's time on ordinary rows: 34 against 55 microseconds for 200 events), once
COMPILE_AFTER structs were counted; or generic, a column of each field read at a time, which also serves a
model whose names are not plain identifiers. The two gather the same free JSON, in another order (the proof
joins it whole). tests/test_key_count.py holds the two forms equal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from itertools import chain
from operator import attrgetter, is_not
from typing import Any

import msgspec.inspect as mi
from msgspec import UNSET

from .columns import column, compiled_source

KeyCounter = Callable[[list[Any], list[Any]], int]  # (structs of one class, free) -> their keys; free JSON appended to `free`

# How a free-JSON value sits in a struct: one Raw, a dict of Raws (an object field), a list of Raws (an array).
RAW, RAW_DICT, RAW_LIST = "raw", "dict", "list"

_IS_SET = partial(is_not, UNSET)

# Structs counted before the counter is compiled: compiling (about 210 microseconds) costs what the compiled form
# saves over 2,000 events, so a plan of a few hundred never compiles it; an audit of many runs does, once.
COMPILE_AFTER = 2_000


class _Uncountable(Exception):
    """A field the key counter cannot count: it nests in a way the wire format does not, or not always."""


# What the counter reads of one field: (attribute, optional, the struct classes it may hold with what to count
# of each, counts dict keys, where its free JSON sits).
_LookAt = tuple[str, bool, "dict[type, _Counting] | None", bool, "str | None"]
_Counting = tuple[int, list[_LookAt]]  # (keys every struct holds, the fields looked at)


def key_counter(struct: mi.StructType) -> KeyCounter | None:
    """A function `count(structs, free)` that returns how many typed keys a list of decoded structs of one class
    hold, and appends to `free` every free-JSON value (a Raw) they hold; or None when the model nests in a way it
    cannot count (the reader then uses its slower proof)."""
    try:
        counting = _counting_of(struct)
    except _Uncountable:
        return None
    generic = _generic(counting)
    compiled: KeyCounter | None = None
    counted = 0

    def count(values: list[Any], free: list[Any]) -> int:
        nonlocal compiled, counted
        if compiled is None:
            counted += len(values)
            if counted < COMPILE_AFTER:
                return generic(values, free)
            compiled = compiled_counter(counting, values) or generic
        return compiled(values, free)

    return count


def _counting_of(struct: mi.StructType) -> _Counting:
    always = len([field for field in struct.fields if field.required]) + (1 if struct.tag_field else 0)
    return always, [look for look in map(_look_at, struct.fields) if look is not None]


def _look_at(field: mi.Field) -> _LookAt | None:
    """What the counter reads of one field, or None when the field always holds exactly its own key."""
    kind = field.type
    nested = _nested(kind)
    free = free_shape(kind)
    is_dict = isinstance(kind, mi.DictType)
    if not field.required or nested is not None or is_dict or free is not None:
        return (field.name, not field.required, nested, is_dict, free)
    return None


def _nested(kind: mi.Type) -> dict[type, _Counting] | None:
    """What to count of each struct class a field may hold (the content kinds); None for a field that holds no
    struct. Raises _Uncountable for a field the counter cannot count."""
    if isinstance(kind, mi.UnionType) and any(isinstance(t, mi.StructType) for t in kind.types):
        structs = [t for t in kind.types if isinstance(t, mi.StructType)]
        if len(structs) != len(kind.types):
            raise _Uncountable
        return {t.cls: _counting_of(t) for t in structs}
    if isinstance(kind, mi.UnionType) and any(isinstance(t, (mi.DictType, mi.ListType, mi.RawType)) for t in kind.types):
        raise _Uncountable  # a free or keyed value that may also be something else: not counted
    if isinstance(kind, mi.StructType):
        raise _Uncountable  # a single struct-valued field is not in the wire format; count nothing rather than guess
    if isinstance(kind, (mi.DictType, mi.ListType)) and not _holds_no_struct(kind):
        raise _Uncountable
    return None


def _generic(counting: _Counting) -> KeyCounter:
    """The counter as columns: each field looked at is read of every struct at once."""
    always, looked_at = counting
    columns = [(column(name), optional, None if nested is None else {cls: _generic(of) for cls, of in nested.items()}, is_dict, shape) for name, optional, nested, is_dict, shape in looked_at]

    def count(values: list[Any], free: list[Any]) -> int:
        total = always * len(values)
        for get, optional, nested, is_dict, shape in columns:
            held = get(values)
            if optional:
                total += len(held) - held.count(UNSET)
            if is_dict:
                total += sum(map(len, filter(None, held)))  # UNSET and {} are falsy
            if shape == RAW:
                free += filter(_IS_SET, held)  # every present value (a decoded Raw is never empty)
            elif shape == RAW_DICT:
                free += chain.from_iterable(map(dict.values, filter(None, held)))
            elif shape == RAW_LIST:
                free += chain.from_iterable(filter(None, held))
            if nested is not None:
                classes = set(map(type, held))
                for cls, counter in nested.items():
                    if cls in classes:
                        total += counter(list(filter(cls.__instancecheck__, held)), free)
        return total

    return count


def compiled_counter(counting: _Counting, sample: list[Any] | None = None) -> KeyCounter | None:
    """The counter as one loop over the structs, compiled from source naming each field; None when a name is not
    a plain ASCII identifier (or is a keyword): only such names, fixed statements and integers are compiled. The
    loop compares a struct's nested struct with each class it may be in turn: most often held in `sample` (structs
    of the model) first."""
    classes: dict[type, str] = {}
    always, looked_at = counting
    lines = ["def count(values, free):", f"    total = {always} * len(values)", "    append = free.append", "    for value in values:"]
    try:
        lines += _statements(_most_held_first(looked_at, sample or []), "value", 0, classes, "        ")
    except ValueError:
        return None
    lines.append("    return total")
    namespace: dict[str, Any] = {"UNSET": UNSET, **{name: cls for cls, name in classes.items()}}
    counter: KeyCounter | None = compiled_source("\n".join(lines) + "\n", namespace, "count")
    return counter


def _statements(looked_at: list[_LookAt], owner: str, depth: int, classes: dict[type, str], indent: str) -> list[str]:
    lines: list[str] = []
    for index, (name, optional, nested, is_dict, shape) in enumerate(looked_at):
        if not (name.isascii() and name.isidentifier()):
            raise ValueError(name)
        held = f"field_{depth}_{index}"
        lines.append(f"{indent}{held} = {owner}.{name}")
        inner = indent
        if optional:  # everything else is read only when the field is there: an absent one costs one comparison
            lines.append(f"{indent}if {held} is not UNSET:")
            inner = indent + "    "
            lines.append(f"{inner}total += 1")
        if is_dict:
            lines.append(f"{inner}total += len({held})")
        if shape == RAW:
            lines.append(f"{inner}append({held})")
        elif shape in (RAW_DICT, RAW_LIST):
            lines.append(f"{inner}free += {held}.values()" if shape == RAW_DICT else f"{inner}free += {held}")
        if nested:
            kind = f"kind_{depth}_{index}"
            lines.append(f"{inner}{kind} = type({held})")
            for number, (cls, (nested_always, nested_looked_at)) in enumerate(nested.items()):
                name_of_class = classes.setdefault(cls, f"Struct{len(classes)}")
                lines.append(f"{inner}{'if' if number == 0 else 'elif'} {kind} is {name_of_class}:")
                lines.append(f"{inner}    total += {nested_always}")
                lines += _statements(nested_looked_at, held, depth + 1, classes, inner + "    ")
    return lines


def _most_held_first(looked_at: list[_LookAt], sample: list[Any]) -> list[_LookAt]:
    """The fields looked at, each nested one's classes ordered by how many of the sample's structs hold them there
    (ties in the model's order)."""
    ordered: list[_LookAt] = []
    for name, optional, nested, is_dict, shape in looked_at:
        if nested and sample:
            held = Counter(map(type, map(attrgetter(name), sample)))
            nested = dict(sorted(nested.items(), key=lambda item: -held[item[0]]))
        ordered.append((name, optional, nested, is_dict, shape))
    return ordered


def free_shape(kind: mi.Type) -> str | None:
    """How a field of this type holds free JSON (RAW, RAW_DICT, RAW_LIST), or None when it holds none."""
    if isinstance(kind, mi.RawType):
        return RAW
    if isinstance(kind, mi.DictType) and isinstance(kind.value_type, mi.RawType):
        return RAW_DICT
    if isinstance(kind, mi.ListType) and isinstance(kind.item_type, mi.RawType):
        return RAW_LIST
    return None


def _holds_no_struct(kind: mi.Type) -> bool:
    inner = kind.value_type if isinstance(kind, mi.DictType) else getattr(kind, "item_type", None)
    return isinstance(inner, (mi.RawType, mi.StrType, mi.IntType, mi.FloatType, mi.BoolType))
