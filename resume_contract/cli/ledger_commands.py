"""The ledger command `plan`: one run, or a whole workspace audited (`repair`: repair_command.py)."""

from __future__ import annotations

import itertools
import os
from typing import TYPE_CHECKING, Any, TextIO

from .common import (
    add_format_arguments,
    add_ledger_arguments,
    jobs,
    ledger_from_args,
    progress_reporter,
    selected_contract,
)
from .errors import EXIT_CORRUPT, EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError

if TYPE_CHECKING:
    import argparse  # only when parsing: `plan LEDGER` is read without it (quick_forms)
    from pathlib import Path


def _plan(args: argparse.Namespace, contract: Any) -> tuple[str | Path, Any]:
    """The plan of the committed ledger the arguments name: a bare JSONL file, or a workspace run (partial
    snapshots merged), read in bounded memory."""
    from ..errors import (
        EscapesWorkspace,
        LedgerCorruption,
        LedgerInUse,
        LedgerMissing,
        NotALedger,
        StoreBusy,
        StoreUnreadable,
    )
    from ..ledger.file_plan import plan_ledger

    path = ledger_from_args(args)
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{path}: not a file")
    processes = jobs(args.jobs, 1)  # one ledger: one process unless asked (parts pay off only on idle cores)
    try:
        if args.ledger is not None:
            try:
                return path, plan_ledger(path, args.expected_high_water, refuse_live=True, processes=processes, contract=contract)
            except LedgerCorruption:
                refuse_a_store_as_a_ledger(path)
                raise
        from pathlib import Path

        from ..ledger.workspace import plan_run  # a run's snapshots: read only for a workspace run

        workspace = Path(args.workspace)
        return path, plan_run(workspace, args.session, args.run, args.expected_high_water, refuse_live=True, processes=processes, contract=contract)
    except (LedgerInUse, LedgerMissing, NotALedger, EscapesWorkspace, StoreUnreadable, StoreBusy) as error:
        raise UsageError(str(error)) from None
    except MemoryError:
        raise UsageError(f"{path}: not enough memory to plan this ledger") from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None


def refuse_a_store_as_a_ledger(path: str | Path) -> None:
    """A SQLite database given where a JSONL ledger goes is a usage error that says what to run, not corruption."""
    from ..ledger.sqlite_layout import is_sqlite_file

    if is_sqlite_file(path):
        import shlex

        where = shlex.quote(os.path.dirname(os.path.abspath(path)))
        raise UsageError(
            f"{path}: a SQLite database, not a JSONL ledger: a workspace keeps it as runtime.sqlite; plan its runs with "
            f"`resume-contract plan --workspace {where}` (all) or add `--session S --run R` (one)"
        )


def cmd_plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..errors import LedgerCorruption

    contract = selected_contract(args, language=True)
    try:
        if hasattr(contract, "module"):  # a contract in the contract language (spec/contract.yaml)
            from .language_commands import plan_language

            return plan_language(args, contract, out, err)
        if args.ledger is None and args.workspace is not None and not args.session and not args.run:
            return _audit_workspace(args, out, err)
        return _plan_one(args, contract, out)
    except LedgerCorruption as corruption:
        if args.json:  # (a script reads a document for every outcome; stderr says the same to a person)
            from ..output.advice import corrupt_json

            out.write(corrupt_json(corruption, contract.identity.as_json()) + "\n")
        raise


def _plan_one(args: argparse.Namespace, contract: Any, out: TextIO) -> int:
    import msgspec

    from ..core.plan_json import plan_json_pieces, with_last_member
    if args.expected_high_water is not None and args.expected_high_water < 0:
        raise UsageError("--expected-high-water must be 0 or more")
    path, plan = _plan(args, contract)
    if args.json:
        # The reference's ResumePlan, then (ours, after its keys) the contract that decided it.
        for piece in with_last_member(plan_json_pieces(plan), b'"contract":' + msgspec.json.encode(contract.identity.as_json())):
            out.write_bytes(piece)  # type: ignore[attr-defined]  # a JsonStream: rows copied, never decoded
        out.write("\n")
    else:
        from ..output.plan_text import plan_text

        out.write(plan_text(path, plan, getattr(contract.catalog, "REASON_MEANINGS", None), contract.table.never_ran_statuses))
        out.write(f"contract:      {contract.identity}; {contract.origin}\n")
    return EXIT_OK if plan.disposition == "safe_replay" else EXIT_FAIL


