"""Hold another implementation to the contract: run it on every conformance vector and compare what it decides.

The implementation is a command: it gets a ledger path (and `--expected-high-water N` when the vector sets
one), prints its ResumePlan as JSON (the reference's camelCase keys) and exits 0 (safe_replay) or 1 (blocked),
or exits 3 for a corrupt ledger. Held to the continuation decision (`decision="continuation"`), it gets a ledger
and `--facts FACTS.json`, prints the continuation decision and exits 0 (continue) or 1 (park), or 3 (`adapter` runs it: in a session of its own, with its output bounded, killed
with its group at the timeout or on Ctrl-C). Only the fields the contract pins are compared (`protocol`). With `strictness="reference"`, the documented differences of a Phase 0 reference are accepted:
the spec's `reference_differences` (anomalies it need not check, corruption it may read past).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.summary import PlanSummary, loosening
from ..errors import VectorsUnreadable
from ..output.junit import JUnitCase, junit_xml
from ..system.interrupts import map_in_threads
from .adapter import STDOUT_LIMIT, Adapters
from .protocol import (
    CONTINUATION_PINNED,
    CONTINUATION_REQUIRED,
    CORRUPT_EXIT,
    MANIFEST,
    NOT_IN_A_PHASE_0_REFERENCE,
    OPTIONAL,
    PINNED,
    REQUIRED,
    continuation_reported,
    exit_code,
    reported,
)

# Which decision an implementation is held to: Phase 0's replay plan, Phase 1's continuation decision over a
# ledger and facts, or the same decision in the planner form (a workspace run and HOST.json).
REPLAY, CONTINUATION, CONTINUATION_PLANNER = "replay", "continuation", "continuation-planner"
DECISIONS = (REPLAY, CONTINUATION, CONTINUATION_PLANNER)

AGREES, DISAGREES, CRASHED, TIMED_OUT = "agrees", "disagrees", "crashed", "timed out"
VERDICTS = (AGREES, DISAGREES, CRASHED, TIMED_OUT)


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    description: str
    ledger: Path
    expected_high_water: int | None
    expect: dict[str, Any]
    facts: Path | None = None  # a continuation case's facts file
    arguments: tuple[str, ...] = ()  # a planner-form case's arguments (instead of a ledger)


@dataclass
class Result:
    case: Case
    verdict: str
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    unchecked: list[str] = field(default_factory=list)
    # How the implementation is more permissive than the contract (it replays where the contract blocks, reads a
    # ledger the contract refuses, keeps less evidence), or None: a disagreement that is only stricter.
    unsafe: str | None = None


@dataclass(frozen=True)
class Vectors:
    directory: Path
    spec_sha256: str
    reference_anomalies: frozenset[str]
    reference_corruption: frozenset[str]
    cases: tuple[Case, ...]
    decision: str = REPLAY
    dispositions: tuple[str, str] = ("safe_replay", "blocked")  # (exit 0's, exit 1's)


def load_vectors(directory: Path, decision: str = REPLAY) -> Vectors:
    """The cases of one decision in a vectors directory (`resume-contract vectors --out DIR`): Phase 0's replay
    decision, or the continuation decision (VectorsUnreadable when the contract that made them has none)."""
    directory = Path(directory)
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        differences = manifest["referenceDifferences"]
        if decision == REPLAY:
            cases = tuple(
                Case(item["id"], item["kind"], item["description"], _inside(directory, item["ledger"]), item["expectedHighWater"], item["expect"])
                for item in manifest["cases"]
            )
            dispositions = ("safe_replay", "blocked")
        else:
            section = manifest.get("continuation")
            if section is None:
                raise VectorsUnreadable(f"{directory}: the vectors hold no continuation cases (their contract has no spec/continuation.yaml)")
            if decision == CONTINUATION:
                cases = tuple(
                    Case(item["id"], item["kind"], item["description"], _inside(directory, item["ledger"]), None, item["expect"], _inside(directory, item["facts"]))
                    for item in section["cases"]
                )
            elif "plannerCases" not in section:
                raise VectorsUnreadable(f"{directory}: the vectors hold no planner-form cases (their contract's continuation decision has no `planner`)")
            else:
                cases = tuple(_planner_case(directory, item) for item in section["plannerCases"])
            dispositions = (section["dispositions"]["proceed"], section["dispositions"]["stop"])
        if not cases:  # "0 vectors: 0 agree" would pass a CI job that checked nothing
            raise VectorsUnreadable(f"{directory}: the vectors hold no {decision} cases; nothing would be checked")
        return Vectors(
            directory, manifest["specSha256"], frozenset(differences["anomalies"]), frozenset(differences["corruptionKinds"]), cases,
            decision, dispositions,
        )
    except KeyError as error:
        raise VectorsUnreadable(f"{directory}: not a directory of resume-contract vectors ({MANIFEST} has no key {error} where one is needed)") from None
    except (OSError, ValueError, TypeError) as error:
        raise VectorsUnreadable(f"{directory}: not a directory of resume-contract vectors ({error})") from None


def _inside(directory: Path, relative: Any) -> Path:
    """A path the manifest names, which must stay inside the vectors directory: the implementation is handed it."""
    if not isinstance(relative, str) or relative.startswith("/") or ".." in Path(relative).parts:
        raise VectorsUnreadable(f"{directory}: {MANIFEST} names {relative!r}, not a path inside the vectors directory")
    return directory / relative


def _planner_case(directory: Path, item: dict[str, Any]) -> Case:
    workspace = _inside(directory, item["workspace"])
    run = ["--run", item["run"]] if item["run"] is not None else ["--latest"]
    ids = ",".join(item["ids"][key] for key in ("invocationId", "runId", "turnId"))
    arguments = ("--workspace", str(workspace), "--session", item["session"], *run, "--host", str(_inside(directory, item["host"])), "--ids", ids)
    return Case(item["id"], item["kind"], item["description"], workspace, None, item["expect"], None, arguments)


def _arguments(command: Sequence[str], case: Case) -> list[str]:
    if case.arguments:
        return [*command, *case.arguments]
    arguments = [*command, str(case.ledger)]
    if case.facts is not None:
        arguments += ["--facts", str(case.facts)]
    if case.expected_high_water is not None:
        arguments += ["--expected-high-water", str(case.expected_high_water)]
    return arguments


def unsafety(expect: dict[str, Any], code: int, got: dict[str, Any]) -> str | None:
    """How an answer that disagrees with a vector is more permissive than the contract, or None (it is stricter,
    or only names things otherwise). A field the implementation did not report counts as the contract's."""
    if "corruption" in expect:
        return f"reads a ledger the contract refuses as corrupt ({expect['corruption']})" if code in (0, 1) else None
    if code not in (0, 1):
        return None
    expected = PlanSummary(
        expect["disposition"], tuple(op["status"] for op in expect["operations"]), tuple(expect["diagnostics"]),
        tuple(expect["rejectionReasons"]), tuple(expect["replayEventIds"]), False,
    )
    # An exit 0 replays, whatever the plan printed says; so does a plan that says so.
    disposition = "safe_replay" if code == exit_code("safe_replay") or got.get("disposition") == "safe_replay" else "blocked"
    answered = expected._replace(
        disposition=disposition,
        operation_statuses=tuple(op.get("status") for op in got.get("operations", expect["operations"])),
        diagnostics=tuple(got.get("diagnostics", expected.diagnostics)),
        rejection_reasons=tuple(got.get("rejectionReasons", expected.rejection_reasons)),
        replay_event_ids=tuple(got.get("replayEventIds", expected.replay_event_ids)),
    )
    return loosening(expected, answered)


