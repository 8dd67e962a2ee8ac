"""The `resume-contract` command: one `main()`; each command group registers its parser and owns its output.

    spec_commands    init, generate, check, diff (the contract's edit loop)
    ledger_commands       plan                    (a crashed run's ledger)
    repair_command        repair                  (a torn tail quarantined)
    fit_command           fit                     (the row model against the runtime's real ledgers)
    continuation_commands continue-plan           (may a crashed run be continued?)
    recovery_commands     recover                 (startup recovery of interrupted runs)
    proof_commands        verify, crash
    conformance_commands  vectors, conform

The parser is `parser` (argparse). Only the group of the command invoked is imported and registered there
(`GROUPS`): a `plan` of a small ledger takes less time than importing and building every group's parsers would;
`--help`, no command or an unknown one register them all, so the usage lists every command. The plainest forms
of the commands people wait on (`plan [--json] LEDGER`, `repair LEDGER`) are read by `quick_forms`, without
argparse at all.

Exit codes live in `errors` (0 ok; 1 drift, refused, blocked, a violation; 2 bad spec, usage or unreadable input;
3 corrupt ledger; 130 Ctrl-C; 143 SIGTERM), where every failure is mapped to one.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any, NoReturn, TextIO

from .errors import EXIT_OK, EXIT_USAGE, exit_for, spec_errors_for_machines
from .quick_forms import quick_arguments


def run() -> NoReturn:
    """The `resume-contract` command (the script pip writes, and `python -m resume_contract`): `main()`, then exit.

    When nothing is left to run at exit (no atexit callback: a worker pool, a temporary directory, logging or a
    coverage tool registers one; no `threading`, so no thread; no profiler or debugger), the process ends at once once its output is
    flushed, without tearing the interpreter down: freeing every module and object costs a small plan a tenth
    of its instructions (mypy exits the same way, for the same reason). Otherwise it exits as Python does, but for
    an exception no command maps (a bug): after its traceback, exit 2, nothing decided (Python's 1 says blocked)."""
    try:
        code = main()
    except Exception:  # (not KeyboardInterrupt or SystemExit: main maps those)
        import traceback

        traceback.print_exc()
        print("resume-contract: internal error, a bug (please report it with the traceback above); nothing was decided", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    if _nothing_left_at_exit():
        try:
            for stream in (sys.stderr, sys.stdout):  # (None when closed; stdout was flushed by main already)
                if stream is not None:
                    stream.flush()
        except (OSError, ValueError):  # exit as Python does, which says nothing more (main told of a stdout that failed)
            raise SystemExit(code) from None
        os._exit(code)
    raise SystemExit(code)


def _nothing_left_at_exit() -> bool:
    ncallbacks = getattr(atexit, "_ncallbacks", None)  # (CPython's; elsewhere, exit as Python does)
    # (A profiler or a debugger that runs the command, cProfile or pdb, reports when it returns.)
    hooked = sys.getprofile() is not None or sys.gettrace() is not None
    return ncallbacks is not None and ncallbacks() == 0 and "threading" not in sys.modules and not hooked


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


def _parsed(arguments: list[str]) -> Any:
    from .parser import build_parser

    return build_parser(arguments).parse_args(arguments)


def _main(argv: list[str] | None, out: TextIO, err: TextIO, *, owns_process: bool) -> int:
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
        # From here, a Ctrl-C or SIGTERM stops the command as one (exit 130 or 143, with a word), also while its
        # arguments are read and its modules imported.
        with stop_on_signals(for_good=owns_process):
            return _command(argv, out, err, owns_process=owns_process)
    except KeyboardInterrupt as error:  # (Terminated is one) before the command's own mapping could take it
        mapped = exit_for(error)
        if mapped is None:
            raise
        _tell(err, mapped[1], sys.stderr if owns_process else None)
        return mapped[0]


def _command(argv: list[str] | None, out: TextIO, err: TextIO, *, owns_process: bool) -> int:
    from ..output.terminal import EscapingWriter, JsonStream

    try:
        arguments = sys.argv[1:] if argv is None else argv
        args = quick_arguments(arguments) or _parsed(arguments)
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
