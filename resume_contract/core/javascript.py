"""JavaScript's own rules for JSON values, where the reference's behaviour depends on them.

The reference store reads a run's partial snapshots with `JSON.parse`, tests values for truthiness (`!x`), and
keys a stream by a template string (`${refs.providerEventId}`), i.e. by `String(x)`. Python's `json.loads`,
`bool()` and `str()` differ from each of these (NaN accepted, `[]` falsy, `1.5e-07`, `True`), and each
difference moved a snapshot in or out of a merged run. The values here are JSON values as Python's `json`
module gives them (None, bool, int, float, str, list, dict).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import msgspec

_MAX_EXPONENT_PLAIN = 21  # Number::toString writes plain digits below 10**21, an exponent from there on


def number_to_string(value: float) -> str:
    """ECMAScript's Number::toString(x) (radix 10) of a double: what `String(x)` and `${x}` write."""
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "0"  # -0 too
    if value < 0:
        return "-" + number_to_string(-value)
    if math.isinf(value):
        return "Infinity"
    # The shortest digits s (k of them) with s * 10**(n - k) == value, nearest on a tie: Python's repr finds the
    # same ones (both are the shortest round-trip digits; tests/test_javascript.py holds it to node).
    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent = int(exponent) + len(digit_tuple) - len(digits)
    k = len(digits)
    n = exponent + k
    if k <= n <= _MAX_EXPONENT_PLAIN:
        return digits + "0" * (n - k)
    if 0 < n <= _MAX_EXPONENT_PLAIN:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    sign = "+" if n - 1 >= 0 else "-"
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{sign}{abs(n - 1)}"


def to_number(value: int | float) -> float:
    """A JSON number as the double JavaScript reads it (an integer past the doubles' range is Infinity)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def to_string(value: Any) -> str:
    """JavaScript's `String(x)` of a JSON value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return number_to_string(to_number(value))
    if isinstance(value, list):  # Array.prototype.join: null (and undefined) items are empty
        return ",".join("" if item is None else to_string(item) for item in value)
    return "[object Object]"


def is_truthy(value: Any) -> bool:
    """JavaScript's truthiness of a JSON value: false, 0, -0, "" and null are falsy; every array and object
    (empty ones too) is truthy."""
    if value is None or value is False:
        return False
    if value is True or isinstance(value, (list, dict)):
        return True
    if isinstance(value, (int, float)):
        return value != 0 and value == value  # NaN is falsy too
    return value != ""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_parse(text: str) -> Any:
    """`JSON.parse(text)`, or ValueError where it throws. Python's `json.loads` reads NaN and Infinity, which
    JSON.parse refuses, and refuses integers of more than 4300 digits, which JSON.parse reads (as doubles).
    Numbers come back as floats, as JavaScript holds them; a repeated key keeps its last value, as there.
    The text must be nested at most a few hundred levels (Python parses recursively; check the depth first)."""
    import json  # (here: a contract that parses no JSON string loads no `json`)

    return json.loads(text, parse_constant=_refuse_constant, parse_int=float)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _quoted(text: str) -> str:
    if not text or max(text) < "\ud800":  # no surrogate: Python's encoder (C) writes it as JSON.stringify does
        from json.encoder import encode_basestring  # (here: a plan that hashes nothing loads no json)

        return encode_basestring(text)
    out = []
    for char in text:
        code = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:  # a control character; a lone surrogate (well-formed JSON.stringify)
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


# The short way (msgspec, in C): its text with keys sorted is JSON.stringify's when it is ASCII (keys sort alike,
# strings are escaped alike: tests/test_javascript.py) and holds no number written otherwise: a float (`1.0`,
# `1e-07`: read back, msgspec hands each float token to a hook, which refuses it) or an integer of 16 digits or more
# (past 2**53 a double rounds it; looked for only where the text holds that many digits at all).
_SORTED = msgspec.json.Encoder(order="sorted").encode
_DIGITS = b"0123456789"
_LONG_INTEGER = re.compile(rb"\d{16}")


class _Float(Exception):
    pass


def _no_float(text: str) -> Any:
    raise _Float


_FLOATLESS = msgspec.json.Decoder(float_hook=_no_float).decode