def judge(case: Case, code: int | None, out: str, strictness: str, vectors: Vectors) -> tuple[str, list[str], list[str]]:
    """(verdict, problems, unchecked fields) for one run of the implementation."""
    if code is None:
        return TIMED_OUT, ["no answer within the timeout"], []
    expect = case.expect
    if "corruption" in expect:
        if code == CORRUPT_EXIT:
            return AGREES, [], []
        if strictness == "reference" and expect["corruption"] in vectors.reference_corruption and code in (0, 1):
            return AGREES, [], []  # a documented reader strictness the reference does not have
        return DISAGREES, [f"exit: expected {CORRUPT_EXIT} (corrupt: {expect['corruption']}), got {code}"], []
    if code == CORRUPT_EXIT:
        return DISAGREES, ["exit: expected a plan, got 3 (corrupt)"], []
    if code not in (0, 1):
        return CRASHED, [f"exit {code}"], []
    try:
        plan = json.loads(out)
    except ValueError as error:
        return CRASHED, [f"stdout is not a JSON plan: {error}"], []
    if not isinstance(plan, dict):
        return CRASHED, ["stdout is not a JSON object"], []
    if vectors.decision != REPLAY:
        return _judge_continuation(expect, code, plan, vectors.dispositions)
    got = reported(plan)
    problems = [f"{key}: missing from the plan" for key in REQUIRED if key not in got]
    unchecked = [key for key in OPTIONAL if key not in got]
    if strictness == "reference":
        unchecked = sorted(set(unchecked) | set(NOT_IN_A_PHASE_0_REFERENCE))
    expected_code = exit_code(expect["disposition"])
    if code != expected_code and not problems:
        problems.append(f"exit: expected {expected_code} ({expect['disposition']}), got {code}")
    for key in PINNED:
        if key in got and key not in unchecked and got[key] != expect[key]:
            problems.append(f"{key}: expected {json.dumps(expect[key])}, got {json.dumps(got[key])}")
    if problems and strictness == "reference" and _documented_difference(expect, vectors):
        return AGREES, [], unchecked
    return (DISAGREES if problems else AGREES), problems, unchecked


