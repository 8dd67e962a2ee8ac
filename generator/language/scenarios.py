"""A language contract's scenarios checked at `generate`: every row is a row of the model, of one run, with its own
id, and after each prefix the contract decides what the scenario says (else the error names the `then` that
disagrees, with what the contract decides)."""

from __future__ import annotations

import json

from resume_contract.core.language import outcome
from resume_contract.core.language_rows import ABSENT, at

from ..errors import SpecError
from ..spec.loader import LoadedFile
from .model import Expect, LanguageSpec
from .run import Judged, contract_module, judge


def scenario_errors(file: LoadedFile, spec: LanguageSpec) -> list[SpecError]:
    if not spec.scenarios:
        return []
    module = contract_module(spec)
    errors: list[SpecError] = []
    for scenario in spec.scenarios:
        where = ("scenarios", scenario.name)
        rows = [row for row, _ in scenario.rows]
        ids = [_at(row, spec.rows.id) for row in rows] if spec.rows.id is not None else list(range(1, len(rows) + 1))
        alike = [path for _, source, path in spec.rows.run_from if source == "rows"]
        runs = {tuple(json.dumps(_at(row, path)) for path in alike) for row in rows}
        if len({json.dumps(value) for value in ids}) != len(ids) or len(runs) > 1:
            errors.append(SpecError(file.mark(where + ("rows",)), f"a scenario's rows are one run's ({', '.join(alike) or 'one file'} alike), each with its own {spec.rows.id_said()}"))
            continue
        steps = [(where + ("start",), 0, scenario.start)] + [(where + ("rows", index, "then"), index + 1, then) for index, (_, then) in enumerate(scenario.rows)]
        for path, length, expect in steps:
            judged = judge(module, rows[:length])
            found = _disagreement(judged, expect)
            if found is not None:
                invalid = _invalid_row(judged) if not expect.corrupt else None
                if invalid is not None and not scenario.rows[invalid[0]][1].corrupt:  # (the row's mistake, said at the row,
                    # unless its own then says the rows are corrupt: then this then is the mistake)
                    index, why = invalid
                    errors.append(SpecError(file.mark(where + ("rows", index, "row")), f"row {index + 1} ({spec.rows.id_said()} {ids[index]!r}) is not a row the "
                                            f"contract reads ({why}): write it as `rows` declares, or give `then: {{corrupt: true}}`"))
                    break
                after = "before any row" if length == 0 else f"after row {length} ({spec.rows.id_said()} {ids[length - 1]!r})"
                errors.append(SpecError(file.mark(path), f"{after} the contract {found}"))
                break  # (the rows after it would repeat the disagreement)
    return errors


def _at(row: dict, path: str) -> object:
    value = at(row, path.split("."))
    return None if value is ABSENT else value


def _disagreement(judged: Judged, expect: Expect) -> str | None:
    if judged.decision is None:
        return None if expect.corrupt else f"refuses the rows ({judged.refused}), the scenario says {_said(expect)}"
    decision = judged.decision
    if expect.corrupt:
        return f"decides {decision.decision} {list(decision.reasons)}, the scenario says the rows are corrupt"
    items_of = outcome(decision)["items"]
    found = (decision.decision, tuple(decision.reasons), tuple(items_of) if expect.items is not None else None)
    if found != (expect.decision, expect.reasons, expect.items):
        items = f" items {items_of}" if expect.items is not None else ""
        return f"decides {decision.decision} {list(decision.reasons)}{items}, the scenario says {_said(expect)}"
    return None


def _invalid_row(judged: Judged) -> tuple[int, str] | None:
    """(its index, why) when the rows are refused because one of them is no row of the model (`invalid_event`)."""
    if judged.decision is None and judged.row is not None and (judged.refused or "").startswith("invalid_event"):
        return judged.row, (judged.refused or "").partition(": ")[2]
    return None


def _said(expect: Expect) -> str:
    if expect.corrupt:
        return "the rows are corrupt"
    items = f" items {list(expect.items)}" if expect.items is not None else ""
    return f"{expect.decision} {list(expect.reasons)}{items}"
