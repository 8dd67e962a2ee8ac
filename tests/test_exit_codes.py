"""Every failure reaches its exit code through the one mapping in resume_contract/cli/errors.py.

Each error class is raised from inside a command (its handler replaced) and fed through `main`; an error that
is not mapped is a bug and must propagate, not become a bare message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from jinja2 import TemplateNotFound
from resume_contract_generator.errors import Mark, SpecError, SpecInvalid

from resume_contract.cli import errors, spec_commands
from resume_contract.errors import LedgerCorruption
from resume_contract.system.interrupts import Terminated

CASES = [
    (errors.UsageError("--jobs takes 1 to 64, not 0"), 2, ["resume-contract: --jobs takes 1 to 64, not 0"]),
    (errors.Refused("hand-edited files would be overwritten", command="generate"), 1,
     ["resume-contract generate: hand-edited files would be overwritten"]),
    (errors.Reported("head (x): spec/a.yaml:1:1: bad", "resume-contract diff: the head spec is invalid"), 2,
     ["head (x): spec/a.yaml:1:1: bad", "resume-contract diff: the head spec is invalid"]),
    (SpecInvalid([SpecError(Mark("spec/projector.yaml", 3, 5), "unknown key 'x'")]), 2,
     ["spec/projector.yaml:3:5: unknown key 'x'", "resume-contract: the spec has 1 error; nothing was written"]),
    (LedgerCorruption(Path("l.jsonl"), 2, 10, "torn_row", "no newline"), 3,
     ["resume-contract: corrupt ledger, no plan: l.jsonl:2: byte offset 10: torn_row: no newline",
      "next step: once no process is writing this run, run `resume-contract repair l.jsonl` (it moves the torn bytes to a file "
      "beside the ledger and keeps every committed row), then plan again"]),
    (TemplateNotFound("tests/test_contract.py.jinja"), 2,
     ["resume-contract: the generator's template 'tests/test_contract.py.jinja' is missing from this installation "
      "(a broken wheel or a partial checkout): reinstall resume-contract"]),
    (FileNotFoundError(2, "No such file or directory", "out/cx.jsonl"), 2,
     ["resume-contract: [Errno 2] No such file or directory: 'out/cx.jsonl'"]),
    (MemoryError(), 2, ["resume-contract: not enough memory for this input (nothing was written)"]),
    (Terminated(), 143, ["resume-contract: terminated (SIGTERM); pending work cancelled, workers stopped"]),
    (KeyboardInterrupt(), 130, ["resume-contract: interrupted; pending work cancelled, workers stopped"]),
]


def _raising(error: BaseException):
    def handler(args, out, err) -> int:
        raise error

    return handler


@pytest.mark.parametrize(("error", "code", "lines"), CASES, ids=[type(case[0]).__name__ for case in CASES])
def test_each_error_class_maps_to_its_exit_code(error: BaseException, code: int, lines: list[str], run_cli, monkeypatch) -> None:
    monkeypatch.setattr(spec_commands, "cmd_check", _raising(error))
    assert run_cli("check") == (code, "", "".join(line + "\n" for line in lines))


def test_an_unmapped_error_is_a_bug_and_propagates(run_cli, monkeypatch) -> None:
    monkeypatch.setattr(spec_commands, "cmd_check", _raising(ValueError("a bug")))
    with pytest.raises(ValueError, match="a bug"):
        run_cli("check")


def test_results_are_returned_not_raised(run_cli, monkeypatch) -> None:
    monkeypatch.setattr(spec_commands, "cmd_check", lambda args, out, err: errors.EXIT_FAIL)
    assert run_cli("check")[0] == 1
    assert run_cli("no-such-command")[0] == 2 and run_cli("--help")[0] == 0


def test_windows_is_refused_at_start_up_with_a_clear_error(monkeypatch, run_cli) -> None:
    # POSIX only (the reader needs os.pread, the store flock and openat): said at once, never a traceback later.
    import os

    monkeypatch.setattr(os, "name", "nt")
    code, out, err = run_cli("plan", "ledger.jsonl")
    assert (code, out) == (2, "")
    assert err == "resume-contract: resume-contract runs on POSIX systems (Linux, macOS) only, not on 'nt' (Windows is not supported)\n"
