"""How one ledger's decision moved between two contracts: the review's four classes, defined by what decisions do.

One definition for every contract — maka's (its Phase 0 plan and its continuation decision) and a contract in the
contract language — and for everything that compares two decisions of one ledger: `diff` (each ledger of its
evidence), the review's judge (tools/review_judge.py) and the store fuzz (tools/store_fuzz.py). A decision is read
as a consumer reads it (`Outcome`): whether one was made at all, whether it lets the run proceed, its word, its
reasons and diagnostics, each operation's status, the rows replayed, the operations a person must verify, and
what the operator is told to do. The class of a move (docs/changing-the-contract.md has the table, with examples):

- weakens-safety — the ledger moves toward proceeding: a refused ledger now decided (corrupt -> a plan), stop ->
  proceed (blocked -> safe_replay, park -> continue), an operation to verify no longer listed, a row replayed that
  was withheld;
- breaking — nothing moves toward proceeding, but what a consumer reads changes other than by an addition: a reason
  or a diagnostic given in place of another, dropped or listed in another order, an operation's status, the
  decision's word, the directive, the replay's order, the terminal fact, whether a ledger is refused as corrupt or
  could not be judged;
- tightens — the ledger moves only toward stopping: a decided ledger now refused as corrupt, proceed -> stop, an
  operation to verify, a reason or a diagnostic added (every old one kept), a row no longer replayed;
- neutral — nothing a consumer reads moved.

A move with parts of several classes is its most severe part's (fail closed). `move` says which part decided it,
so a review's witness shows its class: its before and after decisions, and the words that differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .plan import ResumePlan

WEAKENS = "weakens-safety"
BREAKING = "breaking"
TIGHTENS = "tightens"
NEUTRAL = "neutral"
# In order of severity: a review's verdict is the first class it has.
CLASSES = (WEAKENS, BREAKING, TIGHTENS, NEUTRAL)
SEVERITY = {name: index for index, name in enumerate(CLASSES)}

CORRUPT = "corrupt"  # a refusal's kind: the ledger is not a legal committed prefix (exit 3)
UNDECIDED = "undecided"  # a refusal's kind: the contract cannot judge the ledger (an expression failed on it)
INPUTS = "inputs"  # a refusal's kind: the host's facts do not fit what the contract declares (its inputs changed)


class Outcome(NamedTuple):
    """One decision of one ledger, as a consumer reads it. A refusal has `refused` (`corrupt: KIND` or `undecided:
    WHY`) and nothing else; a decision has its word and whether it lets the run proceed."""

    word: str
    proceeds: bool
    reasons: tuple[str, ...] = ()
    diagnostics: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    replay: tuple[str, ...] = ()
    to_verify: tuple[str, ...] = ()
    directive: str = ""
    refused: str = ""
    terminal: str = ""  # the event a plan names as the run's terminal fact (a field of the plan), or ""

    @classmethod
    def of_plan(cls, plan: ResumePlan, verify_statuses: Collection[str] = ("indeterminate",)) -> Outcome:
        """A Phase 0 plan. Its operations to verify are those without a committed response whose status asks for
        verification (`verify_statuses`, `Table.verification_statuses`: what makes the plan require it, with the
        directive). The terminal fact is a field of the plan: `terminal` names its event."""
        return cls(
            plan.disposition, plan.disposition == "safe_replay", tuple(plan.rejection_reasons),
            tuple(diagnostic.code for diagnostic in plan.diagnostics), tuple(operation.status for operation in plan.operations),
            plan.replay_event_ids,
            tuple(operation.tool_call_id for operation in plan.operations if operation.response_runtime_event_id is None and operation.status in verify_statuses),
            plan.directive or "", terminal=plan.terminal_runtime_event_id or "",
        )


def refusal(kind: str, why: str) -> Outcome:
    """A ledger refused: `kind` CORRUPT or UNDECIDED, `why` its corruption kind or the failure."""
    return Outcome("refused", False, refused=f"{kind}: {why}")


class Move(NamedTuple):
    change_class: str
    why: str  # the part that decided the class, in a few words (empty when neutral)


def move(before: Outcome, after: Outcome) -> Move:
    """The class of one ledger's move from `before` (the base's decision) to `after` (the head's), and why."""
    if before == after:
        return Move(NEUTRAL, "")
    if before.refused or after.refused:
        return _refusal_move(before, after)
    toward_proceeding = _toward_proceeding(before, after)
    if toward_proceeding:
        return Move(WEAKENS, toward_proceeding)
    if before.proceeds and not after.proceeds:  # (the decision itself stops: its words are naturally others)
        return Move(TIGHTENS, f"{before.word} -> {after.word}")
    replaced = _replaced(before, after)
    if replaced:
        return Move(BREAKING, replaced)
    toward_stopping = _toward_proceeding(after, before, stopping=True)
    if toward_stopping:
        return Move(TIGHTENS, toward_stopping)
    return Move(NEUTRAL, "")


def _refusal_move(before: Outcome, after: Outcome) -> Move:
    if before.refused.startswith(INPUTS) or after.refused.startswith(INPUTS):  # (a host's facts object no longer fits)
        return Move(BREAKING, f"{describe(before)} -> {describe(after)}: the contract's inputs changed")
    if before.refused and after.refused:  # (refused as corrupt both ways: exit 3 both ways, whichever row is named)
        same = before.refused.partition(":")[0] == after.refused.partition(":")[0]
        return Move(NEUTRAL, "") if same else Move(BREAKING, f"refused otherwise: {before.refused} -> {after.refused}")
    if before.refused:
        return Move(WEAKENS, f"refused ({before.refused}) -> {after.word}")
    if after.refused.startswith(UNDECIDED):  # (the contract now fails on it: an error, not a decision to stop)
        return Move(BREAKING, f"{before.word} -> {after.refused}")
    return Move(TIGHTENS, f"{before.word} -> refused ({after.refused})")


def _toward_proceeding(before: Outcome, after: Outcome, *, stopping: bool = False) -> str:
    """What of `after` proceeds more readily than `before` (with `stopping`: the words for the other direction)."""
    if after.proceeds and not before.proceeds:
        return f"{after.word} -> {before.word}" if stopping else f"{before.word} -> {after.word}"
    lost = Counter(before.to_verify) - Counter(after.to_verify)
    if lost:
        return f"{_listed(lost)} to verify" if stopping else f"{_listed(lost)} no longer to verify"
    replayed = [row for row in after.replay if row not in set(before.replay)]
    if replayed:
        return f"replay drops {_listed(replayed)}" if stopping else f"replays {_listed(replayed)} too"
    if stopping:
        for what, old, new in (("reasons", after.reasons, before.reasons), ("diagnostics", after.diagnostics, before.diagnostics)):
            added = Counter(new) - Counter(old)
            if added:
                return f"{what} {_listed(added)} now given"
    return ""


def _replaced(before: Outcome, after: Outcome) -> str:
    """What a consumer reads that `after` no longer gives as `before` did (an addition aside)."""
    if before.word != after.word and before.proceeds == after.proceeds:
        return f"{before.word} -> {after.word}"
    for what, old, new in (("reasons", before.reasons, after.reasons), ("diagnostics", before.diagnostics, after.diagnostics)):
        lost, gained = Counter(old) - Counter(new), Counter(new) - Counter(old)
        if lost and gained:
            return f"{what} {_listed(gained)} given in place of {_listed(lost)}"
        if lost:
            return f"{what} {_listed(lost)} no longer given"
        if not gained and old != new:
            return f"{what} in another order: [{', '.join(old)}] -> [{', '.join(new)}]"
    if before.statuses != after.statuses and len(before.statuses) == len(after.statuses):
        changed = [f"{old} -> {new}" for old, new in zip(before.statuses, after.statuses) if old != new]
        return f"operation statuses {', '.join(changed)}"
    if len(after.statuses) < len(before.statuses):  # (one more recorded is an addition; one fewer, a field lost)
        return f"operations recorded {len(before.statuses)} -> {len(after.statuses)}"
    if before.directive != after.directive and before.directive and after.directive:
        return "the directive says something else"
    if set(before.replay) == set(after.replay) and before.replay != after.replay:
        return "the same rows replayed in another order"
    if before.terminal != after.terminal:
        return f"the terminal fact {before.terminal or 'none'} -> {after.terminal or 'none'}"
    return ""


def _listed(items: Counter[Any] | list[Any]) -> str:
    names = sorted(map(str, items.elements())) if isinstance(items, Counter) else [str(item) for item in items]  # (an id may be a number)
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def describe(outcome: Outcome) -> str:
    """One line a reviewer reads: `blocked [dangling_tool_state]; diagnostics pending_tool_result; to verify tool-1`."""
    if outcome.refused:
        return f"refused ({outcome.refused})"
    text = outcome.word + (f" [{', '.join(outcome.reasons)}]" if outcome.reasons else "")
    if outcome.diagnostics:
        text += f"; diagnostics {_listed(list(outcome.diagnostics))}"
    if outcome.to_verify:
        text += f"; to verify {_listed(list(outcome.to_verify))}"
    return text


def strongest(classes: object) -> str:
    """The most severe of some classes (NEUTRAL when there are none)."""
    present = set(classes)  # type: ignore[call-overload]
    return next((name for name in CLASSES if name in present), NEUTRAL)
