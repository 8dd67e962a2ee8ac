"""A checked language contract -> the files of its generated/: `{path: text}`, each with the generator's header.

generated/resume_contract_generated/language.py holds the row model (msgspec structs, one per kind, told apart
by the tag), every expression compiled to a `def`, and the tables the language's engine
(`resume_contract.core.language`) walks; CONTRACT.md says the contract in prose. Nothing here runs a spec's text:
names become code through `_identifier`, values through `repr()` (generator/literals.py).
"""

from __future__ import annotations

import ast
import json
from typing import Any

from ..environment import ENVIRONMENT
from ..literals import Code, md_cell, md_code, md_text, py, py_expression
from ..render.headers import with_header
from .model import Entry, Expr, LanguageSpec, RowField, RowKind, struct_name, walk_fields

PACKAGE = "resume_contract_generated"
GENERATED_DIR = "generated"
_PY_TYPES = {"string": "str", "integer": "int", "boolean": "bool", "number": "Union[int, float]", "json": "Any", "object": "dict[str, Any]", "array": "list[Any]", "null": "None"}


def render_language(spec: LanguageSpec) -> dict[str, str]:
    """Every generated file of a language contract, keyed by its path relative to the project root."""
    outputs = {}
    for relative, template, context in (
        (f"{PACKAGE}/__init__.py", "__init__.py.jinja", {}),
        (f"{PACKAGE}/py.typed", "py.typed.jinja", {}),
        (f"{PACKAGE}/language.py", "language.py.jinja", module_context(spec)),
        ("CONTRACT.md", "language_CONTRACT.md.jinja", document_context(spec)),
        *((("tests/test_contract.py", "tests/language_test_contract.py.jinja", tests_context(spec)),) if spec.scenarios else ()),
    ):
        text = with_header(relative, ENVIRONMENT.get_template(template).render(**context), spec)  # type: ignore[arg-type]
        if relative.endswith(".py"):
            ast.parse(text, filename=relative)
        outputs[f"{GENERATED_DIR}/{relative}"] = text
    return dict(sorted(outputs.items()))


def _identifier(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"{name!r} is not an identifier")
    return name


def _field_line(field: RowField, nested: str | None = None, tag: tuple[Any, ...] | None = None) -> str:
    if tag is not None:  # (a tag path's last field in a kind that constrains it: the values it holds there)
        kind = f"Literal[{', '.join(repr(value) for value in tag)}]"
    elif field.enum:
        kind = f"Literal[{', '.join(repr(value) for value in field.enum)}]"
    elif field.types:
        kind = f"Union[{', '.join(_PY_TYPES[one] for one in field.types)}]"
    else:
        kind = nested or _PY_TYPES[field.type]
    if field.optional:
        return f"{_identifier(field.name)}: Union[{kind}, UnsetType] = UNSET"
    return f"{_identifier(field.name)}: {kind}"


def _structs(kind: RowKind, common: tuple[RowField, ...], reject: bool) -> list[dict[str, Any]]:
    """The structs of one kind's rows, nested ones first (`FunctionCallRow_1` for the first object the row
    declares fields of): each field typed as declared; a tag path the kind matches typed as its values; an object
    on a matched tag path the kind does not declare, a free object."""
    matched = {tuple(path.split(".")): values for path, values in kind.match}
    structs: list[dict[str, Any]] = []
    top = struct_name(kind.name)

    def build(name: str, fields: tuple[RowField, ...], at: tuple[str, ...], docstring: str, forbid: bool = True) -> None:
        lines = []
        declared = {field.name for field in fields}
        for field in fields:
            nested = None
            inner = [path for path in matched if len(path) > len(at) + 1 and path[:len(at) + 1] == at + (field.name,)]
            if field.type == "object" and field.fields is not None:
                nested = f"{top}_{len(structs) + 1}"
                build(nested, field.fields, at + (field.name,), f"{'.'.join(at + (field.name,))} of a {kind.name} row")
            elif inner and field.type not in ("object", "json"):
                raise ValueError(f"{field.name} holds a tag path and is no object")
            lines.append((field.optional, _field_line(field, nested)))
        for path, values in matched.items():
            if len(path) == len(at) + 1 and path[:len(at)] == at and path[-1] not in declared:
                lines.append((False, _field_line(RowField(path[-1], "json", False, (), ""), tag=values)))
            elif len(path) > len(at) + 1 and path[:len(at)] == at and path[len(at)] not in declared:
                declared.add(path[len(at)])
                implicit = RowField(path[len(at)], "object", False, (), "", fields=())
                nested = f"{top}_{len(structs) + 1}"
                build(nested, (), at + (path[len(at)],), f"{'.'.join(at + (path[len(at)],))} of a {kind.name} row (not declared: only its tag is read)", forbid=False)
                lines.append((False, _field_line(implicit, nested)))
        structs.append({"class_name": _identifier(name), "docstring": repr(docstring), "forbid": forbid and reject,
                        "fields": [line for _, line in sorted(lines, key=lambda pair: pair[0])]})

    build(top, common + kind.fields, (), kind.description)
    return structs


