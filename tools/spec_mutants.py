"""Spec mutation testing: apply each single mutation to spec/, regenerate, run the suite, report survivors.

    .venv/bin/python tools/spec_mutants.py                 # every mutant, all cores
    .venv/bin/python tools/spec_mutants.py --only rule      # the mutants whose id contains "rule"
    .venv/bin/python tools/spec_mutants.py --list           # just list them

Each mutant runs in a throw-away copy of the working tree (files git tracks or does not ignore), whose packages are put
first on PYTHONPATH so the copy's regenerated code is what the tests import. A mutant is killed by the
generator (`generate` exits 2: the spec's own checks refuse it) or by the behaviour tests (`pytest -x` over
BEHAVIOUR_TESTS fails), or it survives. Survivors are listed with the reason they are equivalent, when one is known (EXPLAINED),
and the script exits 1 if any survivor is unexplained.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent

from resume_contract_generator.spec.loader import load_spec_file

SpecData = dict[str, object]

# The tests that judge behaviour against the spec. Left out: tests that pin the committed spec's text or line
# numbers (the bad-spec and review corpora, golden and drift checks, CONTRACT.md wording), which would
# "kill" every mutant for the wrong reason.
BEHAVIOUR_TESTS = [
    "generated/tests",
    "tests/test_anomaly_codes.py",
    "tests/test_plan.py",
    "tests/test_cli_plan.py",
    "tests/test_store.py",
    "tests/test_projector_machine.py",
    "tests/test_runloop.py",
    "tests/test_properties.py",
    "tests/test_verify.py",
]

# Mutants that change nothing a ledger, a plan or a test can observe, with the reason.
EXPLAINED = {
    "invariants: drop deterministic_and_pure": "removes a proof obligation, not behaviour; `resume-contract diff` reports INVARIANT_REMOVED (weakens-safety)",
    "invariants: drop fail_closed": "removes a proof obligation, not behaviour; `resume-contract diff` reports INVARIANT_REMOVED (weakens-safety)",
    "invariants: drop replay_well_formed": "removes a proof obligation, not behaviour; `resume-contract diff` reports INVARIANT_REMOVED (weakens-safety)",
    "invariants: drop high_water_counts_committed_rows": "removes a proof obligation, not behaviour; `resume-contract diff` reports INVARIANT_REMOVED (weakens-safety)",
    "invariants: drop table_matches_machine": "removes a proof obligation, not behaviour; `resume-contract diff` reports INVARIANT_REMOVED (weakens-safety)",
    "invariants: drop matches_oracle": "removes a proof obligation, not behaviour; `resume-contract diff` reports INVARIANT_REMOVED (weakens-safety)",
    "invariants: drop monotonic_evidence": "removes a proof obligation, not behaviour; `resume-contract diff` reports INVARIANT_REMOVED (weakens-safety)",
}


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str
    mutate: Callable[[SpecData], None]


def _mutants(spec: dict[str, SpecData]) -> Iterator[Mutant]:
    yield from _failpoint_mutants(spec)
    yield from _decision_mutants(spec)
    yield from _rule_mutants(spec["projector"])
    yield from _state_and_diagnostic_mutants(spec["projector"])
    yield from _ledger_mutants(spec)
    for name in spec["invariants"]["invariants"]:
        yield Mutant(f"invariants: drop {name}", "invariants", lambda d, n=name: d["invariants"].pop(n))


# A status and the other status it is mutated to.
_OTHER_STATUS = {"indeterminate": "succeeded", "succeeded": "failed", "failed": "indeterminate"}


def _failpoint_mutants(spec: dict[str, SpecData]) -> Iterator[Mutant]:
    prefixes = list(spec["ledger"]["prefixes"])
    for index, failpoint in enumerate(spec["failpoints"]["failpoints"]):
        position = prefixes.index(failpoint["committed_prefix"])
        for other in {max(position - 1, 0), min(position + 1, len(prefixes) - 1)} - {position}:
            yield Mutant(f"failpoints: {failpoint['id']} commits {prefixes[other]}", "failpoints",
                         lambda d, i=index, p=prefixes[other]: d["failpoints"][i].__setitem__("committed_prefix", p))


def _decision_mutants(spec: dict[str, SpecData]) -> Iterator[Mutant]:
    for name, decision in spec["decisions"]["prefixes"].items():
        yield from _one_decision_mutants(name, decision)
    yield Mutant("decisions: high-water mismatch raises tool_name_mismatch", "decisions",
                 lambda d: d["ledger_rules"]["high_water_mismatch"].__setitem__("diagnostic", "tool_name_mismatch"))


def _one_decision_mutants(name: str, decision: SpecData) -> Iterator[Mutant]:
    flipped = "safe_replay" if decision["disposition"] == "blocked" else "blocked"
    yield Mutant(f"decisions: {name} disposition {flipped}", "decisions", lambda d, n=name, f=flipped: d["prefixes"][n].__setitem__("disposition", f))
    for reason in decision["rejection_reasons"]:
        yield Mutant(f"decisions: {name} drops reason {reason}", "decisions", lambda d, n=name, r=reason: d["prefixes"][n]["rejection_reasons"].remove(r))
    for code in decision["diagnostics"]:
        yield Mutant(f"decisions: {name} drops diagnostic {code}", "decisions", lambda d, n=name, c=code: d["prefixes"][n]["diagnostics"].remove(c))
    yield Mutant(f"decisions: {name} toggles terminal_fact", "decisions", lambda d, n=name: d["prefixes"][n].__setitem__("terminal_fact", not d["prefixes"][n]["terminal_fact"]))
    if decision["replay"]:
        yield Mutant(f"decisions: {name} replay drops {decision['replay'][-1]}", "decisions", lambda d, n=name: d["prefixes"][n]["replay"].pop())
    for outcome, statuses in decision["operation_statuses"].items():
        for position, status in enumerate(statuses):
            other = _OTHER_STATUS[status]
            yield Mutant(f"decisions: {name} ({outcome}) operation {status} -> {other}", "decisions",
                         lambda d, n=name, o=outcome, p=position, s=other: d["prefixes"][n]["operation_statuses"][o].__setitem__(p, s))


def _rule_mutants(projector: SpecData) -> Iterator[Mutant]:
    states = list(projector["states"])
    anomalies = sorted({rule["anomaly"] for rule in projector["rules"] if "anomaly" in rule})
    for index, rule in enumerate(projector["rules"]):
        label = f"{rule['from']} on {rule['on']}" + (f" when {rule['when']}" if "when" in rule else "")
        if "to" in rule:
            for target in states:
                if target not in (rule["to"], projector["initial"]):
                    yield Mutant(f"projector: {label} retargeted to {target}", "projector", lambda d, i=index, t=target: d["rules"][i].__setitem__("to", t))
            yield Mutant(f"projector: {label} becomes anomaly {anomalies[0]}", "projector",
                         lambda d, i=index: d["rules"].__setitem__(i, {k: v for k, v in d["rules"][i].items() if k != "to"} | {"anomaly": anomalies[0]}))
        else:
            yield Mutant(f"projector: {label} drops its anomaly (stays)", "projector",
                         lambda d, i=index: d["rules"].__setitem__(i, {k: v for k, v in d["rules"][i].items() if k != "anomaly"} | {"to": d["rules"][i]["from"]}))
            other = anomalies[(anomalies.index(rule["anomaly"]) + 1) % len(anomalies)]
            yield Mutant(f"projector: {label} raises {other}", "projector", lambda d, i=index, o=other: d["rules"][i].__setitem__("anomaly", o))


def _state_and_diagnostic_mutants(projector: SpecData) -> Iterator[Mutant]:
    for name, state in projector["states"].items():
        yield Mutant(f"projector: {name} toggles requires_verification", "projector",
                     lambda d, n=name: d["states"][n].__setitem__("requires_verification", not d["states"][n].get("requires_verification", False)))
        yield Mutant(f"projector: {name} toggles final", "projector", lambda d, n=name: d["states"][n].__setitem__("final", not d["states"][n].get("final", False)))
        if "at_end" in state:
            yield Mutant(f"projector: {name} drops at_end", "projector", lambda d, n=name: d["states"][n].pop("at_end"))
        if "status" in state:
            other = _OTHER_STATUS[state["status"]]
            yield Mutant(f"projector: {name} reports {other}", "projector", lambda d, n=name, s=other: d["states"][n].__setitem__("status", s))
    reasons = list(projector["reasons"])
    for code, diagnostic in projector["diagnostics"].items():
        other = reasons[(reasons.index(diagnostic["reason"]) + 1) % len(reasons)]
        yield Mutant(f"projector: {code} rejects with {other}", "projector", lambda d, c=code, r=other: d["diagnostics"][c].__setitem__("reason", r))
    yield Mutant("projector: events after the terminal raise duplicate_tool_call", "projector",
                 lambda d: d["ledger_anomalies"].__setitem__("after_terminal", "duplicate_tool_call"))
    yield Mutant("projector: reasons listed in reverse", "projector", lambda d: d.__setitem__("reasons", dict(reversed(list(d["reasons"].items())))))


def _ledger_mutants(spec: dict[str, SpecData]) -> Iterator[Mutant]:
    yield Mutant("ledger: the error response loses isError", "ledger", lambda d: next(e for e in d["events"] if "by_outcome" in e)["by_outcome"]["error"]["content"].pop("isError"))
    for name in spec["ledger"]["prefixes"]:
        yield Mutant(f"ledger: {name} ends one event earlier", "ledger", lambda d, n=name: _shift(d, n))


def _shift(data: SpecData, prefix: str) -> None:
    names = [event["name"] for event in data["events"]]
    through = data["prefixes"][prefix]["through"]
    index = names.index(through) if through else 0
    data["prefixes"][prefix]["through"] = names[index - 1] if index > 0 else None


def copy_repository(target: Path) -> None:
    """The working tree's files (tracked or not ignored) into `target`, with `_import_shim/` linking the packages
    under their import names (tools/edit_drill.py uses it too)."""
    files = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        if not (REPO / name).exists():
            continue  # deleted in the working tree, not yet committed
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, destination)
    shim = target / "_import_shim"
    shim.mkdir()
    (shim / "resume_contract").symlink_to(target / "resume_contract")
    (shim / "resume_contract_generator").symlink_to(target / "generator")
    (shim / "resume_contract_generated").symlink_to(target / "generated" / "resume_contract_generated")


def run_mutant(mutant: Mutant, spec: dict[str, SpecData]) -> tuple[str, str]:
    """('generator' | 'tests' | 'survived', detail)."""
    with tempfile.TemporaryDirectory(prefix="spec-mutant-") as scratch:
        root = Path(scratch)
        copy_repository(root)
        data = copy.deepcopy(spec[mutant.file])
        mutant.mutate(data)
        (root / "spec" / f"{mutant.file}.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
        environment = {**os.environ, "PYTHONPATH": str(root / "_import_shim"), "PYTHONDONTWRITEBYTECODE": "1"}
        generate = subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(root), "generate"], capture_output=True, text=True, env=environment)
        if generate.returncode == 2:
            return "generator", generate.stderr.splitlines()[0]
        if generate.returncode != 0:
            return "error", generate.stderr.strip()[-300:]
        tests = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *BEHAVIOUR_TESTS],
            cwd=root, capture_output=True, text=True, env=environment,
        )
        if tests.returncode != 0:
            failed = next((line for line in tests.stdout.splitlines() if line.startswith("FAILED")), tests.stdout.strip().splitlines()[-1])
            return "tests", failed
        return "survived", ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="run only the mutants whose id contains this text")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    spec = {}
    for name in ("failpoints", "ledger", "decisions", "projector", "invariants"):
        loaded, errors = load_spec_file(REPO / "spec" / f"{name}.yaml", f"spec/{name}.yaml")
        assert loaded is not None and not errors, errors
        spec[name] = loaded.data
    mutants = [m for m in _mutants(spec) if args.only is None or args.only in m.id]
    if args.list:
        for mutant in mutants:
            print(mutant.id)
        return 0
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(lambda m: run_mutant(m, spec), mutants))
    counts: dict[str, int] = {}
    unexplained = 0
    for mutant, (verdict, detail) in zip(mutants, outcomes):
        if verdict == "survived" and mutant.id in EXPLAINED:
            verdict, detail = "explained", EXPLAINED[mutant.id]
        counts[verdict] = counts.get(verdict, 0) + 1
        unexplained += verdict in ("survived", "error")
        print(f"{verdict:<10} {mutant.id}: {detail}")
    killed = counts.get("generator", 0) + counts.get("tests", 0)
    print(
        f"\n{len(mutants)} mutants in {time.perf_counter() - started:.0f} s: {counts.get('generator', 0)} killed by the generator, "
        f"{counts.get('tests', 0)} by the tests, {counts.get('explained', 0)} explained, {counts.get('survived', 0)} survived, "
        f"{counts.get('error', 0)} errors; score {100 * (killed + counts.get('explained', 0)) / max(len(mutants), 1):.1f}% killed or explained"
    )
    return 1 if unexplained else 0


if __name__ == "__main__":
    raise SystemExit(main())
