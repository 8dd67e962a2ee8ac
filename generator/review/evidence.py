"""The ledgers' side of a review: both specs' projectors run over the same ledgers, and every decision that moved.

The ledgers are each spec's canonical prefixes (for every outcome), the same reopened where the caller
expected one more event, and every ledger up to `depth` events (`resume_contract.explore`). Each side reads
the rows with its own decoding model, so a wire change shows as rows one side refuses.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import msgspec

from resume_contract.core.explore import spell, wires, words
from resume_contract.core.project import project
from resume_contract.core.summary import PlanSummary
from resume_contract.core.table import ProjectorTable
from resume_contract.core.wire import WireModel, encode_json
from resume_contract.errors import RowRefused

from ..spec.model import Spec
from ..spec.tables import decoder_of, table_of
from .rules import BREAKING, NEUTRAL, TIGHTENS, WEAKENS

CORRUPT = "corrupt"

_Ledger = tuple[str, tuple[bytes, ...]]


# A plan as a reviewer compares it; a ledger one side refuses is `corrupt`, its kind as the one reason.
Decided = PlanSummary


def describe(decided: Decided) -> str:
    """One line for a report: `blocked [dangling_tool_state]; operations indeterminate; diagnostics ...`."""
    text = decided.disposition
    if decided.rejection_reasons:
        text += f" [{', '.join(decided.rejection_reasons)}]"
    if decided.operation_statuses:
        text += f"; operations {', '.join(decided.operation_statuses)}"
    if decided.diagnostics:
        text += f"; diagnostics {', '.join(decided.diagnostics)}"
    return text


@dataclass(frozen=True)
class LedgerEvidence:
    label: str
    rows: tuple[bytes, ...]
    base: Decided
    head: Decided
    effect: str


def collect_evidence(base: Spec, head: Spec, depth: int) -> tuple[list[LedgerEvidence], int]:
    """Every ledger whose decision differs between `base` and `head`, and how many ledgers were checked."""
    sides = [(decoder_of(spec), table_of(spec)) for spec in (base, head)]
    ledgers = _canonical_ledgers(base, head)
    for word in words(depth):
        ledgers.append((spell(word), tuple(encode_json(value) for value in wires(word))))
    # Each ledger once more, reopened where the caller expected one more event than it holds: a change can
    # show only there (a reason that is also the high-water mismatch's, merged away).
    checked: list[tuple[str, tuple[bytes, ...], int | None]] = [(label, rows, None) for label, rows in ledgers]
    checked += [(f"{label.partition(':')[0]} with expected high-water {len(rows) + 1}", rows, len(rows) + 1) for label, rows in ledgers]
    changed = []
    for label, rows, expected_high_water in checked:
        before, after = (_decide(model, table, rows, expected_high_water) for model, table in sides)
        if before != after:
            changed.append(LedgerEvidence(label, rows, before, after, effect(before, after)))
    # The canonical ledgers first (a reviewer knows them), then the explored ones; each smallest first.
    changed.sort(key=lambda item: (not item.label.startswith("canonical"), len(item.rows)))
    return changed, len(checked)


def _canonical_ledgers(base: Spec, head: Spec) -> list[_Ledger]:
    """Both specs' canonical prefixes, each distinct ledger once, labelled with the outcomes that give it."""
    canonical: dict[tuple[str, ...], list[str]] = {}
    for spec in (base, head):
        for prefix in spec.ledger.prefixes:
            for outcome in spec.ledger.outcome_names:
                wire_rows = tuple(event.wire(outcome) for event in spec.ledger.events[: prefix.length])
                names = ", ".join(event.name for event in spec.ledger.events[: prefix.length]) or "(empty)"
                labels = canonical.setdefault(wire_rows, [f"canonical {prefix.name}", names])
                if outcome not in labels[2:]:
                    labels.append(outcome)
    return [
        (f"{prefix_label} ({', '.join(outcomes)}): {names}", tuple(row.encode("utf-8") for row in wire_rows))
        for wire_rows, (prefix_label, names, *outcomes) in canonical.items()
    ]


def effect(base: Decided, head: Decided) -> str:
    """How one ledger's decision moved; a mixed move counts as its most severe part (fail closed)."""
    if _loosens(base, head):
        return WEAKENS
    if renaming(base, head) is not None:
        return BREAKING
    return TIGHTENS if _loosens(head, base) else NEUTRAL


