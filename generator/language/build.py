"""spec/contract.yaml -> the frozen `LanguageSpec`, or SpecInvalid listing every problem at file:line:col.

Three passes, each only when the one before found nothing: the file and its schema (spec/schema/
contract.schema.json); names (every field, kind, class, state, diagnostic and reason named is declared); the
expressions, type-checked against the rows they read, and each item's entries proven to cover every row of its
classes in every state (a row that moves no entry would leave an item silently unchanged).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from resume_contract.core.spec_layout import LANGUAGE_SPEC, SCHEMA_DIR, SPEC_DIR, SPEC_FILES, spec_digest

from ..errors import Mark, SpecError, SpecInvalid
from ..spec.loader import LoadedFile, load_spec_file
from ..spec.run_files import run_file_at
from ..spec.schema_check import load_schema, schema_errors
from .expressions import compile_expressions
from .model import Decision, Expect, Item, LanguageSpec, RowClass, RowField, RowKind, Rows, Scenario, State
from .names import name_errors
from .scenarios import scenario_errors

LANGUAGE_FILE = "contract"
ANY = "any"  # the class every row is in


def is_language_project(root: Path) -> bool:
    """Whether the spec under `root` is written in the contract language (spec/contract.yaml)."""
    return (root / LANGUAGE_SPEC).is_file()


def load_language(root: Path) -> LanguageSpec:
    """The checked language contract under `root`; raises SpecInvalid."""
    file = _read(root)
    spec = _model(file, root)
    errors = name_errors(file, spec)
    if errors:
        raise SpecInvalid(errors)
    spec, errors = compile_expressions(file, spec)
    if errors:
        raise SpecInvalid(errors)
    errors = scenario_errors(file, spec)
    if errors:
        raise SpecInvalid(errors)
    return spec


def _read(root: Path) -> LoadedFile:
    both = [name for name in SPEC_FILES if (root / SPEC_DIR / f"{name}.yaml").exists()]
    if both:
        raise SpecInvalid([SpecError(Mark(LANGUAGE_SPEC, 1, 1), f"a spec is either {LANGUAGE_SPEC} (the contract language) or the catalogue's files; {SPEC_DIR}/ holds both ({', '.join(f'{name}.yaml' for name in both)}): remove one")])
    loaded, errors = load_spec_file(root / LANGUAGE_SPEC, LANGUAGE_SPEC)
    if loaded is None or errors:
        raise SpecInvalid(errors)
    schema = f"{SCHEMA_DIR}/{LANGUAGE_FILE}.schema.json"
    validator, problems = load_schema(root / schema, schema)
    errors = problems + (schema_errors(loaded, validator) if validator is not None else [])
    if errors:
        raise SpecInvalid(errors)
    return loaded


def _fields(items: dict[str, Any]) -> tuple[RowField, ...]:
    return tuple(_field(name, item) for name, item in items.items())


def _field(name: str, item: dict[str, Any]) -> RowField:
    declared = item["type"]
    types = tuple(declared) if isinstance(declared, list) else ()
    refers = item.get("refers")
    if refers is not None:
        refers = (refers, ()) if isinstance(refers, str) else (refers["to"], tuple(refers.get("kinds", ())))
    return RowField(
        name, "json" if types else declared, item.get("optional", False), tuple(item.get("enum", ())), item["description"],
        types=types, fields=_fields(item["fields"]) if "fields" in item else None, encoded=item.get("encoded") == "json", refers=refers,
    )


def _run_from(parts: list[Any]) -> tuple[tuple[str, str, str], ...]:
    """Per run part: (its name, where its value is read: rows, first_row or layout, the path)."""
    found = []
    for part in parts:
        if isinstance(part, str):
            found.append((part, "rows", part))
        elif "first_row" in part:
            found.append((part["name"], "first_row", part["first_row"]))
        else:
            found.append((part["name"], "layout", ""))
    return tuple(found)


def _kind(name: str, kind: dict[str, Any], tag: tuple[str, ...]) -> RowKind:
    match = kind.get("match", {tag[0]: name} if len(tag) == 1 else {})
    return RowKind(name, kind["description"], _fields(kind["fields"]),
                   tuple((path, tuple(values) if isinstance(values, list) else (values,)) for path, values in match.items()))


def _model(file: LoadedFile, root: Path) -> LanguageSpec:
    data = file.data
    rows_data = data["rows"]
    tag = (rows_data["tag"],) if isinstance(rows_data["tag"], str) else tuple(rows_data["tag"])
    run_from = _run_from(rows_data.get("run", []))
    order = rows_data.get("order")
    rows = Rows(
        id=rows_data.get("id"),
        run=tuple(name for name, _, _ in run_from),
        tag=tag,
        partial=rows_data.get("partial"),
        unknown_keys=rows_data.get("unknown_keys", "reject"),
        fields=_fields(rows_data["fields"]),
        kinds=tuple(_kind(name, kind, tag) for name, kind in rows_data["kinds"].items()),
        layout=rows_data.get("layout"),
        run_from=run_from,
        order=None if order is None else (order["by"], order["corrupt"]),
    )
    kinds = tuple(kind.name for kind in rows.kinds)
    classes = [RowClass(kind, (kind,), None) for kind in kinds] + [RowClass(ANY, kinds, None)]
    classes += [RowClass(name, kinds, None) for name in data.get("classes", {})]  # (tests compiled later)
    items = tuple(
        Item(
            name=name,
            key=None,  # type: ignore[arg-type]  # compiled later
            initial=item["initial"],
            states=tuple(
                State(state, body["description"], body.get("status"), body.get("at_end"), body.get("replay_opener", True))
                for state, body in item["states"].items()
            ),
            entries=(),
        )
        for name, item in data["items"].items()
    )
    decision = data["decision"]
    return LanguageSpec(
        name=data["name"],
        phase=data["phase"],
        summary=data["summary"],
        semantics=data.get("semantics", "strict"),
        rows=rows,
        classes=tuple(classes),
        items=items,
        replay=None,
        decision=Decision(
            proceed=decision["proceed"],
            stop=decision["stop"],
            diagnostics=tuple((code, body["reason"], body["message"]) for code, body in decision["diagnostics"].items()),
            reasons=tuple(decision["reasons"].items()),
            offset_mismatch=decision.get("offset_mismatch"),
            checks=tuple((None, check["raise"]) for check in decision.get("checks", ())),  # type: ignore[misc]  # (compiled later)
        ),
        sha256=spec_digest(lambda relative: (root / relative).read_bytes() if (root / relative).is_file() else None),
        oracle=run_file_at(data, ("oracle",)),
        key_marks=dict(file.key_marks),
        exclusive=tuple(
            (tuple(group["classes"]), "anomaly" if "anomaly" in group else "corrupt", group.get("anomaly") or group["corrupt"])
            for group in data.get("exclusive", [])
        ),
        scenarios=tuple(
            Scenario(name, body["description"], _expect(body["start"]), tuple((step["row"], _expect(step["then"])) for step in body["rows"]))
            for name, body in data.get("scenarios", {}).items()
        ),
    )


def _expect(body: dict[str, Any]) -> Expect:
    items = body.get("items")
    return Expect(body.get("decision"), tuple(body.get("reasons", ())), None if items is None else tuple(items), body.get("corrupt", False))


def sources(value: str | list[str]) -> tuple[str, ...]:
    """An entry's `from`: one state or a list of them."""
    return (value,) if isinstance(value, str) else tuple(value)
