"""A language contract's expressions compiled, each against the rows it reads, and its items' entries checked to
cover every row of their classes in every state."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import SpecError
from ..expr import Environment
from ..expr.types import BOOL, DOUBLE, INT, JSON, STRING, Type, list_of, map_of, object_type
from ..spec.compiled import compiled
from ..spec.loader import LoadedFile
from .model import Entry, Expr, Item, LanguageSpec, RowField

ANY = "any"
_TYPES = {"string": STRING, "integer": INT, "boolean": BOOL, "number": DOUBLE, "json": JSON, "object": map_of(JSON), "array": list_of(JSON)}
KEY_KINDS = ("string", "int", "double", "json")
_Fields = dict[str, tuple[Any, bool]]  # name -> (a Type, or the _Fields of an object declaring its fields; optional)


def _declared(fields: tuple[RowField, ...]) -> _Fields:
    found: _Fields = {}
    for field in fields:
        if field.fields is not None:
            found[field.name] = (_declared(field.fields), field.optional)
        elif field.types:
            numeric = all(kind in ("integer", "number") for kind in field.types)
            found[field.name] = (DOUBLE if numeric else JSON, field.optional)
        else:
            found[field.name] = (_TYPES[field.type], field.optional)
    return found


def _valued(values: tuple[Any, ...]) -> Type:
    kinds = {value.__class__ for value in values}
    return STRING if kinds == {str} else INT if kinds == {int} else BOOL if kinds == {bool} else JSON


def _with_tag(fields: _Fields, path: list[str], kind: Type, optional: bool) -> None:
    """The tag path's last field added where the path leads (an object the row does not declare: one holding it)."""
    if len(path) == 1:
        fields[path[0]] = (kind, optional)
        return
    held = fields.get(path[0])
    if held is None:
        inner: _Fields = {}
        fields[path[0]] = (inner, optional)
        _with_tag(inner, path[1:], kind, optional)
    elif isinstance(held[0], dict):
        _with_tag(held[0], path[1:], kind, optional or held[1])


def _typed(name: str, fields: _Fields) -> Type:
    return object_type(name, {key: (_typed(key, value) if isinstance(value, dict) else value, optional) for key, (value, optional) in fields.items()})


def row_types(spec: LanguageSpec) -> dict[str, Type]:
    """Per class, the row an expression about one of its rows reads: a kind's row holds its fields as declared
    (nested objects' too) and its tag paths; any other class's row holds every row's fields as declared, the tag
    paths every kind constrains, and each kind's own fields as optional free JSON."""
    rows = spec.rows
    by_kind = {}
    for kind in rows.kinds:
        fields = _declared(rows.fields + kind.fields)
        for path, values in kind.match:
            _with_tag(fields, path.split("."), _valued(values), False)
        by_kind[kind.name] = _typed("row", fields)
    loose = _declared(rows.fields)
    for kind in rows.kinds:
        for field in kind.fields:
            loose.setdefault(field.name, (JSON, True))
    for path in rows.tag:
        every = [dict(kind.match).get(path) for kind in rows.kinds]
        if "." not in path:
            typed = _valued(tuple(value for values in every if values for value in values)) if all(every) else JSON
            loose.setdefault(path, (typed, not all(every)))
    loose_type = _typed("row", loose)
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
    key, wrong, keys = None, False, []
    per_class = isinstance(data["key"], dict)
    for row_class in dict.fromkeys(entry.row_class for entry in entries):  # the key reads a row of each class
        at = ("items", item.name, "key") + ((row_class,) if per_class else ())
        if per_class and row_class not in data["key"]:
            errors.append(SpecError(file.mark(("items", item.name, "key")), f"item {item.name}: a row of class {row_class} moves it, and `key` gives that class no key"))
            continue
        result = compiled(file, at, Environment({"row": types[row_class]}, semantics), errors)
        if result is not None:
            if result[2].kind not in KEY_KINDS and not wrong:
                wrong = True
                errors.append(SpecError(file.mark(at), f"an item's key is a string or a number; `{result[0]}` is {result[2]} for a row of class {row_class}"))
            key = key or Expr(result[0], result[1])
            if per_class:
                keys.append((row_class, Expr(result[0], result[1])))
    for row_class in data["key"] if per_class else ():
        if row_class not in {entry.row_class for entry in entries}:
            errors.append(SpecError(file.key_mark(("items", item.name, "key", row_class)), f"item {item.name}: no entry names class '{row_class}', so its key is never read"))
    report = []
    openers = dict.fromkeys(e.row_class for e in entries if item.initial in e.sources and e.to not in (None, item.initial))
    for name in data.get("report", {}):
        said = None
        for row_class in openers:  # (read of the row that opened the item: one of a class that opens it)
            result = compiled(file, ("items", item.name, "report", name), Environment({"row": types[row_class]}, semantics), errors)
            said = said or (Expr(result[0], result[1]) if result is not None else None)
        if said is not None:
            report.append((name, said))
    done = dataclasses.replace(item, key=key, entries=tuple(entries), report=tuple(report), keys=tuple(keys))  # type: ignore[arg-type]
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
