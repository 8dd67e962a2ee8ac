"""The review held to an independent judge (issue 53): mutants of two contracts, each reviewed by `diff` and judged
apart from it.

    .venv/bin/python tools/review_judge.py                         # every mutant of both contracts
    .venv/bin/python tools/review_judge.py --contract other-runtime --ledgers 1000
    .venv/bin/python tools/review_judge.py --every 4 --json        # every fourth mutant (the slow test's sample)

The contracts: the packaged one (spec/, maka's catalogue; its Phase 0 plan) and examples/other-runtime (the
contract language). Their mutants, one edit each: each comparison constant moved both ways, each guard dropped and
negated, each transition retargeted, each reason renamed and the reasons reordered, each check removed. A language
mutant's scenarios are made to say what it decides (as the author of such a pull request does: `generate` refuses
them otherwise); a catalogue mutant is built without its decision table's own check (which would refuse most of
them). A mutant that still does not build is counted apart ("refused").

The judge decides a large seeded set of ledgers under base and head with the contract's own decision (what `plan`
runs: the projector table and `project`, or the generated language module), never with the review's explorer:
ledgers drawn from rows the runtimes really wrote (the reference's fixtures and the example's ledgers), their call
ids, tool names, flags and errors redrawn, ids renumbered by position; and the ledgers the review names as its
witnesses, decided again by the judge. Each ledger's move is classed by resume_contract/core/moves.py; the judge's
class is the most severe. The review must give exactly that class, and never less than weakens-safety to a mutant
that moves any ledger toward proceeding. Exit 1 when any mutant disagrees.
"""

from __future__ import annotations

import argparse
import copy
import glob
import json
import random
import re
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import yaml

from resume_contract.core.moves import CLASSES, CORRUPT, UNDECIDED, WEAKENS, Outcome, move, refusal, strongest

REPO = Path(__file__).resolve().parent.parent
OTHER_RUNTIME = REPO / "examples" / "other-runtime"
Data = dict[str, Any]


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str  # the spec file it edits (its name without .yaml)
    mutate: Callable[[Data], None]


# -- mutants --------------------------------------------------------------------------------------------------

_NUMBER = re.compile(r'(?<![\w."])(\d+)(?![\w."])')


def _constants(label: str, file: str, text: str, setter: Callable[[Data, str], None]) -> Iterator[Mutant]:
    """Each integer literal of an expression moved both ways."""
    for found in _NUMBER.finditer(text):
        for step in (-1, 1):
            moved = text[: found.start()] + str(int(found.group(1)) + step) + text[found.end():]
            yield Mutant(f"{label}: constant {found.group(1)} -> {int(found.group(1)) + step}", file, lambda d, m=moved: setter(d, m))


def _guard(label: str, file: str, text: str, setter: Callable[[Data, Any], None], droppable: bool = True) -> Iterator[Mutant]:
    if droppable:
        yield Mutant(f"{label}: guard dropped", file, lambda d: setter(d, None))
    yield Mutant(f"{label}: guard negated", file, lambda d: setter(d, f"!({text})"))
    yield from _constants(label, file, text, setter)


def catalogue_mutants(files: dict[str, Data]) -> list[Mutant]:
    projector = files["projector"]
    mutants: list[Mutant] = []
    for name, event in projector.get("events", {}).items():
        if isinstance(event.get("when"), str):
            mutants += _guard(f"event {name}", "projector", event["when"], lambda d, v, n=name: _set(d["events"][n], "when", v))
    for index, check in enumerate(projector.get("row_checks", [])):
        mutants += _guard(f"row check {index + 1} ({check.get('anomaly')})", "projector", check["when"], lambda d, v, i=index: _set(d["row_checks"][i], "when", v), droppable=False)
        mutants.append(Mutant(f"row check {index + 1} ({check.get('anomaly')}) removed", "projector", lambda d, i=index: d["row_checks"].pop(i)))
    for name, event in projector.get("events", {}).items():
        for index, check in enumerate((event.get("against_call") or {}).get("checks", [])):
            mutants.append(Mutant(f"event {name}: check {index + 1} ({check.get('raise')}) removed", "projector",
                                  lambda d, n=name, i=index: d["events"][n]["against_call"]["checks"].pop(i)))
            mutants += _guard(f"event {name}: check {index + 1}", "projector", check["when"],
                              lambda d, v, n=name, i=index: _set(d["events"][n]["against_call"]["checks"][i], "when", v), droppable=False)
    states = [state for state in projector["states"] if state != projector["initial"]]
    for index, rule in enumerate(projector["rules"]):
        if "to" in rule:
            target = states[(states.index(rule["to"]) + 1) % len(states)] if rule["to"] in states else states[0]
            mutants.append(Mutant(f"rule {index + 1} ({rule['on']} from {rule['from']}): to {rule['to']} -> {target}", "projector",
                                  lambda d, i=index, t=target: d["rules"][i].__setitem__("to", t)))
    mutants += _reason_mutants("projector", list(projector["reasons"]), "diagnostics")
    return mutants


