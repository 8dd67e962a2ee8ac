"""A language contract's expressions compiled, each against the rows it reads, and its items' entries checked to
cover every row of their classes in every state."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import SpecError
from ..expr import Environment
from ..expr.types import BOOL, DOUBLE, JSON, STRING, Type, list_of, map_of, object_type
from ..spec.compiled import compiled
from ..spec.loader import LoadedFile
from .model import Entry, Expr, Item, LanguageSpec, RowField

ANY = "any"
_TYPES = {"string": STRING, "boolean": BOOL, "number": DOUBLE, "json": JSON, "object": map_of(JSON), "array": list_of(JSON)}
KEY_KINDS = ("string", "int", "double", "json")


def _typed(field: RowField) -> tuple[Type, bool]:
    return _TYPES[field.type], field.optional


def row_types(spec: LanguageSpec) -> dict[str, Type]:
    """Per class, the row an expression about one of its rows reads: a kind's row holds its fields as declared;
    any other class's row holds every row's fields as declared and each kind's as optional free JSON."""
    rows = spec.rows
    common = {field.name: _typed(field) for field in rows.fields} | {rows.tag: (STRING, False)}
    by_kind = {kind.name: object_type("row", common | {field.name: _typed(field) for field in kind.fields}) for kind in rows.kinds}
    loose = dict(common)
    for kind in rows.kinds:
        for field in kind.fields:
            loose.setdefault(field.name, (JSON, True))
    loose_type = object_type("row", loose)
    return {row_class.name: by_kind.get(row_class.name, loose_type) for row_class in spec.classes}


def compile_expressions(file: LoadedFile, spec: LanguageSpec) -> tuple[LanguageSpec, list[SpecError]]:
    errors: list[SpecError] = []
    types = row_types(spec)

    def env(row_class: str) -> Environment:
        return Environment({"row": types[row_class]}, spec.semantics)

    def expr(path: tuple, row_class: str, condition: bool) -> Expr | None:
        result = compiled(file, path, env(row_class), errors, condition=condition)
        return None if result is None else Expr(result[0], result[1])

    classes = tuple(
        dataclasses.replace(row_class, test=expr(("classes", row_class.name), row_class.name, True))
        if row_class.name in file.data.get("classes", {}) else row_class
        for row_class in spec.classes
    )
    items = tuple(_item(file, item, expr, types, spec.semantics, errors) for item in spec.items)
    replay = expr(("replay", "when"), ANY, True) if "when" in file.data.get("replay", {}) else None
    prefix = Environment({"events": list_of(types[ANY]), "items": items_type(spec)}, spec.semantics)
    checks = []
    for index, (_, code) in enumerate(spec.decision.checks):
        result = compiled(file, ("decision", "checks", index, "when"), prefix, errors, condition=True)
        if result is not None:
            checks.append((Expr(result[0], result[1]), code))
    decision = dataclasses.replace(spec.decision, checks=tuple(checks))
    return dataclasses.replace(spec, classes=classes, items=items, replay=replay, decision=decision), errors


def items_type(spec: LanguageSpec) -> Type:
    """What a check reads of the items: per item, each one the rows opened, in order, as {key, state, status}."""
    one = object_type("item", {"key": (JSON, False), "state": (STRING, False), "status": (STRING.or_null(), False)})
    return object_type("items", {item.name: (list_of(one), False) for item in spec.items})


def _item(file: LoadedFile, item: Item, expr: Any, types: dict[str, Type], semantics: str, errors: list[SpecError]) -> Item:
    data = file.data["items"][item.name]
    before = len(errors)
    entries = []
    for index, body in enumerate(data["on"]):
        path = ("items", item.name, "on", index)
        when = expr(path + ("when",), body["class"], True) if "when" in body else None
        entries.append(Entry(body["class"], (body["from"],) if isinstance(body["from"], str) else tuple(body["from"]), when, body.get("to"), body.get("anomaly"), body.get("corrupt")))
    key, wrong = None, False
    for row_class in dict.fromkeys(entry.row_class for entry in entries):  # the key reads a row of each class
        result = compiled(file, ("items", item.name, "key"), Environment({"row": types[row_class]}, semantics), errors)
        if result is not None:
            if result[2].kind not in KEY_KINDS and not wrong:
                wrong = True
                errors.append(SpecError(file.mark(("items", item.name, "key")), f"an item's key is a string or a number; `{result[0]}` is {result[2]} for a row of class {row_class}"))
            key = key or Expr(result[0], result[1])
    report = []
    openers = dict.fromkeys(e.row_class for e in entries if item.initial in e.sources and e.to not in (None, item.initial))
    for name in data.get("report", {}):
        said = None
        for row_class in openers:  # (read of the row that opened the item: one of a class that opens it)
            result = compiled(file, ("items", item.name, "report", name), Environment({"row": types[row_class]}, semantics), errors)
            said = said or (Expr(result[0], result[1]) if result is not None else None)
        if said is not None:
            report.append((name, said))
    done = dataclasses.replace(item, key=key, entries=tuple(entries), report=tuple(report))  # type: ignore[arg-type]
    if len(errors) == before:  # (an entry whose `when` is wrong would read as one without)
        errors.extend(_coverage(file, done))
    return done


def _coverage(file: LoadedFile, item: Item) -> list[SpecError]:
    """Every (class, state) of the item has an entry without `when` that applies (`any` entries apply to every
    class); an entry after it for the same rows never applies."""
    errors: list[SpecError] = []
    where = ("items", item.name, "on")
    for row_class in item.classes:
        for state in item.states:
            settled = None
            for index, entry in enumerate(item.entries):
                if state.name not in entry.sources or entry.row_class not in (row_class, ANY):
                    continue
                if settled is not None and entry.row_class == row_class and row_class != ANY:
                    errors.append(SpecError(file.mark(where + (index,)), f"never applies: the entry at line {file.mark(where + (settled,)).line} already takes every row of class {row_class} in state {state.name}"))
                    break
                if entry.when is None and settled is None:
                    settled = index
            if settled is None:
                errors.append(SpecError(file.mark(where), f"item {item.name}: a row of class {row_class} in state {state.name} matches no entry; add one without `when` (`to`, `anomaly` or `corrupt`)"))
    return errors
