"""The ledgers' side of a review: both specs' projectors run over the same ledgers, and every decision that moved.

The ledgers are each spec's canonical prefixes (for every outcome), the same reopened where the caller
expected one more event, and every ledger up to a depth over the union of both sides' alphabets
(`resume_contract.core.explore`: derived from each side's wire format and projector, so a content kind,
status or flag only one side declares is explored too), letters neither side's projector tells apart
explored once. Each side writes a letter both declare as its own wire format does, and reads the rows with its
own decoding model. A ledger holding a row one side refuses is refused by that side, as `plan` refuses it (corrupt:
no plan): a change that reads rows the base refused moves those ledgers from corrupt to a plan, toward proceeding.
How each ledger moved is classed by `resume_contract.core.moves`, the one definition every review uses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec

from resume_contract.core.explore import CALL_IDS, Alphabet, Letter, deepest, letters_of, projector_view, union
from resume_contract.core.letters import ID_FIELD, Shape, plain_value
from resume_contract.core.moves import CORRUPT, WEAKENS, Outcome, move, refusal, strongest
from resume_contract.core.moves import describe as describe_outcome
from resume_contract.core.project import project
from resume_contract.core.table import ProjectorTable
from resume_contract.core.wire import WireModel
from resume_contract.errors import RowRefused

from ..expr.probes import probe_rows
from ..spec.model import Spec
from ..spec.tables import decoder_of, table_of
from .rules import CLASSES, NEUTRAL

UNDECLARED = "exploreUndeclared"  # a key no wire format declares (a letter holds it to show unknown keys read or refused)
# The deepest `diff` explores by default, and how many ledgers it explores at most to get there: a larger
# alphabet is explored less deep (the report says how deep).
DEFAULT_DEPTH = 4
LEDGER_BUDGET = 30_000

# (label, rows as the base writes them, rows as the head writes them)
_Ledger = tuple[str, tuple[bytes, ...], tuple[bytes, ...]]

# A decision as a reviewer compares it (a refusal included).
Decided = Outcome
# (position from 1, corruption kind) of each row a side refuses.
Refused = tuple[tuple[int, str], ...]


def describe(decided: Decided, refused: Refused = (), noun: str = "operations") -> str:
    """One line for a report: `blocked [dangling_tool_state]; diagnostics pending_tool_result; to verify a`."""
    if decided.refused and refused:
        rows = ", ".join(f"{position} ({kind})" for position, kind in refused)
        return f"refused: corrupt row{'s' if len(refused) > 1 else ''} {rows}"
    text = describe_outcome(decided)
    if decided.statuses and not decided.refused:
        text += f"; {noun} {', '.join(decided.statuses)}"
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
    why: str = ""  # the part of the move that decides its class (core.moves)


@dataclass(frozen=True)
class Evidence:
    """Every ledger that moved, how many were checked, how deep, and over which alphabet."""

    moved: list[LedgerEvidence]
    checked: int
    depth: int
    alphabet: Alphabet


def review_alphabet(base: Spec, head: Spec) -> Alphabet:
    """Both sides' letters, in classes that neither side's projector tells apart; with the rows a change of the
    wire format moves (`wire_letters`)."""
    sides = [(table_of(spec), decoder_of(spec)) for spec in (base, head)]
    letters = union(*(letters_of(table, model) for table, model in sides))
    letters = (*letters, *wire_letters(base, head, {letter.key for letter in letters}))
    return Alphabet.reduced(letters, [projector_view(*sides[0], base=True), projector_view(*sides[1])])


def wire_letters(base: Spec, head: Spec, known: set[str]) -> list[Letter]:
    """Rows that only a change of what the reader accepts moves (the explorer looks where the change looks): a row
    holding a key neither side declares (unknown keys read or refused); a row holding each optional field of either
    side at a plain value (a field added, removed, made required or optional); a row holding each value a field of
    either side declares (an enum widened or narrowed); the rows each refusal test of either
    side (`invalid_when`) compares with a literal, as generator/expr/probes.py builds them. Each is a row as the
    side that declares it writes it; the other side reads it, or refuses it."""
    letters: list[Letter] = []
    for spec in (head, base):
        shape = Shape(decoder_of(spec), table_of(spec))
        letters.append(Letter("a key neither side declares", shape.event(**{UNDECLARED: True})))
        for field in shape.event_fields:
            if not field.required and field.encode_name not in (ID_FIELD, shape.content_field):
                letters.append(Letter(f"{field.encode_name} present", shape.event(**{field.encode_name: plain_value(field.type, field.encode_name)})))
            for value in shape.declared_values(field.encode_name):  # (a value allowed, or no longer allowed)
                letters.append(Letter(f"{field.encode_name} {json.dumps(value)}", shape.event(**{field.encode_name: value})))
        for name, fields, _ in probe_rows({}, {}, [test.when[0] for test in spec.wire.refusals]):
            letters.append(Letter(name, shape.event(**fields)))
    unique: dict[str, Letter] = {}
    for letter in letters:
        if letter.key not in known:
            unique.setdefault(letter.key, letter)
    return list(unique.values())


class _Side:
    """One side's decoding model and table, each distinct row decoded once."""

    def __init__(self, spec: Spec) -> None:
        self.model: WireModel = decoder_of(spec)
        self.table: ProjectorTable = table_of(spec)
        self.verify_statuses = self.table.verification_statuses
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
        """The side's decision of the ledger: refused as corrupt where it refuses a row (as `plan` refuses it)."""
        events, raws, refused = [], [], []
        for position, row in enumerate(rows, 1):
            event = self.event(row)
            if isinstance(event, RowRefused):
                refused.append((position, event.kind))
            events.append(event)
            raws.append(msgspec.Raw(row))
        if refused:
            return refusal(CORRUPT, f"{refused[0][1]} at row {refused[0][0]}"), tuple(refused)
        plan = project(events, self.table, expected_high_water, rows=raws)
        return Outcome.of_plan(plan, self.verify_statuses), ()


