"""The common commands import only what they use: each runs in a fresh interpreter, which then lists the modules
it loaded, and none of the heavy ones a command does not need may be among them (benchmarks/latency.py
measures what that is worth; this holds it).

Tool tests: the ledgers are their own, and they run outside any project (the packaged contract).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Heavy, and needed by none of the commands below on a small ledger.
NEVER_ON_THE_COMMON_PATH = (
    "numpy",
    "concurrent.futures.process",
    "multiprocessing",
    "resume_contract.ledger.parallel",
    "resume_contract.ledger.audit",
    "resume_contract.ledger.snapshots",  # a bare ledger file has none
    "json",  # msgspec reads and writes every ordinary row; the standard library's only the rare one
    "resume_contract.proof",
    "resume_contract.conformance",
    "resume_contract.crash",
    "resume_contract.cli.proof_commands",
    "resume_contract.cli.conformance_commands",
    "resume_contract.cli.spec_commands",
    "resume_contract_generator",
    "jinja2",
    "jsonschema",
    "yaml",
    "statemachine",
)

PROBE = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + repr(sorted(sys.modules)) + "\\n"))  # (no json: it is looked for)
sys.argv = ["resume-contract", *sys.argv[1:]]
runpy.run_module("resume_contract", run_name="__main__")
"""


def modules_loaded(arguments: list[str], cwd: Path) -> tuple[int, set[str]]:
    result = subprocess.run([sys.executable, "-c", PROBE, *arguments], capture_output=True, text=True, cwd=cwd)
    listed = [line for line in result.stderr.splitlines() if line.startswith("MODULES ")]
    assert listed, result.stderr
    return result.returncode, set(ast.literal_eval(listed[-1].removeprefix("MODULES ")))


