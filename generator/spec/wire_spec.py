"""spec/runtime_event.yaml -> the frozen `WireFormat`, with every reference and structure error collected.

The schema has already checked shapes and names; this module checks what a schema cannot: that the fields
the reader and the projector rely on exist with the right types, that `tool_call` names fields of its own
kind, and that every name becomes a distinct Python identifier.
"""

from __future__ import annotations

import dataclasses
import keyword
import re

from ..errors import SpecError
from ..expr import Environment
from ..expr.needs import needs
from .compiled import compiled
from .loader import LoadedFile
from .model import ContentKind, ToolCall, WireField, WireFormat, WireRefusal
from .projector_expressions import event_type

# Fields the store and the projector read by name: (wire name, type, required).
READ_BY_THE_TOOL = (("id", "string", True), ("sessionId", "string", True), ("runId", "string", True))
CONTENT_FIELD = "content"
STATUS_FIELD = "status"


def attribute_name(wire_name: str) -> str:
    """camelCase wire name -> the snake_case attribute of the decoding model."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", wire_name).lower()


def class_name(kind: str) -> str:
    """content kind -> its struct class in the decoding model (`function_call` -> `FunctionCallContent`)."""
    return "".join(part.capitalize() for part in kind.split("_")) + "Content"


def build_wire_format(file: LoadedFile) -> tuple[WireFormat, list[SpecError]]:
    """The wire format of a schema-valid spec/runtime_event.yaml, and the errors found on the way."""
    errors: list[SpecError] = []
    data = file.data
    fields = _fields(file, ("fields",), data["fields"], errors, top_level=True)
    kinds = []
    classes: dict[str, str] = {}
    tag = data["content"]["tag"]
    for name, item in data["content"]["kinds"].items():
        path = ("content", "kinds", name)
        kind_fields = _fields(file, path + ("fields",), item["fields"], errors, top_level=False)
        for field in kind_fields:
            if field.name == tag:
                errors.append(SpecError(field.mark, f"'{tag}' is the content tag; a content kind cannot declare it as a field"))
        cls = class_name(name)
        if cls in classes:
            errors.append(SpecError(file.key_mark(path), f"content kinds '{classes[cls]}' and '{name}' both become the class {cls}"))
        classes.setdefault(cls, name)
        tool_call = _tool_call(file, path, item.get("tool_call"), kind_fields, errors)
        kinds.append(ContentKind(name, cls, item["description"], kind_fields, tool_call, file.key_mark(path)))
    wire = WireFormat(
        unknown_keys=data["unknown_keys"],
        fields=fields,
        content_tag=tag,
        content_kinds=tuple(kinds),
        partial_flag=data["partial_flag"],
        terminal_statuses=tuple(data["terminal"]["statuses"]),
        terminal_flag_field=data["terminal"]["flag"]["field"],
        terminal_flag_key=data["terminal"]["flag"]["key"],
    )
    _check_fields_the_tool_reads(file, wire, errors)
    return _with_refusals(file, wire, errors), errors


def _with_refusals(file: LoadedFile, wire: WireFormat, errors: list[SpecError]) -> WireFormat:
    """The wire format with its `invalid_when` tests compiled (expressions of `row`, under `semantics`)."""
    semantics = file.data.get("semantics", "strict")
    env = Environment({"row": event_type(wire)}, semantics)
    refusals = []
    for index, item in enumerate(file.data.get("invalid_when", [])):
        when = compiled(file, ("invalid_when", index, "when"), env, errors, condition=True)
        if when is not None:
            refusals.append(WireRefusal((when[0], when[1]), item["message"], file.mark(("invalid_when", index)), needs(when[0], "row")))
    return dataclasses.replace(wire, semantics=semantics, refusals=tuple(refusals))


def _fields(file: LoadedFile, path: tuple[str, ...], items: dict, errors: list[SpecError], *, top_level: bool) -> tuple[WireField, ...]:
    fields = []
    attributes: dict[str, str] = {}
    for name, item in items.items():
        mark = file.key_mark(path + (name,))
        field = WireField(
            name=name,
            attribute=attribute_name(name),
            type=item["type"],
            required=item.get("required", False),
            enum=tuple(item.get("enum", ())),
            description=item["description"],
            mark=mark,
        )
        if keyword.iskeyword(field.attribute) or keyword.issoftkeyword(field.attribute):
            errors.append(SpecError(mark, f"'{name}' is a Python keyword and cannot be a field of the decoding model"))
        if field.attribute in attributes:
            errors.append(SpecError(mark, f"fields '{attributes[field.attribute]}' and '{name}' both become the attribute '{field.attribute}'"))
        attributes.setdefault(field.attribute, name)
        if field.enum and field.type != "string":
            errors.append(SpecError(file.mark(path + (name, "enum")), f"only a string field takes 'enum'; '{name}' is {field.type}"))
        if field.type == "content" and not top_level:
            errors.append(SpecError(file.mark(path + (name, "type")), "only the event itself has a content field; content does not nest"))
        fields.append(field)
    return tuple(fields)


def _tool_call(file: LoadedFile, path: tuple[str, ...], item: dict | None, fields: tuple[WireField, ...], errors: list[SpecError]) -> ToolCall | None:
    if item is None:
        return None
    by_name = {field.name: field for field in fields}
    declared = ", ".join(by_name)

    def need(key: str, wanted: str, required: bool) -> None:
        name = item.get(key)
        if name is None:
            return
        mark = file.mark(path + ("tool_call", key))
        field = by_name.get(name)
        if field is None:
            errors.append(SpecError(mark, f"tool_call.{key} names '{name}', which this kind does not declare; its fields are [{declared}]"))
        elif wanted != "any" and field.type != wanted:
            errors.append(SpecError(mark, f"tool_call.{key} needs a {wanted} field; '{name}' is {field.type}"))
        elif required and not field.required:
            errors.append(SpecError(mark, f"tool_call.{key} needs a required field; '{name}' may be absent"))

    role = item["role"]
    need("call_id", "string", True)
    need("tool_name", "string", True)
    need("arguments", "any", False)
    need("error_flag", "boolean", False)
    mark = file.mark(path + ("tool_call",))
    if role == "call":
        for key in ("tool_name", "arguments"):
            if key not in item:
                errors.append(SpecError(mark, f"a tool call (role: call) needs '{key}': an operation reports its tool and arguments"))
        if "error_flag" in item:
            errors.append(SpecError(file.mark(path + ("tool_call", "error_flag")), "only a result (role: result) has an error_flag"))
    elif "arguments" in item:
        errors.append(SpecError(file.mark(path + ("tool_call", "arguments")), "only a call (role: call) has arguments"))
    return ToolCall(role, item["call_id"], item.get("tool_name"), item.get("arguments"), item.get("error_flag"))


def _check_fields_the_tool_reads(file: LoadedFile, wire: WireFormat, errors: list[SpecError]) -> None:
    by_name = {field.name: field for field in wire.fields}
    at_fields = file.mark(("fields",))
    for name, wanted, required in READ_BY_THE_TOOL:
        field = by_name.get(name)
        if field is None or field.type != wanted or field.required != required:
            errors.append(SpecError(field.mark if field else at_fields, f"the store reads '{name}': it must be a required {wanted} field"))
    content = by_name.get(CONTENT_FIELD)
    if content is None or content.type != "content" or content.required:
        errors.append(SpecError(content.mark if content else at_fields, f"the projector reads '{CONTENT_FIELD}': it must be an optional field of type content"))
    others = [field for field in wire.fields if field.type == "content" and field.name != CONTENT_FIELD]
    for field in others:
        errors.append(SpecError(field.mark, f"only '{CONTENT_FIELD}' may be of type content"))
    partial = by_name.get(wire.partial_flag)
    if partial is None or partial.type != "boolean" or not partial.required:
        errors.append(SpecError(file.mark(("partial_flag",)), f"partial_flag names '{wire.partial_flag}': it must be a required boolean field"))
    flag = by_name.get(wire.terminal_flag_field)
    if flag is None or flag.type != "object":
        errors.append(SpecError(file.mark(("terminal", "flag", "field")), f"terminal.flag.field names '{wire.terminal_flag_field}': it must be a field of type object"))
    status = by_name.get(STATUS_FIELD)
    for index, value in enumerate(wire.terminal_statuses):
        if status is None or value not in status.enum:
            allowed = ", ".join(status.enum) if status else "none: no 'status' field with an enum"
            errors.append(SpecError(file.mark(("terminal", "statuses", index)), f"terminal status '{value}' is not a value of '{STATUS_FIELD}'; its values are [{allowed}]"))
    if not any(kind.tool_call is not None and kind.tool_call.role == "call" for kind in wire.content_kinds):
        errors.append(SpecError(file.mark(("content", "kinds")), "no content kind opens a tool call (tool_call.role: call)"))
