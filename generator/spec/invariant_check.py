"""The fast loop's safety net: the spec's declared invariants, checked before anything is generated.

`generate` and `check` run every invariant in spec/invariants.yaml over every ledger up to FAST_DEPTH events,
on the table and wire model built from the spec in memory (the same checks `resume-contract verify` runs
deeper on the generated code). A spec that violates one is refused, naming the invariant and its shortest
counterexample. Weakening safety on purpose therefore means editing the invariant too, which
`resume-contract diff` reports as weakens-safety.

`table_matches_machine` compares two generated artefacts with each other, so it is left to `verify` and the
generated tests.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from resume_contract.core.invariants import SelfAdvised, Subject, packaged_oracle, violations_of

from ..errors import SpecError
from .model import Spec
from .tables import decoder_of, table_of

# Depth 2 reaches every rule of a two-state-deep machine with both outcomes and the high-water check, in a
# few milliseconds; `resume-contract verify` goes deeper.
FAST_DEPTH = 2


def invariant_errors(
    spec: Spec, depth: int = FAST_DEPTH, *, oracle: Callable[..., Any] | None = None, skip: tuple[str, ...] = ()
) -> list[SpecError]:
    """One error per violated invariant, at its key in spec/invariants.yaml, with the shortest counterexample;
    the invariants named in `skip` are not checked (a project's oracle left unrun)."""
    table = table_of(spec)
    subject = Subject(table, decoder_of(spec), table.anomalies, oracle=packaged_oracle(spec.packaged_oracle))
    if oracle is not None:  # the project's own, beside its spec (spec/invariants.yaml `oracle:`)
        subject = dataclasses.replace(subject, oracle=_guarded(oracle), oracle_file=spec.oracle)
    declared = {invariant.name: invariant for invariant in spec.invariants if invariant.name not in skip}
    errors = []
    try:
        violations = violations_of(subject, {name: item.exempt_diagnostics for name, item in declared.items()}, depth)
    except _OracleFailed as failed:
        return [SpecError(spec.location("invariants", "oracle"), f"oracle {spec.oracle!r} failed: {failed}; the spec cannot be judged against it")]
    for violation in violations:
        high_water = "" if violation.expected_high_water is None else f" with expected high-water {violation.expected_high_water}"
        advice = "" if isinstance(violation.message, SelfAdvised) else (
            " Fix the rule or decision that allows it; to weaken safety on purpose, change this invariant too "
            "(`resume-contract diff` reports that as weakens-safety)"
        )
        errors.append(
            SpecError(
                declared[violation.invariant].mark,
                f"the spec violates invariant '{violation.invariant}': {violation.message}; shortest ledger: "
                f"{violation.ledger or '(empty)'}{high_water}.{advice}",
            )
        )
    return errors


class _OracleFailed(Exception):
    """The project's oracle raised (or tried to exit) instead of deciding."""


def _guarded(oracle: Callable[..., Any]) -> Callable[..., Any]:
    """The project's oracle, whose failure (an exception, or a SystemExit that would end the command with its
    status, 0 included) is an error of the spec's check, never a traceback or a silent exit."""

    def decide(rows: Any, expected_high_water: Any) -> Any:
        try:
            return oracle(rows, expected_high_water)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 - the project's code: whatever it raises is reported
            raise _OracleFailed(f"{type(error).__name__}: {error} (on a ledger of {len(rows)} rows)") from None

    return decide
