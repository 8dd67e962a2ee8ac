"""The command line as a person meets it: help, exit codes, `python -m`, and one name per module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_help_teaches_the_loop_and_the_exit_codes(run_cli, capsys) -> None:
    code, _, _ = run_cli("--help")
    text = capsys.readouterr().out
    assert code == 0
    for word in ("generate", "check", "exit codes", "edit spec/*.yaml"):
        assert word in text


def test_usage_errors_exit_2(run_cli, capsys) -> None:
    assert run_cli("frobnicate")[0] == 2
    assert run_cli()[0] == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_root_without_a_spec_is_a_usage_error(tmp_path: Path, run_cli) -> None:
    code, out, err = run_cli("--root", str(tmp_path), "check")
    assert (code, out) == (2, "")
    assert err == f"resume-contract: --root {tmp_path}: no spec/ directory there\n"


def test_a_missing_spec_file_is_reported(project: Path, run_cli) -> None:
    (project / "spec" / "scope.yaml").unlink()
    code, _, err = run_cli("--root", str(project), "check")
    assert code == 2
    assert err.startswith("spec/scope.yaml:1:1: missing spec file\n")
    (project / "spec" / "scope.yaml").mkdir()  # there, but no file: said so, not "missing"
    code, _, err = run_cli("--root", str(project), "check")
    assert code == 2 and err.startswith("spec/scope.yaml:1:1: not a file (a directory or a special file where the spec file goes)\n")


def test_an_unknown_spec_file_is_reported(project: Path, run_cli) -> None:
    (project / "spec" / "extras.yaml").write_text("a: 1\n")
    code, _, err = run_cli("--root", str(project), "check")
    assert code == 2
    assert "spec/extras.yaml:1:1: unknown spec file; the spec files are [failpoints.yaml," in err


def test_python_dash_m_runs_the_same_command() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "resume_contract", "check"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("generated/ matches spec/")


def test_the_fixed_directories_are_not_importable_under_a_second_name() -> None:
    for name in ("generator", "generated.resume_contract_generated"):
        result = subprocess.run(
            [sys.executable, "-c", f"import {name}"], cwd=REPO, capture_output=True, text=True
        )
        assert result.returncode == 1
        assert "ImportError: import this package as 'resume_contract_gen" in result.stderr


def test_an_unwritable_output_path_is_a_clear_error(run_cli, monkeypatch, tmp_path: Path) -> None:
    import types

    import msgspec

    from resume_contract.cli import proof_commands
    from resume_contract.proof import verify as verify_module

    contract = verify_module.active()  # the contract the commands run here, broken in one step
    step = dict(contract.table.step)
    step[("indeterminate", "function_response", False)] = ("succeeded", None)
    broken = msgspec.structs.replace(contract, table=msgspec.structs.replace(contract.table, step=types.MappingProxyType(step)))
    monkeypatch.setattr(proof_commands, "selected_contract", lambda args, **_: broken)
    target = tmp_path / "missing-dir" / "cx.jsonl"
    code, _, err = run_cli("verify", "--depth", "2", "--jobs", "1", "--counterexample", str(target))
    assert code == 2
    assert err.splitlines()[-1].startswith("resume-contract: [Errno 2] No such file or directory:")


def test_a_careless_path_gets_a_message_about_that_path(tmp_path: Path, run_cli) -> None:
    # An unset variable (`plan "$LEDGER"`), a directory for a file, a file for a directory: each said as it is.
    for command in ("plan", "repair"):
        assert run_cli(command, "") == (2, "", "resume-contract: the LEDGER path is empty (an unset variable?): give a runtime-events.jsonl file\n")
        assert run_cli(command, str(tmp_path)) == (2, "", f"resume-contract: {tmp_path}: not a file\n")
    file = tmp_path / "runtime-events.jsonl"
    file.write_bytes(b"")
    code, out, err = run_cli("init", str(file))
    assert (code, out, file.read_bytes()) == (1, "", b"")
    assert err == f"resume-contract init: {file}: not a directory; init makes a project in a directory (nothing was written)\n"
