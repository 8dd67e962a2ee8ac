"""The second pass: schema-valid spec files -> the frozen `Spec`, collecting every reference and structure error.

Each spec file has its own builder (`ledger_check`, `projector_check`, `decision_check`); the failpoints, the
invariants, the scope and the checks that span files (defined but unused) are here.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from ..errors import Mark, SpecError, SpecInvalid
from .continuation_check import build_continuation
from .continuation_crash import build_continuation_crash
from .decision_check import build_decisions
from .files import ALL_SPEC_FILES, SCHEMA_DIR, SPEC_DIR, canonical_schema, spec_sha256
from .ledger_check import build_ledger
from .loader import LoadedFile
from .model import CanonicalLedger, Failpoint, Invariant, LedgerRules, Projector, Scope, Spec, WireFormat
from .projector_check import check_projector, projector_model
from .projector_expressions import compile_projector
from .run_files import run_file_at
from .tables import wire_model


class SpecBuilder:
    """Builds the model from schema-valid data; `errors` holds the reference and structure errors found on the way."""

    def __init__(self, files: dict[str, LoadedFile], wire: WireFormat) -> None:
        self.files = files
        self.wire = wire
        self.errors: list[SpecError] = []

    def error(self, mark: Mark, message: str) -> None:
        self.errors.append(SpecError(mark, message))

    def build(self, root: Path) -> Spec:
        """The spec, or SpecInvalid with every reference and structure error found."""
        files = self.files
        ledger, errors = build_ledger(files["ledger"], wire_model(self.wire))
        self.errors.extend(errors)
        projector, errors = compile_projector(files["projector"], projector_model(files["projector"]), self.wire)
        self.errors.extend(errors)
        self.errors.extend(check_projector(files["projector"], projector, self.wire))
        decisions, rules, errors = build_decisions(files["decisions"], ledger, projector)
        self.errors.extend(errors)
        failpoints = self._failpoints(files["failpoints"], ledger)
        sqlite_failpoints = self._sqlite_failpoints(files["failpoints"], ledger, failpoints)
        self._unused(ledger, projector, failpoints, rules)
        invariants = self._invariants(files["invariants"], projector)
        continuation = None
        if "continuation" in files:
            continuation, errors = build_continuation(files["continuation"], self.wire, projector)
            self.errors.extend(errors)
        continuation_crash = None
        if "lifecycle" in files:
            continuation_crash, errors = build_continuation_crash(files["lifecycle"], continuation)
            self.errors.extend(errors)
        present = tuple(name for name in ALL_SPEC_FILES if name in files)
        # An optional file's schema is reviewed once it is there, with or without the file: adding the file is
        # then one change, not also a schema change.
        schemas = tuple(name for name in ALL_SPEC_FILES if name in files or (root / SCHEMA_DIR / f"{name}.schema.json").is_file())
        if self.errors:
            raise SpecInvalid(self.errors)
        return Spec(
            failpoints=failpoints,
            wire=self.wire,
            ledger=ledger,
            decisions=decisions,
            ledger_rules=rules,
            projector=projector,
            invariants=invariants,
            scope=_scope(files["scope"]),
            source_files=tuple(f"{SPEC_DIR}/{name}.yaml" for name in present),
            sha256=spec_sha256(root),
            run_loop=run_file_at(files["failpoints"].data, ("run_loop",)),
            oracle=run_file_at(files["invariants"].data, ("oracle",)),
            packaged_oracle=files["invariants"].data.get("packaged_oracle", "tool-boundary"),
            locations=self._locations(),
            schemas=tuple((name, canonical_schema(root, name)) for name in schemas),
            continuation=continuation,
            continuation_crash=continuation_crash,
            sqlite_failpoints=sqlite_failpoints,
            sqlite_run_loop=run_file_at(files["failpoints"].data, ("sqlite", "run_loop")),
        )

    def _locations(self) -> MappingProxyType[str, Mark]:
        """'file:key/path' -> where that key is written, for the review diff to point at."""
        return MappingProxyType(
            {
                f"{name}:{'/'.join(str(step) for step in path)}": mark
                for name, file in self.files.items()
                for path, mark in sorted(file.key_marks.items(), key=lambda item: item[1])
            }
        )

    # -- failpoints -----------------------------------------------------------------------------------------
    def _failpoints(self, file: LoadedFile, ledger: CanonicalLedger) -> tuple[Failpoint, ...]:
        prefix_names = [prefix.name for prefix in ledger.prefixes]
        failpoints = []
        seen: dict[str, Mark] = {}
        previous = -1
        for index, item in enumerate(file.data["failpoints"]):
            path = ("failpoints", index)
            mark = file.mark(path)
            failpoint_id = item["id"]
            if failpoint_id in seen:
                self.error(file.mark(path + ("id",)), f"duplicate failpoint id '{failpoint_id}' (first defined at {seen[failpoint_id]})")
            elif int(failpoint_id[1:]) <= previous:
                self.error(file.mark(path + ("id",)), f"failpoint '{failpoint_id}' is out of order: ids increase down the table")
            seen.setdefault(failpoint_id, mark)
            previous = max(previous, int(failpoint_id[1:]))
            if item["committed_prefix"] not in prefix_names:
                self.error(file.mark(path + ("committed_prefix",)), f"unknown prefix '{item['committed_prefix']}'; the prefixes are [{', '.join(prefix_names)}]")
            failpoints.append(
                Failpoint(id=failpoint_id, boundary=item["boundary"], committed_prefix=item["committed_prefix"], note=item.get("note"), mark=mark)
            )
        return tuple(failpoints)

    def _sqlite_failpoints(self, file: LoadedFile, ledger: CanonicalLedger, failpoints: tuple[Failpoint, ...]) -> tuple[Failpoint, ...]:
        """The SQLite store's crash boundaries (`sqlite.boundaries`): ids unique among every hook, prefixes known."""
        prefix_names = [prefix.name for prefix in ledger.prefixes]
        taken = {failpoint.id: failpoint.mark for failpoint in failpoints}
        boundaries = []
        for index, item in enumerate((file.data.get("sqlite") or {}).get("boundaries", ())):
            path = ("sqlite", "boundaries", index)
            mark = file.mark(path)
            if item["id"] in taken:
                self.error(file.mark(path + ("id",)), f"duplicate failpoint id '{item['id']}' (first defined at {taken[item['id']]})")
            taken.setdefault(item["id"], mark)
            if item["committed_prefix"] not in prefix_names:
                self.error(file.mark(path + ("committed_prefix",)), f"unknown prefix '{item['committed_prefix']}'; the prefixes are [{', '.join(prefix_names)}]")
            boundaries.append(Failpoint(id=item["id"], boundary=item["boundary"], committed_prefix=item["committed_prefix"], note=item.get("note"), mark=mark))
        return tuple(boundaries)

    # -- invariants -----------------------------------------------------------------------------------------
    def _invariants(self, file: LoadedFile, projector: Projector) -> tuple[Invariant, ...]:
        anomalies = set(projector.anomalies)
        invariants = []
        for name, item in file.data["invariants"].items():
            exempt = tuple(item.get("exempt_diagnostics", ()))
            if exempt and name != "monotonic_evidence":
                self.error(file.mark(("invariants", name, "exempt_diagnostics")), "only monotonic_evidence takes exempt_diagnostics")
            for index, code in enumerate(exempt):
                if code not in anomalies:
                    self.error(file.mark(("invariants", name, "exempt_diagnostics", index)), f"'{code}' is not an anomaly; the anomalies are [{', '.join(sorted(anomalies))}]")
            invariants.append(Invariant(name=name, description=item["description"], exempt_diagnostics=exempt, mark=file.key_mark(("invariants", name))))
        return tuple(invariants)

    # -- defined but unused ---------------------------------------------------------------------------------
    def _unused(self, ledger: CanonicalLedger, projector: Projector, failpoints: tuple[Failpoint, ...], rules: LedgerRules) -> None:
        used_prefixes = {failpoint.committed_prefix for failpoint in failpoints}
        for prefix in ledger.prefixes:
            if prefix.name not in used_prefixes:
                self.error(prefix.mark, f"prefix '{prefix.name}' is defined but no failpoint commits it")
        used_codes = set(projector.anomalies) | {state.at_end for state in projector.states} | {rules.high_water_diagnostic}
        for diagnostic in projector.diagnostics:
            if diagnostic.code not in used_codes:
                self.error(diagnostic.mark, f"diagnostic '{diagnostic.code}' is defined but nothing raises it")
        used_reasons = {diagnostic.reason for diagnostic in projector.diagnostics}
        file = self.files["projector"]
        for name, _ in projector.reasons:
            if name not in used_reasons:
                self.error(file.key_mark(("reasons", name)), f"reason '{name}' is defined but no diagnostic rejects with it")


def _scope(file: LoadedFile) -> Scope:
    data = file.data
    return Scope(
        name=data["name"],
        phase=data["phase"],
        summary=data["summary"],
        pipeline=tuple(data["pipeline"]),
        harness_scope=data["harness_scope"],
        out_of_scope=tuple(data["out_of_scope"]),
    )
