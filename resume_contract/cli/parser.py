"""The command line's parser (argparse): the usage, every command's options (each group `register`s its own),
`--root` and `--version`."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

DESCRIPTION = """\
Decide, after a crash, whether an AI-agent run may be replayed, from a contract kept as YAML in spec/.

The loop: edit spec/*.yaml -> `resume-contract generate` -> `resume-contract check` (CI runs it too) ->
`resume-contract diff` (what the change does to safety) -> pull request with the spec, generated/CONTRACT.md
and the review. After a crash: `resume-contract plan` decides whether a run may be replayed.
"""

EPILOG = """\
exit codes: 0 ok, 1 drift / refused / blocked, 2 bad spec or usage (or an untrusted project: see `trust --help`),
3 corrupt ledger, 130 Ctrl-C, 143 SIGTERM.
Run `resume-contract COMMAND --help` for each command's options.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, with its own messages (usage errors quote what was typed) escaped like every other output."""

    def _print_message(self, message: str, file=None) -> None:  # noqa: ANN001 - argparse's signature
        from ..output.terminal import EscapingWriter

        if message:
            EscapingWriter(file or sys.stderr).write(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every argument added (to check its metavar), and a formatter left to find
        # the width itself imports shutil (with bz2, lzma and zlib) for it: every command paid for that.
        formatter = self.formatter_class(prog=self.prog, width=_terminal_columns() - 2)  # type: ignore[call-arg]  # every HelpFormatter takes it
        set_color = getattr(formatter, "_set_color", None)  # Python 3.14's argparse colours help, as asked
        if set_color is not None:
            set_color(getattr(self, "color", False))
        return formatter


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, as argparse asks it: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _VersionAction(argparse.Action):
    """--version, looked up only when asked (the contract it names is loaded for it alone)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=str(kwargs.get("help", "")))

    def __call__(self, parser: argparse.ArgumentParser, namespace: object, values: object, option_string: str | None = None) -> None:
        import resume_contract

        from ..errors import ResumeContractError
        from ..project.locate import contract_for

        parser._print_message(f"resume-contract {resume_contract.__version__}\n", sys.stdout)
        root = getattr(namespace, "root", None)
        try:
            contract = contract_for(root)
        except ResumeContractError as error:  # an out-of-sync or invalid project: say so (the version still stands)
            parser._print_message(f"contract: none ({error})\n", sys.stdout)
            parser.exit()
        parser._print_message(f"contract: {contract.identity}; {contract.origin}\n", sys.stdout)
        parser.exit()


# The command group (a module of this package) that registers and runs each command; a test holds it to what
# each group's `register` adds.
GROUPS = {
    "init": "init_command",
    "generate": "spec_commands",
    "check": "spec_commands",
    "diff": "spec_commands",
    "plan": "ledger_commands",
    "repair": "repair_command",
    "fit": "fit_command",
    "continue-plan": "continuation_commands",
    "recover": "recovery_commands",
    "verify": "proof_commands",
    "crash": "proof_commands",
    "vectors": "conformance_commands",
    "conform": "conformance_commands",
    "trust": "trust_commands",
}


def _invoked(argv: list[str]) -> str | None:
    """The command `argv` names (its first word that is no option and no option's value), or None."""
    words = iter(argv)
    for word in words:
        if len(word) > 2 and "--root".startswith(word):  # argparse takes `--ro DIR` for `--root DIR` too
            next(words, None)
        elif word == "--" or not word.startswith("-"):
            return next(words, None) if word == "--" else word
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of `argv`'s command (every command's when `argv` is None or names none)."""
    parser = _Parser(
        prog="resume-contract",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--root", metavar="DIR", help="the project root holding spec/ (default: found upward from the current directory)")
    parser.add_argument("--version", action=_VersionAction, help="print resume-contract's version and exit")
    # prog given, as argparse would word it: else it builds a help formatter (and imports shutil) to find it out.
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, prog=parser.prog)
    for name in _groups_to_register(argv):
        importlib.import_module(f"resume_contract.cli.{name}").register(commands)
    return parser


def _groups_to_register(argv: list[str] | None) -> tuple[str, ...]:
    everything = tuple(dict.fromkeys(GROUPS.values()))
    if argv is None:
        return everything
    command = _invoked(argv)
    group = GROUPS.get(command or "")
    if group is not None and not {"-h", "--help"} & set(argv[: argv.index(str(command))]):  # -h plan: the usage of all
        return (group,)
    if "--version" in argv and not {"-h", "--help"} & set(argv):
        return ()  # it prints and exits while the options are parsed, before any command would be
    return everything
