"""What every command shares: the project root, --jobs, a ledger named by path or by workspace/session/run."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..terminal import raw_stream
from .errors import UsageError

MAX_JOBS = 64


def jobs(value: int | None, default: int) -> int:
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


def project_root(args: argparse.Namespace) -> Path:
    if args.root is not None:
        root = Path(args.root).resolve()
        if not (root / "spec").is_dir():
            raise UsageError(f"--root {args.root}: no spec/ directory there")
        return root
    return find_root(Path.cwd().resolve())


def ledger_from_args(args: argparse.Namespace) -> Path:
    from ..store import ledger_path

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


def add_ledger_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ledger", nargs="?", metavar="LEDGER.jsonl", help="a runtime-events.jsonl file")
    parser.add_argument("--workspace", metavar="DIR", help="a workspace holding sessions/<S>/runs/<R>/runtime-events.jsonl")
    parser.add_argument("--session", metavar="S", help="session id (with --workspace)")
    parser.add_argument("--run", metavar="R", help="run id (with --workspace)")




def terminal_progress(err: TextIO, line: Callable[[int, int], str], every: int = 1) -> Callable[[int, int], None] | None:
    """A progress callback that rewrites one line on a terminal (None when stderr is not one)."""
    if not err.isatty():
        return None
    screen = raw_stream(err)

    def progress(done: int, total: int) -> None:
        if done == total or done % every == 0:
            screen.write("\r" + line(done, total))
            if done == total:
                err.write("\n")
            err.flush()

    return progress
