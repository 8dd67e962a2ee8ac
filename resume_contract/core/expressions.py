"""What a contract's compiled expressions call when they run: the language's values, one rule each.

The generator compiles every expression a contract writes into Python in generated/ (nothing is parsed or
compiled at run time); where a value's kind is known only when the expression runs (a field typed `json`), the
compiled code calls these. A value is a JSON value as Python's json gives it. Two semantics (docs/expressions.md):
`strict` (CEL's: a condition must be true or false, an order compares like kinds only, else ExpressionFailed)
and `javascript` (the reference's: JavaScript truthiness, `===`, strings ordered by UTF-16 code units).
Either way a place that is not there (an absent field, a field of null, an index past the end) reads as null.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ExpressionFailed
from .continuation_functions import normalised_cwd
from .javascript import canonical_json, is_truthy, mainline_v1_json, stable_json, to_number, to_string

__all__ = ["ExpressionFailed"]  # raised here, defined with the other errors


def _kind(value: Any) -> str:
    if value.__class__ is str:  # (the commonest, first)
        return "string"
    if value is None:
        return "null"
    if value is True or value is False:
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "list" if isinstance(value, list) else "map" if isinstance(value, dict) else "other"


def get(value: Any, key: str) -> Any:
    """`value.key`: null unless value is a map holding key."""
    return value.get(key) if value.__class__ is dict else None


def has(value: Any, key: str) -> bool:
    """`has(value.key)`: value is a map and key is present (its value may be null)."""
    return value.__class__ is dict and key in value


def index(value: Any, key: Any) -> Any:
    """`value[key]`: a list's item at an integer index, a map's value at a string key; null if not there."""
    if value.__class__ is list and _kind(key) == "number" and math.isfinite(key) and key == int(key) and 0 <= key < len(value):
        return value[int(key)]
    if value.__class__ is dict and key.__class__ is str:
        return value.get(key)
    return None


def eq(left: Any, right: Any) -> bool:
    """`==` in strict semantics (CEL's): like kinds with equal values (ints and doubles compare as numbers,
    lists and maps by their contents); different kinds are never equal."""
    kind = _kind(left)
    if kind != _kind(right):
        return False
    if kind == "list":
        return len(left) == len(right) and all(eq(a, b) for a, b in zip(left, right))
    if kind == "map":
        return left.keys() == right.keys() and all(eq(left[key], right[key]) for key in left)
    return bool(left == right)


def js_eq(left: Any, right: Any) -> bool:
    """`==` in javascript semantics: JavaScript's `===` (numbers as doubles; a list or a map equals only itself)."""
    if left.__class__ is str:  # (the commonest, at once)
        return isinstance(right, str) and left == right
    kind = _kind(left)
    if kind != _kind(right):
        return False
    if kind == "number":
        return to_number(left) == to_number(right)
    return left is right if kind in ("list", "map") else bool(left == right)


def _js_number(value: float) -> int | float:
    """A double as JavaScript writes it in JSON: an integral one without a fraction (3, not 3.0)."""
    return int(value) if math.isfinite(value) and value.is_integer() and abs(value) <= 2**53 else value


def truthy(value: Any) -> bool:
    return is_truthy(value)


def kind(value: Any) -> str:
    """`kind(x)`: what a JSON value is (an absent one reads as null)."""
    return _kind(value)


def boolean(value: Any) -> bool:
    """A condition in strict semantics: true or false, nothing else."""
    if value is True or value is False:
        return value
    raise ExpressionFailed(f"a condition is {_kind(value)}, not true or false")


def _ordered(left: Any, right: Any, javascript: bool) -> tuple[Any, Any] | None:
    kind = _kind(left)
    if kind != _kind(right) or kind not in ("number", "string"):
        if javascript:
            return None
        raise ExpressionFailed(f"cannot order {_kind(left)} and {_kind(right)}")
    if javascript and kind == "string":
        return left.encode("utf-16-be", "surrogatepass"), right.encode("utf-16-be", "surrogatepass")
    if javascript and kind == "number":
        return to_number(left), to_number(right)
    return left, right


def less(left: Any, right: Any, javascript: bool = False) -> bool:
    pair = _ordered(left, right, javascript)
    return pair is not None and pair[0] < pair[1]


def less_or_equal(left: Any, right: Any, javascript: bool = False) -> bool:
    pair = _ordered(left, right, javascript)
    return pair is not None and pair[0] <= pair[1]


