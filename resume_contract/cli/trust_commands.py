"""`trust`: list a project in the user's trust file, so that commands run in it use its contract (project/trust.py)."""

from __future__ import annotations

import argparse
import os
import shlex
from typing import Any, TextIO

from .errors import EXIT_OK, UsageError


def cmd_trust(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..core.spec_layout import SPEC_DIR
    from ..project.trust import add_trusted, ownership_problem, spec_run_files

    directory = args.directory
    if directory != "*":
        if not os.path.isdir(os.path.join(directory, SPEC_DIR)):
            raise UsageError(f"{directory}: no spec/ directory there: give a contract project's root (or '*' to trust every directory)")
        directory = os.path.realpath(directory)
    path, added = add_trusted(directory)
    shown = shlex.quote(directory)
    print(f"{'trusted' if added else 'already trusted'}: {shown} (listed in {shlex.quote(path)})", file=out)
    if directory != "*":
        problem = ownership_problem(directory, spec_run_files(directory))
        if problem is not None:
            print(f"note: {problem}: anyone who can write there now decides what its contract is for you", file=out)
    return EXIT_OK


def register(commands: Any) -> None:
    trust = commands.add_parser(
        "trust",
        help="trust a contract project that is not yours (another user's checkout, a container's bind mount)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A project found upward from the current directory is used only when it is trusted: owned by you\n"
        "(or root) and writable by no one else, down to every file of spec/ and generated/ and the oracle and run\n"
        "loops its spec names; or listed in your trust file; or named with --root. Anywhere else every command\n"
        "refuses (exit 2) rather than run a stranger's contract or code. This command lists DIR (its real path) in\n"
        "the trust file: $RESUME_CONTRACT_CONFIG_DIR/trusted, else $XDG_CONFIG_HOME/resume-contract/trusted, else\n"
        "~/.config/resume-contract/trusted, one path a line ('*' trusts every directory, as git's\n"
        "safe.directory does).\n\n"
        "  resume-contract trust /src            # a container running as root over a bind-mounted checkout\n",
        epilog="exit: 0 listed (or already), 2 usage (DIR holds no spec/).",
    )
    trust.add_argument("directory", metavar="DIR", help="the project's root (the directory holding spec/), or '*'")
    trust.set_defaults(handler=cmd_trust)
