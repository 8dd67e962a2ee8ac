"""What every command shares: the project root, --jobs, a ledger named by path or by workspace/session/run."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from ..output.terminal import raw_stream
from .errors import UsageError

if TYPE_CHECKING:
    import argparse
    from pathlib import Path

    from ..contract import Contract

MAX_JOBS = 64


def jobs(value: int | None, default: int) -> int:
    """A validated --jobs: 1 to MAX_JOBS worker processes (more would only fight over the cores)."""
    if value is None:
        return default
    if not 1 <= value <= MAX_JOBS:
        raise UsageError(f"--jobs takes 1 to {MAX_JOBS}, not {value}")
    return value


def project_root(args: argparse.Namespace) -> Path:
    """The project a spec command works on: --root, or the nearest directory upward holding spec/projector.yaml
    when it is trusted (else UntrustedProject)."""
    from pathlib import Path

    from ..project.locate import find_root

    if args.root is not None:
        root = Path(args.root).resolve()
        if not (root / "spec").is_dir():
            raise UsageError(f"--root {args.root}: no spec/ directory there")
        return root
    found = find_root(Path.cwd())
    if found is None:
        raise UsageError(f"no spec/projector.yaml in {Path.cwd()} or any parent; run inside a resume-contract project or pass --root")
    from ..project.trust import require_trusted

    require_trusted(str(found))  # found, not named: used only when trusted (project/trust.py)
    return found


def selected_contract(args: argparse.Namespace, *, language: bool = False) -> Contract:
    """The contract a command runs: the project's it runs in (--root, or found upward), in sync with its spec;
    outside any project, the one packaged with resume-contract. A contract in the contract language only for a
    command that runs one (`language`): any other is a usage error saying which do."""
    from ..project.locate import NotAProject, contract_for

    try:
        contract = contract_for(args.root)  # (a str: outside any project, a plan does not load pathlib)
    except NotAProject as error:
        raise UsageError(str(error)) from None
    if not language and hasattr(contract, "module"):
        raise UsageError(
            f"`{args.command}` runs a contract of the catalogue's files (spec/projector.yaml ...), not one in the contract language "
            "(spec/contract.yaml): for that, plan, fit, repair, crash, verify, generate, check and diff do"
        )
    return contract


def ledger_from_args(args: argparse.Namespace) -> str | Path:
    """The ledger the arguments name: LEDGER as given (a str), or the run's file in the workspace (a Path), or,
    in a workspace that keeps its ledgers in runtime.sqlite, the run's name there (a str)."""
    if args.ledger is not None:
        if args.workspace or args.session or args.run:
            raise UsageError("give either LEDGER or --workspace/--session/--run, not both")
        if not args.ledger:  # Path("") is ".": an unset variable in a script would read as this directory
            raise UsageError("the LEDGER path is empty (an unset variable?): give a runtime-events.jsonl file")
        from ..ledger.committed_file import path_text

        return path_text(args.ledger)  # as Path would name it, without loading pathlib
    if args.workspace is None or not (args.session and args.run):
        raise UsageError("give a LEDGER file, or --workspace DIR with --session S and --run R")
    from pathlib import Path

    from ..ledger.sqlite_layout import holds_store, store_path
    from ..ledger.store import ledger_path

    if holds_store(args.workspace):  # the run is rows of the workspace's runtime.sqlite, named so
        return f"{store_path(args.workspace)} (session {args.session}, run {args.run})"
    try:
        return ledger_path(Path(args.workspace), args.session, args.run)
    except ValueError as error:
        raise UsageError(str(error)) from None


def add_ledger_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ledger", nargs="?", metavar="LEDGER.jsonl", help="a runtime-events.jsonl file")
    parser.add_argument("--workspace", metavar="DIR", help="a workspace: sessions/<S>/runs/<R>/runtime-events.jsonl, or its runtime.sqlite store")
    parser.add_argument("--session", metavar="S", help="session id (with --workspace)")
    parser.add_argument("--run", metavar="R", help="run id (with --workspace)")




def progress_reporter(
    err: TextIO, what: str, items_per_unit: float = 1.0, item_name: str = "", every_seconds: float = 3.0
) -> Callable[[int, int], None]:
    """A progress callback (done, total units) that shows the rate and an ETA.

    On a terminal it rewrites one line on every call; elsewhere (CI logs, a pipe) it prints a line at most every
    `every_seconds`, and always the last one, so a long run is never silent and a log is never flooded.
    `items_per_unit` turns units (e.g. subtrees) into items (ledgers) for the rate."""
    on_terminal = err.isatty()
    screen = raw_stream(err) if on_terminal else err
    started = time.monotonic()
    last_line = [started]  # the first line after `every_seconds`: a quick run prints only its last

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if not on_terminal and done != total and now - last_line[0] < every_seconds:
            return
        last_line[0] = now
        elapsed = max(now - started, 1e-9)
        rate = done * items_per_unit / elapsed
        eta = (total - done) * elapsed / done if done else float("nan")
        line = f"{what} {done}/{total} ({100 * done // max(total, 1)}%), {rate:,.0f} {item_name}/s, ETA {eta:.0f} s" if item_name else f"{what} {done}/{total} ({100 * done // max(total, 1)}%), ETA {eta:.0f} s"
        if on_terminal:
            screen.write("\r" + line)
            if done == total:
                err.write("\n")
        else:
            err.write(line + "\n")
        err.flush()

    return progress


def add_format_arguments(parser: argparse.ArgumentParser, json_help: str) -> None:
    """`--format text|json` (as `check` and `diff` take it), and `--json`, its alias."""
    parser.add_argument("--format", choices=("text", "json"), default="text", help=f"text for a person (the default); json: {json_help}")
    parser.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
