"""The proof commands: `verify` (bounded model checking), `crash` (the SIGKILL harness), `vectors` and `conform`
(the contract as language-neutral cases, and another implementation held to them)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from .common import jobs, progress_reporter, project_root
from .errors import EXIT_FAIL, EXIT_OK, Refused, UsageError


def _installed_contract_only(args: argparse.Namespace, command: str) -> None:
    """verify and crash run the generated code installed with this resume-contract, not another project's spec:
    refuse a --root that names another project rather than silently checking the wrong contract."""
    if args.root is None:
        return
    import resume_contract_generated

    installed = Path(resume_contract_generated.__file__).resolve().parents[2]
    if Path(args.root).resolve() != installed:
        raise UsageError(
            f"{command} runs the contract generated into this installation ({installed}), not --root {args.root}: "
            f"run it from that project's own environment (pip install -e . there)"
        )


def cmd_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _installed_contract_only(args, "verify")
    from ..audit import default_workers
    from ..explore import ALPHABET, count_words
    from ..verify import counterexample_rows, verify

    if not 0 <= args.depth <= 8:
        raise UsageError("--depth takes 0 to 8 (depth 8 is over 100 million ledgers)")
    workers = jobs(args.jobs, default_workers())
    # One unit is the subtree under one first letter (the empty ledger is one more).
    progress = None if args.json else progress_reporter(err, "verify: subtrees", count_words(args.depth) / (len(ALPHABET) + 1), "ledgers")
    if not args.json:
        out.write(f"exploring {count_words(args.depth):,} ledgers up to {args.depth} events on {workers} worker(s)\n")
    result = verify(args.depth, workers=workers, on_progress=progress)
    counterexample = Path(args.counterexample) if result.violations else None
    if counterexample is not None:
        counterexample.write_bytes(counterexample_rows(result.violations[0]))
    if args.junit:
        Path(args.junit).write_text(_verify_junit(result), encoding="utf-8")
    if args.json:
        out.write(_verify_json(result, counterexample) + "\n")
        return EXIT_FAIL if result.violations else EXIT_OK
    out.write(
        f"explored {result.explored:,} ledgers in {result.seconds:.1f} s; {result.distinct_plans} distinct plans; "
        f"transition-table entries reached: {result.steps_reached} of {result.steps_total}\n"
    )
    out.write(f"invariants checked: {', '.join(result.invariants)}\n")
    if result.steps_reached < result.steps_total:
        out.write("warning: some reachable transition-table entries were never reached: raise --depth\n")
    if not result.violations:
        out.write("no violation\n")
        return EXIT_OK
    shortest = result.violations[0]
    path = Path(args.counterexample)
    for violation in result.violations:
        expected = f" (expected high-water {violation.expected_high_water})" if violation.expected_high_water is not None else ""
        out.write(f"VIOLATION {violation.invariant}: {violation.message}\n  shortest ledger{expected}: {violation.ledger}\n")
    replay = f"resume-contract plan {path}" + (f" --expected-high-water {shortest.expected_high_water}" if shortest.expected_high_water is not None else "")
    out.write(f"wrote the shortest counterexample ({len(shortest.word)} events) to {path}; replay it with: {replay}\n")
    return EXIT_FAIL


def cmd_crash(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    _installed_contract_only(args, "crash")
    from resume_contract_generated.catalog import FAILPOINTS_BY_ID, OUTCOMES

    from ..crash import run_catalog
    from ..hooks import PACKAGED_RUNLOOP, missing_hook_message, missing_hooks

    if args.failpoint is not None and args.failpoint not in FAILPOINTS_BY_ID:
        raise UsageError(f"unknown failpoint {args.failpoint!r}; the failpoints are {', '.join(FAILPOINTS_BY_ID)}")
    if args.outcome is not None and args.outcome not in OUTCOMES:
        raise UsageError(f"unknown outcome {args.outcome!r}; the outcomes are {', '.join(OUTCOMES)}")
    missing = missing_hooks(FAILPOINTS_BY_ID if args.failpoint is None else [args.failpoint], PACKAGED_RUNLOOP)
    if missing:
        lines = [missing_hook_message(failpoint_id, str(PACKAGED_RUNLOOP)) for failpoint_id in missing]
        raise Refused(*lines, "nothing was run", command="crash")
    run = run_catalog(args.failpoint, args.outcome, torn=not args.no_torn, workers=None if args.jobs is None else jobs(args.jobs, 1))
    if args.junit:
        Path(args.junit).write_text(_crash_junit(run), encoding="utf-8")
    if args.json:
        out.write(_crash_json(run) + "\n")
        return EXIT_FAIL if run.failures else EXIT_OK
    widths = [max(len(row[column]) for row in run.table) for column in range(len(run.table[0]))]
    for row in run.table:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    for line in run.torn_lines:
        out.write(line + "\n")
    out.write(
        f"{run.cases} crash cases in {run.seconds:.2f} s; {run.cases} bare `python -c pass` children in "
        f"{run.spawn_seconds:.2f} s (same workers): {run.seconds / run.spawn_seconds:.1f}x\n"
    )
    for case, problem in run.failures:
        print(f"FAILED {case}: {problem}", file=err)
    out.write(f"{run.cases - run.failed_cases} of {run.cases} cases verified\n")
    return EXIT_FAIL if run.failures else EXIT_OK


def _verify_json(result: Any, counterexample: Path | None) -> str:
    document = {
        "depth": result.depth,
        "explored": result.explored,
        "seconds": round(result.seconds, 3),
        "distinctPlans": result.distinct_plans,
        "tableEntriesReached": result.steps_reached,
        "tableEntriesReachable": result.steps_total,
        "invariants": list(result.invariants),
        "violations": [
            {"invariant": v.invariant, "message": v.message, "ledger": v.ledger, "expectedHighWater": v.expected_high_water}
            for v in result.violations
        ],
        "counterexample": None if counterexample is None else str(counterexample),
    }
    return json.dumps(document, indent=2)


def _verify_junit(result: Any) -> str:
    from ..junit import JUnitCase, junit_xml

    violated = {violation.invariant: violation for violation in result.violations}

    def failure(name: str) -> str | None:
        violation = violated.get(name)
        return None if violation is None else f"{violation.message}\nshortest ledger: {violation.ledger}"

    cases = [JUnitCase("invariants", name, failure=failure(name)) for name in result.invariants]
    return junit_xml(f"resume-contract verify --depth {result.depth}", cases)


def _crash_case_names(run: Any) -> list[tuple[str, str]]:
    """(classname, name) of every case the crash harness ran, named as its failures are."""
    names = []
    for row in run.table[1:]:
        names += [("sigkill", f"{row[0]} {row[1]} sigkill"), ("real_boundary", f"{row[0]} {row[1]} real boundary")]
    names += [("torn_write", line.split(":", 1)[0]) for line in run.torn_lines]
    return names


def _crash_junit(run: Any) -> str:
    from ..junit import JUnitCase, junit_xml

    problems: dict[str, list[str]] = {}
    for case, problem in run.failures:
        problems.setdefault(case, []).append(problem)
    cases = [JUnitCase(f"crash.{kind}", name, failure="\n".join(problems[name]) if name in problems else None) for kind, name in _crash_case_names(run)]
    return junit_xml("resume-contract crash", cases)


def _crash_json(run: Any) -> str:
    header = run.table[0]
    document = {
        "cases": run.cases,
        "verified": run.cases - run.failed_cases,
        "seconds": round(run.seconds, 3),
        "table": [dict(zip(header, row)) for row in run.table[1:]],
        "tornWrites": run.torn_lines,
        "failures": [{"case": case, "problem": problem} for case, problem in run.failures],
    }
    return json.dumps(document, indent=2)


def _write_vectors(root: Path, depth: int, out: Path) -> str:
    """Make the spec's vectors and write them to `out`; return a one-line account of what was written."""
    from resume_contract_generator.validate import load_spec
    from resume_contract_generator.vectors import (
        VectorError,
        build_vectors,
        render_vectors,
        validate_manifest,
        write_vectors,
    )

    if not 0 <= depth <= 5:
        raise UsageError("--depth takes 0 to 5 (the ledgers explored grow tenfold per event)")
    spec = load_spec(root)
    try:
        vectors = build_vectors(spec, depth)
        files = render_vectors(spec, vectors, depth)
        validate_manifest(files)
        write_vectors(files, out)
    except VectorError as error:
        raise UsageError(str(error)) from None
    kinds: dict[str, int] = {}
    for vector in vectors:
        kinds[vector.kind] = kinds.get(vector.kind, 0) + 1
    detail = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
    return f"wrote {len(vectors)} vectors to {out} ({detail}); spec sha256 {spec.sha256[:12]}"