def member(item: Any, container: Any, javascript: bool = False) -> bool:
    """`item in container`: an item of a list, or a key of a map."""
    if container.__class__ is list:
        same = js_eq if javascript else eq
        return any(same(item, each) for each in container)
    if container.__class__ is dict:
        return item.__class__ is str and item in container
    raise ExpressionFailed(f"`in` needs a list or a map, not {_kind(container)}")


def items(value: Any) -> list[Any]:
    """What a macro (`exists`, `all`, `filter`, `map`) ranges over: a list's items, a map's keys."""
    if value.__class__ is list:
        return value
    if value.__class__ is dict:
        return list(value)
    raise ExpressionFailed(f"a macro ranges over a list or a map, not {_kind(value)}")


def add(left: Any, right: Any, javascript: bool = False) -> Any:
    kind = _kind(left)
    if javascript and kind == _kind(right) == "number":
        return _js_number(to_number(left) + to_number(right))
    if kind == _kind(right) and kind in ("number", "string", "list"):
        return left + right if kind != "number" else _exact_sum(left, right)
    if javascript and "string" in (kind, _kind(right)) and "other" not in (kind, _kind(right)):
        return to_string(left) + to_string(right)
    raise ExpressionFailed(f"cannot add {kind} and {_kind(right)}")


def arithmetic(operator: str, left: Any, right: Any, javascript: bool = False) -> Any:
    """`-`, `*`, `/`, `%` of two numbers. In strict semantics two ints give an int (`/` and `%` truncate toward
    zero, as CEL's); in javascript semantics every number is a double. Division by zero fails in both."""
    if _kind(left) != "number" or _kind(right) != "number":
        raise ExpressionFailed(f"cannot apply {operator} to {_kind(left)} and {_kind(right)}")
    if javascript:
        return _js_number(_arithmetic(operator, to_number(left), to_number(right)))
    if isinstance(left, float) or isinstance(right, float):
        left, right = _double(left), _double(right)
    return _arithmetic(operator, left, right)


def _double(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        raise ExpressionFailed(f"a number too large for a double: {str(value)[:30]}...") from None


def _exact_sum(left: int | float, right: int | float) -> int | float:
    if isinstance(left, float) or isinstance(right, float):
        return _double(left) + _double(right)
    return left + right


def _arithmetic(operator: str, left: Any, right: Any) -> Any:
    if operator == "-":
        return left - right
    if operator == "*":
        return left * right
    if right == 0:
        raise ExpressionFailed(f"{operator} by zero")
    if isinstance(left, int) and isinstance(right, int):
        quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)
        return quotient if operator == "/" else left - quotient * right
    if operator == "/":
        return left / right
    return _float_remainder(left, right)


def _float_remainder(left: float, right: float) -> float:
    return math.fmod(left, right)  # the sign of the dividend, as JavaScript's % and CEL's


def negate(value: Any) -> Any:
    if _kind(value) != "number":
        raise ExpressionFailed(f"cannot negate {_kind(value)}")
    return -value


def size(value: Any, javascript: bool = False) -> int:
    """A string's length (code points; UTF-16 code units in javascript semantics), a list's or a map's size."""
    if value.__class__ is str:
        return len(value.encode("utf-16-le", "surrogatepass")) // 2 if javascript else len(value)
    if value.__class__ in (list, dict):
        return len(value)
    raise ExpressionFailed(f"size of {_kind(value)}")


def string(value: Any, javascript: bool = False) -> str:
    """`string(x)`: JavaScript's String(x) in javascript semantics; in strict semantics a string, a bool or an
    integer written out (CEL's string())."""
    if javascript:
        return to_string(value)
    if value.__class__ is str:
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if value.__class__ is int:
        return str(value)
    raise ExpressionFailed(f"string() of {_kind(value)}")


def first(value: Any) -> Any:
    sequence = items(value)
    return sequence[0] if sequence else None


def last(value: Any) -> Any:
    sequence = items(value)
    return sequence[-1] if sequence else None


def normalise_path(value: Any) -> Any:
    """A working directory as the reference compares them (`\\` as `/`, no trailing `/`, a drive letter lower-cased)."""
    if value.__class__ is not str:
        raise ExpressionFailed(f"normalise_path of {_kind(value)}")
    return normalised_cwd(value)


def sha256_json(value: Any) -> str:
    """`sha256:` and the SHA-256 (hex) of the value's canonical JSON (`javascript.canonical_json`)."""
    import hashlib

    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def sha256(value: Any) -> str:
    """`sha256:` and the SHA-256 (hex) of a string's UTF-8 bytes (a lone surrogate as U+FFFD, as node hashes it)."""
    import hashlib

    if value.__class__ is not str:
        raise ExpressionFailed(f"sha256 of {_kind(value)}")
    return "sha256:" + hashlib.sha256(node_utf8(value)).hexdigest()


