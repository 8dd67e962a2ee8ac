"""Check each spec file against its JSON Schema (spec/schema/*.schema.json), with messages a person can act on.

The schemas are what editors use for completion, so the generator checks the same documents rather than a
second copy of the rules. jsonschema finds the errors; this module words them and places them on a line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError

from .errors import Mark, SpecError
from .loader import LoadedFile

_JSON_TYPE_NAMES = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "a list",
    dict: "a mapping",
    type(None): "null",
}


def _pattern_to_the_end(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    # Python's `$` also matches before a final newline, so "failed\n" would pass `^[a-z]+$` and then break the
    # generated code: a pattern's `$` means the end of the string here, as it does in JSON Schema's ECMA regex.
    if isinstance(instance, str) and pattern.endswith("$") and not pattern.endswith("\\$"):
        if re.search(pattern[:-1] + r"\Z", instance) is None:
            yield ValidationError(f"{instance!r} does not match {pattern!r}")
        return
    yield from _draft_pattern(validator, pattern, instance, schema)


_draft_pattern = Draft202012Validator.VALIDATORS["pattern"]
_SpecValidator = validators.extend(Draft202012Validator, {"pattern": _pattern_to_the_end})


def load_schema(path: Path, display_name: str) -> tuple[Any | None, list[SpecError]]:
    """Read and check one schema document; a broken one is an error at its file:line:col, never a traceback."""
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        return None, [SpecError(Mark(display_name, 1, 1), f"cannot read the schema: {error.strerror or error}")]
    except UnicodeDecodeError as error:
        return None, [SpecError(Mark(display_name, 1, 1), f"the schema is not UTF-8: {error.reason}")]
    except json.JSONDecodeError as error:
        return None, [SpecError(Mark(display_name, error.lineno, error.colno), f"the schema is not JSON: {error.msg}")]
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        where = "/".join(str(step) for step in error.absolute_path) or "(the root)"
        return None, [SpecError(Mark(display_name, 1, 1), f"not a valid JSON Schema at {where}: {error.message}")]
    return _SpecValidator(schema), []


def schema_errors(loaded: LoadedFile, validator: Draft202012Validator) -> list[SpecError]:
    """Every way `loaded` breaks its schema, worded and marked."""
    errors: list[SpecError] = []
    for error in validator.iter_errors(loaded.data):
        errors.extend(_describe(error, loaded))
    return errors


def _describe_type(value: Any) -> str:
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def _value_at(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data[step]
    return data


def _describe(error: ValidationError, loaded: LoadedFile) -> list[SpecError]:
    path = tuple(error.absolute_path)
    schema = error.schema if isinstance(error.schema, dict) else {}
    kind = error.validator
    if kind == "additionalProperties" and "properties" in schema:
        allowed = ", ".join(schema["properties"])
        unknown = [key for key in error.instance if key not in schema["properties"]]
        return [
            SpecError(loaded.key_mark(path + (key,)), f"unknown key '{key}'; allowed keys are [{allowed}]")
            for key in unknown
        ]
    if kind == "required":
        missing = error.validator_value
        absent = [key for key in missing if key not in error.instance]
        where = f"'{path[-1]}'" if path else "the file"
        return [SpecError(loaded.mark(path), f"missing required key '{key}' in {where}") for key in absent]
    if kind == "enum":
        allowed = ", ".join(str(choice) for choice in error.validator_value)
        container = _value_at(loaded.data, path)
        if isinstance(container, dict) and isinstance(error.instance, str) and error.instance in container:
            # propertyNames errors arrive on the key itself, with the mapping's path.
            return [SpecError(loaded.key_mark(path + (error.instance,)), f"unknown key '{error.instance}'; allowed keys are [{allowed}]")]
        return [SpecError(loaded.mark(path), f"unknown value {error.instance!r}; allowed values are [{allowed}]")]
    if kind == "type":
        wanted = error.validator_value
        wanted_text = " or ".join(wanted) if isinstance(wanted, list) else wanted
        return [
            SpecError(loaded.mark(path), f"expected {wanted_text}, got {_describe_type(error.instance)} ({error.instance!r})")
        ]
    if kind == "pattern":
        # propertyNames errors arrive as pattern errors on the key itself, with the mapping's path.
        container = _value_at(loaded.data, path)
        if isinstance(container, dict) and error.instance in container:
            return [SpecError(loaded.key_mark(path + (error.instance,)), f"invalid name {error.instance!r}: must match {error.validator_value}")]
        return [SpecError(loaded.mark(path), f"invalid name {error.instance!r}: must match {error.validator_value}")]
    if kind in ("minItems", "minProperties", "minLength"):
        return [SpecError(loaded.mark(path), f"must not be empty (at least {error.validator_value} required)")]
    if kind == "anyOf":
        return [SpecError(loaded.mark(path), f"invalid value {error.instance!r}: expected a name or null")]
    return [SpecError(loaded.mark(path), error.message)]