def cmd_vectors(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    out.write(_write_vectors(project_root(args), args.depth, Path(args.out)) + "\n")
    return EXIT_OK


def cmd_conform(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import tempfile

    from ..audit import default_workers
    from ..conform import DISAGREES, VectorsUnreadable, as_json, as_junit, as_text, conform, counts, load_vectors

    command = list(args.implementation)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise UsageError("give the implementation's command after --, e.g. `resume-contract conform -- ./my-runtime plan --json`")
    if args.timeout <= 0:
        raise UsageError("--timeout takes a number of seconds above 0")
    workers = jobs(args.jobs, default_workers())
    with tempfile.TemporaryDirectory(prefix="resume-contract-vectors-") as scratch:
        directory = args.vectors
        if directory is None:
            directory = Path(scratch) / "vectors"
            _write_vectors(project_root(args), args.depth, directory)
        try:
            vectors = load_vectors(Path(directory))
        except VectorsUnreadable as error:
            raise UsageError(str(error)) from None
        results = conform(command, vectors, strictness=args.strictness, workers=workers, timeout=args.timeout)
    if args.junit:
        Path(args.junit).write_text(as_junit(results), encoding="utf-8")
    out.write(as_json(results) if args.json else as_text(results, command))
    tally = counts(results)
    return EXIT_OK if tally[DISAGREES] + tally["crashed"] + tally["timed out"] == 0 else EXIT_FAIL




def register(commands: Any) -> None:
    """Add verify, crash, vectors and conform to the subcommand parsers."""
    verify = commands.add_parser(
        "verify",
        help="check the spec's invariants on every ledger up to N events (bounded model checking)",
        description="Enumerate every ledger up to --depth events over an alphabet that reaches every rule (two call "
        "ids; calls; successful and failed responses; responses naming another tool; text; a partial event; a "
        "terminal event), project each with the generated table, the python-statemachine class and an "
        "independent oracle, and check every invariant in spec/invariants.yaml. On a violation, the shortest "
        "counterexample is written as a JSONL ledger that `resume-contract plan` replays.",
        epilog="exit: 0 no violation, 1 a violation, 2 usage. Depth 6 (1.1M ledgers) runs in CI; "
        "`resume-contract verify --depth 7` (12M) takes a few minutes.",
    )
    verify.add_argument("--depth", type=int, default=6, metavar="N", help="the longest ledger explored (default 6)")
    verify.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: all cores)")
    verify.add_argument("--json", action="store_true", help="print the result as JSON")
    verify.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one testcase per invariant)")
    verify.add_argument("--counterexample", default="verify-counterexample.jsonl", metavar="PATH", help="where a counterexample is written (only on a violation)")
    verify.set_defaults(handler=cmd_verify)

    crash = commands.add_parser(
        "crash",
        help="run the SIGKILL crash harness over the failpoints and print what held",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="For each failpoint and tool outcome: commit the failpoint's prefix in a child process and\n"
        "SIGKILL it (sigkill), and kill the reference run loop at the failpoint's real hook (real boundary);\n"
        "reopen, project twice, and check the plan against the decision table. Also kills a child in the\n"
        "middle of a large row after each committed prefix (torn write), then repairs.",
        epilog="exit: 0 every case verified, 1 any case failed, 2 usage.",
    )
    crash.add_argument("--failpoint", metavar="ID", help="only this failpoint (e.g. P3)")
    crash.add_argument("--outcome", metavar="NAME", help="only this tool outcome (ok or error)")
    crash.add_argument("--json", action="store_true", help="print the cases, torn writes and failures as JSON")
    crash.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one testcase per crash case)")
    crash.add_argument("--no-torn", action="store_true", help="skip the torn-write cases")
    crash.add_argument("--jobs", type=int, metavar="N", help="cases run at once (default: twice the cores)")
    crash.set_defaults(handler=cmd_crash)

    vectors = commands.add_parser(
        "vectors",
        help="write language-neutral conformance vectors generated from the spec",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write the contract as cases any implementation can be checked against: a JSONL ledger each, an\n"
        "optional expected high-water, and the decision the contract pins (or the corruption kind it must be\n"
        "refused with). Cases: every canonical prefix and outcome, each with a wrong expected high-water, the\n"
        "shortest ledger for every reachable transition-table entry and every anomaly, one ledger per corruption\n"
        "kind, and every ledger up to --depth events (one per outcome). DIR/manifest.json lists them (its schema:\n"
        "DIR/vectors.schema.json). Output is byte-identical across runs.\n\n"
        "  resume-contract vectors --out vectors/\n",
        epilog="exit: 0 written, 2 bad spec or usage (nothing written).",
    )
    vectors.add_argument("--out", required=True, metavar="DIR", help="a new directory, or one holding earlier vectors (replaced whole)")
    vectors.add_argument("--depth", type=int, default=3, metavar="N", help="explore every ledger up to N events (default 3)")
    vectors.set_defaults(handler=cmd_vectors)

    conform = commands.add_parser(
        "conform",
        help="run another implementation on every vector and report where it disagrees with the contract",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run COMMAND on every conformance vector: it gets LEDGER.jsonl (and --expected-high-water N when\n"
        "the vector sets one), prints its ResumePlan as JSON with the reference's camelCase keys and exits 0\n"
        "(safe_replay) or 1 (blocked), or exits 3 for a corrupt ledger. Compared: disposition, operations\n"
        "(toolCallId, status), the replayed rows' ids, the high-water, and when the plan has them, diagnostic\n"
        "codes, rejection reasons, requiresVerification and terminalRuntimeEventId.\n\n"
        "  resume-contract conform -- resume-contract plan --json\n"
        "  resume-contract conform --vectors vectors/ --strictness reference --junit conform.xml -- node plan.js\n",
        epilog="exit: 0 every vector agrees, 1 some disagree, crash or time out, 2 usage.",
    )
    conform.add_argument("--vectors", metavar="DIR", help="vectors written by `resume-contract vectors` (default: made now from spec/)")
    conform.add_argument("--depth", type=int, default=3, metavar="N", help="with no --vectors: the depth to make them at (default 3)")
    conform.add_argument("--strictness", choices=("exact", "reference"), default="exact", help="reference: accept the spec's documented differences of a Phase 0 reference")
    conform.add_argument("--jobs", type=int, metavar="N", help="vectors run at once (default: all cores)")
    conform.add_argument("--timeout", type=float, default=30.0, metavar="S", help="seconds per vector (default 30)")
    conform.add_argument("--json", action="store_true", help="print the results as JSON")
    conform.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one testcase per vector)")
    conform.add_argument("implementation", nargs=argparse.REMAINDER, metavar="-- COMMAND ...", help="the implementation to run")
    conform.set_defaults(handler=cmd_conform)
