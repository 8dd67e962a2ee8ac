"""How many keys a list of decoded structs hold, and where their free JSON sits: what the reader's proof that no
row repeats a key compares with the rows' bytes (ledger.proofs.keys_proven).

msgspec keeps the last of two equal keys, so a row that repeats one decodes to a struct holding one key fewer
than the row wrote. The counter is worked out once from the model's type info (`key_counter`) and reads a column
of each field at a time. The generator also writes a loop naming each field into the contract's decoding model
(generated/runtime_event.py `count_keys`, from `counting_of`: generator/spec/key_counter.py), which counts alike and
faster; the reader uses it where the model has one (`core.wire.WireModel`). Nothing is compiled at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import chain
from operator import is_not
from typing import Any

import msgspec.inspect as mi
from msgspec import UNSET

from .columns import column

KeyCounter = Callable[[list[Any], list[Any]], int]  # (structs of one class, free) -> their keys; free JSON appended to `free`

# How a free-JSON value sits in a struct: one Raw, a dict of Raws (an object field), a list of Raws (an array).
RAW, RAW_DICT, RAW_LIST = "raw", "dict", "list"

_IS_SET = partial(is_not, UNSET)

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
    counting = counting_of(struct)
    return None if counting is None else _generic(counting)


def counting_of(struct: mi.StructType) -> _Counting | None:
    """What a key counter reads of the struct's fields, or None when the model nests in a way it cannot count."""
    try:
        return _counting_of(struct)
    except _Uncountable:
        return None


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
