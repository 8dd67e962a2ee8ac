"""`repair`: quarantine a ledger's torn tail (resume_contract/ledger/repair.py does it); a SQLite store has none."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from .common import add_ledger_arguments, ledger_from_args, selected_contract
from .errors import EXIT_CORRUPT, EXIT_OK, Refused, UsageError

if TYPE_CHECKING:
    import argparse
    from pathlib import Path


def cmd_repair(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from pathlib import Path

    from ..errors import EscapesWorkspace, LedgerMissing, NotALedger, StoreError
    from ..ledger.repair import repair_ledger
    from ..ledger.sqlite_layout import holds_store

    if args.ledger is None and args.workspace is not None and holds_store(args.workspace):
        return _repair_store(args, out, err)
    if args.ledger is not None:
        from .ledger_commands import refuse_a_store_as_a_ledger

        refuse_a_store_as_a_ledger(args.ledger)
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
    """Add repair to the subcommand parsers."""
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