def _judge_continuation(expect: dict[str, Any], code: int, plan: dict[str, Any], dispositions: tuple[str, str]) -> tuple[str, list[str], list[str]]:
    got = continuation_reported(plan)
    problems = [f"{key}: missing from the decision" for key in CONTINUATION_REQUIRED if key not in got]
    expected_code = dispositions.index(expect["disposition"])
    if code != expected_code and not problems:
        problems.append(f"exit: expected {expected_code} ({expect['disposition']}), got {code}")
    for key in CONTINUATION_PINNED:
        answered = got.get(key)  # a park may leave its (null) continuation out
        if (key in got or key == "continuation") and answered != expect[key]:
            problems.append(f"{key}: expected {json.dumps(expect[key])}, got {json.dumps(answered)}")
    return (DISAGREES if problems else AGREES), problems, []


def continuation_unsafety(expect: dict[str, Any], code: int, got: dict[str, Any], dispositions: tuple[str, str]) -> str | None:
    """How a continuation answer that disagrees is more permissive than the contract: it continues where the
    contract parks, reads a ledger the contract refuses, or continues from another context; else None."""
    proceed, stop = dispositions
    if "corruption" in expect:
        return f"reads a ledger the contract refuses as corrupt ({expect['corruption']})" if code in (0, 1) else None
    continues = code == 0 or got.get("disposition") == proceed
    if continues and expect["disposition"] == stop:
        return f"{stop} -> {proceed}"
    if continues and got.get("continuation") != expect["continuation"]:
        fields = sorted(key for key in set(expect["continuation"] or {}) | set(got.get("continuation") or {}) if (expect["continuation"] or {}).get(key) != (got.get("continuation") or {}).get(key))
        return f"{proceed} with another continuation payload ({', '.join(fields) or 'none printed'})"
    return None


def _documented_difference(expect: dict[str, Any], vectors: Vectors) -> bool:
    """The ledger raises an anomaly a Phase 0 reference does not check: whatever it then decides about this
    ledger is a documented difference (the vectors cannot say what the reference would decide instead)."""
    return bool(set(expect["diagnostics"]) & vectors.reference_anomalies)


