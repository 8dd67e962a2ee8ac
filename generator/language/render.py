"""A checked language contract -> the files of its generated/: `{path: text}`, each with the generator's header.

generated/resume_contract_generated/language.py holds the row model (msgspec structs, one per kind, told apart
by the tag), every expression compiled to a `def`, and the tables the language's engine
(`resume_contract.core.language`) walks; CONTRACT.md says the contract in prose. Nothing here runs a spec's text:
names become code through `_identifier`, values through `repr()` (generator/literals.py).
"""

from __future__ import annotations

import ast
from typing import Any

from ..environment import ENVIRONMENT
from ..literals import Code, md_cell, md_code, md_text, py, py_expression
from ..render.headers import with_header
from .model import Entry, Expr, LanguageSpec, RowField, struct_name

PACKAGE = "resume_contract_generated"
GENERATED_DIR = "generated"
_PY_TYPES = {"string": "str", "boolean": "bool", "number": "Union[int, float]", "json": "Any", "object": "dict[str, Any]", "array": "list[Any]"}


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


def _field_line(field: RowField) -> str:
    kind = f"Literal[{', '.join(repr(value) for value in field.enum)}]" if field.enum else _PY_TYPES[field.type]
    if field.optional:
        return f"{_identifier(field.name)}: Union[{kind}, UnsetType] = UNSET"
    return f"{_identifier(field.name)}: {kind}"


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
        key = function(f"_key_{_identifier(item.name)}", item.key)
        entries = [_entry(item.name, index, entry, function) for index, entry in enumerate(item.entries)]
        states = {state.name: (state.status, state.at_end, state.replay_opener) for state in item.states}
        report = tuple((said, function(f"_report_{_identifier(item.name)}_{_identifier(said)}", expr)) for said, expr in item.report)
        items.append((item.name, key, item.initial, states, tuple(entries), report))
    replay = function("_replay", spec.replay)
    # Ordered: (required fields first: a struct's fields without a default precede those with one).
    kinds = []
    for kind in rows.kinds:
        fields = sorted(rows.fields + kind.fields, key=lambda field: field.optional)
        kinds.append({"class_name": _identifier(struct_name(kind.name)), "tag": repr(kind.name), "docstring": repr(kind.description), "fields": [_field_line(field) for field in fields]})
    fields = [field for kind in rows.kinds for field in rows.fields + kind.fields]
    typing = ["Any", *(["Literal"] if any(field.enum for field in fields) else []), "Union"]
    imports = [f"from typing import {', '.join(typing)}", "", "import msgspec"]
    if any(field.optional for field in fields):
        imports.append("from msgspec import UNSET, UnsetType")
    if any("_x." in body for _, _, body, _ in functions):
        imports += ["", "from resume_contract.core import expressions as _x"]
    return {
        "imports": "\n".join(imports),
        "name": repr(spec.name),
        "phase": repr(spec.phase),
        "row_id": repr(rows.id),
        "run": py(rows.run),
        "tag": repr(rows.tag),
        "partial": repr(rows.partial),
        "layout": repr(rows.layout),
        "forbid": rows.unknown_keys == "reject",
        "kinds": kinds,
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
            "title": md_text(f"{item.name} (key {item.key.text}, from {item.initial})"),
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
        "row_id": md_code(rows.id),
        "run": ", ".join(md_code(name) for name in rows.run),
        "tag": md_code(rows.tag),
        "layout": md_code(rows.layout) if rows.layout else "",
        "kind_rows": [[md_code(k.name), ", ".join(md_code(f.name) for f in rows.fields + k.fields), md_cell(k.description)] for k in rows.kinds],
        "items": items,
        "diagnostics": [[md_code(code), md_code(reason), md_cell(message)] for code, reason, message in spec.decision.diagnostics],
        "reasons": [f"{md_code(reason)}: {md_cell(meaning)}" for reason, meaning in spec.decision.reasons],
        "scenarios": [f"{md_code(s.name)} ({len(s.rows)} rows): {md_cell(s.description)}" for s in spec.scenarios],
    }