def module_context(spec: LanguageSpec) -> dict[str, Any]:
    rows = spec.rows
    functions: list[tuple[str, str, str, str]] = []  # (name, the expression's text, its compiled body, its parameters)

    def function(name: str, expr: Expr | None, parameters: str = "row") -> Code | None:
        if expr is None:
            return None
        signature = ", ".join(f"{_identifier(parameter)}: Any" for parameter in parameters.split(", "))
        functions.append((name, expr.text, py_expression(expr.source, 4), signature))
        return Code(name)

    classes = [
        (row_class.name, row_class.kinds if row_class.test is None else None, function(f"_class_{_identifier(row_class.name)}", row_class.test))
        for row_class in spec.classes
    ]
    items = []
    for item in spec.items:
        key: Any = function(f"_key_{_identifier(item.name)}", item.key)
        if item.keys:  # (per class of row: {class: its key})
            key = {row_class: function(f"_key_{_identifier(item.name)}_{_identifier(row_class)}", expr) for row_class, expr in item.keys}
        entries = [_entry(item.name, index, entry, function) for index, entry in enumerate(item.entries)]
        states = {state.name: (state.status, state.at_end, state.replay_opener) for state in item.states}
        report = tuple((said, function(f"_report_{_identifier(item.name)}_{_identifier(said)}", expr)) for said, expr in item.report)
        items.append((item.name, key, item.initial, states, tuple(entries), report))
    replay = function("_replay", spec.replay)
    # Ordered: (required fields first: a struct's fields without a default precede those with one).
    structs = [struct for kind in rows.kinds for struct in _structs(kind, rows.fields, rows.unknown_keys == "reject")]
    lines = [line for struct in structs for line in struct["fields"]]
    typing = ["Any", *(["Literal"] if any("Literal[" in line for line in lines) else []), *(["Union"] if any("Union[" in line for line in lines) else [])]
    imports = [f"from typing import {', '.join(typing)}", "", "import msgspec"]
    if any("UNSET" in line for line in lines):
        imports.append("from msgspec import UNSET, UnsetType")
    tag = tuple(path.split(".") for path in rows.tag)
    kinds = []
    for kind in rows.kinds:
        matched = dict(kind.match)
        constrained = tuple((index, matched[path]) for index, path in enumerate(rows.tag) if path in matched)
        encoded = tuple(tuple(path) for path, field in walk_fields(rows.fields + kind.fields) if field.encoded)
        refers = tuple((tuple(path), *field.refers) for path, field in walk_fields(rows.fields + kind.fields) if field.refers is not None)
        declared = {".".join(path): _declared(field) for path, field in walk_fields(rows.fields + kind.fields)}
        kinds.append((kind.name, Code(_identifier(struct_name(kind.name))), constrained, encoded, refers, declared))
    if any("_x." in body for _, _, body, _ in functions):
        imports += ["", "from resume_contract.core import expressions as _x"]
    return {
        "imports": "\n".join(imports),
        "name": repr(spec.name),
        "phase": repr(spec.phase),
        "row_id": py(None if rows.id is None else tuple(rows.id.split("."))),
        "run": py(rows.run),
        "run_from": py(tuple((name, source, tuple(path.split(".")) if path else ()) for name, source, path in rows.run_from)),
        "tag": py(tuple(tuple(path) for path in tag)),
        "order": py(None if rows.order is None else (tuple(rows.order[0].split(".")), rows.order[1])),
        "partial": repr(rows.partial),
        "layout": repr(rows.layout),
        "structs": structs,
        "kinds": py(tuple(kinds), 0, 12),
        "functions": functions,
        "classes": py(tuple(classes), 0, 10),
        "items": py(tuple(items), 0, 8),
        "replay": py(replay),
        "exclusive": py(spec.exclusive, 0, 12),
        "proceed": repr(spec.decision.proceed),
        "stop": repr(spec.decision.stop),
        "offset_mismatch": repr(spec.decision.offset_mismatch),
        "checks": py(tuple((function(f"_check_{index}", expr, "events, items"), code, expr.text) for index, (expr, code) in enumerate(spec.decision.checks)), 0, 9),
        "diagnostics": py({code: (reason, message) for code, reason, message in spec.decision.diagnostics}, 0, 14),
        "reasons": py(tuple(spec.decision.reasons), 0, 10),
        "semantics": repr(spec.semantics),
        "scenarios": py(_scenarios(spec), 0, 12),
    }


