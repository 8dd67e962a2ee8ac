"""The ledgers' side of a review: both specs' projectors run over the same ledgers, and every decision that moved.

The ledgers are each spec's canonical prefixes (for every outcome), the same reopened where the caller
expected one more event, and every ledger up to a depth over the union of both sides' alphabets
(`resume_contract.core.explore`: derived from each side's wire format and projector, so a content kind,
status or flag only one side declares is explored too), letters neither side's projector tells apart
explored once. Each side writes a letter both declare as its own wire format does, and reads the rows with its
own decoding model. A row one side refuses (a letter only the other declares) is read there as
a row that takes no part in anything (an event with no content, at its place): a new kind or value is judged
by what the other side's projector does with it, not by the refusal (reading rows that were refused is what
adding a kind is for; the rules WIRE_CONTENT_KIND_ADDED and the like say so).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import msgspec

from resume_contract.core.explore import Alphabet, Letter, deepest, letters_of, projector_view, union
from resume_contract.core.project import project
from resume_contract.core.summary import PlanSummary, loosening
from resume_contract.core.table import ProjectorTable
from resume_contract.core.wire import WireModel
from resume_contract.errors import RowRefused

from ..spec.model import Spec
from ..spec.tables import decoder_of, table_of
from .rules import BREAKING, CLASSES, NEUTRAL, TIGHTENS, WEAKENS

# The deepest `diff` explores by default, and how many ledgers it explores at most to get there: a larger
# alphabet is explored less deep (the report says how deep).
DEFAULT_DEPTH = 4
LEDGER_BUDGET = 30_000

# (label, rows as the base writes them, rows as the head writes them)
_Ledger = tuple[str, tuple[bytes, ...], tuple[bytes, ...]]

# A plan as a reviewer compares it.
Decided = PlanSummary
# (position from 1, corruption kind) of each row a side refuses.
Refused = tuple[tuple[int, str], ...]


def describe(decided: Decided, refused: Refused = (), noun: str = "operations") -> str:
    """One line for a report: `blocked [dangling_tool_state]; operations indeterminate; diagnostics ...`."""
    text = ""
    if refused:
        rows = ", ".join(f"{position} ({kind})" for position, kind in refused)
        text = f"refuses row{'s' if len(refused) > 1 else ''} {rows}, read as events without content: "
    text += decided.disposition
    if decided.rejection_reasons:
        text += f" [{', '.join(decided.rejection_reasons)}]"
    if decided.operation_statuses:
        text += f"; {noun} {', '.join(decided.operation_statuses)}"
    if decided.diagnostics:
        text += f"; diagnostics {', '.join(decided.diagnostics)}"
    return text


@dataclass(frozen=True)
class LedgerEvidence:
    label: str
    rows: tuple[bytes, ...]  # as the head writes them
    base: Decided
    head: Decided
    effect: str
    base_refused: Refused = ()
    head_refused: Refused = ()
    base_rows: tuple[bytes, ...] | None = None  # as the base writes them, where it writes them otherwise


@dataclass(frozen=True)
class Evidence:
    """Every ledger that moved, how many were checked, how deep, and over which alphabet."""

    moved: list[LedgerEvidence]
    checked: int
    depth: int
    alphabet: Alphabet


def review_alphabet(base: Spec, head: Spec) -> Alphabet:
    """Both sides' letters, in classes that neither side's projector tells apart."""
    sides = [(table_of(spec), decoder_of(spec)) for spec in (base, head)]
    letters = union(*(letters_of(table, model) for table, model in sides))
    return Alphabet.reduced(letters, [projector_view(*sides[0], base=True), projector_view(*sides[1])])


class _Side:
    """One side's decoding model and table, each distinct row decoded once."""

    def __init__(self, spec: Spec) -> None:
        self.model: WireModel = decoder_of(spec)
        self.table: ProjectorTable = table_of(spec)
        letters = {letter.name: letter for letter in letters_of(self.table, self.model)}
        # A refused row is read as an event with no content, partial when the row says it is.
        self.stand_in: dict[bool, Letter] = {False: letters["no content"], True: letters["partial no content"]}
        self.partial_flag = spec.wire.partial_flag
        self._events: dict[bytes, object] = {}

    def event(self, row: bytes) -> object:
        """The row's event, or the RowRefused it is refused with."""
        if row not in self._events:
            try:
                self._events[row] = self.model.decode_row(row)
            except RowRefused as refused:
                self._events[row] = refused
        return self._events[row]

    def decide(self, rows: tuple[bytes, ...], expected_high_water: int | None) -> tuple[Decided, Refused]:
        events, raws, refused = [], [], []
        for position, row in enumerate(rows, 1):
            event = self.event(row)
            if isinstance(event, RowRefused):
                refused.append((position, event.kind))
                row = self.stand_in[_says_partial(row, self.partial_flag)].row(f"e{position}")
                event = self.model.decode_row(row)
            events.append(event)
            raws.append(msgspec.Raw(row))
        plan = project(events, self.table, expected_high_water, rows=raws)
        # The terminal fact is left out of ledger evidence: rule changes that move it are reported by their own
        # rules (WIRE_TERMINAL_CHANGED, DECISION_TERMINAL_FACT_*), and counting it here would list every ledger twice.
        return PlanSummary.of(plan)._replace(terminal_fact=False), tuple(refused)