def modules_loaded_as_installed(arguments: list[str], cwd: Path) -> tuple[int, set[str]]:
    """`modules_loaded` as a wheel installs the packages: an editable install's import finder (a .pth file that
    `site` runs) loads pathlib into every interpreter, which would hide what a command itself loads. So: no
    `site` (-S), and the packages reached through links named as an installation names them."""
    import os
    import sysconfig

    installed = cwd / "installed"
    installed.mkdir()
    for name, directory in (("resume_contract", "resume_contract"), ("resume_contract_generated", "generated/resume_contract_generated"), ("resume_contract_spec", "spec")):
        (installed / name).symlink_to(REPO / directory)
    libraries = dict.fromkeys([str(installed), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(libraries)}
    result = subprocess.run([sys.executable, "-S", "-c", PROBE, *arguments], capture_output=True, text=True, cwd=cwd, env=environment)
    listed = [line for line in result.stderr.splitlines() if line.startswith("MODULES ")]
    assert listed, result.stderr
    modules = set(ast.literal_eval(listed[-1].removeprefix("MODULES ")))
    assert "site" not in modules and "resume_contract.cli" in modules
    return result.returncode, modules


def loaded_of(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(module for module in modules if any(module == name or module.startswith(name + ".") for name in names))


def small_ledger(path: Path) -> Path:
    rows = []
    for index in range(0, 40, 2):
        head = f'"sessionId":"s","invocationId":"i","runId":"r","turnId":"t{index}","partial":false'
        rows.append(f'{{"id":"e{index}","ts":{index},{head},"author":"agent","role":"model","content":{{"kind":"function_call","id":"c{index}","name":"read","args":{{}}}}}}')
        rows.append(f'{{"id":"e{index + 1}","ts":{index + 1},{head},"author":"tool","role":"tool","content":{{"kind":"function_response","id":"c{index}","name":"read","result":{{"ok":true}}}}}}')
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("arguments", [["plan", "--json"], ["plan"], ["repair"]], ids=" ".join)
def test_a_small_ledger_is_planned_and_repaired_without_the_heavy_modules(arguments: list[str], tmp_path: Path) -> None:
    ledger = small_ledger(tmp_path / "runtime-events.jsonl")
    code, modules = modules_loaded([*arguments, str(ledger)], tmp_path)
    assert code == 0
    assert loaded_of(modules, NEVER_ON_THE_COMMON_PATH) == []
    assert ("resume_contract.ledger.repair" in modules) == (arguments == ["repair"])
    assert "importlib.metadata" not in modules  # the version is looked up for --version alone
    assert loaded_of(modules, ("argparse", "gettext")) == []  # the plain forms are read without it (quick_forms)


def test_an_audit_in_one_process_loads_no_process_pool(tmp_path: Path) -> None:
    # `plan --workspace W --jobs 1` plans every run in this process: concurrent.futures.process and multiprocessing
    # (13 ms) are for an audit that starts workers.
    run = tmp_path / "ws" / "sessions" / "s" / "runs" / "r"
    run.mkdir(parents=True)
    small_ledger(run / "runtime-events.jsonl")  # (its rows are session s, run r)
    code, modules = modules_loaded(["plan", "--workspace", str(tmp_path / "ws"), "--jobs", "1"], tmp_path)
    assert code == 0 and "resume_contract.ledger.audit" in modules
    assert loaded_of(modules, ("concurrent.futures.process", "multiprocessing")) == []


# Lighter, but a bare file's plan needs none of them: OpenSSL (the spec's identity is hashed without it), shutil
# (argparse's help width), threading, weakref and dataclasses (defining a dataclass costs a millisecond), zlib
# (the operation store's full blocks), and the verdicts of a project.
NOT_FOR_A_BARE_FILE = ("_hashlib", "shutil", "threading", "weakref", "dataclasses", "zlib", "resume_contract.project.verdicts")


@pytest.mark.parametrize("arguments", [["plan", "--json"], ["plan"]], ids=" ".join)
def test_a_bare_files_plan_outside_a_project_loads_no_library_it_does_not_use(arguments: list[str], tmp_path: Path) -> None:
    ledger = small_ledger(tmp_path / "runtime-events.jsonl")
    code, modules = modules_loaded([*arguments, str(ledger)], tmp_path)
    assert code == 0
    assert loaded_of(modules, NOT_FOR_A_BARE_FILE) == []


def test_a_bare_files_json_plan_loads_neither_pathlib_nor_argparse_nor_plan_summaries(tmp_path: Path) -> None:
    # pathlib (with urllib.parse and ipaddress) and argparse (with gettext and locale) were a tenth of a small
    # plan's instructions: paths stay str below the command line, and `plan --json LEDGER` is read by quick_forms.
    ledger = small_ledger(tmp_path / "runtime-events.jsonl")
    code, modules = modules_loaded_as_installed(["plan", "--json", str(ledger)], tmp_path)
    assert code == 0
    assert loaded_of(modules, ("pathlib", "urllib", "ipaddress", "argparse", "gettext", "locale")) == []
    assert loaded_of(modules, ("resume_contract.core.summary",)) == []  # the catalog's Decision.summary, not a plan's
    assert loaded_of(modules, ("resume_contract.core.operation_store",)) == []  # one chunk: operations stay in the walk
    # signal's enums (3 M instructions: the handlers are set through _signal) and shlex (the repair hint of a torn
    # row alone quotes a path). (Nor importlib.util, but this probe's runpy loads it.)
    assert loaded_of(modules, ("signal", "shlex")) == []


@pytest.mark.parametrize("columns", [None, "", "0", "-3", "abc", "40", "200"])
def test_the_help_width_is_the_one_shutil_would_give(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from resume_contract.cli.parser import _terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert _terminal_columns() == shutil.get_terminal_size().columns


def test_the_spec_is_hashed_to_the_sha256_hashlib_gives() -> None:
    import hashlib

    from resume_contract.core.sha256 import sha256

    for data in (b"", b"abc", bytes(range(256)) * 1000):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert sha256(b"abc").hexdigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # FIPS 180-2


def test_version_loads_no_ledger_or_generator_module(tmp_path: Path) -> None:
    code, modules = modules_loaded(["--version"], tmp_path)
    assert code == 0
    assert loaded_of(modules, (*NEVER_ON_THE_COMMON_PATH, "resume_contract.ledger")) == []
    assert "importlib.metadata" not in modules  # ~80 ms: the version is read from resume_contract/_version.py


def test_every_command_is_registered_by_the_group_that_groups_names() -> None:
    import argparse
    import importlib

    from resume_contract.cli import parser as cli

    registered: dict[str, str] = {}
    for group in dict.fromkeys(cli.GROUPS.values()):
        commands = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"resume_contract.cli.{group}").register(commands)
        registered.update(dict.fromkeys(commands.choices, group))
    assert registered == cli.GROUPS
    assert set(cli.build_parser()._subparsers._group_actions[0].choices) == set(cli.GROUPS)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("argv", "invoked"),
    [
        (["plan", "x"], "plan"),
        (["--root", "plan", "check"], "check"),
        (["--ro", "check", "plan"], "plan"),
        (["--root=d", "repair"], "repair"),
        (["--help"], None),
        ([], None),
    ],
)
def test_the_invoked_command_is_read_past_the_global_options(argv: list[str], invoked: str | None) -> None:
    from resume_contract.cli.parser import _invoked

    assert _invoked(argv) == invoked


def test_a_remembered_clean_check_renders_nothing_and_loads_no_generator(project: Path) -> None:
    first, _ = modules_loaded(["--root", str(project), "check"], project)
    assert first == 0
    code, modules = modules_loaded(["--root", str(project), "check"], project)
    assert code == 0
    assert loaded_of(modules, ("resume_contract_generator", "jinja2", "yaml", "jsonschema", "statemachine", "numpy", "msgspec")) == []


def test_a_plan_in_a_project_whose_verdict_is_remembered_loads_no_heavy_module_nor_importlib_metadata(project: Path, tmp_path: Path) -> None:
    ledger = small_ledger(tmp_path / "runtime-events.jsonl")
    assert modules_loaded(["plan", "--json", str(ledger)], project)[0] == 0  # checked in sync, and remembered
    code, modules = modules_loaded(["plan", "--json", str(ledger)], project)
    assert code == 0
    assert loaded_of(modules, NEVER_ON_THE_COMMON_PATH) == []
    assert "importlib.metadata" not in modules


def test_a_plan_in_a_project_loads_its_contract_and_not_the_packaged_one(project: Path, tmp_path: Path) -> None:
    ledger = small_ledger(tmp_path / "runtime-events.jsonl")
    assert modules_loaded(["plan", "--json", str(ledger)], project)[0] == 0
    code, modules = modules_loaded(["plan", "--json", str(ledger)], project)
    assert code == 0
    assert loaded_of(modules, ("resume_contract_generated",)) == []  # the packaged contract: not this project's
    assert [module for module in modules if module.startswith("_resume_contract_project_")]


def test_an_abbreviated_root_whose_value_names_a_command_still_runs_the_command_given(
    tmp_path: Path, project: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.rename(tmp_path / "check")  # a project (repair checks what it leaves with the project's contract)
    monkeypatch.chdir(tmp_path)
    ledger = small_ledger(tmp_path / "runtime-events.jsonl")
    code, out, err = run_cli("--ro", "check", "repair", str(ledger))
    assert (code, err) == (0, "") and out.endswith("no torn tail; nothing changed\n")


def test_help_before_a_command_lists_every_command(run_cli, capsys: pytest.CaptureFixture[str]) -> None:
    from resume_contract.cli import parser as cli

    assert run_cli("-h", "plan")[0] == 0
    shown = capsys.readouterr().out  # argparse prints help to the process's stdout
    assert [command for command in cli.GROUPS if f"\n    {command} " not in shown and f"\n    {command}\n" not in shown] == [], shown
