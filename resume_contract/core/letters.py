"""An explored ledger's letters, as rows: a letter (a name and its row's fields) and what a decoding model lets a
row hold (`Shape`), in wire names. `explore` makes the contract's alphabet out of them.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass
from typing import Any

import msgspec

from .table import ProjectorTable
from .wire import WireModel, encode_json

Wire = dict[str, Any]
ID_FIELD = "id"  # the field the store reads each row's id from
STATUS_ATTRIBUTE = "status"  # the attribute the walk reads a status from (spec/runtime_event.yaml's `status`)
TOOLS = ("write", "delete")  # a call's tool, and the other tool a misnamed result names
CALL_IDS = ("a", "b")
# The arguments of a second call the explorers write where a contract checks an action against its call: every
# canonical encoding of the expression library writes them otherwise (sha256_json: keys in code-unit order;
# json_stable: array-index keys first; json_mainline_v1: `__proto__` dropped, `required`/`enum` sorted), so a change
# from one to another moves a ledger (generator/spec/witnesses.py writes the dispatches agreeing with it).
TELLING_ARGS = {"b": 1, "10": 2, "9": 3, "required": ["b", "a"], "enum": [2, 1], "__proto__": {"x": 1}}


@dataclass(frozen=True)
class Letter:
    """One letter: a readable name and its row's fields (JSON values) but the id, which is its position's.

    In a review's alphabet (`union`) a letter both sides declare but write differently (a field made optional,
    say) also holds the base's way of writing it, `base_fields`: each side reads the letter as it writes it."""

    name: str
    fields: tuple[tuple[str, Any], ...]
    base_fields: tuple[tuple[str, Any], ...] | None = None

    def wire(self, event_id: str, *, base: bool = False) -> Wire:
        fields = self.base_fields if base and self.base_fields is not None else self.fields
        return {ID_FIELD: event_id, **dict(fields)}

    def row(self, event_id: str, *, base: bool = False) -> bytes:
        return encode_json(self.wire(event_id, base=base))

    @property
    def key(self) -> str:
        """The row's fields as canonical JSON: two letters with one key are one letter."""
        return json.dumps(self.fields, sort_keys=True)


def plain_value(annotation: Any, name: str) -> Any:
    """A plain JSON value of a decoding model's field type (an optional one's declared type)."""
    return _plain(_declared(annotation), name)


def _plain(annotation: Any, name: str) -> Any:
    """A plain JSON value of a decoding model's field type."""
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)[0]
    if annotation is str:
        return f"explore-{name}"
    if annotation is bool:
        return False
    if annotation in (int, float) or set(typing.get_args(annotation)) <= {int, float} and typing.get_args(annotation):
        return 0
    if annotation is msgspec.Raw or typing.get_origin(annotation) is dict:
        return {}
    if typing.get_origin(annotation) is list:
        return []
    raise TypeError(f"no plain value for a field of type {annotation!r}")


def _declared(annotation: Any) -> Any:
    """The type of a field without its `UNSET` (an optional field)."""
    args = [arg for arg in typing.get_args(annotation) if arg is not msgspec.UnsetType]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and msgspec.UnsetType in typing.get_args(annotation):
        return args[0] if len(args) == 1 else typing.Union[tuple(args)]
    return annotation


def struct_config(kind: type) -> Any:
    """A content struct's msgspec config: its tag field and tag."""
    return kind.__struct_config__  # type: ignore[attr-defined]


class Shape:
    """What a decoding model lets a row hold, in wire names: its fields, content kinds and statuses."""

    def __init__(self, model: WireModel, table: ProjectorTable) -> None:
        self.table = table
        self.event_fields = msgspec.structs.fields(model.event_type)
        self.by_attribute = {field.name: field for field in self.event_fields}
        self.kinds: list[type] = []
        self.content_field: str | None = None
        for field in self.event_fields:
            structs = [arg for arg in typing.get_args(_declared(field.type)) if isinstance(arg, type) and issubclass(arg, msgspec.Struct)]
            if structs:
                self.content_field, self.kinds = field.encode_name, structs
        status = self.by_attribute.get(STATUS_ATTRIBUTE)
        declared = _declared(status.type) if status is not None else None
        self.statuses: tuple[str, ...] = typing.get_args(declared) if typing.get_origin(declared) is typing.Literal else ()

    def declared_values(self, wire_name: str) -> tuple[Any, ...]:
        """The values a top-level field declares (a string field's `enum`), or none."""
        field = next((f for f in self.event_fields if f.encode_name == wire_name), None)
        declared = _declared(field.type) if field is not None else None
        return typing.get_args(declared) if typing.get_origin(declared) is typing.Literal else ()

    def wire_name(self, attribute: str) -> str:
        return self.by_attribute[attribute].encode_name

    def event(self, **fields: Any) -> tuple[tuple[str, Any], ...]:
        """A row's fields: the required ones (a plain value each, not partial) and `fields` (by wire name)."""
        row = {f.encode_name: _plain(f.type, f.encode_name) for f in self.event_fields if f.required and f.encode_name != ID_FIELD}
        row.update(fields)
        return tuple(row.items())

    def content(self, kind: type, **fields: Any) -> dict[str, Any]:
        config = struct_config(kind)
        content: dict[str, Any] = {config.tag_field: config.tag}
        by_attribute = {field.name: field for field in msgspec.structs.fields(kind)}
        content.update({f.encode_name: _plain(_declared(f.type), f.encode_name) for f in by_attribute.values() if f.required})
        content.update({by_attribute[attribute].encode_name: value for attribute, value in fields.items()})
        return content