def collect_evidence(base: Spec, head: Spec, depth: int | None = None) -> Evidence:
    """Every ledger whose decision differs between `base` and `head`. `depth` None: the deepest up to
    DEFAULT_DEPTH that keeps the explored ledgers within LEDGER_BUDGET."""
    alphabet = review_alphabet(base, head)
    stories = depth is None  # (a depth the caller chose is explored as chosen, and no more)
    if depth is None:
        depth = deepest(alphabet, LEDGER_BUDGET, DEFAULT_DEPTH)
    sides = (_Side(base), _Side(head))
    ledgers = _canonical_ledgers(base, head)
    ledgers += [(alphabet.spell(word), alphabet.rows(word, base=True), alphabet.rows(word)) for word in alphabet.words(depth)]
    # Each ledger once more, reopened where the caller expected one more event than it holds: a change can
    # show only there (a reason that is also the high-water mismatch's, merged away).
    checked: list[tuple[str, tuple[bytes, ...], tuple[bytes, ...], int | None]] = [(label, old, new, None) for label, old, new in ledgers]
    checked += [(f"{label.partition(':')[0]} with expected high-water {len(new) + 1}", old, new, len(new) + 1) for label, old, new in ledgers]
    words = story_words(alphabet, depth, STORIES) if stories and depth < DEFAULT_DEPTH else []  # (an alphabet too large to explore deep)
    moved: list[LedgerEvidence] = []

    def judged(word: tuple[int, ...]) -> LedgerEvidence | None:
        return _judged(sides, alphabet.spell(word), alphabet.rows(word, base=True), alphabet.rows(word), None)

    for label, old, new, expected_high_water in checked:
        found = _judged(sides, label, old, new, expected_high_water)
        moved += [found] if found is not None else []
    grow = []
    for word in words:
        found = judged(word)
        if found is not None:
            moved.append(found)
            grow.append((word, found))
    grown: list[LedgerEvidence] = []
    tried = 0
    if words and strongest(item.effect for item in moved) != WEAKENS:
        grown, tried = _grown(judged, grow, _story(alphabet), set(words))
    moved += grown
    # The canonical ledgers first (a reviewer knows them), then the explored ones; each smallest first, the most
    # severe first among ledgers of one length, and of those a blocked ledger that now replays first.
    severity = {name: index for index, name in enumerate(CLASSES)}
    moved.sort(key=lambda item: (
        not item.label.startswith("canonical"), len(item.rows), severity[item.effect],
        not (item.head.proceeds and not item.base.proceeds),
    ))
    return Evidence(moved, len(checked) + len(words) + tried, depth, alphabet)


def _judged(sides: tuple[_Side, _Side], label: str, old: tuple[bytes, ...], new: tuple[bytes, ...], expected_high_water: int | None) -> LedgerEvidence | None:
    before, base_refused = sides[0].decide(old, expected_high_water)
    after, head_refused = sides[1].decide(new, expected_high_water)
    if before == after:
        return None
    found = move(before, after)
    if found.change_class == NEUTRAL:
        return None
    return LedgerEvidence(label, new, before, after, found.change_class, base_refused, head_refused, None if old == new else old, found.why)


GROWN = 20_000  # ledgers grown from the stories that moved, at most
PER_MOVE = 8  # of the stories that moved one way (the same decisions before and after), those grown


def _grown(judged: Any, moved: list[tuple[tuple[int, ...], LedgerEvidence]], story: list[int], seen: set[tuple[int, ...]]) -> tuple[list[LedgerEvidence], int]:
    """Where the stories moved no ledger toward proceeding: each story that moved (of each way it moved, the first
    PER_MOVE) one story letter longer, and so on while they move, up to DEFAULT_DEPTH + 1 letters and GROWN ledgers;
    (the ledgers that moved, how many were tried). A change can move a ledger only in a way a consumer reads at
    three events and toward proceeding at four (a second dispatch replayed, once a result follows it): the longer
    ledger starts where the shorter one moved."""
    found: list[LedgerEvidence] = []
    tried = 0
    frontier = moved
    while frontier and tried < GROWN and not any(item.effect == WEAKENS for item in found):
        ways: dict[tuple[str, str], int] = {}
        grown = []
        for word, evidence in frontier:
            way = (describe_outcome(evidence.base), describe_outcome(evidence.head))
            ways[way] = ways.get(way, 0) + 1
            if ways[way] > PER_MOVE or len(word) > DEFAULT_DEPTH:
                continue
            for letter in story:
                longer = (*word, letter)
                if longer in seen or tried >= GROWN:
                    continue
                seen.add(longer)
                tried += 1
                result = judged(longer)
                if result is not None:
                    found.append(result)
                    grown.append((longer, result))
        frontier = grown
    return found, tried


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
    """How one ledger's decision moved (core.moves: the one definition)."""
    return move(base, head).change_class


