"""The reader's key counter written for one decoding model: `count_keys(values, free)` in generated/runtime_event.py.

The reader proves that no row repeats a key by comparing the keys the decoded structs hold with the rows' bytes
(resume_contract.ledger.proofs); `core.key_count` counts them a column at a time, for any model. Here the same count
is written out as one loop naming each field and content kind of this model, emitted into the generated module
(reviewed and drift-checked like the rest of generated/; tests/test_key_count.py holds the two forms equal). It
counts a run's 200 rows in about 60% of the column form's time. None is written where a name is not a plain
identifier or the model nests in a way the counter cannot count: the reader then counts by columns.
"""

from __future__ import annotations

import keyword
import types

import msgspec.inspect as mi

from resume_contract.core.key_count import RAW, RAW_DICT, RAW_LIST, counting_of


def counter_source(module: types.ModuleType) -> str:
    """The source of `count_keys` for the model in `module` (its RuntimeEvent and content structs), or ""."""
    info = mi.type_info(module.RuntimeEvent)
    assert isinstance(info, mi.StructType)
    counting = counting_of(info)
    if counting is None:
        return ""
    always, looked_at = counting
    try:
        body = _statements(looked_at, "value", 0, module, "        ")
    except ValueError:
        return ""
    lines = [
        "def count_keys(values: list[Any], free: list[Any]) -> int:  # noqa: C901 - one flat loop over the model's fields",
        '    """How many typed keys the decoded events hold; every free-JSON value they hold is appended to `free`."""',
        f"    total = {always} * len(values)",
        "    append = free.append",
        "    for value in values:",
        *body,
        "    return total",
    ]
    return "\n".join(lines) + "\n"


def _name(name: str) -> str:
    if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name):
        raise ValueError(name)
    return name


def _statements(looked_at: list, owner: str, depth: int, module: types.ModuleType, indent: str) -> list[str]:
    lines: list[str] = []
    for index, (name, optional, nested, is_dict, shape) in enumerate(looked_at):
        held = f"field_{depth}_{index}"
        lines.append(f"{indent}{held} = {owner}.{_name(name)}")
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
                class_name = _name(cls.__name__)
                if getattr(module, class_name, None) is not cls:
                    raise ValueError(class_name)  # (a class the module does not name as itself)
                lines.append(f"{inner}{'if' if number == 0 else 'elif'} {kind} is {class_name}:")
                lines.append(f"{inner}    total += {nested_always}")
                lines += _statements(nested_looked_at, held, depth + 1, module, inner + "    ")
    return lines
