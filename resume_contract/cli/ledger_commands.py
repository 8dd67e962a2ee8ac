"""The ledger commands: `plan` (one run, or a whole workspace audited) and `repair` (quarantine a torn tail)."""

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
from .errors import EXIT_CORRUPT, EXIT_FAIL, EXIT_OK, EXIT_USAGE, Refused, UsageError

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
                _refuse_a_store_as_a_ledger(path)
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


def _refuse_a_store_as_a_ledger(path: str | Path) -> None:
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
    import msgspec

    from ..core.plan_json import plan_json_pieces, with_last_member

    contract = selected_contract(args, language=True)
    if hasattr(contract, "module"):  # a contract in the contract language (spec/contract.yaml)
        from .language_commands import plan_language

        return plan_language(args, contract, out, err)
    if args.ledger is None and args.workspace is not None and not args.session and not args.run:
        return _audit_workspace(args, out, err)
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


def cmd_repair(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pathlib import Path

    from ..errors import EscapesWorkspace, LedgerMissing, NotALedger, StoreError
    from ..ledger.repair import repair_ledger
    from ..ledger.sqlite_layout import holds_store

    if args.ledger is None and args.workspace is not None and holds_store(args.workspace):
        return _repair_store(args, out, err)
    if args.ledger is not None:
        _refuse_a_store_as_a_ledger(args.ledger)
    path = Path(ledger_from_args(args))
    workspace = None
    try:
        if args.ledger is None:
            from ..ledger.workspace import run_directory  # (it brings the snapshot reader, a bare file has none)

            workspace = Path(args.workspace)
            run_directory(workspace, args.session, args.run)
    except (LedgerMissing, EscapesWorkspace) as error:
        raise UsageError(str(error)) from None
    if workspace is None and not path.is_file():
        raise UsageError(f"{path}: not a file" if path.exists() else f"{path}: no such ledger")
    try:
        result = repair_ledger(path, workspace=workspace)
    except (EscapesWorkspace, NotALedger) as error:
        raise UsageError(str(error)) from None
    except FileNotFoundError as error:
        raise UsageError(f"{path}: no such ledger" if error.filename in (None, str(path), path.name) else str(error)) from None
    except StoreError as error:
        raise Refused(str(error), command="repair") from None
    if result.quarantine is None:
        print(f"{path}: no torn tail; nothing changed", file=out)
    else:
        print(f"{path}: moved {result.torn_bytes} torn bytes to {result.quarantine}; {result.committed_bytes} committed bytes kept", file=out)
    return _still_corrupt(args, path, err)


def _repair_store(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`repair` of a workspace that keeps its ledgers in runtime.sqlite: there is nothing to move aside, said so; then
    the run read as `plan` reads it (exit 3 when a row is corrupt, which repair cannot fix)."""
    from ..errors import LedgerCorruption, LedgerMissing, StoreBusy, StoreUnreadable
    from ..ledger.sqlite_layout import store_path
    from ..ledger.sqlite_plan import read_store_run
    from ..ledger.sqlite_store import SqliteStore
    from ..output.advice import corruption_next_step

    store = store_path(args.workspace)
    try:
        with SqliteStore(args.workspace) as opened:
            opened.runs()  # a store this tool reads, or exit 2 saying why
    except (StoreUnreadable, StoreBusy) as error:
        raise UsageError(str(error)) from None
    if bool(args.session) != bool(args.run):
        raise UsageError("give both --session and --run (one run), or neither (the store as a whole)")
    said = (f"{store}: a SQLite store has no torn tail to move aside (each transaction is committed whole or not at all, and "
            "SQLite's own recovery replays its WAL when the runtime next opens it); nothing changed")
    if args.session and args.run:  # the run is read first: one the store does not hold is said alone
        try:
            read_store_run(args.workspace, args.session, args.run, contract=selected_contract(args))
        except (LedgerMissing, StoreUnreadable, StoreBusy) as error:
            raise UsageError(str(error)) from None
        except LedgerCorruption as error:
            print(said, file=out)
            print(f"resume-contract: still corrupt, no plan: {error}\n{corruption_next_step(error)}", file=err)
            return EXIT_CORRUPT
    print(said, file=out)
    return EXIT_OK


def _still_corrupt(args: argparse.Namespace, path: Path, err: TextIO) -> int:
    """After repair: the ledger read as `plan` reads it. A corruption repair cannot fix (a bad row before the last)
    is exit 3 with where and why, never a quiet success that `plan` then refuses."""
    from ..errors import LedgerCorruption, LedgerInUse
    from ..ledger.file_plan import plan_ledger
    from ..output.advice import corruption_next_step

    contract = selected_contract(args, language=True)
    try:
        if hasattr(contract, "module"):  # a contract in the contract language: its own reader
            from ..ledger.language_reader import plan_file

            plan_file(path, contract.module)
        else:
            plan_ledger(path, contract=contract)
    except LedgerCorruption as error:
        print(f"resume-contract: {path} is still corrupt: {error}", file=err)
        print(corruption_next_step(error), file=err)
        return EXIT_CORRUPT
    except (LedgerInUse, OSError):
        pass  # a writer appeared, or the file went away: the next plan says so
    except MemoryError:  # what repair did stands; what it left is for `plan` to judge
        print(f"resume-contract: {path}: not enough memory to read the rest of it; plan it to see whether it is sound", file=err)
    return EXIT_OK




def register(commands: Any) -> None:
    """Add plan and repair to the subcommand parsers."""
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

    repair = commands.add_parser(
        "repair",
        help="quarantine a ledger's torn tail so it can be read and appended again",
        description="Move the bytes after the last complete row to `runtime-events.jsonl.torn-<offset>-<hash>` "
        "beside the ledger, then truncate the ledger to its last complete row. Nothing is lost; only a torn "
        "tail is repaired (any other corruption is left for a person). A workspace holding runtime.sqlite has no "
        "torn tail (SQLite commits a transaction whole or not at all): repair says so and changes nothing.",
        epilog="exit: 0 repaired or nothing to do, 1 refused (a live writer holds the ledger), 2 usage or no such ledger,\n"
        "3 a corruption repair cannot fix (anything but a torn tail: keep the file as evidence).",
    )
    add_ledger_arguments(repair)
    repair.set_defaults(handler=cmd_repair)

