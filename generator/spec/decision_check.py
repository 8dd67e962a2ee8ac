"""spec/decisions.yaml as a model: the decision each committed prefix requires, and the ledger rules.

Every name a decision uses must resolve against the ledger and the projector; whether the projector actually
decides so is the last pass (`contradictions`).
"""

from __future__ import annotations

import re
import typing
from typing import Any

from resume_contract.core.plan import Disposition

from ..errors import Mark, SpecError
from .loader import LoadedFile
from .model import CanonicalLedger, Decision, LedgerRules, Projector

# The fields two prefixes must share to claim the same tool decision (`same_tool_decision_as`).
_SAME_TOOL_FIELDS = ("disposition", "operation_statuses", "diagnostics", "rejection_reasons")


def build_decisions(file: LoadedFile, ledger: CanonicalLedger, projector: Projector) -> tuple[tuple[Decision, ...], LedgerRules, list[SpecError]]:
    """The decision table and the ledger rules, and every error found building them."""
    checks = _DecisionChecks(file, ledger, projector)
    decisions = checks.decisions()
    rules = checks.ledger_rules()
    return decisions, rules, checks.errors


class _DecisionChecks:
    def __init__(self, file: LoadedFile, ledger: CanonicalLedger, projector: Projector) -> None:
        self.file = file
        self.data = file.data
        self.ledger = ledger
        self.projector = projector
        self.errors: list[SpecError] = []
        self.codes = [diagnostic.code for diagnostic in projector.diagnostics]

    def error(self, mark: Mark, message: str) -> None:
        self.errors.append(SpecError(mark, message))

    def unknown_diagnostic(self, path: tuple[str | int, ...], code: str) -> None:
        self.error(self.file.mark(path), f"unknown diagnostic '{code}'; the diagnostics are [{', '.join(self.codes)}]")

    # -- decisions ------------------------------------------------------------------------------------------
    def decisions(self) -> tuple[Decision, ...]:
        decisions = tuple(decision for name, item in self.data["prefixes"].items() if (decision := self._decision(name, item)) is not None)
        self._every_prefix_decided(decisions)
        self._same_tool_decisions(decisions)
        return decisions

    def _decision(self, name: str, item: dict[str, Any]) -> Decision | None:
        path = ("prefixes", name)
        prefix_names = [prefix.name for prefix in self.ledger.prefixes]
        if name not in prefix_names:
            self.error(self.file.key_mark(path), f"decision for unknown prefix '{name}'; the prefixes are [{', '.join(prefix_names)}]")
            return None
        self._decision_references(name, item)
        self._summary_agrees(name, item)
        statuses = item["operation_statuses"]
        return Decision(
            prefix=name,
            summary=item["summary"],
            same_tool_decision_as=item.get("same_tool_decision_as"),
            disposition=item["disposition"],
            operation_statuses=tuple((outcome, tuple(statuses.get(outcome, ()))) for outcome in self.ledger.outcome_names),
            diagnostics=tuple(item["diagnostics"]),
            rejection_reasons=tuple(item["rejection_reasons"]),
            replay=tuple(item["replay"]),
            terminal_fact=item["terminal_fact"],
            mark=self.file.key_mark(path),
            key_marks=tuple((key, self.file.key_mark(path + (key,))) for key in item),
        )

    def _summary_agrees(self, name: str, item: dict[str, Any]) -> None:
        """A summary is what a reader takes the decision to be: it may not name another disposition, or a
        rejection reason the decision does not give."""
        words = set(re.findall(r"[A-Za-z0-9_]+", item["summary"]))
        mark = self.file.mark(("prefixes", name, "summary"))
        for disposition in sorted(set(typing.get_args(Disposition)) & words - {item["disposition"]}):
            self.error(mark, f"the summary says '{disposition}', but the decision's disposition is {item['disposition']}")
        for reason, _ in self.projector.reasons:
            if reason in words and reason not in item["rejection_reasons"]:
                given = ", ".join(item["rejection_reasons"]) or "none"
                self.error(mark, f"the summary names reason '{reason}', which the decision does not give (its rejection_reasons: {given})")

    def _decision_references(self, name: str, item: dict[str, Any]) -> None:
        """The outcomes, diagnostics, reasons and replayed events a decision names must exist."""
        file, ledger = self.file, self.ledger
        path = ("prefixes", name)
        statuses = item["operation_statuses"]
        if sorted(statuses) != sorted(ledger.outcome_names):
            self.error(file.mark(path + ("operation_statuses",)), f"operation_statuses gives outcomes [{', '.join(statuses)}]; the outcomes are [{', '.join(ledger.outcome_names)}]")
        for index, code in enumerate(item["diagnostics"]):
            if code not in self.codes:
                self.unknown_diagnostic(path + ("diagnostics", index), code)
        reasons = [reason for reason, _ in self.projector.reasons]
        for index, reason in enumerate(item["rejection_reasons"]):
            if reason not in reasons:
                self.error(file.mark(path + ("rejection_reasons", index)), f"unknown reason '{reason}'; the reasons are [{', '.join(reasons)}]")
        in_prefix = [event.name for event in ledger.events[: ledger.prefix(name).length]]
        for index, event_name in enumerate(item["replay"]):
            if event_name not in in_prefix:
                self.error(file.mark(path + ("replay", index)), f"replay names '{event_name}', which is not in prefix '{name}' [{', '.join(in_prefix)}]")

    def _every_prefix_decided(self, decisions: tuple[Decision, ...]) -> None:
        decided = {decision.prefix for decision in decisions}
        for prefix in self.ledger.prefixes:
            if prefix.name not in decided and prefix.name not in self.data["prefixes"]:
                self.error(prefix.mark, f"prefix '{prefix.name}' has no decision in spec/decisions.yaml")

    def _same_tool_decisions(self, decisions: tuple[Decision, ...]) -> None:
        """A prefix that claims another's tool decision must decide the same, field for field."""
        by_name = {decision.prefix: decision for decision in decisions}
        for decision in decisions:
            other_name = decision.same_tool_decision_as
            if other_name is None:
                continue
            other = by_name.get(other_name)
            if other is None:
                self.error(self.file.mark(("prefixes", decision.prefix, "same_tool_decision_as")), f"unknown prefix '{other_name}'; the prefixes are [{', '.join(by_name)}]")
                continue
            for field in _SAME_TOOL_FIELDS:
                if getattr(decision, field) != getattr(other, field):
                    self.error(decision.mark, f"prefix '{decision.prefix}' claims the same tool decision as '{other_name}' ({other.mark}) but its {field.replace('_', ' ')} differ")

    # -- ledger rules ---------------------------------------------------------------------------------------
    def ledger_rules(self) -> LedgerRules:
        rules_data = self.data["ledger_rules"]
        diagnostic = rules_data["high_water_mismatch"]["diagnostic"]
        if diagnostic not in self.codes:
            self.unknown_diagnostic(("ledger_rules", "high_water_mismatch", "diagnostic"), diagnostic)
        kinds = tuple(rules_data["storage_corruption"]["kinds"].items())
        differences = self.data.get("reference_differences", {"anomalies": [], "corruption_kinds": []})
        self._reference_differences(differences, dict(kinds))
        if "reference_differences" in self.data:
            self._reference_differences_complete(differences, dict(kinds))
        return LedgerRules(
            high_water_rule=rules_data["high_water_mismatch"]["rule"],
            high_water_diagnostic=diagnostic,
            corruption_rule=rules_data["storage_corruption"]["rule"],
            corruption_kinds=kinds,
            reference_anomalies=tuple(differences["anomalies"]),
            reference_corruption_kinds=tuple(differences["corruption_kinds"]),
        )

    def _reference_differences_complete(self, differences: dict[str, list[str]], kinds: dict[str, str]) -> None:
        """A Phase 0 reference predates every anomaly and corruption kind a spec adds, so it checks none of them:
        one left out of reference_differences would fail `conform --strictness reference` on every vector that
        raises it, with nothing in the spec saying why."""
        projector = self.projector
        for code in projector.anomalies:
            if code not in differences["anomalies"]:
                self.error(
                    self.file.mark(("reference_differences", "anomalies")),
                    f"anomaly '{code}' is not in reference_differences.anomalies: a Phase 0 reference does not check it, so "
                    "`conform --strictness reference` would report every vector that raises it; list it here",
                )
        for kind in kinds:
            if kind not in differences["corruption_kinds"]:
                self.error(
                    self.file.mark(("reference_differences", "corruption_kinds")),
                    f"corruption kind '{kind}' is not in reference_differences.corruption_kinds: a Phase 0 reference reads "
                    "past it, so `conform --strictness reference` would report its vector; list it here",
                )

    def _reference_differences(self, differences: dict[str, list[str]], kinds: dict[str, str]) -> None:
        """Where the reference implementation may differ must name real anomalies and corruption kinds."""
        projector = self.projector
        anomalies = set(projector.anomalies)
        for index, code in enumerate(differences["anomalies"]):
            if code not in anomalies:
                self.error(self.file.mark(("reference_differences", "anomalies", index)), f"'{code}' is not an anomaly; the anomalies are [{', '.join(sorted(anomalies))}]")
        for index, kind in enumerate(differences["corruption_kinds"]):
            if kind not in kinds:
                self.error(self.file.mark(("reference_differences", "corruption_kinds", index)), f"unknown corruption kind '{kind}'; the kinds are [{', '.join(kinds)}]")
