"""The wire format (spec/runtime_event.yaml) as its decoding model: Python source, and that source loaded.

The generator needs the decoding model before anything is written (to read the canonical ledger and run the
projector over it), so the rendered module is also executed in memory here. The code that is checked is the
code that is written (`render` places this same source in generated/): there is no second, hand-kept model
to drift from it.
"""

from __future__ import annotations

import functools
import hashlib
import sys
import types
from typing import Any

from ..environment import ENVIRONMENT
from ..expr.needs import reads
from ..literals import LINE_WIDTH, Code, py, py_expression
from .key_counter import counter_source
from .model import WireField, WireFormat

MODULE_PATH = "resume_contract_generated/runtime_event.py"

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


def result_fields(wire: WireFormat, kind: Any) -> tuple[tuple[str, str], ...] | None:
    """(attribute, wire name) of each field of an operation's result that an action event kind's `against_call` checks
    read (`response.F`), in wire order; None when one reads the result as a whole (then all of it is kept)."""
    read: set[str] = set()
    for check in kind.against_call:
        fields = reads(check.when[0], "response")
        if fields is None:
            return None
        read.update(fields)
    return tuple((field.attribute, field.name) for field in wire.fields if field.name in read)


def needed_attributes(wire: WireFormat, needs: tuple[str, ...] | None) -> tuple[tuple[str, str | None], ...] | None:
    """The decoding model's (attribute, key) for each field (`F`, or `F.K`) a test needs one of; the key kept only
    where the field is an object (decoded as a dict, so a key is looked up without reading its value)."""
    if needs is None:
        return None
    found = []
    for need in needs:
        name, _, key = need.partition(".")
        field = wire.field(name)
        found.append((field.attribute, key if key and field.type == "object" else None))
    return tuple(dict.fromkeys(found))


def _field_line(field: WireField) -> str:
    options = [] if field.required else ["default=UNSET"]
    if field.attribute != field.name:
        options.append(f"name={py(field.name)}")
    line = f"{field.attribute}: {_annotation(field)}"
    if not options:
        return line
    if options == ["default=UNSET"]:
        return f"{line} = UNSET"
    whole = f"{line} = msgspec.field({', '.join(options)})"
    if len(whole) + 4 <= LINE_WIDTH:  # (the template indents a field by 4)
        return whole
    return f"{line} = msgspec.field(\n        {', '.join(options)},\n    )"


def module_context(wire: WireFormat) -> dict[str, Any]:
    """The template's values: the structs, then the key counter written for them (generator/spec/key_counter.py,
    worked out from the structs executed in memory)."""
    context = _structs_context(wire)
    structs = _executed(ENVIRONMENT.get_template("runtime_event.py.jinja").render(**context, key_counter=""))
    return {**context, "key_counter": counter_source(structs)}


def _structs_context(wire: WireFormat) -> dict[str, Any]:
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
        "refusal_functions": [(f"_invalid_{number}", py_expression(refusal.when[1], 4)) for number, refusal in enumerate(wire.refusals)],
        "refusals": [
            py((needed_attributes(wire, refusal.needs), Code(f"_invalid_{number}"), refusal.message))
            for number, refusal in enumerate(wire.refusals)
        ],
    }


def render_module(wire: WireFormat) -> str:
    """The decoding model's source (without the generated-file header)."""
    return ENVIRONMENT.get_template("runtime_event.py.jinja").render(**module_context(wire))


def _executed(source: str) -> types.ModuleType:
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


@functools.lru_cache(maxsize=8)
def load_module(wire: WireFormat) -> types.ModuleType:
    """The decoding model, executed in memory from exactly the source `render_module` gives."""
    return _executed(render_module(wire))
