"""Decode one RuntimeEvent row with a decoding model generated from spec/runtime_event.yaml.

Strict and exact about why a row is refused: not JSON (`invalid_json`), a key repeated in one object at
any depth (`duplicate_key`), or outside the wire format (`invalid_event`). msgspec does the work at C speed;
two things it cannot do fall back to the standard library for that row only: it refuses lone surrogate
escapes such as `"\\ud83d"` (valid JSON, written by JavaScript's `JSON.stringify` for a string cut inside an
emoji), and it keeps the last of two equal keys without a word.
"""

from __future__ import annotations

import math
import re
import types
from itertools import accumulate
from operator import attrgetter
from typing import Any

import msgspec
import msgspec.inspect as mi

from ..errors import DUPLICATE_KEY, INVALID_EVENT, INVALID_JSON, ExpressionFailed, RowRefused
from .key_count import free_shape, key_counter

_UNTYPED = msgspec.json.Decoder()
_ENCODE = msgspec.json.Encoder().encode
# The deepest nesting of arrays and objects a row may hold. Parsers recurse once a level, so without a fixed
# limit a row's verdict would depend on how deep the caller's stack happens to be; this one sits far below
# Python's recursion limit, so every path (msgspec, the standard library) gives the same verdict.
MAX_NESTING = 256
_TOO_DEEP = f"nested deeper than {MAX_NESTING} levels of arrays and objects"
# A string, or an unterminated one to the end of the row. Written so that no match can fail once started: a
# pattern that must find the closing quote fails at every quote inside an unterminated string, after
# scanning to the end each time, which is quadratic (one flipped byte in a 104 KB row took 48 s).
# (Compiled by `re`'s cache when a row first needs it: few rows do, and compiling costs every command.)
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"?'
_NESTING_STEP = [0] * 256
_NESTING_STEP[ord("[")] = _NESTING_STEP[ord("{")] = 1
_NESTING_STEP[ord("]")] = _NESTING_STEP[ord("}")] = -1


def too_deep(row: bytes | memoryview) -> bool:
    """Whether a row nests arrays and objects deeper than MAX_NESTING (brackets inside strings do not count)."""
    row = bytes(row)
    if row.count(b"[") + row.count(b"{") <= MAX_NESTING:
        return False  # the common case: too few brackets to be that deep
    outside_strings = re.sub(_STRING, b"", row, flags=re.DOTALL)
    return max(accumulate(map(_NESTING_STEP.__getitem__, outside_strings)), default=0) > MAX_NESTING


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        # JSON allows it, but no double holds it and no JSON writer writes it (JavaScript writes null).
        raise ValueError(f"the number {text} is out of range for a double")
    return value


def python_json(row: bytes | memoryview) -> Any:
    """The row as Python values, by the standard library: lone surrogates kept, duplicate keys refused."""
    import json  # the rare row msgspec cannot prove (a plan of ordinary rows never imports it)

    try:
        return json.loads(
            bytes(row).decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_refuse_constant, parse_float=_finite
        )
    except _DuplicateKey as duplicate:
        raise RowRefused(DUPLICATE_KEY, f"the key {json.dumps(duplicate.key)} appears twice in one object") from None
    except RecursionError:
        raise RowRefused(INVALID_JSON, _TOO_DEEP) from None
    except ValueError as error:
        raise RowRefused(INVALID_JSON, str(error) if bytes(row).strip() else "empty row") from None


def check_no_duplicate_key(row: bytes | memoryview) -> None:
    """Refuse a row that repeats a key in one object (see `json_value`)."""
    json_value(row)


def json_value(row: bytes | memoryview) -> Any:
    """The row as Python values, no key repeated in one object: proven at C speed for a row msgspec writes back
    byte for byte (equal bytes are equal tokens, so no key was dropped); any other row is read again key by key
    (`python_json`: RowRefused for a repeated key, a constant JSON has not, a number no double holds)."""
    try:
        value = _UNTYPED.decode(row)
        if _ENCODE(value) == row:
            return value
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
        pass
    return python_json(row)


FreeFields = tuple[tuple[str, str], ...]  # (attribute, shape)


