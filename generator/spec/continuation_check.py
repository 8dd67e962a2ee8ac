"""spec/continuation.yaml, schema-valid -> `ContinuationSpec`, with every reference error at its file:line.

What is checked here: every path names something declared (an input and its field, a wire field, a ledger fact,
a Phase 0 field, an item or `missing` only where a test binds it); every diagnostic a check raises is declared
and every declared one is raised; every reason is one a diagnostic parks with, and the other way round; a
`raised` test names a reason an earlier check (or Phase 0) can raise; a named function exists
(`core.continuation_functions.FUNCTIONS`); a ledger fact reads fields the wire format has. The situations are
checked and run in `continuation_situations`.
"""

from __future__ import annotations

import re
import typing
from typing import Any

from resume_contract.core.continuation_functions import FUNCTIONS
from resume_contract.core.continuation_invariants import KNOWN as KNOWN_INVARIANTS
from resume_contract.core.continuation_table import ITEM_FIELDS, PHASE0_FIELDS, PLANNER_FACTS, TESTS
from resume_contract.core.plan import Disposition

from ..errors import Mark, SpecError
from .compiled import compiled
from .continuation_expressions import Scope, expression_parts
from .continuation_lineage import check_lineage
from .continuation_model import (
    CheckDecl,
    ContinuationDiagnostic,
    ContinuationSpec,
    FactDecl,
    InputDecl,
    Situation,
    canonical,
    test_paths,
)
from .continuation_planner_check import check_planner
from .continuation_situations import situation_events
from .continuation_vocabulary import check_vocabulary
from .loader import LoadedFile, SpecPath
from .model import Projector, WireFormat

_LIST_INPUTS = ("string_list",)
_PATH = re.compile(r"^(?:(?:input|source|fact|phase0|item|planner|header|candidate)(?:\.[A-Za-z][A-Za-z0-9_]*){1,3}|missing)\Z")


