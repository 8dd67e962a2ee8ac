"""Rename detection: a diagnostic or reason removed and another added in its place, with the same structure.

Consumers match on these names (a plan's `diagnostics` and `rejectionReasons`), so a rename breaks them even
when no decision moves. Reported as one `*_RENAMED` finding, instead of a removal, an addition and a change
for every rule, state, decision and invariant that now names the new code, a reviewer can see that nothing
else changed. The ledgers still decide the class (`review`): a rename whose ledgers decide less safely is
weakens-safety, like any other change.

A removed name and an added one are a rename when exactly one of each shares a signature: for a reason, its
description or the diagnostics that reject with it; for a diagnostic, its reason (through any reason rename)
with its message, or with every place that raises or names it. Anything ambiguous stays a removal and an
addition.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from ..spec.model import Spec


@dataclass(frozen=True)
class Renames:
    diagnostics: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    # Renamed diagnostics raised and named in exactly the same places: only for these does a reference that
    # scopes them (an invariant's exemption) follow the rename; otherwise what it covers changed too.
    same_places: frozenset[str] = frozenset()

    def diagnostic_follows(self, old: str | None, new: str | None) -> bool:
        """Whether a reference changing from diagnostic `old` to `new` only follows its rename."""
        return old is not None and new is not None and old != new and self.diagnostics.get(old) == new

    def reason_follows(self, old: str | None, new: str | None) -> bool:
        """Whether a reference changing from reason `old` to `new` only follows its rename."""
        return old is not None and new is not None and old != new and self.reasons.get(old) == new


def find_renames(base: Spec, head: Spec) -> Renames:
    old_reasons, new_reasons = dict(base.projector.reasons), dict(head.projector.reasons)

    def rejecting_with(spec: Spec) -> Callable[[str], Hashable]:
        return lambda reason: tuple(sorted(d.code for d in spec.projector.diagnostics if d.reason == reason))

    reasons = _pair(
        [name for name in old_reasons if name not in new_reasons],
        [name for name in new_reasons if name not in old_reasons],
        [(old_reasons.__getitem__, new_reasons.__getitem__), (rejecting_with(base), rejecting_with(head))],
    )
    old_diagnostics = {d.code: d for d in base.projector.diagnostics}
    new_diagnostics = {d.code: d for d in head.projector.diagnostics}

    def reason_of(diagnostics: dict, renamed: bool) -> Callable[[str], str]:
        return lambda code: reasons.get(diagnostics[code].reason, diagnostics[code].reason) if renamed else diagnostics[code].reason

    old_reason, new_reason = reason_of(old_diagnostics, True), reason_of(new_diagnostics, False)
    diagnostics = _pair(
        [code for code in old_diagnostics if code not in new_diagnostics],
        [code for code in new_diagnostics if code not in old_diagnostics],
        [
            (lambda c: (old_reason(c), old_diagnostics[c].message), lambda c: (new_reason(c), new_diagnostics[c].message)),
            (lambda c: (old_reason(c), _places(base, c)), lambda c: (new_reason(c), _places(head, c))),
        ],
    )
    same_places = frozenset(old for old, new in diagnostics.items() if _places(base, old) == _places(head, new))
    return Renames(diagnostics, reasons, same_places)


def _places(spec: Spec, code: str) -> tuple[str, ...]:
    """Every place in a spec that raises or names a diagnostic, by a name that does not involve the code."""
    places = [f"rule {r.source} on {r.event} when {r.when}" for r in spec.projector.rules if r.anomaly == code]
    places += [f"state {state.name}" for state in spec.projector.states if state.at_end == code]
    places += [f"decision {d.prefix}" for d in spec.decisions if code in d.diagnostics]
    places += [f"invariant {i.name}" for i in spec.invariants if code in i.exempt_diagnostics]
    places += ["after terminal"] * (spec.projector.after_terminal_anomaly == code)
    places += ["high-water"] * (spec.ledger_rules.high_water_diagnostic == code)
    return tuple(sorted(places))


def _pair(removed: list[str], added: list[str], signatures: list[tuple[Callable, Callable]]) -> dict[str, str]:
    """Removed -> added names that share a signature one-to-one; the first signature that pairs a name wins."""
    pairs: dict[str, str] = {}
    for old_signature, new_signature in signatures:
        old_by: dict[Hashable, list[str]] = {}
        new_by: dict[Hashable, list[str]] = {}
        for name in removed:
            if name not in pairs:
                old_by.setdefault(old_signature(name), []).append(name)
        for name in added:
            if name not in pairs.values():
                new_by.setdefault(new_signature(name), []).append(name)
        for signature, olds in old_by.items():
            news = new_by.get(signature, [])
            if len(olds) == 1 and len(news) == 1:
                pairs[olds[0]] = news[0]
    return pairs