def _says_partial(row: bytes, flag: str) -> bool:
    try:
        value = json.loads(row)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get(flag) is True


def collect_evidence(base: Spec, head: Spec, depth: int | None = None) -> Evidence:
    """Every ledger whose decision differs between `base` and `head`. `depth` None: the deepest up to
    DEFAULT_DEPTH that keeps the explored ledgers within LEDGER_BUDGET."""
    alphabet = review_alphabet(base, head)
    if depth is None:
        depth = deepest(alphabet, LEDGER_BUDGET, DEFAULT_DEPTH)
    sides = (_Side(base), _Side(head))
    ledgers = _canonical_ledgers(base, head)
    ledgers += [(alphabet.spell(word), alphabet.rows(word, base=True), alphabet.rows(word)) for word in alphabet.words(depth)]
    # Each ledger once more, reopened where the caller expected one more event than it holds: a change can
    # show only there (a reason that is also the high-water mismatch's, merged away).
    checked: list[tuple[str, tuple[bytes, ...], tuple[bytes, ...], int | None]] = [(label, old, new, None) for label, old, new in ledgers]
    checked += [(f"{label.partition(':')[0]} with expected high-water {len(new) + 1}", old, new, len(new) + 1) for label, old, new in ledgers]
    moved = []
    for label, old, new, expected_high_water in checked:
        before, base_refused = sides[0].decide(old, expected_high_water)
        after, head_refused = sides[1].decide(new, expected_high_water)
        if before != after:
            moved.append(LedgerEvidence(label, new, before, after, effect(before, after), base_refused, head_refused, None if old == new else old))
    # The canonical ledgers first (a reviewer knows them), then the explored ones; each smallest first, the most
    # severe first among ledgers of one length, and of those a blocked ledger that now replays first.
    severity = {name: index for index, name in enumerate(CLASSES)}
    moved.sort(key=lambda item: (
        not item.label.startswith("canonical"), len(item.rows), severity[item.effect],
        (item.base.disposition, item.head.disposition) != ("blocked", "safe_replay"),
    ))
    return Evidence(moved, len(checked), depth, alphabet)


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
    ledgers = []
    for wire_rows, (prefix_label, names, *outcomes) in canonical.items():
        rows = tuple(row.encode("utf-8") for row in wire_rows)
        ledgers.append((f"{prefix_label} ({', '.join(outcomes)}): {names}", rows, rows))
    return ledgers


def effect(base: Decided, head: Decided) -> str:
    """How one ledger's decision moved; a mixed move counts as its most severe part (fail closed)."""
    if loosening(base, head) is not None:
        return WEAKENS
    if renaming(base, head) is not None:
        return BREAKING
    return TIGHTENS if loosening(head, base) is not None else NEUTRAL


def renaming(before: Decided, after: Decided) -> str | None:
    """What `after` gives in place of some of `before`'s reasons and diagnostics, or None when it gives all
    of them. (Called once `loosening` found nothing: `after` gives as many distinct names, as often.)"""
    parts = []
    for what, old, new in (("reasons", before.rejection_reasons, after.rejection_reasons), ("diagnostics", before.diagnostics, after.diagnostics)):
        lost, gained = Counter(old) - Counter(new), Counter(new) - Counter(old)
        if lost:
            parts.append(f"{what} {', '.join(sorted(gained.elements()))} given in place of {', '.join(sorted(lost.elements()))}")
    return "; ".join(parts) or None


def explored_text(checked: int, depth: int, alphabet: Alphabet) -> str:
    """`the 32210 ledgers up to 4 events (36 letters in 11 classes)`: what the evidence explored."""
    return f"the {checked} ledgers up to {depth} events ({alphabet.describe()})"


def evidence_why(evidence: Evidence, evidence_class: str) -> str:
    """Why a by-evidence change has its class: how many ledgers moved, and what moved on the smallest one."""
    moved = [item for item in evidence.moved if item.effect == evidence_class]
    if evidence_class == NEUTRAL or not moved:
        return f"by the ledgers: none of {explored_text(evidence.checked, evidence.depth, evidence.alphabet)} decides more or less safely"
    first = moved[0]
    of = f"{len(moved)} of {evidence.checked}"
    if evidence_class == BREAKING:
        return f"by the ledgers: {of} keep their decisions but give other names; {first.label}: {renaming(first.base, first.head)}"
    what = loosening(first.base, first.head) if evidence_class == WEAKENS else loosening(first.head, first.base)
    direction = "less" if evidence_class == WEAKENS else "more"
    return f"by the ledgers: {of} decide {direction} safely; {first.label}: {what}"


def naming_why(evidence: Evidence, name: str, field: str) -> str:
    """Why a removed or renamed name breaks its consumers: the ledgers that gave it (as a diagnostic or a
    rejection reason, `field`) and give it no more."""
    gone = [item for item in evidence.moved if name in getattr(item.base, field) and name not in getattr(item.head, field)]
    if not gone:
        return f"by the ledgers: none of the {evidence.checked} explored gave '{name}'"
    first = gone[0]
    return f"by the ledgers: {len(gone)} of {evidence.checked} gave '{name}' and give other names; {first.label}: {renaming(first.base, first.head)}"