def holds_any(event: Any, needs: tuple[tuple[str, str | None], ...] | None) -> bool:
    """Whether the event holds one of `needs`: (attribute, None) set, or (attribute, key) a dict holding key; with
    `needs` None (a test any row may pass), always."""
    if needs is None:
        return True
    for name, key in needs:
        value = getattr(event, name)
        if value is not msgspec.UNSET and (key is None or (value.__class__ is dict and key in value)):
            return True
    return False


def as_json(event: Any) -> Any:
    """An event as an expression reads it: its JSON, with the wire's field names (its free JSON decoded, a string
    as it holds it, a lone surrogate too)."""
    return msgspec.to_builtins(event, enc_hook=free_json)


def kept_json(event: Any, fields: tuple[tuple[str, str], ...] | None) -> msgspec.Raw:
    """The JSON text of the event's fields (attribute, wire name) given (all of them for None), a copy of its own (not
    a view into the chunk the event was decoded from); `free_json` reads it as `as_json` would."""
    if fields is None:
        return msgspec.Raw(msgspec.json.encode(event))
    return msgspec.Raw(msgspec.json.encode({name: value for attribute, name in fields if (value := getattr(event, attribute)) is not msgspec.UNSET}))


def free_json(raw: msgspec.Raw) -> Any:
    """A free-JSON value of a decoded row (its keys already proven unrepeated) as Python values: by msgspec, or by
    the standard library where msgspec refuses it (a lone surrogate escaped)."""
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return python_json(raw)


def _free_fields(struct: mi.StructType) -> FreeFields:
    return tuple((field.name, shape) for field in struct.fields if (shape := free_shape(field.type)) is not None)


