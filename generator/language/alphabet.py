"""The rows a language contract's ledgers are explored from (`diff`, `verify`): one letter per kind and choice of
the values of the fields the expressions read (a boolean both ways, free JSON null and not, a string each literal
an expression holds and another value; an optional field absent and present), the run alike, an item's key one
value (`diff`) or more (`verify`: two items of one lifecycle interleave)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from resume_contract.core.explore import Alphabet, Letter

from .model import LanguageSpec, RowField

MOST_PER_KIND = 16
_FIELD = re.compile(r"\.\s*([A-Za-z_][A-Za-z0-9_]*)")  # (any field a row, an event or a macro's variable reads)
_STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")


def alphabet_of(base: LanguageSpec, head: LanguageSpec, *, keys: int = 1) -> Alphabet:
    """The letters as an Alphabet (each its own class: the language tells none apart), whose words are the ledgers."""
    letters = letters_of(base, head, keys=keys)
    return Alphabet(tuple(letters), tuple((index,) for index in range(len(letters))))


def rows_of(alphabet: Alphabet, word: tuple[int, ...], id_field: str) -> list[dict[str, Any]]:
    """The ledger a word spells, as rows: each letter's fields, its id by position (e1, e2, ...)."""
    return [dict(alphabet.letter(symbol).fields, **{id_field: f"e{position}"}) for position, symbol in enumerate(word, 1)]


def letters_of(base: LanguageSpec, head: LanguageSpec, *, keys: int = 1) -> list[Letter]:
    """One letter per kind (of either side) and choice of the values of the fields the expressions read, named
    by those values (`action(name="http_post")`); a field an item's key reads takes `keys` values."""
    literals: dict[str, set[str]] = {}  # field -> the string literals of the expressions that read it
    keyed = {name for spec in (base, head) for item in spec.items for name in _FIELD.findall(item.key.text)}
    for spec in (base, head):
        for text in _texts(spec):
            found = {a or b for a, b in _STRING.findall(text)}
            for name in _FIELD.findall(text):
                literals.setdefault(name, set()).update(found)
    letters: list[Letter] = []
    seen: set[str] = set()
    for spec in (head, base):
        rows = spec.rows
        for kind in rows.kinds:
            if kind.name in seen:
                continue
            seen.add(kind.name)
            fixed = {rows.tag: kind.name} | {name: "r" for name in rows.run}
            fields = [field for field in rows.fields + kind.fields if field.name not in fixed and field.name != rows.id]
            choices = [[(field, value) for value in _values(field, literals.get(field.name), keys if field.name in keyed else 1)] for field in fields]
            for picked in itertools.islice(itertools.product(*choices), MOST_PER_KIND):
                values = dict(fixed) | {field.name: value for field, value in picked if value is not _ABSENT}
                shown = [f"{field.name}={'absent' if value is _ABSENT else msgspec.json.encode(value).decode()}" for (field, value), options in zip(picked, choices, strict=True) if len(options) > 1]
                letters.append(Letter(f"{kind.name}({', '.join(shown)})" if shown else kind.name, tuple(sorted(values.items()))))
    return letters


_ABSENT = object()


def _values(field: RowField, literals: set[str] | None, keys: int) -> list[Any]:
    """The values a letter gives a field: one, unless an expression reads it (`literals` not None)."""
    read = literals is not None
    strings = sorted(literals or ())
    if field.enum:
        values: list[Any] = list(field.enum) if read else [field.enum[0]]
    elif field.type == "string":
        values = ["k", *(f"k{n}" for n in range(2, keys + 1)), *strings]
    elif field.type == "boolean":
        values = [True, False] if read else [True]
    elif field.type == "number":
        values = [0, 1] if read else [0]
    elif field.type == "json":
        values = [None, "v", *strings] if read else ["v"]
    else:
        values = [{} if field.type == "object" else []]
    if field.optional:
        return [*values, _ABSENT] if read else [_ABSENT]
    return values


def _texts(spec: LanguageSpec) -> Iterator[str]:
    for row_class in spec.classes:
        if row_class.test is not None:
            yield row_class.test.text
    for item in spec.items:
        yield item.key.text
        yield from (entry.when.text for entry in item.entries if entry.when is not None)
    if spec.replay is not None:
        yield spec.replay.text
    yield from (expr.text for expr, _ in spec.decision.checks)
