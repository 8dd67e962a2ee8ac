"""A language contract's names, checked: every name used is declared, once, where it may be used."""

from __future__ import annotations

import json
import keyword
import re
from typing import Any

from ..errors import SpecError
from ..spec.loader import LoadedFile
from .model import LanguageSpec, RowField, field_at, struct_name

ANY = "any"
# Names the generated row model's annotations read: a field of that name, defined in the struct's body, would
# shadow them for the fields after it.
RESERVED_FIELDS = frozenset({"Any", "Literal", "Union", "UNSET", "UnsetType", "msgspec", "str", "bool", "int", "float", "dict", "list"})


def name_errors(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    errors = _row_errors(file, spec)
    kinds = {kind.name for kind in spec.rows.kinds}
    for name in file.data.get("classes", {}):
        if name in kinds or name == ANY:
            errors.append(SpecError(file.key_mark(("classes", name)), f"class '{name}' is already a class: every kind of row is one, and `{ANY}` is every row"))
    classes = {row_class.name for row_class in spec.classes}
    diagnostics = {code for code, _, _ in spec.decision.diagnostics}
    reasons = {reason for reason, _ in spec.decision.reasons}
    for name, item in file.data["items"].items():
        errors += _item_errors(file, name, item, classes, diagnostics)
    for index, group in enumerate(file.data.get("exclusive", [])):
        for name in group["classes"]:
            if name not in classes or name == ANY:
                errors.append(SpecError(file.mark(("exclusive", index, "classes")), f"'{name}' is no class a group can hold; the classes: [{', '.join(sorted(classes - {ANY}))}]"))
        if "anomaly" in group and group["anomaly"] not in diagnostics:
            errors.append(SpecError(file.mark(("exclusive", index, "anomaly")), _undeclared("diagnostic", group["anomaly"], diagnostics)))
    decision = file.data["decision"]
    for code, body in decision["diagnostics"].items():
        if body["reason"] not in reasons:
            errors.append(SpecError(file.mark(("decision", "diagnostics", code, "reason")), _undeclared("reason", body["reason"], reasons)))
    for index, check in enumerate(decision.get("checks", ())):
        if check["raise"] not in diagnostics:
            errors.append(SpecError(file.mark(("decision", "checks", index, "raise")), _undeclared("diagnostic", check["raise"], diagnostics)))
    if decision.get("offset_mismatch") is not None and decision["offset_mismatch"] not in diagnostics:
        errors.append(SpecError(file.mark(("decision", "offset_mismatch")), _undeclared("diagnostic", decision["offset_mismatch"], diagnostics)))
    if decision["proceed"] == decision["stop"]:
        errors.append(SpecError(file.mark(("decision", "stop")), "`proceed` and `stop` are the decision's two words: they must differ"))
    return errors or _unused(file)  # (a misspelt name leaves the declared one unused: said once, as the misspelling)


def _unused(file: LoadedFile) -> list[SpecError]:
    """A diagnostic nothing raises, a reason no diagnostic gives: declared but dead (as the catalogue refuses them)."""
    data, decision = file.data, file.data["decision"]
    raised = {entry.get("anomaly") for item in data["items"].values() for entry in item.get("on", ())}
    raised |= {body.get("at_end") for item in data["items"].values() for body in item["states"].values()}
    raised |= {group.get("anomaly") for group in data.get("exclusive", ())} | {check["raise"] for check in decision.get("checks", ())}
    raised.add(decision.get("offset_mismatch"))
    errors = [
        SpecError(file.key_mark(("decision", "diagnostics", code)), f"diagnostic '{code}' is declared but nothing raises it (an entry's "
                  "`anomaly`, a state's `at_end`, an exclusive group's `anomaly`, a check's `raise` or `offset_mismatch`)")
        for code in decision["diagnostics"] if code not in raised
    ]
    given = {body["reason"] for body in decision["diagnostics"].values()}
    errors += [SpecError(file.key_mark(("decision", "reasons", reason)), f"reason '{reason}' is declared but no diagnostic gives it")
               for reason in decision["reasons"] if reason not in given]
    return errors


def _item_errors(file: LoadedFile, name: str, item: dict, classes: set[str], diagnostics: set[str]) -> list[SpecError]:
    errors: list[SpecError] = []
    states = set(item["states"])
    where = ("items", name)
    if item["initial"] not in states:
        errors.append(SpecError(file.mark(where + ("initial",)), f"initial state '{item['initial']}' is not one of the item's states [{', '.join(item['states'])}]"))
    initial = item["states"].get(item["initial"], {})
    for said in ("status", "at_end", "replay_opener"):
        if said in initial:
            errors.append(SpecError(file.mark(where + ("states", item["initial"], said)), f"the initial state is where an item is before any row moves it: it is never reported, so it takes no `{said}`"))
    for state, body in item["states"].items():
        if body.get("at_end") is not None and body["at_end"] not in diagnostics:
            errors.append(SpecError(file.mark(where + ("states", state, "at_end")), _undeclared("diagnostic", body["at_end"], diagnostics)))
    for index, entry in enumerate(item["on"]):
        at = where + ("on", index)
        if entry["class"] not in classes:
            errors.append(SpecError(file.mark(at + ("class",)), _undeclared("class", entry["class"], classes)))
        for state in [entry["from"]] if isinstance(entry["from"], str) else entry["from"]:
            if state not in states:
                errors.append(SpecError(file.mark(at + ("from",)), _undeclared("state", state, states)))
        if "to" in entry and entry["to"] not in states:
            errors.append(SpecError(file.mark(at + ("to",)), _undeclared("state", entry["to"], states)))
        if "anomaly" in entry and entry["anomaly"] not in diagnostics:
            errors.append(SpecError(file.mark(at + ("anomaly",)), _undeclared("diagnostic", entry["anomaly"], diagnostics)))
    return errors


def resolve(fields: tuple[RowField, ...], path: str) -> RowField | None:
    """The field a dotted path names through declared objects' fields, or None."""
    return field_at(fields, tuple(path.split(".")))


SCALAR_IDS = ("string", "integer", "number")


def _scalar(field: RowField) -> bool:
    return field.type in SCALAR_IDS or bool(field.types) and all(kind in SCALAR_IDS for kind in field.types)


def _type_said(field: RowField) -> str:
    return f"[{', '.join(field.types)}]" if field.types else field.type


def _row_errors(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    rows = spec.rows
    errors = _scalar_errors(file, spec) + _run_errors(file, spec) + _tag_errors(file, spec) + _overlaps(file, spec) + _field_errors(file, spec)
    if rows.partial is not None:
        field = resolve(rows.fields, rows.partial)
        if field is None or field.type != "boolean":
            said = f"not one of rows.fields: [{', '.join(f.name for f in rows.fields)}]" if field is None else _type_said(field)
            errors.append(SpecError(file.mark(("rows", "partial")), f"rows.partial needs a boolean field of every row; '{rows.partial}' is {said}"))
    return errors + _kind_errors(file, spec)


def _scalar_errors(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    """The id, each run part read from rows and the order: scalars every row holds."""
    rows = spec.rows
    errors = []
    needs: list[tuple[tuple[str, ...], str, str]] = [(("rows", "id"), "rows.id", rows.id)] if rows.id is not None else []
    needs += [(("rows", "run"), f"run part '{name}'", path) for name, source, path in rows.run_from if source == "rows"]
    needs += [(("rows", "order", "by"), "rows.order", rows.order[0])] if rows.order is not None else []
    for at, what, path in needs:
        field = resolve(rows.fields, path)
        if field is None:
            errors.append(SpecError(file.mark(at), f"{what} names '{path}', which is not a field of every row (rows.fields: [{', '.join(f.name for f in rows.fields)}])"))
        elif not _scalar(field) or field.optional:
            errors.append(SpecError(file.mark(at), f"{what} needs a field every row holds, a string or a number ({', '.join(SCALAR_IDS)}, or a list of them); "
                                                   f"'{path}' is {'optional ' if field.optional else ''}{_type_said(field)}"))
    return errors


def _run_errors(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    rows = spec.rows
    errors = []
    for name, source, path in rows.run_from:
        if source == "first_row" and resolve(rows.fields, path) is None and all(resolve(kind.fields, path) is None for kind in rows.kinds):
            errors.append(SpecError(file.mark(("rows", "run")), f"run part '{name}' is read from the first row's '{path}', which no kind of row declares"))
    if rows.layout is not None:
        errors += _layout_errors(file, rows.layout, rows.run)
    elif any(source == "layout" for _, source, _ in rows.run_from):
        errors.append(SpecError(file.mark(("rows", "run")), "a run part read from the file's place (`layout: true`) needs rows.layout, naming it as {NAME}"))
    return errors


def _tag_errors(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    rows = spec.rows
    errors = []
    common = {field.name for field in rows.fields}
    for path in rows.tag:
        if resolve(rows.fields, path) is not None:
            errors.append(SpecError(file.mark(("rows", "tag")), f"'{path}' is the tag (rows.tag): its value is the row's kind, it is not declared as a field"))
    for kind in rows.kinds:
        at = ("rows", "kinds", kind.name)
        for field in kind.fields:
            if field.name in common:
                errors.append(SpecError(file.key_mark(at + ("fields", field.name)), f"'{field.name}' is a field of every row (rows.fields); a kind cannot declare it again"))
        if not kind.match:
            errors.append(SpecError(file.key_mark(at), f"kind '{kind.name}' needs `match:` (rows.tag has several paths: say the value each holds in a row of this kind)"))
        for path, _ in kind.match:
            if path not in rows.tag:
                errors.append(SpecError(file.mark(at + ("match",)), f"'{path}' is not a tag path; rows.tag: [{', '.join(rows.tag)}]"))
            elif resolve(kind.fields, path) is not None:
                errors.append(SpecError(file.mark(at + ("match",)), f"'{path}' is the tag (rows.tag): its value is the row's kind, it is not declared as a field"))
    return errors


def _field_errors(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    rows = spec.rows
    errors = []
    places: list[tuple[tuple[Any, ...], RowField]] = [(("rows", "fields", field.name), field) for field in rows.fields]
    places += [(("rows", "kinds", kind.name, "fields", field.name), field) for kind in rows.kinds for field in kind.fields]
    kinds = {kind.name for kind in rows.kinds}
    while places:
        path, field = places.pop(0)
        if keyword.iskeyword(field.name) or field.name.startswith("__") or field.name in RESERVED_FIELDS:
            errors.append(SpecError(file.key_mark(path), f"'{field.name}' cannot be a field's name (a Python keyword, a dunder name, or one of {', '.join(sorted(RESERVED_FIELDS))})"))
        if field.enum and field.type != "string":
            errors.append(SpecError(file.mark(path), f"only a string field takes `enum`; '{field.name}' is {_type_said(field)}"))
        if field.fields is not None and field.type != "object":
            errors.append(SpecError(file.mark(path + ("fields",)), f"only an object declares `fields`; '{field.name}' is {_type_said(field)}"))
        if field.refers is not None:
            if not _scalar(field):
                errors.append(SpecError(file.mark(path + ("refers",)), f"a reference is a string or a number; '{field.name}' is {_type_said(field)}"))
            if field.refers[0] == "id" and rows.id is None:
                errors.append(SpecError(file.mark(path + ("refers",)), "`refers: id` names a row by its id, and rows declare no `id`: refer by `position`, or declare rows.id"))
            errors += [SpecError(file.mark(path + ("refers",)), _undeclared("kind", name, kinds)) for name in field.refers[1] if name not in kinds]
        places += [(path + ("fields", inner.name), inner) for inner in field.fields or ()]
    return errors


def _overlaps(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    """Two kinds a row could be both of: every tag path both constrain has a value both allow."""
    errors = []
    kinds = spec.rows.kinds
    for index, first in enumerate(kinds):
        for second in kinds[index + 1:]:
            mine, theirs = dict(first.match), dict(second.match)
            shared = [path for path in mine if path in theirs]
            both = {path: sorted({json.dumps(v) for v in mine[path]} & {json.dumps(v) for v in theirs[path]}) for path in shared}
            if first.match and second.match and all(both.values()):
                said = ", ".join(f"{path} {both[path][0] if path in both else json.dumps((mine.get(path) or theirs[path])[0])}"
                                 for path in spec.rows.tag if path in mine or path in theirs)
                errors.append(SpecError(file.key_mark(("rows", "kinds", second.name)), f"kinds '{first.name}' and '{second.name}' both match a row with {said}: "
                                                                                      "give each a `match` the other does not"))
    return errors


def _kind_errors(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    errors: list[SpecError] = []
    structs: dict[str, str] = {}
    for kind in spec.rows.kinds:
        struct = struct_name(kind.name)
        if kind.name == ANY:
            errors.append(SpecError(file.key_mark(("rows", "kinds", kind.name)), f"'{ANY}' is the class of every row; a kind cannot be named so"))
        elif struct in structs:
            errors.append(SpecError(file.key_mark(("rows", "kinds", kind.name)), f"kinds '{structs[struct]}' and '{kind.name}' both become the struct {struct}: rename one"))
        structs.setdefault(struct, kind.name)
    return errors


def _undeclared(what: str, name: str, declared: set[str]) -> str:
    plural = f"{what}es" if what.endswith("s") else f"{what}s"
    return f"'{name}' is not a declared {what}; the {plural}: [{', '.join(sorted(declared))}]"


def _layout_errors(file: LoadedFile, layout: str, run: tuple[str, ...]) -> list[SpecError]:
    named = re.findall(r"\{([^{}]*)\}", layout)
    parts = layout.split("/")
    mark = file.mark(("rows", "layout"))
    if sorted(named) != sorted(run):
        return [SpecError(mark, f"rows.layout names each run field once as {{FIELD}} ({', '.join('{' + name + '}' for name in run)}); it names [{', '.join(named)}]")]
    if layout.startswith("/") or any(part in ("", ".", "..") for part in parts) or "\\" in layout or re.search(r"\}[^/]*\{", layout):
        return [SpecError(mark, "rows.layout is a relative path inside the workspace (no '..', '.', '//', '\\', nor two fields in one name)")]
    return []