def conform(
    command: Sequence[str],
    vectors: Vectors,
    *,
    strictness: str = "exact",
    workers: int = 2,
    timeout: float = 30.0,
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Run `command` on every vector (in parallel, each with its timeout); results in vector order."""

    adapters = Adapters()

    def one(case: Case) -> Result:
        with _workspace_of_its_own(case) as run_on:
            ran = adapters.run(_arguments(command, run_on), timeout)
        out, err = ran.out.decode("utf-8", "replace"), ran.err.decode("utf-8", "replace")
        unchecked: list[str]
        if ran.flooded:
            verdict, problems, unchecked = CRASHED, [f"stdout: more than {STDOUT_LIMIT} bytes; cut off there (its process group was killed)"], []
        else:
            verdict, problems, unchecked = judge(case, ran.code, out, strictness, vectors)
        if verdict == CRASHED and err.strip():
            problems.append("stderr: " + err.strip().splitlines()[-1][:300])
        unsafe = None
        if verdict == DISAGREES and ran.code is not None and vectors.decision != REPLAY:
            unsafe = continuation_unsafety(case.expect, ran.code, _answer(out, continuation_reported), vectors.dispositions)
        elif verdict == DISAGREES and ran.code is not None:
            unsafe = unsafety(case.expect, ran.code, _answer(out, reported))
        result = Result(case, verdict, problems, ran.seconds, unchecked, unsafe)
        if on_result is not None:
            on_result(result)
        return result

    with adapters:
        return map_in_threads(one, vectors.cases, workers, stop=adapters.stop)


@contextmanager
def _workspace_of_its_own(case: Case) -> Iterator[Case]:
    """A planner-form case with a copy of its workspace: an implementation that writes there (a claim, a lock file)
    changes neither the vectors nor the cases after it. Other cases are handed files only read."""
    if not case.arguments:
        yield case
        return
    with tempfile.TemporaryDirectory(prefix="resume-contract-conform-", ignore_cleanup_errors=True) as scratch:
        copy = Path(scratch) / "workspace"
        shutil.copytree(case.ledger, copy, symlinks=True)
        yield dataclasses.replace(case, ledger=copy, arguments=tuple(str(copy) if argument == str(case.ledger) else argument for argument in case.arguments))


def _answer(out: str, read: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    try:
        plan = json.loads(out)
    except ValueError:
        return {}
    return read(plan) if isinstance(plan, dict) else {}


def counts(results: Sequence[Result]) -> dict[str, int]:
    return {verdict: sum(1 for result in results if result.verdict == verdict) for verdict in VERDICTS}


def as_text(results: Sequence[Result], command: Sequence[str]) -> str:
    lines = []
    for result in results:
        if result.verdict != AGREES:
            lines.append(f"{result.verdict.upper():<10} {result.case.id}: {result.case.description}")
            if result.unsafe is not None:
                lines.append(f"           UNSAFE: more permissive than the contract: {result.unsafe}")
            lines += [f"           {problem}" for problem in result.problems]
    tally = counts(results)
    unchecked = sorted({key for result in results for key in result.unchecked})
    unsafe = sum(1 for result in results if result.unsafe is not None)
    lines.append(
        f"{len(results)} vectors: {tally[AGREES]} agree, {tally[DISAGREES]} disagree ({unsafe} unsafe), {tally[CRASHED]} crashed, "
        f"{tally[TIMED_OUT]} timed out ({' '.join(command)})"
    )
    if unchecked:
        lines.append(f"not reported by the implementation, so not compared: {', '.join(unchecked)}")
    return "\n".join(lines) + "\n"


def as_json(results: Sequence[Result]) -> str:
    document = {
        "summary": {**counts(results), "unsafe": sum(1 for r in results if r.unsafe is not None), "total": len(results)},
        "results": [
            {"id": r.case.id, "kind": r.case.kind, "verdict": r.verdict, "unsafe": r.unsafe, "problems": r.problems, "unchecked": r.unchecked, "seconds": round(r.seconds, 3)}
            for r in results
        ],
    }
    return json.dumps(document, indent=1) + "\n"


def as_junit(results: Sequence[Result], name: str = "resume-contract conform") -> str:
    """JUnit XML: one testsuite, one testcase per vector (classname: its kind)."""
    return junit_xml(
        name,
        [
            JUnitCase(
                classname=f"vectors.{result.case.kind}",
                name=result.case.id,
                seconds=result.seconds,
                failure="\n".join(([f"UNSAFE: {result.unsafe}"] if result.unsafe else []) + result.problems) if result.verdict == DISAGREES else None,
                error=(result.verdict + "\n" + "\n".join(result.problems)) if result.verdict in (CRASHED, TIMED_OUT) else None,
            )
            for result in results
        ],
    )
