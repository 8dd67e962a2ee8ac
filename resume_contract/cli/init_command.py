"""`init`: a new contract project, the packaged maka contract's or (`--language`) a starter in the contract language.

`resume_contract.project.init` does the work; this module parses, calls it, and says what to run next."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from .errors import EXIT_OK, Refused, UsageError


def cmd_init(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import resume_contract

    from ..project.init import InitRefused, InitUnsafe, init_project

    try:
        made = init_project(Path(args.directory), resume_contract.__version__, language=args.language)
    except InitUnsafe as error:  # a link where it would write: unsafe input, exit 2
        raise UsageError(str(error)) from None
    except InitRefused as error:
        raise Refused(str(error), command="init") from None
    for path in made.written:
        print(f"wrote {path}", file=out)
    if args.language:
        print(f"a contract project in the contract language (spec/contract.yaml: a starter to make your runtime's). Next: {made.next_step(Path.cwd(), language=True)}", file=out)
        return EXIT_OK
    print(f"a contract project, started from the contract packaged with resume-contract. Next: {made.next_step(Path.cwd())}", file=out)
    return EXIT_OK


def register(commands: Any) -> None:
    """Add init to the subcommand parsers."""
    init = commands.add_parser(
        "init",
        help="start a contract project of your own: spec/, generated/, a run loop, an oracle, hooks and CI",
        description="Write a new contract project into DIR (default: the current directory), started from the "
        "contract packaged with resume-contract: spec/ (with its schemas), generated/, runloop.py (the run loop the "
        "crash harness kills at each failpoint's hook), oracle.py (the independent oracle the invariants compare "
        "with), .pre-commit-config.yaml, .github/workflows/contract.yml, .gitattributes and spec/README.md. "
        "Refuses, writing nothing, if any of them exists.",
        epilog="exit: 0 written, 1 refused (a file is already there), 2 usage, or a path init would write goes "
        "through a symlink (named; init writes nothing through a link nor outside DIR).",
    )
    init.add_argument("directory", nargs="?", default=".", metavar="DIR", help="where to write the project (created if missing)")
    init.add_argument(
        "--language", action="store_true",
        help="for a runtime of your own: a starter contract in the contract language (spec/contract.yaml: rows, items, "
        "the decision in your words, scenarios; docs/tutorial.md) instead of the packaged maka contract: no run "
        "loop (`crash` kills a child at each scenario's prefix) and no oracle yet (`verify` needs one: the tutorial's "
        "section 7)",
    )
    init.set_defaults(handler=cmd_init)
