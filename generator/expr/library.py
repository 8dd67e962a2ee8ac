"""The expression language's fixed library: every function and macro a contract may call, and nothing else.

A contract cannot define a function; a new need is a new entry here, reviewed with the tool. docs/expressions.md
lists this table as it is. `compile.py` types and emits each entry.
"""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    form: str  # how it is written
    gives: str  # the type of its value
    about: str


FUNCTIONS: dict[str, Entry] = {
    "size": Entry("size(x)", "int", "a string's length (code points; UTF-16 code units under `semantics: javascript`), a list's or a map's size"),
    "first": Entry("first(list)", "the item's type, or null", "the list's first item; null for an empty list"),
    "last": Entry("last(list)", "the item's type, or null", "the list's last item; null for an empty list"),
    "string": Entry("string(x)", "string", "x as text: JavaScript's `String(x)` under `semantics: javascript`; else a string, a bool or an int written out"),
    "kind": Entry("kind(x)", "string", "what x is: \"null\" (absent too), \"bool\", \"number\", \"string\", \"list\" or \"map\""),
    "truthy": Entry("truthy(x)", "bool", "JavaScript's truthiness, whatever the semantics: false for absent, null, false, 0 and \"\""),
    "normalise_path": Entry("normalise_path(s)", "string", "a working directory as maka compares them: `\\` as `/`, no trailing `/`, a drive letter lower-cased"),
    "json_mainline_v1": Entry("json_mainline_v1(x)", "string", "x's JSON as maka's `canonicalizeMainlineV1` writes it: keys sorted, array-index keys first by value (as a JavaScript object lists them), `__proto__` dropped, an array under a key `required` or `enum` sorted by its items' JSON in `localeCompare` order"),
    "json_stable": Entry("json_stable(x)", "string", "x's JSON as maka's `stableJsonStringify` writes it (the text its boundary digests hash): keys sorted, then listed as a JavaScript object lists them (array-index keys first, by value), `__proto__` kept as data, no spaces"),
    "range": Entry("range(n)", "list of int", "the integers 0 to n - 1 (n from 0 to 1,000,000): with `map`, each item's position, as in `range(size(xs)).map(i, [i + 1, json_stable(xs[i])])`"),
    "sha256_frames": Entry("sha256_frames(list)", "string", "`sha256:` and the hex SHA-256 of the list's items framed as maka's boundary digests frame them: a string as its UTF-8 length (8 bytes, big-endian) then its bytes, an integer from 0 to 2^53 - 1 as 8 bytes big-endian, a list as its items in turn"),
    "sha256": Entry("sha256(s)", "string", "`sha256:` and the hex SHA-256 of the string's UTF-8 bytes (as node's `createHash('sha256').update(s)`)"),
    "sha256_json": Entry("sha256_json(x)", "string", "`sha256:` and the hex SHA-256 of x's canonical JSON: as JavaScript's `JSON.stringify` writes it, every map's keys in UTF-16 code-unit order (array-index keys too), no spaces (as maka hashes a call's arguments)"),
}

MACROS: dict[str, Entry] = {
    "has": Entry("has(x.f)", "bool", "x is a map holding the field f (its value may be null): absent and null told apart"),
    "exists": Entry("list.exists(v, p)", "bool", "p holds for some item v of the list (a map: some key)"),
    "all": Entry("list.all(v, p)", "bool", "p holds for every item v of the list (a map: every key)"),
    "filter": Entry("list.filter(v, p)", "list", "the items v of the list for which p holds, in order"),
    "map": Entry("list.map(v, f)", "list", "f of each item v of the list, in order"),
}

METHODS: dict[str, Entry] = {
    "distinct": Entry("list.distinct()", "list", "the list's items, each once (the first of those equal by `==`), in order"),
    "sort": Entry("list.sort()", "list", "the list sorted: numbers by value, strings by code point; under `javascript`, as JavaScript's `sort()` (by `String(x)`, in UTF-16 code units)"),
    "startsWith": Entry("s.startsWith(t)", "bool", "the string s begins with t"),
    "endsWith": Entry("s.endsWith(t)", "bool", "the string s ends with t"),
    "contains": Entry("s.contains(t)", "bool", "t occurs in the string s"),
}

OPERATORS: tuple[tuple[str, str], ...] = (
    ("`!x`, `x && y`, `x \\|\\| y`, `c ? a : b`", "conditions: true or false under `strict`; any value, by JavaScript's truthiness, under `javascript`; `&&` and `\\|\\|` give true or false"),
    ("`==`, `!=`", "like kinds with equal values (ints and doubles compare as numbers); different kinds are unequal; lists and maps by content under `strict`, by identity (`===`) under `javascript`"),
    ("`<`, `<=`, `>`, `>=`", "two numbers or two strings (strings by code point; by UTF-16 code unit under `javascript`); other kinds: an error under `strict`, false under `javascript`"),
    ("`x in list`, `k in map`", "an item of the list (by `==`), a key of the map"),
    ("`+`", "two numbers, two strings or two lists; under `javascript` a string and a scalar concatenate as `String(x)`"),
    ("`-`, `*`, `/`, `%`, `-x`", "numbers; two ints give an int under `strict` (`/` and `%` truncate toward zero), a double under `javascript`; division by zero is an error"),
    ("`x.f`, `x[i]`", "a field, a list's item, a map's value; a place that is not there (absent, a field of null, past the end) reads as null"),
)
