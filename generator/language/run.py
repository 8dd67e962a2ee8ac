"""A language contract's rendered module run in the generator, as it runs after `generate`: what `generate` checks
the scenarios with and `diff` decides each side's ledgers with. The module is the renderer's own output (spec
values through repr()), never a spec's text."""

from __future__ import annotations

import sys
import types
from typing import Any, NamedTuple

from resume_contract.core.language import LanguageDecision, RowInvalid, SequenceCorrupt, decide_rows
from resume_contract.errors import ExpressionFailed

from .model import LanguageSpec
from .render import PACKAGE, render_language


def contract_module(spec: LanguageSpec) -> types.ModuleType:
    text = render_language(spec)[f"generated/{PACKAGE}/language.py"]
    name = f"_resume_contract_rendered_{spec.sha256[:16]}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # msgspec resolves a struct's annotations through its module
    # (dont_inherit: compiled as the file on disk is imported, not under this module's `from __future__` imports)
    exec(compile(text, f"<{spec.name}: language.py>", "exec", dont_inherit=True), module.__dict__)  # the renderer's output
    return module


class Judged(NamedTuple):
    """A ledger's outcome: refused (why, and the 0-based row) or a decision."""

    refused: str | None
    row: int | None
    decision: LanguageDecision | None


def judge(module: types.ModuleType, rows: list[dict[str, Any]], expected_high_water: int | None = None) -> Judged:
    try:
        return Judged(None, None, decide_rows(module, rows, expected_high_water))
    except RowInvalid as invalid:
        return Judged(f"invalid_event: {invalid.message}", invalid.index, None)
    except SequenceCorrupt as corrupt:
        return Judged(f"corrupt_sequence: {corrupt.message}", corrupt.index, None)
    except ExpressionFailed as failed:
        return Judged(f"an expression failed: {failed}", None, None)