STORY_SEED = 53  # the sample of longer ledgers is the same on every run and machine
STORIES = 5_000  # longer ledgers sampled where the whole alphabet is explored less deep than DEFAULT_DEPTH
EVERY_STORY = 60_000  # one operation's stories one event longer than the exhaustive depth: all of them, up to this many


def story_words(alphabet: Alphabet, depth: int, count: int) -> list[tuple[int, ...]]:
    """The words of one operation's story letters (those naming the explorers' first call id or none: no second
    call, no partial variant) one letter longer than `depth`, every one of them when they number at most
    EVERY_STORY; then `count` longer ones, up to DEFAULT_DEPTH + 1 letters, drawn with a fixed seed. A check or a
    transition that only a third or fourth event of one call reaches (a dispatch after its call under the boundary
    marker, a second dispatch, a decision after a reconcile) shows only in such ledgers, and the whole alphabet is
    too large to explore that deep; where the exhaustive depth reaches DEFAULT_DEPTH, none are made."""
    import itertools
    import random

    story = _story(alphabet)
    if not story or count <= 0:
        return []
    words: dict[tuple[int, ...], None] = {}
    shortest = depth + 1
    if len(story) ** shortest <= EVERY_STORY:
        words = dict.fromkeys(itertools.product(story, repeat=shortest))
        shortest += 1
    if shortest > DEFAULT_DEPTH + 1:
        return list(words)
    draw = random.Random(STORY_SEED)
    drawn = 0
    for _ in range(count * 2):
        if drawn >= count:
            break
        word = tuple(draw.choice(story) for _ in range(draw.randint(shortest, DEFAULT_DEPTH + 1)))
        if word not in words:
            words[word] = None
            drawn += 1
    return list(words)


def _story(alphabet: Alphabet) -> list[int]:
    """The symbols (classes of letters) of one operation's story."""
    return [index for index, group in enumerate(alphabet.classes) if _one_story(alphabet.letters[group[0]])]


def _one_story(letter: Letter) -> bool:
    text = json.dumps(dict(letter.fields))
    return not letter.name.startswith("partial ") and all(f'"{other}"' not in text for other in CALL_IDS[1:])


def explored_text(checked: int, depth: int, alphabet: Alphabet) -> str:
    """`the 32210 ledgers up to 4 events (36 letters in 11 classes)`: what the evidence explored."""
    return f"the {checked} ledgers up to {depth} events ({alphabet.describe()})"


def evidence_why(evidence: Evidence, evidence_class: str) -> str:
    """Why a by-evidence change has its class: how many ledgers moved, the smallest that shows the class (its before
    and after decisions and the part that decides it), and the smallest of each other class that moved."""
    if evidence_class == NEUTRAL:
        return f"by the ledgers: none of {explored_text(evidence.checked, evidence.depth, evidence.alphabet)} decides otherwise"
    moved = [item for item in evidence.moved if item.effect == evidence_class]
    if not moved:
        return f"by the ledgers: none of {explored_text(evidence.checked, evidence.depth, evidence.alphabet)} is {evidence_class}"
    text = f"by the ledgers: {len(moved)} of {evidence.checked} are {evidence_class}; {witness_text(moved[0])}"
    others = [next(item for item in evidence.moved if item.effect == name) for name in CLASSES if name != evidence_class and any(i.effect == name for i in evidence.moved)]
    return text + "".join(f"; also {item.effect}: {witness_text(item)}" for item in others)


def witness_text(item: LedgerEvidence, noun: str = "operations") -> str:
    """`LABEL: BEFORE -> AFTER (WHY)`: a moved ledger as a finding shows it (`noun`: what its statuses are of)."""
    return f"{item.label}: {describe(item.base, item.base_refused, noun)} -> {describe(item.head, item.head_refused, noun)} ({item.why})"


def naming_why(evidence: Evidence, name: str, field: str) -> str:
    """Why a removed or renamed name breaks its consumers: the ledgers that gave it (as a diagnostic or a
    rejection reason, `field`) and give it no more."""
    gone = [item for item in evidence.moved if name in getattr(item.base, field) and name not in getattr(item.head, field)]
    if not gone:
        return f"by the ledgers: none of the {evidence.checked} explored gave '{name}'"
    return f"by the ledgers: {len(gone)} of {evidence.checked} gave '{name}' and give other names; {witness_text(gone[0])}"
