"""The wire format (spec/runtime_event.yaml) rendered as code: the decoding model and a JSON Schema for one row.

The generator needs the decoding model before anything is written (to read the canonical ledger and run the
projector over it), so the rendered module is also executed in memory here. The code that is checked is the
code that is written: there is no second, hand-kept model to drift from it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
import types
from typing import Any

from .environment import ENVIRONMENT
from .literals import py
from .spec_model import WireField, WireFormat

MODULE_PATH = "resume_contract_generated/runtime_event.py"
SCHEMA_PATH = "runtime-event.schema.json"

_PYTHON_TYPES = {
    "string": "str",
    "boolean": "bool",
    "number": "Union[int, float]",
    "json": "Raw",
    "object": "dict[str, Raw]",
    "array": "list[Raw]",
    "content": "Content",
}


def _annotation(field: WireField) -> str:
    if field.enum:
        base = "Literal[" + ", ".join(py(value) for value in field.enum) + "]"
    else:
        base = _PYTHON_TYPES[field.type]
    return base if field.required else f"Union[{base}, UnsetType]"


def _field_line(field: WireField) -> str:
    options = [] if field.required else ["default=UNSET"]
    if field.attribute != field.name:
        options.append(f"name={py(field.name)}")
    line = f"{field.attribute}: {_annotation(field)}"
    if not options:
        return line
    if options == ["default=UNSET"]:
        return f"{line} = UNSET"
    return f"{line} = msgspec.field({', '.join(options)})"


def module_context(wire: WireFormat) -> dict[str, Any]:
    forbid = "True" if wire.unknown_keys == "reject" else "False"
    return {
        "tag": wire.content_tag,
        "tag_literal": py(wire.content_tag),
        "forbid": forbid,
        "unknown_keys": py(wire.unknown_keys),
        "unknown_keys_note": "the row is refused (schema violation)"
        if wire.unknown_keys == "reject"
        else "read past, and kept in the row as written",
        "kinds": [
            {
                "class_name": kind.class_name,
                "tag": py(kind.name),
                "docstring": py(kind.description),
                "fields": [_field_line(field) for field in kind.fields],
            }
            for kind in wire.content_kinds
        ],
        "fields": [_field_line(field) for field in wire.fields],
    }


def render_module(wire: WireFormat) -> str:
    """The decoding model's source (without the generated-file header)."""
    return ENVIRONMENT.get_template("runtime_event.py.jinja").render(**module_context(wire))


@functools.lru_cache(maxsize=8)
def load_module(wire: WireFormat) -> types.ModuleType:
    """The decoding model, executed in memory from exactly the source `render_module` gives."""
    source = render_module(wire)
    # msgspec resolves a struct's annotations through sys.modules, so the module is registered under a name
    # of its own (its source's hash: two specs never share one).
    name = "_resume_contract_wire_" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name)
        sys.modules[name] = module
        try:
            exec(compile(source, f"generated/{MODULE_PATH}", "exec"), module.__dict__)  # noqa: S102 - our own rendered code
        except BaseException:
            del sys.modules[name]
            raise
    return module


# -- JSON Schema for one ledger row -------------------------------------------------------------------------
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
