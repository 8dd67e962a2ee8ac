"""Exit codes, and the one place an error becomes one (with the lines a person reads on stderr).

Commands return their *result* (0, or 1 for drift, a blocked plan, a violation, a disagreement); every
*failure* is an exception, mapped here. Errors raised for the command line carry their own exit code
(`CliError`, as cog's CogError does); errors from the library are mapped by `exit_for`.
"""

from __future__ import annotations

import errno
import sys
from typing import Any

# Imported now, not when an error is mapped: the error may be that no file can be opened (file descriptors
# exhausted), and an import opens files. Errors of modules not imported yet are looked up in sys.modules.
from ..errors import ExpressionFailed, LedgerCorruption, UnsupportedPlatform
from ..output.advice import corruption_next_step
from ..system.interrupts import Terminated

EXIT_OK = 0
EXIT_FAIL = 1  # drift, a refused write, a blocked plan, a violation
EXIT_USAGE = 2  # a bad spec, bad usage or unreadable input
EXIT_CORRUPT = 3  # a corrupt ledger: never a plan
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


class CliError(Exception):
    """An error the command line reports as it is: its lines go to stderr, its exit code is the process's."""

    exit_code = EXIT_USAGE

    def __init__(self, *lines: str, command: str | None = None) -> None:
        super().__init__(*lines)
        self.command = command

    def lines(self) -> list[str]:
        prefix = "resume-contract" if self.command is None else f"resume-contract {self.command}"
        return [f"{prefix}: {line}" for line in self.args]


class UsageError(CliError):
    """The command line or its inputs cannot be used: exit 2."""


class Refused(CliError):
    """The command would lose something (overwrite a hand edit, repair under a live writer); nothing was done: exit 1."""

    exit_code = EXIT_FAIL


class Reported(CliError):
    """The lines were already worded in full (e.g. a spec side's errors in `diff`): printed without a prefix."""

    def __init__(self, *lines: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(*lines)
        self.exit_code = exit_code

    def lines(self) -> list[str]:
        return list(self.args)


def exit_for(error: BaseException) -> tuple[int, list[str]] | None:
    """(exit code, stderr lines) for an error the command line reports; None for a bug (it propagates)."""
    if isinstance(error, CliError):
        return error.exit_code, error.lines()
    spec_errors = _spec_errors(error)
    if spec_errors is not None:
        count = len(spec_errors)
        summary = f"resume-contract: the spec has {count} error{'s' if count != 1 else ''}; nothing was written"
        return EXIT_USAGE, [str(item) for item in spec_errors] + [summary]
    if (
        isinstance(error, UnsupportedPlatform)
        or _is_instance(error, "resume_contract.project.locate", "ProjectOutOfSync")
        or _is_instance(error, "resume_contract.project.trust", "UntrustedProject")
        or _is_instance(error, "resume_contract.core.project_files", "ProjectFileRefused")
    ):
        return EXIT_USAGE, [f"resume-contract: {error}"]
    if isinstance(error, ExpressionFailed):
        return EXIT_USAGE, [
            f"resume-contract: an expression of the contract cannot judge a row, so nothing was decided or written: {error}",
            "next step: make the expression in spec/ judge every row (guard a field with has(), compare a value instead of "
            "using it as a condition, or read it under `semantics: javascript`), then generate and try again",
        ]
    if isinstance(error, LedgerCorruption):
        return EXIT_CORRUPT, [f"resume-contract: corrupt ledger, no plan: {error}", corruption_next_step(error)]
    if _is_missing_template(error):
        return EXIT_USAGE, [
            f"resume-contract: the generator's template {getattr(error, 'name', str(error))!r} is missing from this installation "
            "(a broken wheel or a partial checkout): reinstall resume-contract"
        ]
    if isinstance(error, BrokenPipeError):
        return EXIT_USAGE, ["resume-contract: the output was cut off: its reader closed the pipe (stdout)"]
    if isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE):
        return EXIT_USAGE, [f"resume-contract: too many open files ({error}); raise the limit (ulimit -n) or give fewer --jobs"]
    if isinstance(error, OSError):
        # A path that cannot be read or written (a counterexample into a missing directory, a full disk...).
        return EXIT_USAGE, [f"resume-contract: {error}"]
    if isinstance(error, MemoryError):
        return EXIT_USAGE, ["resume-contract: not enough memory for this input (nothing was written)"]
    if isinstance(error, Terminated):
        return EXIT_TERMINATED, ["resume-contract: terminated (SIGTERM); pending work cancelled, workers stopped"]
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED, ["resume-contract: interrupted; pending work cancelled, workers stopped"]
    return None


def _is_instance(error: BaseException, module: str, name: str) -> bool:
    """isinstance against a class of a module imported lazily: if it is not imported, none of its errors exist."""
    found = sys.modules.get(module)
    return found is not None and isinstance(error, getattr(found, name))


def _spec_errors(error: BaseException) -> list[Any] | None:
    """A bad spec's errors (the generator's SpecInvalid), or None for any other error."""
    if not _is_instance(error, "resume_contract_generator.errors", "SpecInvalid"):
        return None
    return list(error.errors)  # type: ignore[attr-defined]


def _is_missing_template(error: BaseException) -> bool:
    # jinja2 is imported only by commands that render; if it was never imported, this is not its error.
    exceptions = sys.modules.get("jinja2.exceptions")
    return exceptions is not None and isinstance(error, exceptions.TemplateNotFound)


def spec_errors_for_machines(error: BaseException, output_format: str | None) -> str | None:
    """A bad spec's errors as GitHub annotations or one JSON document (stdout), beside the stderr lines."""
    spec_errors = _spec_errors(error)
    if spec_errors is None or output_format not in ("github", "json"):
        return None
    if output_format == "github":
        from resume_contract_generator.annotations import annotation

        from ..output.terminal import escape

        return "\n".join(
            annotation("error", escape(item.message), file=item.mark.file, line=item.mark.line, col=item.mark.column, title="resume-contract: bad spec")
            for item in spec_errors
        )
    import json

    items = [{"file": item.mark.file, "line": item.mark.line, "column": item.mark.column, "message": item.message} for item in spec_errors]
    return json.dumps({"clean": False, "errors": items}, indent=2)
