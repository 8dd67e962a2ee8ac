"""The `resume-contract` command: one `main()`; each command group registers its parser and owns its output.

    spec_commands    init, generate, check, diff (the contract's edit loop)
    ledger_commands       plan, repair            (a crashed run's ledger)
    continuation_commands continue-plan           (may a crashed run be continued?)
    recovery_commands     recover                 (startup recovery of interrupted runs)
    proof_commands        verify, crash
    conformance_commands  vectors, conform

Only the group of the command invoked is imported and registered (`GROUPS`): a `plan` of a small ledger takes
less time than importing and building every group's parsers would; `--help`, no command or an unknown one
register them all, so the usage lists every command.

Exit codes live in `errors` (0 ok; 1 drift, refused, blocked, a violation; 2 bad spec, usage or unreadable input;
3 corrupt ledger; 130 Ctrl-C; 143 SIGTERM), where every failure is mapped to one.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import TextIO

from .errors import EXIT_OK, EXIT_USAGE, exit_for, spec_errors_for_machines

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
            contract = contract_for(None if root is None else Path(root))
        except ResumeContractError as error:  # an out-of-sync or invalid project: say so (the version still stands)
            parser._print_message(f"contract: none ({error})\n", sys.stdout)
            parser.exit()
        parser._print_message(f"contract: {contract.identity}; {contract.origin}\n", sys.stdout)
        parser.exit()


# The command group (a module of this package) that registers and runs each command; a test holds it to what
# each group's `register` adds.
GROUPS = {
    "init": "spec_commands",
    "generate": "spec_commands",
    "check": "spec_commands",
    "diff": "spec_commands",
    "plan": "ledger_commands",
    "repair": "ledger_commands",
    "continue-plan": "continuation_commands",
    "recover": "recovery_commands",
    "verify": "proof_commands",
    "crash": "proof_commands",
    "vectors": "conformance_commands",
    "conform": "conformance_commands",
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
        importlib.import_module(f".{name}", __name__).register(commands)
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


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command line; return the exit code."""
    if out is None and err is None:  # the real stdio: this is the process, not a test
        return _main_of_the_process(argv)
    return _main(argv, out or sys.stdout, err or sys.stderr, owns_process=False)


def _main_of_the_process(argv: list[str] | None) -> int:
    """`_main` on the process's stdio, which may be closed (`>&-`), a pipe whose reader left (`| head -0`) or a
    full disk (`>/dev/full`): an exit 2 with a message, never a traceback or Python's "Exception ignored" at exit."""
    err = sys.stderr if sys.stderr is not None else open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process's life
    if sys.stdout is None:
        print("resume-contract: stdout is closed; nothing was done (to discard the output, send it to /dev/null)", file=err)
        return EXIT_USAGE
    try:
        code = _main(argv, sys.stdout, err, owns_process=True)
        sys.stdout.flush()  # here, where a closed pipe is reported, not at interpreter exit
        return code
    except OSError as error:  # writing stdout outside a command (--help, --version, the last flush): full, closed
        _discard(sys.stdout)
        code, lines = exit_for(error) or (EXIT_USAGE, [f"resume-contract: {error}"])
        _tell(err, lines, err)
        return code


def _tell(stream: TextIO, lines: list[str], process_stream: TextIO | None) -> None:
    """Print `lines`, the last word of a command whose exit code is already decided. A stream whose reader left
    too (`2>&1 | head` closes stderr with stdout) loses them, and the code stands: an exit 1 from Python's
    "lost sys.stderr" would say "blocked". `process_stream`: the process's own stream beneath, to discard."""
    try:
        for line in lines:
            print(line, file=stream)
        stream.flush()
    except OSError:
        if process_stream is not None:
            _discard(process_stream)


def _discard(stream: TextIO) -> None:
    # What is still buffered would fail again when Python flushes the stream at exit (see "Note on SIGPIPE" in the
    # signal module's documentation): point the descriptor at /dev/null.
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's stream): nothing is flushed at exit
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _main(argv: list[str] | None, out: TextIO, err: TextIO, *, owns_process: bool) -> int:
    from ..output.terminal import EscapingWriter, JsonStream
    from ..system.interrupts import stop_on_signals
    from ..system.platform import require_posix

    try:
        require_posix()
    except BaseException as error:  # noqa: BLE001 - mapped: UnsupportedPlatform is exit 2
        mapped = exit_for(error)
        if mapped is None:
            raise
        print("\n".join(mapped[1]), file=err)
        return mapped[0]
    try:
        arguments = sys.argv[1:] if argv is None else argv
        args = build_parser(arguments).parse_args(arguments)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code not in (0, None) else EXIT_OK
    # One output flag on every command: --format, with --json kept as its alias (common.add_format_arguments).
    args.json = getattr(args, "format", None) == "json"
    # What people read is escaped (ledger and spec strings are evidence, never terminal control); JSON is exact,
    # and written as UTF-8 whatever the terminal's encoding.
    if args.json:
        out = JsonStream(out)  # type: ignore[assignment]
    else:
        out = EscapingWriter(out)  # type: ignore[assignment]
    err = EscapingWriter(err)  # type: ignore[assignment]
    try:
        with stop_on_signals(for_good=owns_process):
            return int(args.handler(args, out, err))
    except BaseException as error:  # noqa: BLE001 - mapped below; anything unmapped is a bug and propagates
        mapped = exit_for(error)
        if mapped is None:
            raise
        code, lines = mapped
        structured = spec_errors_for_machines(error, getattr(args, "format", None))
        if structured is not None:
            _tell(out, [structured], sys.stdout if owns_process else None)
        _tell(err, lines, sys.stderr if owns_process else None)
        return code
