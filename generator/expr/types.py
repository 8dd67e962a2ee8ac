"""The types an expression is checked against: what a contract declares its rows, inputs and facts to hold.

A value of the language is a JSON value (Python's json gives null, bool, int, float, str, list, dict). A type
says which of them a place may hold; `json` is any of them, checked when the expression runs instead. A field
may be optional: absent reads as `null`, and `has(x.f)` tells absent from null.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Type:
    """kind: bool, int, double, string, null, list, map, object or json. `nullable`: null is a value it may hold."""

    kind: str
    item: Type | None = None  # a list's items, a map's values
    fields: tuple[tuple[str, Type, bool], ...] = ()  # an object's (name, type, optional)
    name: str = ""  # an object's name, for messages ("row", "input")
    nullable: bool = False

    def field(self, name: str) -> tuple[Type, bool] | None:
        for field_name, field_type, optional in self.fields:
            if field_name == name:
                return field_type, optional
        return None

    def or_null(self) -> Type:
        return self if self.nullable or self.kind in ("null", "json") else Type(self.kind, self.item, self.fields, self.name, True)

    def not_null(self) -> Type:
        return Type(self.kind, self.item, self.fields, self.name, False)

    def __str__(self) -> str:
        text = {"list": f"list({self.item})", "map": f"map({self.item})", "object": self.name or "object"}.get(self.kind, self.kind)
        return f"{text} or null" if self.nullable else text


BOOL = Type("bool")
INT = Type("int")
DOUBLE = Type("double")
STRING = Type("string")
NULL = Type("null")
JSON = Type("json")

NUMBERS = ("int", "double")


def list_of(item: Type) -> Type:
    return Type("list", item)


def map_of(value: Type) -> Type:
    return Type("map", value)


def object_type(name: str, fields: Mapping[str, tuple[Type, bool]]) -> Type:
    return Type("object", fields=tuple((key, value[0], value[1]) for key, value in sorted(fields.items())), name=name)


@dataclass(frozen=True)
class Environment:
    """The names an expression may use, each with its type, and the semantics its values follow."""

    names: Mapping[str, Type] = field(default_factory=dict)
    semantics: str = "strict"  # or "javascript"


_SCALARS = {"bool": BOOL, "int": INT, "double": DOUBLE, "string": STRING, "null": NULL, "json": JSON}


def declared(name: str, spec: object) -> Type:
    """A type as a contract declares it in YAML: `string`, `{type: list, items: int}`, `{type: map, values: json}`,
    or `{type: object, fields: {name: TYPE or {type: ..., optional: true}}}`. ValueError says what is wrong."""
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise ValueError(f"{name}: a type is a name ({', '.join(sorted(_SCALARS))}, list, map, object) or a mapping with `type`")
    kind = spec["type"]
    allowed = {"type", "optional", "nullable"} | {"list": {"items"}, "map": {"values"}, "object": {"fields"}}.get(kind, set())
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise ValueError(f"{name}: unknown key '{unknown[0]}' in a {kind} type (it takes {', '.join(sorted(allowed))})")
    if kind in _SCALARS:
        result = _SCALARS[kind]
    elif kind == "list":
        result = list_of(declared(f"{name}[]", spec.get("items", "json")))
    elif kind == "map":
        result = map_of(declared(f"{name}{{}}", spec.get("values", "json")))
    elif kind == "object":
        fields = spec.get("fields", {})
        if not isinstance(fields, dict):
            raise ValueError(f"{name}: `fields` is a mapping of field names to types")
        result = object_type(name, {key: (declared(f"{name}.{key}", value), _optional(value)) for key, value in fields.items()})
    else:
        raise ValueError(f"{name}: unknown type '{kind}' (the types: {', '.join(sorted([*_SCALARS, 'list', 'map', 'object']))})")
    return result.or_null() if isinstance(spec, dict) and spec.get("nullable") is True else result


def _optional(spec: object) -> bool:
    return isinstance(spec, dict) and spec.get("optional") is True