def node_utf8(text: str) -> bytes:
    """A string's bytes as node's `Buffer.from(s, 'utf8')` gives them: a lone surrogate as U+FFFD."""
    return text.encode("utf-8", "surrogatepass") if text.isascii() else text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")


def json_mainline_v1(value: Any) -> str:
    """x's JSON as maka's canonicalizeMainlineV1 writes it (`javascript.mainline_v1_json`)."""
    try:
        return mainline_v1_json(value)
    except TypeError as error:
        raise ExpressionFailed(str(error)) from None


def json_stable(value: Any) -> str:
    """x's JSON as maka's stableJsonStringify writes it (`javascript.stable_json`)."""
    try:
        return stable_json(value)
    except TypeError as error:
        raise ExpressionFailed(str(error)) from None


MAX_SAFE_INTEGER = 2**53 - 1
MAX_RANGE = 1_000_000


def sha256_frames(value: Any) -> str:
    """`sha256:` and the SHA-256 (hex) of `value`'s items framed as maka frames its boundary digests
    (maka:packages/core/src/runtime-boundary.ts: `updateLengthPrefixed`, `uint64be`): a string as its UTF-8 length in
    8 bytes big-endian, then those bytes (a lone surrogate as U+FFFD); an integer from 0 to 2**53 - 1 as 8 bytes
    big-endian; a list as its items in turn (any depth)."""
    import hashlib

    if value.__class__ is not list:
        raise ExpressionFailed(f"sha256_frames of {_kind(value)}")
    digest = hashlib.sha256()
    pending = [iter(value)]
    while pending:
        item = next(pending[-1], _END)
        if item is _END:
            pending.pop()
        elif item.__class__ is list:
            if len(pending) >= 64:
                raise ExpressionFailed("sha256_frames of lists nested more than 64 deep")
            pending.append(iter(item))
        elif item.__class__ is str:
            data = node_utf8(item)
            digest.update(len(data).to_bytes(8, "big") + data)
        elif item.__class__ in (int, float) and item == int(item) and 0 <= item <= MAX_SAFE_INTEGER:
            digest.update(int(item).to_bytes(8, "big"))
        else:
            raise ExpressionFailed(f"sha256_frames of {_kind(item)} {_json_text(item)}: frames are strings, integers from 0 to 2**53 - 1 and lists of them")
    return "sha256:" + digest.hexdigest()


_END = object()


def _json_text(value: Any) -> str:
    """A value in an error, as the contract's author wrote it (JSON), cut short."""
    text = stable_json(value) if value.__class__ in (dict, list, str, int, float, bool) or value is None else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def range_of(value: Any) -> list[int]:
    """The integers 0 to n - 1 (n an integer from 0 to MAX_RANGE)."""
    if value.__class__ not in (int, float) or value != int(value) or not 0 <= value <= MAX_RANGE:
        raise ExpressionFailed(f"range of {_kind(value)} {_json_text(value)}: an integer from 0 to {MAX_RANGE}")
    return list(range(int(value)))


def text_test(operator: str, value: Any, part: Any) -> bool:
    """`s.startsWith(p)`, `s.endsWith(p)`, `s.contains(p)`."""
    if value.__class__ is not str or part.__class__ is not str:
        raise ExpressionFailed(f"{operator} of {_kind(value)} and {_kind(part)}")
    if operator == "startsWith":
        return value.startswith(part)
    return value.endswith(part) if operator == "endsWith" else part in value


def distinct(value: Any, javascript: bool = False) -> list[Any]:
    """`list.distinct()`: each item once, the first of those equal by `==`, in order."""
    same = js_eq if javascript else eq
    kept: list[Any] = []
    for item in items(value):
        if not any(same(item, each) for each in kept):
            kept.append(item)
    return kept


def sort(value: Any, javascript: bool = False) -> list[Any]:
    """`list.sort()`. Strict: numbers by value or strings by code point, nothing else. JavaScript: Array.prototype.sort
    with no comparator: every item compared as `String(x)`, in UTF-16 code units (null as "null"), stably."""
    sequence = list(items(value))
    if javascript:
        return sorted(sequence, key=lambda item: to_string(item).encode("utf-16-be", "surrogatepass"))
    kinds = {_kind(item) for item in sequence}
    if len(kinds) > 1 or kinds - {"number", "string"}:
        raise ExpressionFailed(f"cannot sort {' and '.join(sorted(kinds))}")
    return sorted(sequence)
