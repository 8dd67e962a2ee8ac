"""What spec/continuation.yaml declares against what its checks raise: its diagnostics and reasons.

A diagnostic no check (nor gate, nor the planner) raises, or a reason only such diagnostics park with, is declared
ahead of its checks: a warning, never a refusal (a contract may write a change's vocabulary before its checks).
A reason no diagnostic parks with at all, or a diagnostic parking with a reason neither the continuation nor Phase
0 declares, is refused. A diagnostic may park with one of Phase 0's reasons (its remedy is Phase 0's).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol

from .continuation_model import ContinuationDiagnostic
from .loader import SpecPath


class Reporter(Protocol):
    def error(self, path: SpecPath, message: str, *, key: bool = False) -> None: ...

    def warn(self, path: SpecPath, message: str) -> None: ...


def check_vocabulary(
    report: Reporter, reasons: Mapping[str, str], diagnostics: tuple[ContinuationDiagnostic, ...], raised: Collection[str], phase0: Collection[str]
) -> None:
    """Report each declaration nothing raises (`raised`: the diagnostics something raises; `phase0`: its reasons)."""
    for diagnostic in diagnostics:
        if diagnostic.reason is not None and diagnostic.reason not in reasons and diagnostic.reason not in phase0:
            report.error(("diagnostics", diagnostic.code, "reason"), f"undeclared reason '{diagnostic.reason}'; declared are [{', '.join(reasons)}] and Phase 0's")
        if diagnostic.code not in raised:
            report.warn(("diagnostics", diagnostic.code), f"diagnostic '{diagnostic.code}' is declared but no check raises it yet")
    parked = {diagnostic.reason for diagnostic in diagnostics if diagnostic.code in raised}
    given = {diagnostic.reason for diagnostic in diagnostics}
    for reason in reasons:
        if reason not in parked and reason in given:
            report.warn(("reasons", reason), f"reason '{reason}' is declared but no check raises it yet")
        elif reason not in parked:
            report.error(("reasons", reason), f"reason '{reason}' is declared but no diagnostic parks with it", key=True)