class ContinuationBuilder:
    """Builds the model from the schema-valid file; `errors` holds what it found on the way."""

    def __init__(self, file: LoadedFile, wire: WireFormat, projector: Projector) -> None:
        self.file = file
        self.wire = wire
        self.projector = projector
        self.errors: list[SpecError] = []
        self.warnings: list[SpecError] = []

    def scope(self) -> Scope:
        return Scope(tuple(self.inputs.values()), tuple(self.facts.values()), self.wire, self.semantics)

    def error(self, path: SpecPath, message: str, *, key: bool = False) -> None:
        self.errors.append(SpecError(self.file.key_mark(path) if key else self.file.mark(path), message))

    def warn(self, path: SpecPath, message: str) -> None:
        """Said by generate and check; never a reason to refuse the spec."""
        self.warnings.append(SpecError(self.file.key_mark(path), message))

    def build(self) -> ContinuationSpec:
        data = self.file.data
        inputs = tuple(self._input(("inputs", name), name, item) for name, item in data["inputs"].items())
        self.inputs = {decl.name: decl for decl in inputs}
        self.semantics = data.get("semantics", "strict")
        self.facts: dict[str, FactDecl] = {}
        for name, item in data["ledger_facts"].items():  # an expression fact reads the facts declared before it
            self.facts[name] = self._fact(name, item)
        facts = tuple(self.facts.values())
        diagnostics = tuple(
            ContinuationDiagnostic(code, item["reason"], item["message"], self.file.key_mark(("diagnostics", code)))
            for code, item in data["diagnostics"].items()
        )
        self.diagnostic_codes = {diagnostic.code: diagnostic for diagnostic in diagnostics}
        phase0 = data["phase0"]
        for index, path in enumerate(phase0["expected_high_water"]):
            if not path.startswith("input."):  # read before step 0: nothing else is known yet
                self.error(("phase0", "expected_high_water", index), f"'{path}': the expected high-water is an input (input.NAME)")
            self._path(("phase0", "expected_high_water", index), path, wanted="integer")
        if phase0["proceeds_on"] not in (allowed := typing.get_args(Disposition)):
            self.error(("phase0", "proceeds_on"), f"unknown Phase 0 disposition {phase0['proceeds_on']!r}; the dispositions are [{', '.join(allowed)}]")
        if (dispositions := data["dispositions"])["proceed"] == dispositions["stop"]:
            self.error(("dispositions",), "`proceed` and `stop` must be two dispositions")
        after = phase0.get("after")
        names = [item["name"] for item in data["checks"]]
        if after is not None and after not in names:
            self.error(("phase0", "after"), f"'{after}' names no check; Phase 0's reasons stand after one of [{', '.join(names)}]")
        checks, planner = self._checks(data["checks"], phase0_after=after if after in names else None), data.get("planner")
        self.planner_diagnostics: list[str] = []  # raised by the planner outside its gates (`candidate.none`)
        self.input_expressions: list[tuple[str, str, str]] = []  # the planner's inputs filled by an expression
        self.gates = self._checks(planner["gates"], ("planner", "gates"), gates=True) if planner is not None else ()
        planner_situations = check_planner(self, planner) if planner is not None else ()
        lineage = check_lineage(self, planner) if planner is not None else None
        raised = {check.diagnostic for check in checks + self.gates} | set(self.planner_diagnostics) | set(lineage.raised if lineage else ())
        check_vocabulary(self, data["reasons"], diagnostics, raised, {name for name, _ in self.projector.reasons})
        self._payload(("continuation",), data["continuation"])
        return ContinuationSpec(
            summary=data["summary"],
            proceed=dispositions["proceed"],
            stop=dispositions["stop"],
            inputs=inputs,
            ledger_facts=facts,
            expected_high_water=tuple(phase0["expected_high_water"]),
            proceeds_on=phase0["proceeds_on"],
            checks=checks,
            diagnostics=diagnostics,
            reasons=tuple(data["reasons"].items()),
            payload_json=canonical(data["continuation"]),
            situations=self._situations(data["situations"]),
            gates=self.gates,
            planner_json=canonical({key: planner[key] for key in ("host", "inputs", "existing_continuation", "candidate") if key in planner}) if planner else None,
            planner_situations=planner_situations,
            base_event_json=canonical(data["situations"]["base"]["event"]),
            invariants=self._invariants(data.get("invariants", {})),
            semantics=data.get("semantics", "strict"),
            phase0_after=after,
            warnings=tuple(self.warnings),
            lineage=lineage,
            input_expressions=tuple(self.input_expressions),
        )

    # -- inputs and ledger facts -----------------------------------------------------------------------------
    def _input(self, path: SpecPath, name: str, item: dict[str, Any]) -> InputDecl:
        fields: tuple[InputDecl, ...] = ()
        if item["type"] == "object":
            if "fields" not in item:
                self.error(path, f"input '{name}' is an object: declare its `fields`")
            fields = tuple(self._input(path + ("fields", field), field, sub) for field, sub in item.get("fields", {}).items())
        elif "fields" in item:
            self.error(path + ("fields",), f"only an object input has `fields`; '{name}' is a {item['type']}", key=True)
        return InputDecl(name, item["type"], item.get("optional", False), item["description"], fields, self.file.key_mark(path))

    def _fact(self, name: str, item: dict[str, Any]) -> FactDecl:
        path: SpecPath = ("ledger_facts", name)
        kind = next(key for key in item if key != "description")
        definition = item[kind]
        if kind == "lifecycle":
            for where_path, where in [(("opened_by",), definition["opened_by"])] + [
                (("closed_by", index), closer) for index, closer in enumerate(definition["closed_by"])
            ]:
                self._object_field(path + (kind,) + where_path + ("field",), where["field"])
        elif kind == "first_differing":
            for index, field in enumerate(definition):
                self._wire_field(path + (kind, index), field)
        elif kind == "last_replayed_where":
            for index, condition in enumerate(definition):
                self._content_condition(path + (kind, index), condition)
        elif kind == "expression":
            expression = compiled(self.file, path + (kind,), self.scope().environment(fact=True), self.errors)
            return FactDecl(name, kind, canonical(definition), item["description"], self.file.key_mark(path), expression)
        return FactDecl(name, kind, canonical(definition), item["description"], self.file.key_mark(path))

    def _wire_field(self, path: SpecPath, name: str) -> bool:
        names = [field.name for field in self.wire.fields]
        if name not in names:
            self.error(path, f"unknown RuntimeEvent field '{name}'; the fields are [{', '.join(names)}]")
            return False
        return True

    def _object_field(self, path: SpecPath, name: str) -> None:
        if self._wire_field(path, name) and self.wire.field(name).type != "object":
            self.error(path, f"'{name}' is not an object field of the RuntimeEvent (it is {self.wire.field(name).type})")

    def _content_condition(self, path: SpecPath, condition: dict[str, str]) -> None:
        kinds = [kind.name for kind in self.wire.content_kinds]
        if condition["kind"] not in kinds:
            self.error(path + ("kind",), f"unknown content kind '{condition['kind']}'; the kinds are [{', '.join(kinds)}]")
            return
        fields = [field.name for field in self.wire.kind(condition["kind"]).fields]
        if "nonempty" in condition and condition["nonempty"] not in fields:
            self.error(path + ("nonempty",), f"content kind '{condition['kind']}' has no field '{condition['nonempty']}'; its fields are [{', '.join(fields)}]")

    # -- paths -----------------------------------------------------------------------------------------------
    def _path(self, path: SpecPath, value: str, *, wanted: str | None = None, binds: frozenset[str] = frozenset()) -> None:
        """Refuse a path that names nothing declared; `binds` are what the check's tests bind (item, missing)."""
        head, _, rest = value.partition(".")
        steps = rest.split(".") if rest else []
        if head in ("planner", "header", "candidate"):
            self._planner_path(path, value, head, steps, binds)
        elif head in ("item", "missing"):
            if head not in binds:
                test = "each_open" if head == "item" else "missing_from"
                self.error(path, f"'{value}' is bound only in a check with an `{test}` test")
            elif head == "item" and (len(steps) != 1 or steps[0] not in ITEM_FIELDS):
                self.error(path, f"unknown item field in '{value}'; an item has [{', '.join(ITEM_FIELDS)}]")
        elif head == "input":
            self._input_path(path, value, steps, wanted)
        elif head == "source":
            if len(steps) != 1:
                self.error(path, f"'{value}': a source path names one RuntimeEvent field")
            else:
                self._wire_field(path, steps[0])
        elif head in ("fact", "phase0") and "planner" in binds:
            self.error(path, f"'{value}': a gate runs before step 0, so it reads only planner, source and input paths")
        elif head == "fact":
            self._fact_path(path, value, steps)
        elif head == "phase0" and (len(steps) != 1 or steps[0] not in PHASE0_FIELDS):
            self.error(path, f"unknown Phase 0 field in '{value}'; the fields are [{', '.join(PHASE0_FIELDS)}]")

    def _planner_path(self, path: SpecPath, value: str, head: str, steps: list[str], binds: frozenset[str]) -> None:
        if head not in binds:
            where = {"planner": "a planner gate", "header": "the planner's inputs", "candidate": "the planner's `candidate` tests"}[head]
            self.error(path, f"'{value}' is read only in {where}")
        elif head == "planner" and (not steps or steps[0] not in PLANNER_FACTS):
            self.error(path, f"unknown planner fact in '{value}'; the planner facts are [{', '.join(PLANNER_FACTS)}]")
        elif head in ("header", "candidate") and len(steps) != 1:
            self.error(path, f"'{value}': a {head} path names one field of run.json")

    def _input_path(self, path: SpecPath, value: str, steps: list[str], wanted: str | None) -> None:
        declared: dict[str, InputDecl] = self.inputs
        decl: InputDecl | None = None
        for step in steps:
            decl = declared.get(step)
            if decl is None:
                where = "input" if declared is self.inputs else "field"
                self.error(path, f"'{value}' names an undeclared {where} '{step}'; declared are [{', '.join(declared)}]")
                return
            declared = {field.name: field for field in decl.fields}
        if wanted is not None and decl is not None and decl.type != wanted:
            self.error(path, f"'{value}' is a {decl.type}, not a {wanted}")

    def _fact_path(self, path: SpecPath, value: str, steps: list[str]) -> None:
        fact = self.facts.get(steps[0]) if steps else None
        if fact is None:
            self.error(path, f"'{value}' names an undeclared ledger fact; declared are [{', '.join(self.facts)}]")
        elif len(steps) > 1:
            if fact.kind not in ("first_differing", "last_replayed_where") or len(steps) != 2:
                self.error(path, f"'{value}': ledger fact '{fact.name}' ({fact.kind}) has no fields")
            else:
                self._wire_field(path, steps[1])

    # -- checks ----------------------------------------------------------------------------------------------
    def _checks(
        self, items: list[dict[str, Any]], where: SpecPath = ("checks",), gates: bool = False, phase0_after: str | None = None
    ) -> tuple[CheckDecl, ...]:
        """Checks (or, with `gates`, the planner's gates: they may read `planner.NAME`). Phase 0's reasons can be
        `raised` from the first check on, or, with `phase0_after`, from the check after that one."""
        checks: list[CheckDecl] = []
        seen: set[str] = set()
        phase0_reasons = {name for name, _ in self.projector.reasons}
        raisable = set() if phase0_after is not None else set(phase0_reasons)
        for index, item in enumerate(items):
            path: SpecPath = where + (index,)
            if item["name"] in seen:
                self.error(path + ("name",), f"duplicate check name '{item['name']}'")
            seen.add(item["name"])
            tests = item["when"] if isinstance(item.get("when"), list) else []
            binds = frozenset(
                {"item" for test in tests if "each_open" in test}
                | {"missing" for test in tests if "missing_from" in test}
                | ({"planner"} if gates else set())
            )
            parts = expression_parts(self.file, path, item, gates, self.scope(), self.errors)
            for group in ("when", "skip_if") if parts is None else ():
                if isinstance(item.get(group), str):
                    self.error(path + (group,), f"a check whose `when` is a list of tests has its `{group}` as a list of tests too")
                for number, test in enumerate(item.get(group, ()) if isinstance(item.get(group, ()), list) else ()):
                    self._test(path + (group, number), test, binds if group == "when" else frozenset(), raisable)
            diagnostic = self.diagnostic_codes.get(item["diagnostic"])
            if diagnostic is None:
                self.error(path + ("diagnostic",), f"undeclared diagnostic '{item['diagnostic']}'; declared are [{', '.join(self.diagnostic_codes)}]")
            elif diagnostic.reason is not None:
                raisable.add(diagnostic.reason)
            for place, value in ([(("event_id",), item["event_id"])] if "event_id" in item else []) + [(("detail", k), v) for k, v in item.get("detail", {}).items()]:
                if parts is None and not _PATH.match(value):
                    self.error(path + place, f"'{value}' is no path: a check written with a list of tests names values by path (input.NAME, fact.NAME.FIELD, item.key, ...)")
                elif parts is None:
                    self._path(path + place, value, binds=binds)
            if item["name"] == phase0_after:
                raisable |= phase0_reasons
            checks.append(
                CheckDecl(
                    name=item["name"],
                    when_json=canonical(item.get("when", [])),
                    skip_if_json=canonical(item.get("skip_if", [])),
                    stops=item.get("stops", False),
                    diagnostic=item["diagnostic"],
                    event_id=item.get("event_id"),
                    detail_json=canonical(item["detail"]) if "detail" in item else None,
                    mark=self.file.mark(path),
                    **(parts or {}),
                )
            )
        return tuple(checks)

    def _test(self, path: SpecPath, test: dict[str, Any], binds: frozenset[str], raisable: set[str]) -> None:
        names = [key for key in test if key != "normalise"]
        if len(names) != 1:
            self.error(path, f"a test is one of [{', '.join(TESTS)}] (with `normalise` beside `differ`), got [{', '.join(test)}]")
            return
        (name,) = names
        argument = test[name]
        if "normalise" in test:
            if name != "differ":
                self.error(path + ("normalise",), "`normalise` applies only to a `differ` test", key=True)
            elif test["normalise"] not in FUNCTIONS:
                self.error(path + ("normalise",), f"unknown function '{test['normalise']}'; the functions are [{', '.join(FUNCTIONS)}]")
        if name == "raised" and argument not in raisable:
            self.error(path + (name,), f"reason '{argument}' is raised by no earlier check nor by Phase 0; it can be [{', '.join(sorted(raisable))}]")
        if name == "each_open":
            fact = self.facts.get(argument.removeprefix("fact."))
            if not argument.startswith("fact.") or fact is None or fact.kind != "lifecycle":
                self.error(path + (name,), f"`each_open` takes a lifecycle fact (fact.NAME), got '{argument}'")
                return
        for steps, value in test_paths(name, argument):
            self._path(path + (name, *steps), value, wanted="boolean" if name == "is_false" else None, binds=binds)

    # -- reasons, payload, situations --------------------------------------------------------------------------
    def _invariants(self, declared: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        for name in sorted(set(declared) - set(KNOWN_INVARIANTS)):
            self.error(("invariants", name), f"unknown invariant '{name}'; the invariants are [{', '.join(KNOWN_INVARIANTS)}]", key=True)
        return tuple((name, item["description"]) for name, item in declared.items())

    def _payload(self, path: SpecPath, payload: dict[str, Any]) -> None:
        for name, value in payload.items():
            if isinstance(value, str):
                self._path(path + (name,), value)
            elif "sorted_distinct" in value:
                self._path(path + (name, "sorted_distinct"), value["sorted_distinct"])
            else:
                if "if_present" in value:
                    self._path(path + (name, "if_present"), value["if_present"])
                self._payload(path + (name, "fields"), value["fields"])

    def _situations(self, data: dict[str, Any]) -> tuple[Situation, ...]:
        situations = []
        base = data["base"]
        for name, item in data["cases"].items():
            path: SpecPath = ("situations", "cases", name)
            events, problems = situation_events(base["event"], item["events"], self.wire)
            for index, problem in problems:
                self.error(path + ("events", index), f"situation '{name}': {problem}")
            facts = {**base["facts"], **item.get("facts", {})}
            situations.append(
                Situation(
                    name=name,
                    summary=item["summary"],
                    events_json=tuple(events),
                    facts_json=canonical(facts),
                    expect_json=canonical(item["expect"]),
                    mark=self.file.key_mark(path + ("facts",)),  # where facts are refused: its facts, if it has any
                    expect_mark=self.file.key_mark(path + ("expect",)),
                )
            )
        return tuple(situations)


def build_continuation(file: LoadedFile, wire: WireFormat, projector: Projector) -> tuple[ContinuationSpec, list[SpecError]]:
    """The continuation decision of a schema-valid spec/continuation.yaml, and every reference error in it."""
    builder = ContinuationBuilder(file, wire, projector)
    spec = builder.build()
    return spec, builder.errors


__all__ = ["Mark", "build_continuation"]
