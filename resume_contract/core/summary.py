"""What the contract's decision table pins of a plan: the one place those fields are listed.

The generator's contradiction check, the generated crash tests, the crash harness's verdict and the review's
ledger evidence all build a `PlanSummary` and compare summaries, so a field the contract starts to pin is
added here once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .plan import ResumePlan

# How a message names a field, where its attribute name would read badly.
_LABELS = {"replay_event_ids": "replay", "terminal_fact": "terminal fact"}


class PlanSummary(NamedTuple):
    """A plan as the decision table states it: the disposition, each operation's status, the diagnostics and
    reasons, the ids provider replay keeps, and whether the terminal fact survives."""

    disposition: str
    operation_statuses: tuple[str, ...]
    diagnostics: tuple[str, ...]
    rejection_reasons: tuple[str, ...]
    replay_event_ids: tuple[str, ...]
    terminal_fact: bool

    @classmethod
    def of(cls, plan: ResumePlan) -> PlanSummary:
        return cls(
            disposition=plan.disposition,
            operation_statuses=tuple(operation.status for operation in plan.operations),
            diagnostics=tuple(diagnostic.code for diagnostic in plan.diagnostics),
            rejection_reasons=tuple(plan.rejection_reasons),
            replay_event_ids=tuple(plan.replay_event_ids),
            terminal_fact=plan.terminal_runtime_event_id is not None,
        )

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> PlanSummary:
        """The summary held in a mapping with (at least) these fields; lists are read as tuples."""
        read: dict[str, Any] = {name: tuple(values[name]) if isinstance(values[name], list) else values[name] for name in cls._fields}
        return cls(**read)

    def differences(self, actual: PlanSummary) -> list[tuple[str, Any, Any]]:
        """(field, expected, actual) for every field where `actual` differs from this summary, in field order."""
        return [(name, want, got) for name, want, got in zip(self._fields, self, actual) if want != got]


def label(field: str) -> str:
    """A field's name as a message says it: `operation statuses`, `replay`."""
    return _LABELS.get(field, field.replace("_", " "))


def loosening(before: PlanSummary, after: PlanSummary) -> str | None:
    """What makes `after` looser than `before` (it replays more readily or keeps less evidence), in a few words
    (the first that applies), or None. The review classes a moved ledger by it, and `conform` an implementation
    that disagrees with a vector."""
    if before.disposition == "blocked" and after.disposition == "safe_replay":
        return "blocked -> safe_replay"
    # A new name given in place of another keeps the evidence (consumers break, nothing is lost); fewer distinct
    # reasons or diagnostics, or fewer diagnostics raised, lose some.
    for what, old, new in (("reasons", before.rejection_reasons, after.rejection_reasons), ("diagnostics", before.diagnostics, after.diagnostics)):
        if len(set(new)) < len(set(old)) or len(new) < len(old):
            lost = Counter(old) - Counter(new)
            return f"{what} {', '.join(sorted(lost.elements())) or '(repeats)'} no longer given"
    replayed = sorted(set(after.replay_event_ids) - set(before.replay_event_ids))
    if replayed:
        return f"replays {', '.join(replayed)} too"
    if before.operation_statuses.count("indeterminate") > after.operation_statuses.count("indeterminate"):
        return "fewer operations indeterminate"
    return None
