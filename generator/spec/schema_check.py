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

from ..errors import Mark, SpecError
from .loader import LoadedFile
from .schema_refs import reference_errors

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


def _static_refs(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("$dynamicRef") == "#meta":
            return {"$ref": "#", **{key: _static_refs(item) for key, item in value.items() if key != "$dynamicRef"}}
        if str(value.get("$ref", "")).startswith("meta/"):  # another vocabulary's $defs, merged into this document
            return {**{key: _static_refs(item) for key, item in value.items()}, "$ref": "#" + value["$ref"].partition("#")[2]}
        return {key: _static_refs(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_static_refs(item) for item in value]
    return value


def _flat_metaschema() -> dict[str, Any]:
    """Draft 2020-12's meta-schema as one document: its vocabularies merged, `$dynamicRef: #meta` made `$ref: #`.

    That is what the dynamic reference resolves to when no meta-schema extends 2020-12's, so the document
    accepts exactly the same schemas, without dynamic-scope lookups: five times faster, and meta-validation was
    a fifth of `check`'s time. tests/test_fast_check.py holds its verdicts to jsonschema's own `check_schema`.
    """
    from jsonschema_specifications import REGISTRY

    root = Draft202012Validator.META_SCHEMA
    base = root["$id"].rsplit("/", 1)[0] + "/"
    merged: dict[str, Any] = {"type": ["object", "boolean"], "properties": {}, "$defs": {}}
    for document in [root] + [REGISTRY.contents(base + part["$ref"]) for part in root["allOf"]]:
        for section in ("properties", "$defs"):
            for key, value in document.get(section, {}).items():
                if key in merged[section]:
                    raise AssertionError(f"the 2020-12 vocabularies both define {section} {key!r}")
                merged[section][key] = _static_refs(value)
    return merged


_META_VALIDATOR = Draft202012Validator(_flat_metaschema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def check_schema(schema: Any) -> None:
    """`Draft202012Validator.check_schema`, fast when the schema is valid; raises its SchemaError when not."""
    try:
        refused = next(_META_VALIDATOR.iter_errors(schema), None) is not None
    except Exception:  # noqa: BLE001 - a jsonschema whose meta-schemas this flattening does not fit
        refused = True
    if refused:
        Draft202012Validator.check_schema(schema)  # the canonical verdict, worded as jsonschema words it


def load_schema(path: Path, display_name: str) -> tuple[Any | None, list[SpecError]]:
    """Read and check one schema document; a broken one is an error at its file:line:col, never a traceback."""
    try:
        text = path.read_text(encoding="utf-8")
        schema = json.loads(text)
    except OSError as error:
        return None, [SpecError(Mark(display_name, 1, 1), f"cannot read the schema: {error.strerror or error}")]
    except UnicodeDecodeError as error:
        return None, [SpecError(Mark(display_name, 1, 1), f"the schema is not UTF-8: {error.reason}")]
    except json.JSONDecodeError as error:
        return None, [SpecError(Mark(display_name, error.lineno, error.colno), f"the schema is not JSON: {error.msg}")]
    try:
        check_schema(schema)
    except SchemaError as error:
        where = "/".join(str(step) for step in error.absolute_path) or "(the root)"
        return None, [SpecError(Mark(display_name, 1, 1), f"not a valid JSON Schema at {where}: {error.message}")]
    references = reference_errors(schema, text, display_name)
    if references:
        return None, references
    return _SpecValidator(schema), []


def schema_errors(loaded: LoadedFile, validator: Draft202012Validator) -> list[SpecError]:
    """Every way `loaded` breaks its schema, worded and marked."""
    errors: list[SpecError] = []
    found = [(error, tuple(error.absolute_path)) for error in validator.iter_errors(loaded.data)]
    combinators = ("oneOf", "anyOf")
    for error, path in found:
        # A value of none of its shapes is said by another error at or inside it that says what is wrong, when there
        # is one (never another of its kind: two would hide each other).
        if error.validator in combinators and any(other.validator not in combinators and inner[: len(path)] == path for other, inner in found):
            continue
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
    # jsonschema types these as possibly unset; a ValidationError raised by validation always carries both.
    instance: Any = error.instance
    expected: Any = error.validator_value
    schema = error.schema if isinstance(error.schema, dict) else {}
    kind = error.validator
    if kind == "additionalProperties" and "properties" in schema:
        allowed = ", ".join(schema["properties"])
        unknown = [key for key in instance if key not in schema["properties"]]
        return [
            SpecError(loaded.key_mark(path + (key,)), f"unknown key '{key}'{_did_you_mean(key, schema['properties'])}; allowed keys are [{allowed}]")
            for key in unknown
        ]
    if kind == "required":
        missing = expected
        absent = [key for key in missing if key not in instance]
        where = f"'{path[-1]}'" if path else "the file"
        return [SpecError(loaded.mark(path), f"missing required key '{key}' in {where}") for key in absent]
    if kind == "enum":
        allowed = ", ".join(str(choice) for choice in expected)
        container = _value_at(loaded.data, path)
        if isinstance(container, dict) and isinstance(instance, str) and instance in container:
            # propertyNames errors arrive on the key itself, with the mapping's path.
            return [SpecError(loaded.key_mark(path + (instance,)), f"unknown key '{instance}'{_did_you_mean(instance, expected)}; allowed keys are [{allowed}]")]
        return [SpecError(loaded.mark(path), f"unknown value {instance!r}{_did_you_mean(instance, expected)}; allowed values are [{allowed}]")]
    if kind == "type":
        wanted = expected
        wanted_text = " or ".join(wanted) if isinstance(wanted, list) else wanted
        return [
            SpecError(loaded.mark(path), f"expected {wanted_text}, got {_describe_type(instance)} ({instance!r})")
        ]
    if kind == "pattern":
        # propertyNames errors arrive as pattern errors on the key itself, with the mapping's path.
        container = _value_at(loaded.data, path)
        if isinstance(container, dict) and instance in container:
            return [SpecError(loaded.key_mark(path + (instance,)), f"invalid name {instance!r}: must match {expected}")]
        return [SpecError(loaded.mark(path), f"invalid name {instance!r}: must match {expected}")]
    if kind in ("minItems", "minProperties", "minLength"):
        return [SpecError(loaded.mark(path), f"must not be empty (at least {expected} required)")]
    if kind == "anyOf":
        return [SpecError(loaded.mark(path), f"invalid value {instance!r}: expected a name or null")]
    return [SpecError(loaded.mark(path), error.message)]


def _did_you_mean(word: Any, choices: Any) -> str:
    """` (did you mean 'disposition'?)` for a near miss (difflib's ratio >= 0.75), else nothing."""
    if not isinstance(word, str):
        return ""
    import difflib

    close = difflib.get_close_matches(word, [str(choice) for choice in choices], n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""