def language_mutants(data: Data) -> list[Mutant]:
    mutants: list[Mutant] = []
    for name, item in data.get("items", {}).items():
        states = [state for state in item["states"] if state != item["initial"]]
        for index, entry in enumerate(item["on"]):
            label = f"item {name}: entry {index + 1} ({entry['class']} from {entry['from']})"
            if isinstance(entry.get("when"), str):
                mutants += _guard(label, "contract", entry["when"], lambda d, v, n=name, i=index: _set(d["items"][n]["on"][i], "when", v))
            if "to" in entry:
                target = states[(states.index(entry["to"]) + 1) % len(states)] if entry["to"] in states else states[0]
                mutants.append(Mutant(f"{label}: to {entry['to']} -> {target}", "contract", lambda d, n=name, i=index, t=target: d["items"][n]["on"][i].__setitem__("to", t)))
        for state, body in item["states"].items():
            if isinstance(body, dict) and body.get("at_end"):
                mutants.append(Mutant(f"item {name}: state {state}'s check at the end removed", "contract", lambda d, n=name, s=state: _drop_at_end(d, n, s)))
    for name, test in (data.get("classes") or {}).items():
        mutants += _guard(f"class {name}", "contract", test, lambda d, v, n=name: d["classes"].__setitem__(n, v if v is not None else "true"))
    for index, check in enumerate((data.get("decision") or {}).get("checks", [])):
        mutants.append(Mutant(f"decision check {index + 1} ({check['raise']}) removed", "contract", lambda d, i=index: d["decision"]["checks"].pop(i)))
        mutants += _guard(f"decision check {index + 1}", "contract", check["when"], lambda d, v, i=index: _set(d["decision"]["checks"][i], "when", v), droppable=False)
    mutants += _reason_mutants("contract", list(data["decision"]["reasons"]), "decision")
    return mutants


def _reason_mutants(file: str, reasons: list[str], where: str) -> list[Mutant]:
    mutants = [Mutant(f"reason {reason} renamed", file, lambda d, r=reason: _rename_reason(d, r, f"{r}_renamed", where)) for reason in reasons]
    if len(reasons) > 1:
        mutants.append(Mutant("reasons listed in reverse", file, lambda d: _reverse_reasons(d, where)))
    return mutants


def _set(holder: Data, key: str, value: Any) -> None:
    if value is None:
        holder.pop(key, None)
    else:
        holder[key] = value


def _rename_reason(data: Data, old: str, new: str, where: str) -> None:
    root = data["decision"] if where == "decision" else data
    root["reasons"] = {(new if key == old else key): value for key, value in root["reasons"].items()}
    for body in root["diagnostics"].values():
        if body.get("reason") == old:
            body["reason"] = new
    if where == "decision" and root.get("offset_mismatch") == old:
        pass  # (offset_mismatch names a diagnostic, not a reason)


def _reverse_reasons(data: Data, where: str) -> None:
    root = data["decision"] if where == "decision" else data
    root["reasons"] = dict(reversed(list(root["reasons"].items())))


def _drop_at_end(data: Data, item: str, state: str) -> None:
    """A state's check at the end removed; its diagnostic and reason with it where nothing else gives them."""
    code = data["items"][item]["states"][state].pop("at_end")
    raised = {body.get("at_end") for it in data["items"].values() for body in it["states"].values() if isinstance(body, dict)}
    raised |= {entry.get("anomaly") for it in data["items"].values() for entry in it["on"]}
    raised |= {check["raise"] for check in data["decision"].get("checks", [])} | {data["decision"].get("offset_mismatch")}
    if code not in raised:
        reason = data["decision"]["diagnostics"].pop(code)["reason"]
        if reason not in {body["reason"] for body in data["decision"]["diagnostics"].values()}:
            data["decision"]["reasons"].pop(reason)


