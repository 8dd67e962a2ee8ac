"""The `$ref`s of a spec's JSON Schema, checked before anything is validated against it.

A `$ref` to nothing makes jsonschema raise in the middle of validation, and one that comes back to itself
without descending into the instance (`a: {$ref: a}`, or through `allOf`, `not`, `if`...) recurses until
Python gives up: each was a traceback. A schema here refers only within its own document (`#` or `#/...`),
every reference must resolve, and no chain of references and in-place applicators may close on itself
(recursion through `properties` or `items` is fine: it consumes the instance). Each error names the line of
the `$ref` in the schema file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from ..errors import Mark, SpecError

# Keywords whose subschemas apply to the instance itself (not to a part of it): a cycle through these never ends.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf")
# Keywords whose values are data, not schemas: a "$ref" key inside them is not a reference.
_DATA = frozenset({"enum", "const", "default", "examples"})

Pointer = tuple[str | int, ...]


def reference_errors(schema: Any, text: str, display_name: str) -> list[SpecError]:
    """Every dangling, non-local or self-recursive `$ref` of `schema` (parsed from `text`), at its line."""
    errors: list[SpecError] = []
    lines = _Lines(text)
    targets: dict[Pointer, Pointer] = {}
    marks: dict[Pointer, Mark] = {}
    for where, node in _schemas(schema, ()):
        for keyword in ("$ref", "$dynamicRef"):
            if keyword not in node:
                continue
            reference = node[keyword]
            mark = Mark(display_name, *lines.of(keyword, reference))
            target = _local_target(schema, reference) if keyword == "$ref" and isinstance(reference, str) else None
            if keyword == "$dynamicRef" or not isinstance(reference, str) or not reference.startswith("#"):
                errors.append(SpecError(mark, f"{keyword} {json.dumps(reference)}: a spec schema refers only within its own document (#/...)"))
            elif target is None:
                errors.append(SpecError(mark, f"$ref {json.dumps(reference)} points to no schema in this document"))
            else:
                targets[where], marks[where] = target, mark
    for where in targets:
        if _comes_back(schema, where, targets):
            errors.append(SpecError(marks[where], f"$ref {json.dumps(_at(schema, where)['$ref'])} comes back to itself without descending into the instance: validation would never end"))
    return errors


def _schemas(node: Any, where: Pointer) -> Iterator[tuple[Pointer, dict[str, Any]]]:
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            if key not in _DATA:
                yield from _schemas(value, where + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _schemas(value, where + (index,))


def _local_target(schema: Any, reference: str) -> Pointer | None:
    fragment = unquote(reference[1:])
    if fragment and not fragment.startswith("/"):
        return None  # an anchor name: a spec schema does not use them
    pointer: list[str | int] = []
    node = schema
    for raw in fragment.split("/")[1:] if fragment else []:
        step = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and step in node:
            pointer.append(step)
            node = node[step]
        elif isinstance(node, list) and step.isdigit() and int(step) < len(node):
            pointer.append(int(step))
            node = node[int(step)]
        else:
            return None
    return tuple(pointer) if isinstance(node, (dict, bool)) else None


def _at(schema: Any, where: Pointer) -> Any:
    for step in where:
        schema = schema[step]
    return schema


def _in_place(schema: Any, where: Pointer, targets: dict[Pointer, Pointer]) -> Iterator[Pointer]:
    node = _at(schema, where)
    if not isinstance(node, dict):
        return
    if where in targets:
        yield targets[where]
    for keyword in _IN_PLACE_ONE:
        if isinstance(node.get(keyword), dict):
            yield where + (keyword,)
    for keyword in _IN_PLACE_MANY:
        for index, item in enumerate(node.get(keyword) or ()):
            if isinstance(item, dict):
                yield where + (keyword, index)


def _comes_back(schema: Any, start: Pointer, targets: dict[Pointer, Pointer]) -> bool:
    seen: set[Pointer] = set()
    pending = [targets[start]]
    while pending:
        where = pending.pop()
        if where == start:
            return True
        if where not in seen:
            seen.add(where)
            pending.extend(_in_place(schema, where, targets))
    return False


class _Lines:
    """The line and column of the n-th `"$ref": "value"` in the file's text, the n-th time the same one is asked for."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._asked: dict[tuple[str, str], int] = {}

    def of(self, keyword: str, value: Any) -> tuple[int, int]:
        key = (keyword, json.dumps(value))
        found = list(re.finditer(re.escape(json.dumps(keyword)) + r"\s*:\s*" + re.escape(key[1]), self._text))
        index = self._asked.get(key, 0)
        self._asked[key] = index + 1
        if not found:
            return 1, 1
        start = found[min(index, len(found) - 1)].start()
        return self._text.count("\n", 0, start) + 1, start - self._text.rfind("\n", 0, start)