def _declared(field: RowField) -> str:
    """A field's declaration as a mismatch names it: `string`, `[string, integer]`, `optional object`, `JSON text in a string`."""
    said = f"[{', '.join(field.types)}]" if field.types else field.type
    said += f" of {list(field.enum)}" if field.enum else ""
    said += " held as JSON text in a string" if field.encoded else ""
    return f"optional {said}" if field.optional else said


def _run_said(name: str, source: str, path: str) -> str:
    if source == "rows":
        return md_code(path) + " (every row holds it alike)" if path == name else f"{md_code(name)} (every row's {md_code(path)})"
    if source == "first_row":
        return f"{md_code(name)} (the first row's {md_code(path)})"
    return f"{md_code(name)} (the file's place)"


def _scenarios(spec: LanguageSpec) -> tuple[Any, ...]:
    """(name, the decision before any row, ((row, the decision once it is committed), ...)) per scenario."""
    return tuple((s.name, s.start.as_json(), tuple((row, then.as_json()) for row, then in s.rows)) for s in spec.scenarios)


def tests_context(spec: LanguageSpec) -> dict[str, Any]:
    cases = []
    for scenario in spec.scenarios:
        expectations = [scenario.start, *(then for _, then in scenario.rows)]
        for committed, expect in enumerate(expectations):
            cases.append(py((f"{scenario.name}-{committed}", scenario.name, committed, expect.as_json(), committed < len(scenario.rows)), 4))
    rows = {scenario.name: tuple(row for row, _ in scenario.rows) for scenario in spec.scenarios}
    return {"rows": py(rows, 0, 7), "cases": cases}


def _entry(item: str, index: int, entry: Entry, function: Any) -> tuple[Any, ...]:
    when = function(f"_when_{_identifier(item)}_{index}", entry.when)
    if entry.to is not None:
        outcome: tuple[str, str] = ("to", entry.to)
    elif entry.anomaly is not None:
        outcome = ("anomaly", entry.anomaly)
    else:
        outcome = ("corrupt", entry.corrupt or "")
    return (entry.row_class, entry.sources, when, entry.when.text if entry.when else None, *outcome)


def document_context(spec: LanguageSpec) -> dict[str, Any]:
    """CONTRACT.md's values, each escaped for where it stands (a table cell, inline code, a line's start)."""
    rows = spec.rows

    def then(entry: Entry) -> str:
        if entry.to is not None:
            return f"to {md_code(entry.to)}"
        if entry.anomaly is not None:
            return f"diagnostic {md_code(entry.anomaly)}"
        return f"corrupt: {md_cell(entry.corrupt or '')}"

    items = [
        {
            "title": md_text(f"{item.name} (key {' / '.join(item.key_texts)}, from {item.initial})"),
            "states": [[md_code(s.name), md_cell(s.status or ""), md_cell(s.at_end or ""), md_cell(s.description)] for s in item.states],
            "entries": [
                [md_code(e.row_class), md_cell(", ".join(e.sources)), md_code(e.when.text) if e.when else "", then(e)] for e in item.entries
            ],
        }
        for item in spec.items
    ]
    return {
        "title": md_text(f"{spec.name} ({spec.phase})"),
        "summary": md_text(spec.summary),
        "semantics": md_code(spec.semantics),
        "proceed": md_code(spec.decision.proceed),
        "stop": md_code(spec.decision.stop),
        "row_id": md_code(rows.id) if rows.id is not None else "its position in its run (from 1)",
        "run": ", ".join(_run_said(name, source, path) for name, source, path in rows.run_from) or "its file alone",
        "tag": ", ".join(md_code(path) for path in rows.tag),
        "order": f"{md_code(rows.order[0])} increases row to row; where it does not, the rows are corrupt: {md_text(rows.order[1])}." if rows.order else "",
        "layout": md_code(rows.layout) if rows.layout else "",
        "kind_rows": [[md_code(k.name) + "".join(f" ({md_cell(', '.join(f'{path} = {json.dumps(list(values))}' for path, values in k.match))})" for _ in (0,) if len(rows.tag) > 1 or any(len(values) > 1 or values[0] != k.name for _, values in k.match)),
                       ", ".join(md_code(f.name) for f in rows.fields + k.fields), md_cell(k.description)] for k in rows.kinds],
        "items": items,
        "diagnostics": [[md_code(code), md_code(reason), md_cell(message)] for code, reason, message in spec.decision.diagnostics],
        "reasons": [f"{md_code(reason)}: {md_cell(meaning)}" for reason, meaning in spec.decision.reasons],
        "scenarios": [f"{md_code(s.name)} ({len(s.rows)} rows): {md_cell(s.description)}" for s in spec.scenarios],
    }