# -- the two contracts: build a side, decide a ledger ---------------------------------------------------------

class Catalogue:
    """maka's catalogue contract (spec/), judged by its Phase 0 plan: the projector table and `project`."""

    name = "packaged"
    files = ("projector",)

    def __init__(self) -> None:
        from resume_contract_generator.spec.loader import load_spec_file

        self.data = {name: load_spec_file(REPO / "spec" / f"{name}.yaml", f"spec/{name}.yaml")[0].data for name in self.files}  # type: ignore[union-attr]

    def mutants(self) -> list[Mutant]:
        return catalogue_mutants(self.data)

    def build(self, scratch: Path, mutant: Mutant | None) -> Any:
        from resume_contract_generator.spec.build import SpecBuilder
        from resume_contract_generator.spec.files import read_spec_files
        from resume_contract_generator.spec.wire_spec import build_wire_format

        root = scratch / ("head" if mutant else "base")
        shutil.copytree(REPO / "spec", root / "spec")
        if mutant is not None:
            data = copy.deepcopy(self.data[mutant.file])
            mutant.mutate(data)
            (root / "spec" / f"{mutant.file}.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000), encoding="utf-8")
        files = read_spec_files(root)
        wire, errors = build_wire_format(files["runtime_event"])
        if errors:
            raise ValueError(errors[0])
        return SpecBuilder(files, wire).build(root)  # (without the decision table's own check: see the docstring)

    def review(self, base: Any, head: Any) -> Any:
        from resume_contract_generator.review.collector import review

        return review(base, head)

    def decider(self, spec: Any) -> Callable[[list[bytes]], Outcome]:
        from resume_contract_generator.spec.tables import decoder_of, table_of

        from resume_contract.core.project import project
        from resume_contract.errors import ExpressionFailed, RowRefused

        table, model = table_of(spec), decoder_of(spec)

        def decide(rows: list[bytes], expected: int | None = None) -> Outcome:
            try:
                events = [model.decode_row(row) for row in rows]
            except RowRefused as refused:
                return refusal(CORRUPT, refused.kind)
            try:
                plan = project(events, table, expected, rows=[msgspec.Raw(row) for row in rows])
            except ExpressionFailed as failed:
                return refusal(UNDECIDED, str(failed))
            return Outcome.of_plan(plan, table.verification_statuses)

        return decide

    def ledgers(self, count: int, seed: int) -> list[list[bytes]]:
        return [[json.dumps(row, separators=(",", ":")).encode() for row in ledger] for ledger in maka_ledgers(count, seed)]


class Language:
    """examples/other-runtime, judged by its generated module's decision (what `plan` runs)."""

    name = "other-runtime"

    def __init__(self) -> None:
        from resume_contract_generator.spec.loader import load_spec_file

        self.data = load_spec_file(OTHER_RUNTIME / "spec" / "contract.yaml", "spec/contract.yaml")[0].data  # type: ignore[union-attr]

    def mutants(self) -> list[Mutant]:
        return language_mutants(self.data)

    def build(self, scratch: Path, mutant: Mutant | None) -> Any:
        from resume_contract_generator.language import load_language

        root = scratch / ("head" if mutant else "base")
        shutil.copytree(OTHER_RUNTIME / "spec", root / "spec")
        if mutant is not None:
            data = copy.deepcopy(self.data)
            mutant.mutate(data)
            _say_what_it_decides(root, data)
        return load_language(root)

    def review(self, base: Any, head: Any) -> Any:
        from resume_contract_generator.language.review import review_language

        return review_language(base, head)

    def decider(self, spec: Any) -> Callable[[list[bytes]], Outcome]:
        from resume_contract_generator.language.review import _outcome
        from resume_contract_generator.language.run import contract_module

        module = contract_module(spec)
        return lambda rows, expected=None: _outcome(module, [json.loads(row) for row in rows], expected)

    def ledgers(self, count: int, seed: int) -> list[list[bytes]]:
        return [[json.dumps(row, separators=(",", ":")).encode() for row in ledger] for ledger in language_ledgers(count, seed)]


def _say_what_it_decides(root: Path, data: Data) -> None:
    """Write the mutant, its scenarios saying what it decides after each row (as its author makes them say)."""
    from resume_contract_generator.language.build import _model, _read
    from resume_contract_generator.language.expressions import compile_expressions
    from resume_contract_generator.language.run import contract_module, judge

    from resume_contract.core.language import outcome

    path = root / "spec" / "contract.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000), encoding="utf-8")
    file = _read(root)
    spec, errors = compile_expressions(file, _model(file, root))
    if errors:
        raise ValueError(errors[0])
    module = contract_module(spec)
    for scenario in data.get("scenarios", {}).values():
        rows: list[Data] = []
        for step in scenario["rows"]:
            rows.append(step["row"])
            judged = judge(module, [dict(row) for row in rows])
            if judged.decision is None:
                step["then"] = {"corrupt": True}
            else:
                said = outcome(judged.decision)
                step["then"] = {"decision": said["decision"], "reasons": said["reasons"]} | ({"items": said["items"]} if "items" in step["then"] else {})
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000), encoding="utf-8")


