"""A language contract's row model at run time: a JSON object read as a row of one kind (its tag paths), its JSON
text held in strings read as the values they hold, then checked against the kind's generated struct; a row's id
(a field, or its position); the run a row names. Pure; the tables are a contract's generated language.py.

A row the model refuses is a RowMismatch: the row is not what the contract says the runtime writes, named with
its path and the contract's declaration. `plan` refuses such a ledger as corrupt (fail closed); `fit` reports it
as a contract/runtime mismatch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import msgspec

from ..errors import ResumeContractError, RowRefused
from .wire import json_value

ABSENT = object()  # what `at` finds where a path leads nowhere


class RowMismatch(ResumeContractError):
    """A row the contract's row model refuses: `path` ($.payload.type) and why."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{message} - at `{path}`" if path else message)


def at(value: Any, path: Sequence[str]) -> Any:
    """The value at `path` inside nested objects, or ABSENT."""
    for key in path:
        if value.__class__ is not dict or key not in value:
            return ABSENT
        value = value[key]
    return value


def _same(value: Any, values: tuple[Any, ...]) -> bool:
    return any(value == allowed and value.__class__ is allowed.__class__ for allowed in values)


def kind_of(module: ModuleType, row: dict[str, Any]) -> tuple[Any, ...] | None:
    """The kind (its row of module.KINDS) whose tag values the row holds, or None."""
    values = [at(row, path) for path in module.TAG]
    for kind in module.KINDS:
        if all(_same(values[index], allowed) for index, allowed in kind[2]):
            return kind
    return None


def read_row(module: ModuleType, value: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(its kind, the row as expressions read it: JSON text in a declared string read as its value); raises
    RowMismatch."""
    kind = kind_of(module, value)
    if kind is None:
        said = ", ".join(f"{'.'.join(path)} {_shown(at(value, path))}" for path in module.TAG)
        raise RowMismatch("$." + ".".join(module.TAG[0]), f"no kind of the contract has {said} (the kinds: {', '.join(kind[0] for kind in module.KINDS)})")
    row = value
    for path in kind[3]:
        row = _decoded(row, path)
    try:
        msgspec.convert(row, kind[1], strict=True)
    except msgspec.ValidationError as error:
        raise _mismatch(str(error), kind) from None
    return kind[0], row


def _mismatch(text: str, kind: tuple[Any, ...]) -> RowMismatch:
    """msgspec's message said as a mismatch: the path of the field itself, and what the contract declares there."""
    found = re.search(r" - at `(\$[^`]*)`$", text)
    path = found.group(1) if found else "$"
    message = text.rpartition(" - at `")[0] if found else text
    unknown = re.fullmatch(r"Object contains unknown field `([^`]*)`", message)
    missing = re.fullmatch(r"Object missing required field `([^`]*)`", message)
    if unknown is not None:
        return RowMismatch(f"{path}.{unknown.group(1)}", f"the contract declares no such field in a {kind[0]} row (rows.unknown_keys: reject)")
    said_path = f"{path}.{missing.group(1)}" if missing is not None else path
    said = kind[5].get(re.sub(r"\[\d+\]", "", said_path[2:]))
    if missing is not None:
        return RowMismatch(said_path, f"the row lacks a field the contract declares in a {kind[0]} row ({said})")
    return RowMismatch(said_path, f"{message} (the contract declares {said} in a {kind[0]} row)" if said else f"{message} (a {kind[0]} row)")


def _decoded(row: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The row with the JSON text at `path` read as the value it holds (a copy of what it changes)."""
    text = at(row, path)
    if text is ABSENT:
        return row
    if text.__class__ is not str:
        raise RowMismatch("$." + ".".join(path), f"the contract declares JSON text in a string, the row holds {_shown(text)}")
    try:
        decoded = json_value(text.encode("utf-8", "surrogatepass"))
    except (RowRefused, UnicodeError, ValueError) as refused:
        raise RowMismatch("$." + ".".join(path), f"the string holds no JSON text ({refused})") from None
    copy = dict(row)
    inner = copy
    for key in path[:-1]:
        inner[key] = dict(inner[key])
        inner = inner[key]
    inner[path[-1]] = decoded
    return copy


def row_ids(module: ModuleType, rows: Sequence[dict[str, Any]]) -> list[Any]:
    """Each row's id: its id field's value, or its position in the run (from 1)."""
    if module.ROW_ID is None:
        return list(range(1, len(rows) + 1))
    return [at(row, module.ROW_ID) for row in rows]


def id_key(value: Any) -> Any:
    """An id as ids are told apart: as written (`"5"` and `5` are two ids; `1` and `true` too)."""
    return (value.__class__.__name__, value) if value.__class__ in (str, int, float, bool) else repr(value)


def _shown(value: Any) -> str:
    if value is ABSENT:
        return "absent"
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."


def ordered(previous: Any, value: Any) -> bool:
    """Whether `value` comes after `previous` (numbers, and strings of digits, compared as numbers; other strings as
    text)."""
    first, second = _number(previous), _number(value)
    if first is not None and second is not None:
        return second > first
    if previous.__class__ is str and value.__class__ is str:
        return value > previous
    return False


def _number(value: Any) -> int | float | None:
    if value.__class__ in (int, float):
        return value
    if value.__class__ is str and value.isascii() and value.isdigit():
        return int(value)
    return None
