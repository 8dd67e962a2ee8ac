"""What the explorer (generator/language/alphabet.py) needs to know of a contract's row model to build rows it
accepts: a kind's tag values, a field at a dotted path through declared objects, a field's plain value, the
values of a list a row may hold at a path, and the JSON text a declared string holds (written last: the explorer
builds a row as expressions read it, then writes each `encoded: json` field back as text).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from resume_contract.core.language_rows import ABSENT, at

from ..expr.probes import OTHER, _put
from .model import LanguageSpec, RowField, RowKind, walk_fields
from .model import field_at as model_field_at

Path = tuple[str, ...]
_PLAIN = {"string": "k", "integer": 0, "number": 0, "boolean": True, "array": [], "null": None}


def put(value: dict[str, Any], path: Path, held: Any) -> None:
    _put(value, path, held)


def tag_values(kind: RowKind) -> dict[Path, Any]:
    """The value a plain row of the kind holds at each tag path it constrains (its first)."""
    return {tuple(path.split(".")): values[0] for path, values in kind.match}


def kind_of_row(spec: LanguageSpec, row: dict[str, Any]) -> str | None:
    for kind in spec.rows.kinds:
        if all(any(at(row, tuple(path.split("."))) == value and type(value) is type(at(row, tuple(path.split(".")))) for value in values) for path, values in kind.match):
            return kind.name
    return None


def field_at(fields: dict[str, RowField], path: Path) -> RowField | None:
    """The declared field at `path` (through objects declaring their fields), or None inside free JSON."""
    return model_field_at(tuple(fields.values()), path)


def plain_value(field: RowField, read: dict[Path, list[Any]], path: Path) -> Any:
    """A field's value in a kind's plain row: of its type; an object holding its declared required fields and the
    paths the contracts read inside it (`read`: each with the values it is compared with; the first, or "v")."""
    if field.enum:
        return field.enum[0]
    if field.types:
        return _PLAIN.get(field.types[0], "v")
    if field.type in ("json", "object"):
        value: dict[str, Any] = {}
        for inner in field.fields or ():
            if not inner.optional:
                value[inner.name] = plain_value(inner, read, (*path, inner.name))
        nested = [held for held in read if held[: len(path)] == path and len(held) > len(path)]
        for held in nested:
            if at(value, held[len(path):]) is ABSENT and (field.fields is None or _free_at(field, held[len(path):])):
                _put(value, held[len(path):], first_value(read[held]))
        return value if value or field.type == "object" or nested else "v"
    return _PLAIN.get(field.type, "v")


def _free_at(field: RowField, path: Path) -> bool:
    """Whether `path` inside the object `field` leads through free JSON (a declared object only holds its fields)."""
    for name in path:
        if field.fields is None:
            return True
        inner = next((one for one in field.fields if one.name == name), None)
        if inner is None:
            return False
        field = inner
    return False


def first_value(values: list[Any]) -> Any:
    return next((held for held in values if held != OTHER), "v")


def typed(field: RowField | None, values: list[Any]) -> list[Any]:
    """The values of `values` a row may hold where `field` is declared (inside free JSON: all of them)."""
    if field is None or field.type == "json" and not field.types:
        return list(values)
    if field.enum:
        return list(field.enum)
    kinds = field.types or (field.type,)
    return [value for value in values if any(_accepts(kind, value) for kind in kinds)]


def _accepts(kind: str, value: Any) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": number,
        "boolean": isinstance(value, bool),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
        "null": value is None,
    }.get(kind, True)


def encoded_paths(fields: dict[str, RowField]) -> list[Path]:
    return [path for path, field in walk_fields(tuple(fields.values())) if field.encoded]


def written(row: dict[str, Any], paths: list[Path]) -> dict[str, Any]:
    """The row as the runtime writes it: each value at an `encoded: json` path as JSON text."""
    if not paths:
        return row
    made = copy.deepcopy(row)
    for path in sorted(paths, key=len, reverse=True):
        value = at(made, path)
        if value is not ABSENT:
            _put(made, path, json.dumps(value, sort_keys=True, separators=(",", ":")))
    return made


def read_back(row: dict[str, Any], paths: list[Path]) -> dict[str, Any]:
    """A row as the runtime writes it, read as expressions read it (a scenario's row: the plain row's start)."""
    made = copy.deepcopy(row)
    for path in sorted(paths, key=len):
        value = at(made, path)
        if isinstance(value, str):
            try:
                _put(made, path, json.loads(value))
            except ValueError:
                pass
    return made


def leaves(value: dict[str, Any], path: Path = ()) -> Iterator[tuple[Path, Any]]:
    for key, inner in value.items():
        if isinstance(inner, dict) and inner:
            yield from leaves(inner, (*path, key))
        else:
            yield (*path, key), inner
