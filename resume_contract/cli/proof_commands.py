"""The proof commands: `verify` (bounded model checking) and `crash` (the SIGKILL harness)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from .common import add_format_arguments, jobs, progress_reporter, selected_contract
from .errors import EXIT_FAIL, EXIT_OK, Refused, UsageError


def cmd_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..proof.verify import counterexample_rows, explored_alphabet, verify
    from ..system.interrupts import default_workers

    if not 0 <= args.depth <= 8:
        raise UsageError("--depth takes 0 to 8 (depth 8 is over 100 million ledgers)")
    workers = jobs(args.jobs, default_workers())
    contract = selected_contract(args, language=True)
    if hasattr(contract, "module"):  # a contract in the contract language: against its own oracle
        from .language_commands import verify_language_contract

        _refuse_unsupported("verify", "takes --depth and --counterexample", {"--json (--format json)": args.json, "--junit": args.junit, "--jobs": args.jobs})
        return verify_language_contract(contract, args.depth, out, Path(args.counterexample))
    alphabet = explored_alphabet(contract)
    # One unit is the subtree under one first letter (the empty ledger is one more).
    progress = None if args.json else progress_reporter(err, "verify: subtrees", alphabet.count(args.depth) / (len(alphabet) + 1), "ledgers")
    if not args.json:
        out.write(f"exploring {alphabet.count(args.depth):,} ledgers up to {args.depth} events on {workers} worker(s)\n")
        out.write(f"contract: {contract.identity}; {contract.origin}\n")
        out.write(f"{_alphabet_line(alphabet)}\n")
    result = verify(args.depth, workers=workers, on_progress=progress, contract=contract)
    counterexample = Path(args.counterexample) if result.violations else None
    if counterexample is not None:
        counterexample.write_bytes(counterexample_rows(result.violations[0]))
    if args.junit:
        Path(args.junit).write_text(_verify_junit(result), encoding="utf-8")
    if args.json:
        out.write(_verify_json(result, counterexample, contract) + "\n")
        return EXIT_FAIL if result.failed else EXIT_OK
    out.write(
        f"explored {result.explored:,} ledgers in {result.seconds:.1f} s; {result.distinct_plans} distinct plans; "
        f"transition-table entries reached: {result.steps_reached} of {result.steps_total}\n"
    )
    out.write(f"invariants checked: {', '.join(result.invariants)}\n")
    if result.unjudged:
        out.write(
            f"not compared with the oracle (tool events of a kind the contract's text does not name): {', '.join(result.unjudged)}; "
            "`resume-contract diff` judges such a kind against the spec before it\n"
        )
    if result.steps_reached < result.steps_total:
        out.write("warning: some reachable transition-table entries were never reached: raise --depth\n")
    phase1 = result.continuation
    if phase1 is not None:
        out.write(f"continuation (Phase 1): {phase1.explored} situations explored (named, and each with one input changed); "
                  f"invariants checked: {', '.join(phase1.invariants)}\n")
        for found in phase1.violations:
            out.write(f"VIOLATION {found.invariant}: {found.message}\n  situation: {found.situation}\n")
    if not result.violations:
        out.write("no violation\n" if not result.failed else "")
        return EXIT_FAIL if result.failed else EXIT_OK
    shortest = result.violations[0]
    path = Path(args.counterexample)
    for violation in result.violations:
        expected = f" (expected high-water {violation.expected_high_water})" if violation.expected_high_water is not None else ""
        out.write(f"VIOLATION {violation.invariant}: {violation.message}\n  shortest ledger{expected}: {violation.ledger}\n")
    replay = f"resume-contract plan {path}" + (f" --expected-high-water {shortest.expected_high_water}" if shortest.expected_high_water is not None else "")
    out.write(f"wrote the shortest counterexample ({len(shortest.word)} events) to {path}; replay it with: {replay}\n")
    return EXIT_FAIL


def _refuse_unsupported(command: str, takes: str, options: dict[str, Any]) -> None:
    """A contract written in the contract language does not (yet) honour some of the command's options: one given
    is refused, never silently ignored."""
    given = [option for option, value in options.items() if value is not None and value is not False]  # (0 too: `--jobs 0`)
    if given:
        raise UsageError(f"`{command}` of a contract written in the contract language (spec/contract.yaml) {takes}, "
                         f"in text, in one process: not {', '.join(given)}; run it without")


def _selected(args: argparse.Namespace, contract: Any) -> tuple[Any, Any, Any]:
    """(the Phase 0 failpoints whose run-loop hooks must be there, the continuation boundaries, the outcomes) of
    `crash --failpoint`; a name no failpoint or boundary has is a usage error."""
    failpoints, outcomes = contract.catalog.FAILPOINTS_BY_ID, contract.catalog.OUTCOMES
    lifecycle = contract.continuation_boundaries
    boundaries = lifecycle.BOUNDARIES_BY_ID if lifecycle is not None else {}
    sqlite = getattr(contract.catalog, "SQLITE_FAILPOINTS_BY_ID", {})
    if args.failpoint is not None and args.failpoint not in failpoints and args.failpoint not in boundaries and args.failpoint not in sqlite:
        known = ", ".join([*failpoints, *sqlite, *boundaries])
        raise UsageError(f"unknown failpoint {args.failpoint!r}; the failpoints and boundaries are {known}")
    _refuse_missing_continuation_hooks(contract, boundaries if args.failpoint is None else [b for b in boundaries if b == args.failpoint])
    if args.failpoint in boundaries or args.failpoint in sqlite:
        failpoints = {}
    return failpoints, boundaries, outcomes


def cmd_crash(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generator.hooks import missing_hook_message, missing_hooks

    from ..crash.catalog_run import run_catalog
    from ..crash.harness import run_loop_of

    contract = selected_contract(args, language=True)
    if hasattr(contract, "module"):  # a contract in the contract language: its scenarios
        from .language_commands import crash_language

        given = {"--failpoint": args.failpoint, "--outcome": args.outcome, "--json (--format json)": args.json, "--junit": args.junit, "--jobs": args.jobs}
        _refuse_unsupported("crash", "runs every scenario (spec/contract.yaml `scenarios`) and takes --no-torn", given)
        return crash_language(contract, out, torn=not args.no_torn)
    failpoints, boundaries, outcomes = _selected(args, contract)
    if args.outcome is not None and args.outcome not in outcomes:
        raise UsageError(f"unknown outcome {args.outcome!r}; the outcomes are {', '.join(outcomes)}")
    run_loop = run_loop_of(contract)
    if run_loop is None:
        raise Refused("the spec names no run loop to kill at each failpoint's hook: add `run_loop: <path>` to spec/failpoints.yaml",
                      "nothing was run", command="crash")
    if not run_loop.is_file():
        raise Refused(f"the run loop {run_loop} (spec/failpoints.yaml `run_loop`) does not exist", "nothing was run", command="crash")
    # A Python run loop's hooks are read from its source first (another language's are found by the kill itself).
    missing = missing_hooks(failpoints if args.failpoint is None or not failpoints else [args.failpoint], run_loop) if run_loop.suffix == ".py" else []
    if missing:
        lines = [missing_hook_message(failpoint_id, str(run_loop)) for failpoint_id in missing]
        raise Refused(*lines, "nothing was run", command="crash")
    workers = None if args.jobs is None else jobs(args.jobs, 1)
    run = run_catalog(args.failpoint, args.outcome, torn=not args.no_torn, workers=workers, contract=contract)
    if args.junit:
        Path(args.junit).write_text(_crash_junit(run), encoding="utf-8")
    if args.json:
        out.write(_crash_json(run, contract) + "\n")
        return EXIT_FAIL if run.failures else EXIT_OK
    out.write(f"contract: {contract.identity}; {contract.origin}\n")
    widths = [max(len(row[column]) for row in run.table) for column in range(len(run.table[0]))]
    for row in run.table if len(run.table) > 1 else ():
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    for line in run.torn_lines:
        out.write(line + "\n")
    if run.sqlite_table:
        out.write("SQLite store boundaries (spec/failpoints.yaml sqlite: runtime.sqlite, T1 and T2):\n")
        widths = [max(len(row[column]) for row in run.sqlite_table) for column in range(len(run.sqlite_table[0]))]
        for row in run.sqlite_table:
            out.write("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    if run.continuation_table:
        out.write("continuation crash boundaries (spec/lifecycle.yaml):\n")
        widths = [max(len(row[column]) for row in run.continuation_table) for column in range(len(run.continuation_table[0]))]
        for row in run.continuation_table:
            out.write("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    out.write(
        f"{run.cases} crash cases in {run.seconds:.2f} s; {run.cases} bare `python -c pass` children in "
        f"{run.spawn_seconds:.2f} s (same workers): {run.seconds / run.spawn_seconds:.1f}x\n"
    )
    for case, problem in run.failures:
        print(f"FAILED {case}: {problem}", file=err)
    out.write(f"{run.cases - run.failed_cases} of {run.cases} cases verified\n")
    return EXIT_FAIL if run.failures else EXIT_OK


def _refuse_missing_continuation_hooks(contract: Any, boundary_ids: Any) -> None:
    """The continuation run loop exists and holds a hook for each boundary to run, or nothing is run."""
    from resume_contract_generator.hooks import missing_hook_message, missing_hooks

    from ..crash.continuation_harness import continuation_loop_of

    if not boundary_ids:
        return
    run_loop = continuation_loop_of(contract)
    if run_loop is None or not run_loop.is_file():
        raise Refused(f"the continuation run loop {run_loop or '(none)'} (spec/lifecycle.yaml `run_loop`) does not exist", "nothing was run", command="crash")
    missing = missing_hooks(list(boundary_ids), run_loop) if run_loop.suffix == ".py" else []
    if missing:
        raise Refused(*(missing_hook_message(boundary_id, str(run_loop)) for boundary_id in missing), "nothing was run", command="crash")


def _alphabet_line(alphabet: Any) -> str:
    """What was explored: the classes by their representatives, each with the letters it stands for."""
    classes = "; ".join(name + (f" (also {', '.join(others)})" if others else "") for name, others in alphabet.listing())
    return f"alphabet, from the spec: {alphabet.describe()}, each explored through its first letter: {classes}"


def alphabet_json(alphabet: Any) -> list[dict[str, Any]]:
    return [{"letter": name, "standsFor": others} for name, others in alphabet.listing()]


def _verify_json(result: Any, counterexample: Path | None, contract: Any) -> str:
    document = {
        "contract": contract.identity.as_json(),
        "depth": result.depth,
        "alphabet": alphabet_json(result.alphabet),
        "explored": result.explored,
        "seconds": round(result.seconds, 3),
        "distinctPlans": result.distinct_plans,
        "tableEntriesReached": result.steps_reached,
        "tableEntriesReachable": result.steps_total,
        "invariants": list(result.invariants),
        "notComparedWithTheOracle": list(result.unjudged),
        "violations": [
            {"invariant": v.invariant, "message": v.message, "ledger": v.ledger, "expectedHighWater": v.expected_high_water}
            for v in result.violations
        ],
        "counterexample": None if counterexample is None else str(counterexample),
        "continuation": None if result.continuation is None else {
            "explored": result.continuation.explored,
            "invariants": list(result.continuation.invariants),
            "violations": [{"invariant": v.invariant, "message": v.message, "situation": v.situation} for v in result.continuation.violations],
        },
    }
    return json.dumps(document, indent=2)


def _verify_junit(result: Any) -> str:
    from ..output.junit import JUnitCase, junit_xml

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
    names += [("continuation", f"{row[0]} continuation") for row in run.continuation_table[1:]]
    names += [("sqlite", f"{row[0]} {row[1]} sqlite") for row in run.sqlite_table[1:]]
    return names


def _crash_junit(run: Any) -> str:
    from ..output.junit import JUnitCase, junit_xml

    problems: dict[str, list[str]] = {}
    for case, problem in run.failures:
        problems.setdefault(case, []).append(problem)
    cases = [JUnitCase(f"crash.{kind}", name, failure="\n".join(problems[name]) if name in problems else None) for kind, name in _crash_case_names(run)]
    return junit_xml("resume-contract crash", cases)


def _crash_json(run: Any, contract: Any) -> str:
    header = run.table[0]
    document = {
        "contract": contract.identity.as_json(),
        "cases": run.cases,
        "verified": run.cases - run.failed_cases,
        "seconds": round(run.seconds, 3),
        "table": [dict(zip(header, row)) for row in run.table[1:]],
        "tornWrites": run.torn_lines,
        "continuation": [dict(zip(run.continuation_table[0], row)) for row in run.continuation_table[1:]],
        "sqlite": [dict(zip(run.sqlite_table[0], row)) for row in run.sqlite_table[1:]],
        "failures": [{"case": case, "problem": problem} for case, problem in run.failures],
    }
    return json.dumps(document, indent=2)


def register(commands: Any) -> None:
    """Add verify and crash to the subcommand parsers."""
    verify = commands.add_parser(
        "verify",
        help="check the spec's invariants on every ledger up to N events (bounded model checking)",
        description="Enumerate every ledger up to --depth events over an alphabet derived from the spec (every "
        "tool event the projector names, for two call ids, with and without the error flag and naming another tool; "
        "every other content kind; every status and the terminal flag, and the oracle's terminal statuses and flag; "
        "each as a partial event too; the rows the projector's expressions read (an action event, each value a test "
        "compares a field with); letters that neither the projector nor the oracle tells apart explored once), "
        "project each with the generated table, the python-statemachine class and an "
        "independent oracle, and check every invariant in spec/invariants.yaml. On a violation, the shortest "
        "counterexample is written as a JSONL ledger that `resume-contract plan` replays.",
        epilog="exit: 0 no violation, 1 a violation, 2 usage. Depth 5 runs in CI; each more event multiplies the "
        "ledgers by the alphabet's classes (16 for the packaged contract). A contract written in the contract "
        "language (spec/contract.yaml) is held to its own oracle instead (`oracle:`, a file defining decide(rows)): "
        "every ledger up to --depth rows is decided by both, and the smallest they decide apart is the counterexample.",
    )
    verify.add_argument("--depth", type=int, default=5, metavar="N", help="the longest ledger explored (default 5)")
    verify.add_argument("--jobs", type=int, metavar="N", help="worker processes (default: all cores)")
    add_format_arguments(verify, "the result as one document")
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
        "middle of a large row after each committed prefix (torn write), then repairs.\n\n"
        "A contract written in the contract language (spec/contract.yaml) names no failpoints: its scenarios are\n"
        "its crash cases (each prefix committed and SIGKILLed, and torn in the middle of the next row), and of\n"
        "these options it takes --no-torn alone.",
        epilog="exit: 0 every case verified, 1 any case failed, 2 usage.",
    )
    crash.add_argument("--failpoint", metavar="ID", help="only this failpoint (e.g. P3) or continuation boundary (e.g. after_run_created)")
    crash.add_argument("--outcome", metavar="NAME", help="only this tool outcome (ok or error)")
    add_format_arguments(crash, "the cases, torn writes and failures as one document")
    crash.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one testcase per crash case)")
    crash.add_argument("--no-torn", action="store_true", help="skip the torn-write cases")
    crash.add_argument("--jobs", type=int, metavar="N", help="cases run at once (default: twice the cores)")
    crash.set_defaults(handler=cmd_crash)
