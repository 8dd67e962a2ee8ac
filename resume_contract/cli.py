"""The `resume-contract` command: one `main()` that maps each failure to its exit code.

Exit codes: 0 success / clean / safe_replay; 1 drift, a refused write or a blocked plan; 2 a bad spec,
bad usage or unreadable input; 3 a corrupt ledger.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import TextIO

from .terminal import raw_stream

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_CORRUPT = 3

DESCRIPTION = """\
Decide, after a crash, whether an AI-agent run may be replayed, from a contract kept as YAML in spec/.

The loop: edit spec/*.yaml -> `resume-contract generate` -> `resume-contract check` (CI runs it too) ->
`resume-contract diff` (what the change does to safety) -> pull request with the spec, generated/CONTRACT.md
and the review. After a crash: `resume-contract plan` decides whether a run may be replayed.
"""

EPILOG = """\
exit codes: 0 ok, 1 drift / refused / blocked, 2 bad spec or usage, 3 corrupt ledger, 130 Ctrl-C, 143 SIGTERM.
Run `resume-contract COMMAND --help` for each command's options.
"""


class UsageError(Exception):
    """The command line or its inputs cannot be used; exit 2."""


MAX_JOBS = 64


def _jobs(value: int | None, default: int) -> int:
    """A validated --jobs: 1 to MAX_JOBS worker processes (more would only fight over the cores)."""
    if value is None:
        return default
    if not 1 <= value <= MAX_JOBS:
        raise UsageError(f"--jobs takes 1 to {MAX_JOBS}, not {value}")
    return value


def find_root(start: Path) -> Path:
    """The nearest directory at or above `start` that holds spec/projector.yaml."""
    for candidate in (start, *start.parents):
        if (candidate / "spec" / "projector.yaml").is_file():
            return candidate
    raise UsageError(f"no spec/projector.yaml in {start} or any parent; run inside a resume-contract project or pass --root")


def _root(args: argparse.Namespace) -> Path:
    if args.root is not None:
        root = Path(args.root).resolve()
        if not (root / "spec").is_dir():
            raise UsageError(f"--root {args.root}: no spec/ directory there")
        return root
    return find_root(Path.cwd().resolve())


def _load_checked(root: Path):  # noqa: ANN202 - spec_model.Spec, imported lazily
    """The spec, validated and holding every declared invariant (raises SpecInvalid)."""
    from resume_contract_generator.errors import SpecInvalid
    from resume_contract_generator.invariant_check import invariant_errors
    from resume_contract_generator.validate import load_spec

    spec = load_spec(root)
    violated = invariant_errors(spec)
    if violated:
        raise SpecInvalid(violated)
    return spec


def _missing_hook_lines(root: Path, spec) -> list[str]:  # noqa: ANN001 - spec_model.Spec
    """One line per failpoint the project's run loop has no hook for (none when the project has no run loop)."""
    from .hooks import RUNLOOP, missing_hook_message, missing_hooks

    runloop = root / RUNLOOP
    if not runloop.is_file():
        return []
    marks = {failpoint.id: failpoint.mark for failpoint in spec.failpoints}
    return [f"{marks[failpoint_id]}: {missing_hook_message(failpoint_id, RUNLOOP)}" for failpoint_id in missing_hooks(marks, runloop)]


def _compare(root: Path, outputs: dict[str, str]):  # noqa: ANN202 - outputs.Drift
    from resume_contract_generator.outputs import UnsafeGeneratedTree, compare

    try:
        return compare(root, outputs)
    except UnsafeGeneratedTree as error:
        raise UsageError(str(error)) from None


def cmd_generate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generator.outputs import (
        RefusedToWrite,
        UnsafeGeneratedTree,
        recover_interrupted,
        write_outputs,
    )
    from resume_contract_generator.render import render_all

    root = _root(args)
    spec = _load_checked(root)
    outputs = render_all(spec)
    if (root / "generated").is_symlink():
        raise UsageError("generated is a symlink; the generator reads and writes only real files under generated/")
    try:
        recovered = recover_interrupted(root)
    except UnsafeGeneratedTree as error:
        raise UsageError(str(error)) from None
    for line in recovered:
        print(line, file=out)
    drift = _compare(root, outputs)
    # Not a reason to refuse: the generated code is what the hook is written against. `check` fails on it.
    for line in _missing_hook_lines(root, spec):
        print(f"warning: {line}", file=err)
    if drift.clean:
        print(f"generated/ is up to date ({len(outputs)} files)", file=out)
        return EXIT_OK
    try:
        written = write_outputs(root, outputs, drift, force=args.force)
    except RefusedToWrite as error:
        print(f"resume-contract generate: {error}", file=err)
        return EXIT_FAIL
    removed, conflicted = set(drift.removable_orphans), set(drift.conflicted)
    for path in written:
        verb = "removed" if path in removed else "regenerated (it held merge-conflict markers)" if path in conflicted else "wrote"
        print(f"{verb} {path}", file=out)
    return EXIT_OK


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generator.outputs import interrupted_leftovers
    from resume_contract_generator.render import render_all

    root = _root(args)
    spec = _load_checked(root)
    outputs = render_all(spec)
    drift = _compare(root, outputs)
    leftovers = interrupted_leftovers(root)
    if leftovers:
        print(f"an interrupted generate left {', '.join(leftovers)}: run `resume-contract generate`, which finishes or rolls it back", file=out)
        return EXIT_FAIL
    missing_hooks = _missing_hook_lines(root, spec)
    for line in missing_hooks:
        print(line, file=out)
    if drift.clean:
        print(f"generated/ matches spec/ ({len(outputs)} files)", file=out)
        if missing_hooks:
            print(f"to fix: add the missing failpoint hook{'s' if len(missing_hooks) > 1 else ''} named above", file=out)
            return EXIT_FAIL
        return EXIT_OK
    print("generated/ does not match spec/:", file=out)
    for kind, path in drift.rows():
        print(f"  {kind:<12} {path}", file=out)
    if args.diff:
        for diff in drift.diffs.values():
            out.write(diff)
    fix = "resume-contract generate"
    if drift.conflicted:
        print("  (a merge left conflict markers in generated files: never merge them by hand; resolve any conflict in "
              "spec/, then regenerate)", file=out)
    if drift.hand_edited:
        fix += " --force  (after moving any hand edit into spec/: generated files are overwritten)"
    if [path for path in drift.orphaned if path not in drift.removable_orphans]:
        fix = "move files the generator did not write out of generated/, then " + fix
    print(f"to fix: {fix}", file=out)
    return EXIT_FAIL


def _ledger_from_args(args: argparse.Namespace) -> Path:
    from .store import ledger_path

    if args.ledger is not None:
        if args.workspace or args.session or args.run:
            raise UsageError("give either LEDGER or --workspace/--session/--run, not both")
        return Path(args.ledger)
    if args.workspace is None or not (args.session and args.run):
        raise UsageError("give a LEDGER file, or --workspace DIR with --session S and --run R")
    try:
        return ledger_path(Path(args.workspace), args.session, args.run)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _plan(args: argparse.Namespace):
    """The plan of the committed ledger the arguments name: a bare JSONL file, or a workspace run (partial
    snapshots merged), read in bounded memory."""
    from .containment import EscapesWorkspace
    from .ledger_plan import plan_ledger
    from .store import LedgerInUse, LedgerMissing, NotALedger
    from .workspace import plan_run

    path = _ledger_from_args(args)
    if path.exists() and not path.is_file():
        raise UsageError(f"{path}: not a file")
    try:
        if args.ledger is not None:
            return path, plan_ledger(path, args.expected_high_water, refuse_live=True)
        return path, plan_run(Path(args.workspace), args.session, args.run, args.expected_high_water, refuse_live=True)
    except (LedgerInUse, LedgerMissing, NotALedger, EscapesWorkspace) as error:
        raise UsageError(str(error)) from None
    except MemoryError:
        raise UsageError(f"{path}: not enough memory to plan this ledger") from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None


def cmd_plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .plan import plan_json_pieces

    if args.ledger is None and args.workspace is not None and not args.session and not args.run:
        return _audit_workspace(args, out, err)
    if args.expected_high_water is not None and args.expected_high_water < 0:
        raise UsageError("--expected-high-water must be 0 or more")
    path, plan = _plan(args)
    if args.json:
        for piece in plan_json_pieces(plan):
            out.write_bytes(piece)  # type: ignore[attr-defined]  # a JsonStream: rows copied, never decoded
        out.write("\n")
    else:
        from .report import plan_text

        out.write(plan_text(path, plan))
    return EXIT_OK if plan.disposition == "safe_replay" else EXIT_FAIL


def _audit_workspace(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import msgspec

    from .audit import CORRUPT, LIVE, UNREADABLE, audit, default_workers, discover
    from .terminal import escape

    if args.expected_high_water is not None:
        raise UsageError("--expected-high-water applies to one run; give --session and --run")
    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise UsageError(f"--workspace {workspace}: not a directory")
    found = discover(workspace)
    for skipped in found.skipped:
        print(f"skipped {skipped}", file=err)
    workers = _jobs(args.jobs, default_workers())
    progress = None
    if err.isatty() and not args.json:
        screen = raw_stream(err)

        def progress(done: int, total: int) -> None:
            if done == total or done % 50 == 0:
                screen.write(f"\rplanned {done}/{total} runs")
                if done == total:
                    err.write("\n")
                err.flush()
    counts = {"safe_replay": 0, "blocked": 0, CORRUPT: 0, LIVE: 0, UNREADABLE: 0}
    planned = audit(found.ledgers, min(workers, max(1, len(found.ledgers))), progress)
    try:
        for summary in itertools.chain(found.unreadable, planned):
            counts[summary.status] += 1
            if args.json:
                out.write(msgspec.json.encode(summary).decode() + "\n")
            elif summary.status != "safe_replay":
                detail = ", ".join(summary.rejection_reasons) if summary.error is None else summary.error
                out.write(escape(f"{summary.status:<10} {summary.session_id}/{summary.run_id}: {detail}") + "\n")
    finally:
        planned.close()  # on Ctrl-C, stop the workers now, not whenever the generator is collected
    total = sum(counts.values())
    if args.json:
        out.write(msgspec.json.encode({"summary": {**counts, "total": total, "skipped": len(found.skipped)}}).decode() + "\n")
    else:
        out.write(
            f"{total} runs: {counts['safe_replay']} safe_replay, {counts['blocked']} blocked, "
            f"{counts[CORRUPT]} corrupt, {counts[LIVE]} live, {counts[UNREADABLE]} unreadable, {len(found.skipped)} skipped\n"
        )
    if counts[CORRUPT]:
        return EXIT_CORRUPT
    if counts[UNREADABLE] or counts[LIVE] or found.skipped:
        return EXIT_USAGE
    return EXIT_FAIL if counts["blocked"] else EXIT_OK


def cmd_repair(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .containment import EscapesWorkspace
    from .repair import repair_ledger
    from .store import LedgerMissing, StoreError
    from .workspace import run_directory

    path = _ledger_from_args(args)
    workspace = None
    try:
        if args.ledger is None:
            workspace = Path(args.workspace)
            run_directory(workspace, args.session, args.run)
    except (LedgerMissing, EscapesWorkspace) as error:
        raise UsageError(str(error)) from None
    if workspace is None and not path.is_file():
        raise UsageError(f"{path}: no such ledger")
    try:
        result = repair_ledger(path, workspace=workspace)
    except EscapesWorkspace as error:
        raise UsageError(str(error)) from None
    except FileNotFoundError as error:
        raise UsageError(f"{path}: no such ledger" if error.filename in (None, str(path), path.name) else str(error)) from None
    except StoreError as error:
        print(f"resume-contract repair: {error}", file=err)
        return EXIT_FAIL
    if result.quarantine is None:
        print(f"{path}: no torn tail; nothing changed", file=out)
    else:
        print(f"{path}: moved {result.torn_bytes} torn bytes to {result.quarantine}; {result.committed_bytes} committed bytes kept", file=out)
    return EXIT_OK


def cmd_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generator.errors import SpecInvalid
    from resume_contract_generator.review import review
    from resume_contract_generator.review_report import as_json, as_markdown, as_text
    from resume_contract_generator.spec_source import (
        WORKING_TREE,
        SpecSourceError,
        default_base,
        load_side,
    )

    root = _root(args)
    for name, value in (("BASE", args.base), ("HEAD", args.head)):
        if value is not None and not value.strip():
            raise UsageError(f"{name} is empty: give a git revision or a spec directory")
    if args.depth < 0 or args.depth > 6:
        raise UsageError("--depth takes 0 to 6 (the ledgers explored grow ninefold per event)")
    try:
        base_source = args.base if args.base is not None else default_base(root)
        head_source = args.head if args.head is not None else WORKING_TREE
        sides = []
        for label, source in (("base", base_source), ("head", head_source)):
            try:
                sides.append(load_side(root, source))
            except SpecInvalid as invalid:
                for error in invalid.errors:
                    print(f"{label} ({source}): {error}", file=err)
                print(f"resume-contract diff: the {label} spec is invalid; nothing was compared", file=err)
                return EXIT_USAGE
    except SpecSourceError as error:
        raise UsageError(str(error)) from None
    result = review(sides[0], sides[1], depth=args.depth)
    base_label = base_source if args.base is not None else f"merge-base {base_source[:12]}"
    head_label = "working tree" if head_source == WORKING_TREE else head_source
    render = {"text": as_text, "markdown": as_markdown, "json": as_json}[args.format]
    out.write(render(result, base_label, head_label))
    fail_on = args.fail_on
    if fail_on == "any" and result.changes:
        return EXIT_FAIL
    if fail_on in ("weakens-safety", "tightens") and result.counts[fail_on]:
        return EXIT_FAIL
    return EXIT_OK


def cmd_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .audit import default_workers
    from .explore import count_words
    from .verify import counterexample_rows, verify

    if not 0 <= args.depth <= 8:
        raise UsageError("--depth takes 0 to 8 (depth 8 is over 100 million ledgers)")
    workers = _jobs(args.jobs, default_workers())
    progress = None
    if err.isatty():
        screen = raw_stream(err)

        def progress(done: int, total: int) -> None:
            screen.write(f"\rexplored {done}/{total} subtrees")
            if done == total:
                err.write("\n")
            err.flush()
    out.write(f"exploring {count_words(args.depth):,} ledgers up to {args.depth} events on {workers} worker(s)\n")
    result = verify(args.depth, workers=workers, on_progress=progress)
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
    path.write_bytes(counterexample_rows(shortest))
    replay = f"resume-contract plan {path}" + (f" --expected-high-water {shortest.expected_high_water}" if shortest.expected_high_water is not None else "")
    out.write(f"wrote the shortest counterexample ({len(shortest.word)} events) to {path}; replay it with: {replay}\n")
    return EXIT_FAIL


def cmd_crash(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generated.catalog import FAILPOINTS_BY_ID, OUTCOMES

    from .crash import run_catalog
    from .hooks import PACKAGED_RUNLOOP, missing_hook_message, missing_hooks

    if args.failpoint is not None and args.failpoint not in FAILPOINTS_BY_ID:
        raise UsageError(f"unknown failpoint {args.failpoint!r}; the failpoints are {', '.join(FAILPOINTS_BY_ID)}")
    if args.outcome is not None and args.outcome not in OUTCOMES:
        raise UsageError(f"unknown outcome {args.outcome!r}; the outcomes are {', '.join(OUTCOMES)}")
    missing = missing_hooks(FAILPOINTS_BY_ID if args.failpoint is None else [args.failpoint], PACKAGED_RUNLOOP)
    if missing:
        for failpoint_id in missing:
            print(f"resume-contract crash: {missing_hook_message(failpoint_id, str(PACKAGED_RUNLOOP))}", file=err)
        print("resume-contract crash: nothing was run", file=err)
        return EXIT_FAIL
    run = run_catalog(args.failpoint, args.outcome, torn=not args.no_torn, workers=None if args.jobs is None else _jobs(args.jobs, 1))
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
    out.write(_write_vectors(_root(args), args.depth, Path(args.out)) + "\n")
    return EXIT_OK


def cmd_conform(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import tempfile

    from .audit import default_workers
    from .conform import DISAGREES, VectorsUnreadable, as_json, as_junit, as_text, conform, counts, load_vectors

    command = list(args.implementation)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise UsageError("give the implementation's command after --, e.g. `resume-contract conform -- ./my-runtime plan --json`")
    if args.timeout <= 0:
        raise UsageError("--timeout takes a number of seconds above 0")
    workers = _jobs(args.jobs, default_workers())
    with tempfile.TemporaryDirectory(prefix="resume-contract-vectors-") as scratch:
        directory = args.vectors
        if directory is None:
            directory = Path(scratch) / "vectors"
            _write_vectors(_root(args), args.depth, directory)
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


def _add_ledger_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ledger", nargs="?", metavar="LEDGER.jsonl", help="a runtime-events.jsonl file")
    parser.add_argument("--workspace", metavar="DIR", help="a workspace holding sessions/<S>/runs/<R>/runtime-events.jsonl")
    parser.add_argument("--session", metavar="S", help="session id (with --workspace)")
    parser.add_argument("--run", metavar="R", help="run id (with --workspace)")


class _Parser(argparse.ArgumentParser):
    """argparse, with its own messages (usage errors quote what was typed) escaped like every other output."""

    def _print_message(self, message: str, file=None) -> None:  # noqa: ANN001 - argparse's signature
        from .terminal import EscapingWriter

        if message:
            EscapingWriter(file or sys.stderr).write(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="resume-contract",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--root", metavar="DIR", help="the project root holding spec/ (default: found upward from the current directory)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    generate = commands.add_parser(
        "generate",
        help="validate spec/ and write generated/ (all files or none)",
        description="Validate spec/*.yaml and write every file under generated/, all or none. Refuses, writing "
        "nothing, to overwrite a hand-edited file (unless --force) or to delete a file it did not write.",
        epilog="exit: 0 written or up to date, 1 refused, 2 bad spec.",
    )
    generate.add_argument("--force", action="store_true", help="overwrite hand-edited generated files")
    generate.set_defaults(handler=cmd_generate)

    check = commands.add_parser(
        "check",
        help="fail when generated/ differs from what spec/ produces (changes nothing)",
        description="Report changed, missing, orphaned and hand-edited files under generated/, sorted, and the "
        "command that fixes them. Writes nothing.",
        epilog="exit: 0 clean, 1 drift, 2 bad spec.",
    )
    check.add_argument("--diff", action="store_true", help="also print a unified diff of every drifted file")
    check.set_defaults(handler=cmd_check)

    plan = commands.add_parser(
        "plan",
        help="decide whether a crashed run may be replayed (safe_replay) or not (blocked)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read a run's committed ledger strictly and print its ResumePlan.\n\n"
        "  resume-contract plan path/to/runtime-events.jsonl\n"
        "  resume-contract plan --workspace DIR --session S --run R --expected-high-water 42\n"
        "  resume-contract plan --workspace DIR          # audit every run, on all cores\n\n"
        "A workspace run is read as the reference store reads it: the JSONL ledger merged with its partial\n"
        "snapshots (runs/R/runtime-partials/*.partial), which count in the high-water. --json prints the plan\n"
        "with runtimeEvents and replayRuntimeEvents: the committed rows exactly as written.\n",
        epilog="exit: 0 safe_replay, 1 blocked, 2 usage or unreadable input (a missing ledger, workspace, session\n"
        "or run too: only an existing empty ledger is the empty prefix), 3 corrupt ledger (never a plan).\n"
        "An audit exits with the worst of its runs: 3 any corrupt, 2 any live (still being written), unreadable or\n"
        "skipped, 1 any blocked, else 0.",
    )
    _add_ledger_arguments(plan)
    plan.add_argument("--expected-high-water", type=int, metavar="N", help="the high-water the caller checkpointed; a different one is runtime_offset_mismatch")
    plan.add_argument("--json", action="store_true", help="print the plan as JSON (an audit prints JSON lines and a summary line)")
    plan.add_argument("--jobs", type=int, metavar="N", help="worker processes for an audit (default: all cores)")
    plan.set_defaults(handler=cmd_plan)

    repair = commands.add_parser(
        "repair",
        help="quarantine a ledger's torn tail so it can be read and appended again",
        description="Move the bytes after the last complete row to `runtime-events.jsonl.torn-<offset>-<hash>` "
        "beside the ledger, then truncate the ledger to its last complete row. Nothing is lost; only a torn "
        "tail is repaired (any other corruption is left for a person).",
        epilog="exit: 0 repaired or nothing to do, 1 refused (a live writer holds the ledger), 2 usage.",
    )
    _add_ledger_arguments(repair)
    repair.set_defaults(handler=cmd_repair)

    diff = commands.add_parser(
        "diff",
        help="review a contract change: every semantic change, classified by safety",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare two specs and list every semantic change with a stable rule name, its spec location on\n"
        "both sides and a class: weakens-safety, tightens or neutral. Changes whose effect is not obvious are\n"
        "decided by running both projectors over the canonical ledgers and every ledger up to --depth events.\n\n"
        "BASE and HEAD are git revisions or spec directories. Default: the merge base of HEAD with the default\n"
        "branch, against the working tree.\n\n"
        "  resume-contract diff                          # this branch's change\n"
        "  resume-contract diff main HEAD --format markdown --fail-on weakens-safety\n"
        "  resume-contract diff old/spec new/spec --format json\n",
        epilog="exit: 0 no change of the --fail-on class, 1 such a change, 2 bad input (an invalid spec on either side\n"
        "is reported with its file:line and not compared).",
    )
    diff.add_argument("base", nargs="?", metavar="BASE", help="git revision or spec directory (default: merge base with the default branch)")
    diff.add_argument("head", nargs="?", metavar="HEAD", help="git revision or spec directory (default: the working tree)")
    diff.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="text for a terminal, markdown for a pull-request comment, json for scripts")
    diff.add_argument("--fail-on", choices=("weakens-safety", "tightens", "any"), help="exit 1 when a change of this class is present")
    diff.add_argument("--depth", type=int, default=4, metavar="N", help="explore every ledger up to N events for evidence (default 4)")
    diff.set_defaults(handler=cmd_diff)

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
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command line; return the exit code."""
    from resume_contract_generator.errors import SpecInvalid

    from . import interrupts
    from .corruption import LedgerCorruption
    from .terminal import EscapingWriter, JsonStream

    interrupts.OWNS_PROCESS = out is None and err is None  # the real stdio: this is the process, not a test
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code not in (0, None) else EXIT_OK
    from .interrupts import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated, sigterm_raises

    # What people read is escaped (ledger and spec strings are evidence, never terminal control); JSON is exact,
    # and written as UTF-8 whatever the terminal's encoding.
    if getattr(args, "json", False) or getattr(args, "format", None) == "json":
        out = JsonStream(out)  # type: ignore[assignment]
    else:
        out = EscapingWriter(out)  # type: ignore[assignment]
    err = EscapingWriter(err)  # type: ignore[assignment]
    try:
        with sigterm_raises():
            return args.handler(args, out, err)
    except SpecInvalid as invalid:
        for error in invalid.errors:
            print(error, file=err)
        count = len(invalid.errors)
        print(f"resume-contract: the spec has {count} error{'s' if count != 1 else ''}; nothing was written", file=err)
        return EXIT_USAGE
    except UsageError as error:
        print(f"resume-contract: {error}", file=err)
        return EXIT_USAGE
    except LedgerCorruption as error:
        print(f"resume-contract: corrupt ledger, no plan: {error}", file=err)
        return EXIT_CORRUPT
    except OSError as error:
        # A path that cannot be read or written (a counterexample into a missing directory, a full disk...).
        print(f"resume-contract: {error}", file=err)
        return EXIT_USAGE
    except MemoryError:
        print("resume-contract: not enough memory for this input (nothing was written)", file=err)
        return EXIT_USAGE
    except Terminated:
        print("resume-contract: terminated (SIGTERM); pending work cancelled, workers stopped", file=err)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("resume-contract: interrupted; pending work cancelled, workers stopped", file=err)
        return EXIT_INTERRUPTED
