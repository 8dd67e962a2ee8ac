"""Phase 1 in `verify`: the spec's continuation invariants checked on the generated continuation table over the
situations the review explores (every named situation and each with one input changed).

The situations come from the spec (the generated package holds the table, not the situations); each is decided
with the contract's generated tables and checked by `core.continuation_invariants`.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from resume_contract_generator.review.continuation_evidence import explored_situations
from resume_contract_generator.spec.validate import load_spec

from ..contract import Contract, packaged_spec_dir
from ..core.continuation_invariants import check_decision


@dataclass(frozen=True)
class ContinuationViolation:
    invariant: str
    message: str
    situation: str  # the explored situation's label, as `diff` names it


@dataclass(frozen=True)
class ContinuationResult:
    explored: int
    invariants: tuple[str, ...]
    violations: tuple[ContinuationViolation, ...]  # the smallest situation first, one per invariant


def verify_continuation(contract: Contract) -> ContinuationResult | None:
    """Check the contract's continuation invariants (None: the contract declares no continuation decision)."""
    table = contract.continuation
    if table is None:
        return None
    if contract.root is not None:
        spec = load_spec(contract.root)
    else:
        with tempfile.TemporaryDirectory() as scratch:
            shutil.copytree(packaged_spec_dir(), Path(scratch) / "spec")
            spec = load_spec(Path(scratch))
    explored = sorted(explored_situations(spec), key=lambda item: (item[1], item[0]))
    found: dict[str, ContinuationViolation] = {}
    for label, _, rows, facts in explored:
        events = [contract.model.decode_row(row.encode("utf-8")) for row in rows]
        for invariant, message in check_decision(table.invariants, events, facts, contract.table, table):
            found.setdefault(invariant, ContinuationViolation(invariant, message, label))
    return ContinuationResult(len(explored), table.invariants, tuple(found.values()))