def canonical_json(value: Any) -> str:
    """JSON.stringify of a JSON value with every object's keys sorted (by UTF-16 code units, as JavaScript's `sort()`;
    an array-index key such as "10" too, where an object rebuilt in that order would list it first), no spaces: the
    canonical text the reference hashes (its tool dispatch's `canonicalArgsHash`)."""
    try:
        text = _SORTED(value)
    except (TypeError, ValueError, OverflowError, msgspec.EncodeError):  # (a lone surrogate, an integer past 64 bits)
        return _canonical(value)
    if not text.isascii() or (len(text) - len(text.translate(None, _DIGITS)) >= 16 and _LONG_INTEGER.search(text)):
        return _canonical(value)
    try:
        _FLOATLESS(text)
    except _Float:
        return _canonical(value)
    return text.decode("ascii")


def mainline_v1_json(value: Any) -> str:
    """maka's `canonicalizeMainlineV1` then `JSON.stringify` (maka:packages/core/src/tool-args-identity.ts), the
    text its tool dispatch hashes: each object's keys sorted (UTF-16 code units), a `__proto__` key dropped, and
    rebuilt as a JavaScript object lists them, array-index keys ("0", "10") first by value; an array held under a
    key named `required` or `enum` sorted by its items' texts in `localeCompare` order (stably); numbers and
    strings as JSON.stringify writes them. Where no key is an array index, `__proto__`, `required` or `enum` (as a
    dispatch's arguments mostly are), that is the canonical text, written by `canonical_json`'s short way in C."""
    text = canonical_json(value)
    if _MAINLINE_KEYS.search(text) is None:  # (a match inside a string value only takes the long way)
        return text
    return _mainline_v1(value, None)


# A key the two texts may write otherwise: an array index (listed first by value), `__proto__` (dropped), `required`
# or `enum` (its array sorted). Keys follow `{` or `,` in a compact JSON text, and end at `":`.
_MAINLINE_KEYS = re.compile(r'[{,]"(?:0|[1-9][0-9]*|__proto__|required|enum)":')


def stable_json(value: Any) -> str:
    """maka's `stableJsonStringify` (maka:packages/core/src/tool-args-identity.ts), the text its boundary digests
    hash: each object's keys sorted (UTF-16 code units) into a null-prototype object, which JavaScript lists with
    its array-index keys first by value (`__proto__` kept, as data); arrays as they are; numbers and strings as
    JSON.stringify writes them."""
    return _mainline_v1(value, None, mainline=False)


def _mainline_v1(value: Any, parent_key: str | None, mainline: bool = True) -> str:
    if value.__class__ is list:
        texts = [_mainline_v1(item, None, mainline) for item in value]
        if mainline and parent_key in ("required", "enum"):
            from .collation import locale_compare_key

            texts.sort(key=locale_compare_key)
        return "[" + ",".join(texts) + "]"
    if value.__class__ is dict:
        keys = sorted((key for key in value if key != "__proto__" or not mainline), key=lambda key: key.encode("utf-16-be", "surrogatepass"))
        indexes = sorted((key for key in keys if _is_array_index(key)), key=int)
        ordered = indexes + [key for key in keys if not _is_array_index(key)]
        return "{" + ",".join(f"{_quoted(key)}:{_mainline_v1(value[key], key, mainline)}" for key in ordered) + "}"
    return _canonical(value)


_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]*)\Z")


def _is_array_index(key: str) -> bool:
    """A key JavaScript keeps as an array index (listed first, by value, in any object): "0" to "4294967294"."""
    return _ARRAY_INDEX.match(key) is not None and int(key) <= 4294967294


def _canonical(value: Any) -> str:
    """canonical_json the long way, value by value."""
    if value.__class__ in (int, float) and not math.isfinite(to_number(value)):
        return "null"  # (JSON.stringify of NaN and Infinity; an integer past the doubles' range reads as Infinity)
    if value is None or value.__class__ in (bool, int, float):
        return to_string(value)  # (String(x) and JSON.stringify write a finite number, null, true and false alike)
    if value.__class__ is str:
        return _quoted(value)
    if value.__class__ is list:
        return "[" + ",".join(map(_canonical, value)) + "]"
    if value.__class__ is dict:
        keys = sorted(value, key=lambda key: key.encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(f"{_quoted(key)}:{_canonical(value[key])}" for key in keys) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")