def renaming(before: Decided, after: Decided) -> str | None:
    """What `after` gives in place of some of `before`'s reasons and diagnostics, or None when it gives all
    of them. (Called once `loosening` found nothing: `after` gives as many distinct names, as often.)"""
    parts = []
    for what, old, new in (("reasons", before.rejection_reasons, after.rejection_reasons), ("diagnostics", before.diagnostics, after.diagnostics)):
        lost, gained = Counter(old) - Counter(new), Counter(new) - Counter(old)
        if lost:
            parts.append(f"{what} {', '.join(sorted(gained.elements()))} given in place of {', '.join(sorted(lost.elements()))}")
    return "; ".join(parts) or None


def _decide(model: WireModel, table: ProjectorTable, rows: tuple[bytes, ...], expected_high_water: int | None) -> Decided:
    """One side's decision on a ledger, read by that side's own decoding model (a refused row: `corrupt`)."""
    try:
        events = [model.decode_row(row) for row in rows]
    except RowRefused as refused:
        return PlanSummary(CORRUPT, (), (), (refused.kind,), (), False)
    # The terminal fact is left out of ledger evidence: rule changes that move it are reported by their own rules
    # (WIRE_TERMINAL_CHANGED, DECISION_TERMINAL_FACT_*), and counting it here would list every ledger twice.
    return PlanSummary.of(project(events, table, expected_high_water, rows=[msgspec.Raw(row) for row in rows]))._replace(terminal_fact=False)


def _loosens(before: Decided, after: Decided) -> bool:
    """Whether `after` replays more readily or keeps less evidence than `before`."""
    return loosening(before, after) is not None


def loosening(before: Decided, after: Decided) -> str | None:
    """What makes `after` looser than `before`, in a few words (the first that applies), or None."""
    if CORRUPT in (before.disposition, after.disposition):
        # A row one side refuses and the other reads: reading it is the looser side.
        return "a row refused as corrupt is now read" if before.disposition == CORRUPT and after.disposition != CORRUPT else None
    if before.disposition == "blocked" and after.disposition == "safe_replay":
        return "blocked -> safe_replay"
    # A new name given in place of another keeps the evidence (that is `breaking`); fewer distinct reasons or
    # diagnostics, or fewer diagnostics raised, lose some.
    for what, old, new in (("reasons", before.rejection_reasons, after.rejection_reasons), ("diagnostics", before.diagnostics, after.diagnostics)):
        if len(set(new)) < len(set(old)) or len(new) < len(old):
            lost = Counter(old) - Counter(new)
            return f"{what} {', '.join(sorted(lost.elements()))} no longer given"
    replayed = sorted(set(after.replay_event_ids) - set(before.replay_event_ids))
    if replayed:
        return f"replays {', '.join(replayed)} too"
    if before.operation_statuses.count("indeterminate") > after.operation_statuses.count("indeterminate"):
        return "fewer operations indeterminate"
    return None


def evidence_why(evidence: list[LedgerEvidence], evidence_class: str, explored: int, depth: int) -> str:
    """Why a by-evidence change has its class: how many ledgers moved, and what moved on the smallest one."""
    moved = [item for item in evidence if item.effect == evidence_class]
    if evidence_class == NEUTRAL or not moved:
        return f"by the ledgers: none of the {explored} up to {depth} events decides more or less safely"
    first = moved[0]
    if evidence_class == BREAKING:
        return f"by the ledgers: {len(moved)} of {explored} keep their decisions but give other names; {first.label}: {renaming(first.base, first.head)}"
    what = loosening(first.base, first.head) if evidence_class == WEAKENS else loosening(first.head, first.base)
    direction = "less" if evidence_class == WEAKENS else "more"
    return f"by the ledgers: {len(moved)} of {explored} decide {direction} safely; {first.label}: {what}"


def naming_why(evidence: list[LedgerEvidence], name: str, field: str, explored: int) -> str:
    """Why a removed or renamed name breaks its consumers: the ledgers that gave it (as a diagnostic or a
    rejection reason, `field`) and give it no more."""
    gone = [item for item in evidence if name in getattr(item.base, field) and name not in getattr(item.head, field)]
    if not gone:
        return f"by the ledgers: none of the {explored} explored gave '{name}'"
    first = gone[0]
    return f"by the ledgers: {len(gone)} of {explored} gave '{name}' and give other names; {first.label}: {renaming(first.base, first.head)}"