# -- the judge's ledgers: rows the runtimes really wrote, redrawn -------------------------------------------

IDENTITY = {"sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t"}


def maka_rows() -> list[Data]:
    """Every row of the reference's fixtures (its SQLite plans' rows, the conformance ledgers, the gallery's)."""
    rows: list[Data] = []
    for path in sorted(glob.glob(str(REPO / "tests" / "conformance_sqlite" / "reference" / "*" / "expected.json"))):
        expected = json.loads(Path(path).read_text(encoding="utf-8"))
        for run in [expected.get("reference", {}), *expected.get("runs", [])]:
            rows += (run.get("plan") or {}).get("runtimeEvents", [])
    for path in sorted(glob.glob(str(REPO / "tests" / "conformance" / "reference" / "**" / "*.jsonl"), recursive=True)):
        rows += [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    unique = {json.dumps(row, sort_keys=True): row for row in rows if isinstance(row, dict)}
    return [unique[key] for key in sorted(unique)]


def maka_ledgers(count: int, seed: int) -> list[list[Data]]:
    pool, draw = maka_rows(), random.Random(seed)
    ledgers = []
    for _ in range(count):
        rows = [copy.deepcopy(draw.choice(pool)) for _ in range(draw.randint(1, 5))]
        calls: dict[str, str] = {}
        for position, row in enumerate(rows, 1):
            row.update(IDENTITY, id=f"e{position}")
            _redraw_maka(row, draw, calls)
        ledgers.append(rows)
    return ledgers


def _redraw_maka(row: Data, draw: random.Random, calls: dict[str, str]) -> None:
    def call_id(old: Any) -> str:
        return calls.setdefault(str(old), draw.choice(["c1", "c2"]))

    content = row.get("content")
    if isinstance(content, dict) and content.get("kind") in ("function_call", "function_response"):
        content["id"] = call_id(content.get("id"))
        if draw.random() < 0.2:
            content["name"] = draw.choice(["Bash", "Write"])
        if content["kind"] == "function_response" and draw.random() < 0.2:
            content["isError"] = not content.get("isError", False)
    refs = row.get("refs")
    if isinstance(refs, dict) and "toolCallId" in refs:
        refs["toolCallId"] = call_id(refs["toolCallId"])
    dispatch = (row.get("actions") or {}).get("toolDispatch")
    if isinstance(dispatch, dict) and "providerToolCallId" in dispatch:
        dispatch["providerToolCallId"] = call_id(dispatch["providerToolCallId"])
    recovery = (row.get("actions") or {}).get("toolRecovery")
    if isinstance(recovery, dict) and isinstance(recovery.get("version"), int) and draw.random() < 0.2:
        recovery["version"] += draw.choice([-1, 1])
    if draw.random() < 0.1:
        row["partial"] = not row.get("partial", False)
    if draw.random() < 0.05:
        row["modelVisibility"] = "hidden"


def language_ledgers(count: int, seed: int) -> list[list[Data]]:
    pool = []
    for path in sorted((OTHER_RUNTIME / "ledgers").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                pool.append(json.loads(line))
            except ValueError:
                continue  # (a torn row of a corrupt example)
    pool = [row for row in pool if isinstance(row, dict)]
    draw = random.Random(seed)
    ledgers = []
    for _ in range(count):
        rows = [copy.deepcopy(draw.choice(pool)) for _ in range(draw.randint(1, 5))]
        for position, row in enumerate(rows, 1):
            row["event_id"], row["thread"] = f"e{position}", "t1"
            for key, values in (("action_id", ["a1", "a2"]), ("interrupt_id", ["i1", "i2"])):
                if key in row:
                    row[key] = draw.choice(values)
            if "error" in row and draw.random() < 0.3:
                row["error"] = None if row["error"] is not None else "boom"
        ledgers.append(rows)
    return ledgers


# -- judging -------------------------------------------------------------------------------------------------

@dataclass
class Verdict:
    contract: str
    mutant: str
    review: str  # the review's class ("refused": the mutant does not build)
    judge: str
    witness: str
    ledgers: int

    @property
    def agrees(self) -> bool:
        return self.review == "refused" or self.review == self.judge


def judge_mutant(contract: Any, base: Any, mutant: Mutant, ledgers: list[list[bytes]]) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="review-judge-") as scratch:
        try:
            head = contract.build(Path(scratch), mutant)
        except Exception as error:  # noqa: BLE001 - a mutant that does not build: counted apart
            return Verdict(contract.name, mutant.id, "refused", "refused", f"{type(error).__name__}: {str(error)[:120]}", 0)
    reviewed = contract.review(base, head)
    review_class = reviewed.verdict if reviewed.verdict in CLASSES else "neutral"
    witnesses = [(list(item.base_rows or item.rows), list(item.rows)) for item in reviewed.evidence]  # (decided again, by the judge)
    decide_base, decide_head = contract.decider(base), contract.decider(head)
    moves = []
    for before_rows, after_rows in [*((rows, rows) for rows in ledgers), *witnesses]:
        for expected in (None, len(after_rows) + 1):  # (and reopened where the caller expected one more row)
            found = move(decide_base(before_rows, expected), decide_head(after_rows, expected))
            moves.append((found, after_rows))
    judged = strongest(found.change_class for found, _ in moves)
    shown = next((f"{b'|'.join(rows).decode()[:160]} ({found.why})" for found, rows in moves if found.change_class == judged), "")
    return Verdict(contract.name, mutant.id, review_class, judged, shown, len(moves))


def run(contracts: list[Any], count: int, seed: int, every: int) -> list[Verdict]:
    verdicts = []
    for contract in contracts:
        with tempfile.TemporaryDirectory(prefix="review-judge-") as scratch:
            base = contract.build(Path(scratch), None)
        ledgers = contract.ledgers(count, seed)
        for index, mutant in enumerate(contract.mutants()):
            if index % every == 0:
                verdicts.append(judge_mutant(contract, base, mutant, ledgers))
                print(f"{verdicts[-1].contract}: {mutant.id}: review {verdicts[-1].review}, judge {verdicts[-1].judge}", file=sys.stderr, flush=True)
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contract", choices=["packaged", "other-runtime", "both"], default="both")
    parser.add_argument("--ledgers", type=int, default=3000, help="the judge's seeded ledgers per contract (default 3,000)")
    parser.add_argument("--seed", type=int, default=53)
    parser.add_argument("--every", type=int, default=1, help="judge every Nth mutant (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    contracts = [contract() for contract in (Catalogue, Language) if args.contract in ("both", contract.name)]
    verdicts = run(contracts, args.ledgers, args.seed, args.every)
    table = Counter((v.contract, v.review, v.judge) for v in verdicts)
    disagreements = [v for v in verdicts if not v.agrees]
    below = [v for v in verdicts if v.judge == WEAKENS and v.review not in (WEAKENS, "refused")]
    if args.json:
        print(json.dumps({"verdicts": [v.__dict__ for v in verdicts], "disagreements": len(disagreements), "weakenings_classed_below": len(below)}, indent=1))
    else:
        print(f"{'contract':<14} {'review':<15} {'judge':<15} mutants")
        for (name, review_class, judge_class), number in sorted(table.items()):
            print(f"{name:<14} {review_class:<15} {judge_class:<15} {number}")
        print(f"{len(verdicts)} mutants: {sum(v.review == 'refused' for v in verdicts)} refused (do not build), "
              f"{len(disagreements)} where the review's class is not the judge's, {len(below)} moving a ledger toward proceeding classed below weakens-safety")
        for verdict in disagreements:
            print(f"  {verdict.contract}: {verdict.mutant}: review {verdict.review}, judge {verdict.judge}: {verdict.witness}")
    return 1 if disagreements or below else 0


if __name__ == "__main__":
    raise SystemExit(main())
