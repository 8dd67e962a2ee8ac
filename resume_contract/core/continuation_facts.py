"""The host's facts object checked against the declared inputs before anything is decided: an undeclared key, a
missing one or a wrong type refuses the whole object (FactsRefused names every problem, by path)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import FactsRefused


def check_facts(facts: Any, inputs: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse facts that are not exactly the declared inputs (FactsRefused names every problem, by path)."""
    problems: list[str] = []
    _check_object(facts, inputs, "facts", problems)
    if problems:
        raise FactsRefused(problems)


_TYPE_NAMES = {"boolean": "a boolean", "string": "a string", "integer": "an integer", "string_list": "a list of strings", "object": "an object"}


def _check_object(value: Any, fields: Mapping[str, Mapping[str, Any]], where: str, problems: list[str]) -> None:
    if not isinstance(value, dict):
        problems.append(f"{where}: expected an object, got {json_type(value)}")
        return
    for key in value:
        if key not in fields:
            problems.append(f"{where}: undeclared key {key!r}; the declared keys are [{', '.join(fields)}]")
    for name, declared in fields.items():
        if name not in value:
            if not declared["optional"]:
                problems.append(f"{where}: missing key {name!r}")
            continue
        _check_value(value[name], declared, f"{where}.{name}", problems)


def _check_value(value: Any, declared: Mapping[str, Any], where: str, problems: list[str]) -> None:
    kind = declared["type"]
    if kind == "object":
        _check_object(value, declared["fields"], where, problems)
        return
    ok = {
        "boolean": isinstance(value, bool),
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "string_list": isinstance(value, list) and all(isinstance(item, str) for item in value),
    }[kind]
    if not ok:
        problems.append(f"{where}: expected {_TYPE_NAMES[kind]}, got {json_type(value)}")


def json_type(value: Any) -> str:
    """What a decoded JSON value is, as a message names it ("a string", "null", ...)."""
    names = {bool: "a boolean", str: "a string", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
