"""The wire format (spec/runtime_event.yaml) as a JSON Schema (2020-12) for one ledger row, which other tools can
validate ledgers with (generated/runtime-event.schema.json)."""

from __future__ import annotations

import json
from typing import Any

from ..spec.model import WireField, WireFormat

_SCHEMA_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "boolean": {"type": "boolean"},
    "number": {"type": "number"},
    "json": {},
    "object": {"type": "object"},
    "array": {"type": "array"},
    "content": {"$ref": "#/$defs/content"},
}


def _schema_property(field: WireField) -> dict[str, Any]:
    schema = {"description": field.description, **_SCHEMA_TYPES[field.type]}
    if field.enum:
        schema["enum"] = list(field.enum)
    return schema


def _object_schema(fields: tuple[WireField, ...], closed: bool, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    properties = dict(extra or {})
    properties.update({field.name: _schema_property(field) for field in fields})
    required = [name for name in (extra or {})] + [field.name for field in fields if field.required]
    schema: dict[str, Any] = {"type": "object", "required": required, "properties": properties}
    if closed:
        schema["additionalProperties"] = False
    return schema


def row_schema(wire: WireFormat) -> dict[str, Any]:
    """A JSON Schema (2020-12) that one ledger row must satisfy."""
    closed = wire.unknown_keys == "reject"
    definitions: dict[str, Any] = {
        "content": {"oneOf": [{"$ref": f"#/$defs/content_{kind.name}"} for kind in wire.content_kinds]},
    }
    for kind in wire.content_kinds:
        tag = {wire.content_tag: {"const": kind.name}}
        definitions[f"content_{kind.name}"] = {"description": kind.description, **_object_schema(kind.fields, closed, tag)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "resume-contract/runtime-event.schema.json",
        "title": "RuntimeEvent: one row of a runtime-events.jsonl ledger",
        "description": "Generated from spec/runtime_event.yaml. Free JSON values (json, object, array) may hold null; "
        "declared fields may not.",
        **_object_schema(wire.fields, closed),
        "$defs": definitions,
    }


def render_schema(wire: WireFormat) -> str:
    """The row schema as JSON text (without the generated-file header)."""
    return json.dumps(row_schema(wire), indent=2, ensure_ascii=False) + "\n"