class WireModel:
    """A generated decoding model (`resume_contract_generated.runtime_event`, or one rendered in memory)."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.event_type: type = module.RuntimeEvent
        self.decoder = msgspec.json.Decoder(self.event_type)
        self._type_info: mi.Type | None = None
        info = mi.type_info(self.event_type)
        assert isinstance(info, mi.StructType)
        # Where free JSON sits (kept as Raw, so its inside is checked for repeated keys on its own), and which
        # attributes hold numbers (a float can re-encode longer than written; see ledger.proofs.check_duplicate_keys).
        self.free_fields: FreeFields = _free_fields(info)
        self.number_fields = tuple(field.name for field in info.fields if _is_number(field.type))
        self.content_free_fields: dict[type, FreeFields] = {}
        self.content_with_numbers: frozenset[type] = frozenset()
        for field in info.fields:
            if isinstance(field.type, mi.UnionType):
                structs = [t for t in field.type.types if isinstance(t, mi.StructType)]
                self.content_free_fields = {struct.cls: _free_fields(struct) for struct in structs}
                self.content_with_numbers = frozenset(
                    struct.cls for struct in structs if any(_is_number(f.type) for f in struct.fields)
                )

        # The counter the generator wrote for this model (generated/runtime_event.py), else one reading columns
        self.count_keys = getattr(module, "count_keys", None) or key_counter(info)
        # spec/runtime_event.yaml's invalid_when: (attributes one of which a refused row holds, or None; the test
        # of the row's JSON; the message)
        self.refusals: tuple[tuple[tuple[tuple[str, str | None], ...] | None, Any, str], ...] = getattr(module, "REFUSALS", ())

    def decode_row(self, row: bytes | memoryview) -> Any:
        """One row (no newline) -> its event; raises RowRefused."""
        if too_deep(row):
            raise RowRefused(INVALID_JSON, _TOO_DEEP)
        try:
            event = self.decoder.decode(row)
        except msgspec.ValidationError as error:
            check_no_duplicate_key(row)  # a repeated key can be what made the row invalid: name the cause
            raise RowRefused(INVALID_EVENT, str(error)) from None
        except msgspec.DecodeError:
            event = self.from_python(python_json(row))
        except RecursionError:
            raise RowRefused(INVALID_JSON, _TOO_DEEP) from None
        else:
            check_no_duplicate_key(row)
        if self.refusals:
            self._check_refusals(event)
        return event

    def _check_refusals(self, event: Any) -> None:
        """Raise RowRefused (invalid_event) if the event is a row the format refuses (`invalid_when`)."""
        row = None
        for needs, test, message in self.refusals:
            if not holds_any(event, needs):
                continue
            if row is None:
                row = as_json(event)
            try:
                refused = test(row)
            except ExpressionFailed as failed:
                raise ExpressionFailed(f"the invalid_when test '{message}', at event {event.id!r}: {failed}") from None
            if refused:
                raise RowRefused(INVALID_EVENT, message)

    def any_refused(self, events: list[Any]) -> bool:
        """Whether a row the format refuses (`invalid_when`) is among decoded events (the readers' batch paths ask,
        then read row by row, which names it). Only the rows holding a field a test needs are read as JSON."""
        candidates: list[Any] = events
        if all(needs is not None for needs, _, _ in self.refusals):
            held: set[int] = set()
            for name in {name for needs, _, _ in self.refusals for name, _ in needs or ()}:
                values = list(map(attrgetter(name), events))
                if values.count(msgspec.UNSET) != len(values):  # (counted in C: most chunks hold none)
                    held.update(index for index, value in enumerate(values) if value is not msgspec.UNSET)
            candidates = [events[index] for index in sorted(held)]
        for event in candidates:
            try:
                self._check_refusals(event)
            except RowRefused:
                return True
        return False

    def from_python(self, value: Any) -> Any:
        """Python JSON values (already checked for duplicate keys) -> an event, free JSON re-encoded as Raw."""
        if self._type_info is None:
            self._type_info = mi.type_info(self.event_type)
        try:
            return msgspec.convert(_with_raw(value, self._type_info), self.event_type, strict=True)
        except msgspec.ValidationError as error:
            raise RowRefused(INVALID_EVENT, str(error)) from None
        except RecursionError:
            raise RowRefused(INVALID_JSON, _TOO_DEEP) from None

    def event_from_wire(self, value: Any) -> Any:
        """A JSON value (e.g. a canonical event from the spec) -> an event; raises RowRefused."""
        return self.decode_row(encode_json(value))

    def encode(self, event: Any) -> bytes:
        """An event's canonical row (declared field order, free JSON as held), without the newline. A string
        holding a lone surrogate, which UTF-8 cannot carry, is written as an escape, as JavaScript writes it
        (the row is then all ASCII, and its free JSON re-encoded: the reader reads such a row the same way)."""
        return encode_plan_value(event)


def _is_number(kind: mi.Type) -> bool:
    if isinstance(kind, mi.UnionType):
        return any(isinstance(t, mi.FloatType) for t in kind.types)
    return isinstance(kind, mi.FloatType)


def encode_plan_value(value: Any) -> bytes:
    """A plan's value or an event (a struct, a list of them) as compact JSON. A string the plan repeats from the
    ledger (an id, a tool name) may hold a lone surrogate, which UTF-8 cannot carry: it is written as an
    escape, as the row itself does. Raises RowRefused for free JSON that is not JSON, TypeError for a value
    JSON has no form for."""
    try:
        return msgspec.json.encode(value)
    except UnicodeEncodeError:
        return encode_json(msgspec.to_builtins(value, enc_hook=python_json))


def encode_json(value: Any) -> bytes:
    """Compact JSON for Python values; lone surrogates are written as escapes, as JavaScript does.

    Raises RowRefused for a value JSON cannot hold (an infinite or NaN float)."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as error:
        raise RowRefused(INVALID_JSON, str(error)) from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def _with_raw(value: Any, info: mi.Type) -> Any:
    """Replace every free-JSON value (a Raw in the model) with its JSON text, so msgspec.convert accepts it."""
    if isinstance(info, mi.RawType):
        return msgspec.Raw(encode_json(value))
    if isinstance(info, mi.UnionType):  # the content kinds (type_info leaves UNSET out of a union)
        if isinstance(value, dict):
            for struct in info.types:
                if isinstance(struct, mi.StructType) and value.get(struct.tag_field) == struct.tag:
                    return _with_raw(value, struct)
        return value
    if isinstance(info, mi.StructType) and isinstance(value, dict):
        types_by_name = {field.encode_name: field.type for field in info.fields}
        return {key: _with_raw(item, types_by_name[key]) if key in types_by_name else item for key, item in value.items()}
    if isinstance(info, mi.DictType) and isinstance(value, dict):
        return {key: _with_raw(item, info.value_type) for key, item in value.items()}
    if isinstance(info, mi.ListType) and isinstance(value, list):
        return [_with_raw(item, info.item_type) for item in value]
    return value