def _audit_workspace(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pathlib import Path

    import msgspec

    from ..ledger.audit import CORRUPT, LIVE, UNREADABLE, audit, discover
    from ..output.audit_text import next_steps, run_line, summary_text
    from ..output.terminal import escape
    from ..system.interrupts import default_workers

    if args.expected_high_water is not None:
        raise UsageError("--expected-high-water applies to one run; give --session and --run")
    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise UsageError(f"--workspace {workspace}: not a directory")
    from ..ledger.sqlite_layout import holds_store

    if holds_store(workspace):
        return _audit_store(args, workspace, out, err)
    found = discover(workspace)
    for skipped in found.skipped:
        print(f"skipped {skipped}", file=err)
    workers = jobs(args.jobs, default_workers())
    progress = None if args.json else progress_reporter(err, "plan: runs", 1, "runs")
    counts = {"safe_replay": 0, "blocked": 0, CORRUPT: 0, LIVE: 0, UNREADABLE: 0}
    contract = selected_contract(args)
    planned = audit(found.ledgers, min(workers, max(1, len(found.ledgers))), progress, contract=contract)
    attention: list[Any] = []
    refused = 0  # unreadable runs refused for a symlink where their files belong: counted among the unreadable too
    try:
        for summary in itertools.chain(found.unreadable, planned):
            counts[summary.status] += 1
            refused += summary.refusal is not None
            if args.json:
                out.write(_json_line(summary) + "\n")
            elif summary.status != "safe_replay":
                attention.append(summary)
                out.write(escape(run_line(summary)) + "\n")
    finally:
        planned.close()  # on Ctrl-C, stop the workers now, not whenever the generator is collected
    total = sum(counts.values())
    if args.json:
        summary_line = {**counts, **({"refused": refused} if refused else {}), "total": total, "skipped": len(found.skipped),
                        "contract": contract.identity.as_json()}
        out.write(msgspec.json.encode({"summary": summary_line}).decode() + "\n")
    else:
        out.write(summary_text(counts, refused, len(found.skipped)) + "\n")
        out.write("".join(escape(line) + "\n" for line in next_steps(workspace, counts, attention)))
    if counts[CORRUPT]:
        return EXIT_CORRUPT
    if counts[UNREADABLE] or counts[LIVE] or found.skipped:  # a refused run is unreadable: 2
        return EXIT_USAGE
    return EXIT_FAIL if counts["blocked"] else EXIT_OK


def _audit_store(args: argparse.Namespace, workspace: Path, out: TextIO, err: TextIO) -> int:
    """The audit of a workspace that keeps its ledgers in runtime.sqlite: every run of the store, one a read
    transaction, in one process (a run is read at SQLite's speed; workers would each open the store)."""
    import msgspec

    from ..errors import StoreBusy, StoreUnreadable
    from ..ledger.audit import CORRUPT, UNREADABLE, audit_store
    from ..ledger.sqlite_layout import store_path
    from ..output.audit_text import next_steps, run_line, summary_text
    from ..output.terminal import escape

    if (workspace / "sessions").is_dir():
        print(f"note: {workspace / 'sessions'} is not read: this workspace keeps its ledgers in {store_path(workspace)}", file=err)
    counts = {"safe_replay": 0, "blocked": 0, CORRUPT: 0, "live": 0, UNREADABLE: 0}
    contract = selected_contract(args)
    attention: list[Any] = []
    try:
        for summary in audit_store(workspace, contract=contract):
            counts[summary.status] += 1
            if args.json:
                out.write(_json_line(summary) + "\n")
            elif summary.status != "safe_replay":
                attention.append(summary)
                out.write(escape(run_line(summary)) + "\n")
    except (StoreUnreadable, StoreBusy) as error:
        raise UsageError(str(error)) from None
    if args.json:
        summary_line = {**counts, "total": sum(counts.values()), "skipped": 0, "contract": contract.identity.as_json()}
        out.write(msgspec.json.encode({"summary": summary_line}).decode() + "\n")
    else:
        out.write(summary_text(counts, 0, 0) + "\n")
        out.write("".join(escape(line) + "\n" for line in next_steps(workspace, counts, attention, store=True)))
    if counts[CORRUPT]:
        return EXIT_CORRUPT
    if counts[UNREADABLE]:
        return EXIT_USAGE
    return EXIT_FAIL if counts["blocked"] else EXIT_OK


def _json_line(summary: Any) -> str:
    """One run's summary as a JSON line. A path that is not UTF-8 (its bytes held as surrogate escapes, as
    os.fsdecode holds them) is written with each such byte as the escape `\\udcXX`: still one JSON line, and
    `os.fsencode` of the string read back gives the path's bytes."""
    import msgspec

    try:
        return msgspec.json.encode(summary).decode()
    except UnicodeEncodeError:
        import json

        return json.dumps(msgspec.to_builtins(summary), separators=(",", ":"))


def register(commands: Any) -> None:
    """Add plan to the subcommand parsers."""
    import argparse

    plan = commands.add_parser(
        "plan",
        help="decide whether a crashed run may be replayed (safe_replay) or not (blocked)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read a run's committed ledger strictly and print its ResumePlan.\n\n"
        "  resume-contract plan path/to/runtime-events.jsonl\n"
        "  resume-contract plan --workspace DIR --session S --run R --expected-high-water 42\n"
        "  resume-contract plan --workspace DIR          # audit every run, on all cores\n\n"
        "A workspace run is read as the reference store reads it: the JSONL ledger merged with its partial\n"
        "snapshots (runs/R/runtime-partials/*.partial), which count in the high-water. A workspace holding\n"
        "runtime.sqlite (the runtime's SQLite store) is read from it instead, read-only, each run in one read\n"
        "transaction (docs/deciding.md). --json prints the plan with runtimeEvents and replayRuntimeEvents: the\n"
        "committed rows exactly as written.\n",
        epilog="exit: 0 safe_replay, 1 blocked, 2 usage or unreadable input (a missing ledger, workspace, session\n"
        "or run too: only an existing empty ledger is the empty prefix), 3 corrupt ledger (never a plan).\n"
        "An audit exits with the worst of its runs: 3 any corrupt, 2 any live (still being written), unreadable or\n"
        "skipped, 1 any blocked, else 0. Under a contract in the contract language (spec/contract.yaml), 0 and 1 are its own\n"
        "proceed and stop words, --workspace reads its rows.layout, and --json prints its decision (decision,\n"
        "rejectionReasons, diagnostics, items, replayEventIds, highWater; docs/tutorial.md).",
    )
    add_ledger_arguments(plan)
    plan.add_argument("--expected-high-water", type=int, metavar="N", help="the high-water the caller checkpointed; a different one is runtime_offset_mismatch")
    add_format_arguments(plan, "the plan as the reference's ResumePlan (an audit: a JSON line per run and a summary line)")
    plan.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes: in an audit, runs planned at once (default: all cores); for one ledger (default: 1), "
        "with 2 or more, a ledger of 24 MiB or more is checked and walked in parts at once (the plan is the same)",
    )
    plan.set_defaults(handler=cmd_plan)
