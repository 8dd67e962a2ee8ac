"""Attacks on what runs from generated/ (issue 23, item 7): bytecode written by hand beside a generated module
must not run in place of its source unnoticed. `check` reports any pyc this interpreter would load that is not
the module's source compiled; a project's contract is compiled from its sources, never read from bytecode; a
cache an ordinary import wrote is not drift.

These are tests of the tool: the project is the frozen spec's (tests/frozen_spec/).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import marshal
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from resume_contract.contract import encode_event
from resume_contract.project.locate import load_project

MODULES = Path("generated") / "resume_contract_generated"
TABLE = MODULES / "projector_table.py"
ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _pyc(project: Path, module: Path, optimization: str = "") -> Path:
    return Path(importlib.util.cache_from_source(str(project / module), optimization=optimization))


def _plant_unchecked_pyc(project: Path) -> Path:
    """An unchecked-hash pyc of projector_table.py with its `at_end` emptied: Python runs it without reading the
    source, so a dangling call raises no diagnostic."""
    source = project / TABLE
    text = source.read_text()
    forged_source = project.parent / "forged_projector_table.py"
    forged_source.write_text(text.replace("{'indeterminate': 'pending_tool_result'}", "{}"))
    assert forged_source.read_text() != text
    pyc = _pyc(project, TABLE)
    py_compile.compile(str(forged_source), cfile=str(pyc), dfile=str(source), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    return pyc


def _dangling_call_ledger(tmp_path: Path, events) -> Path:
    ledger = tmp_path / "runtime-events.jsonl"
    ledger.write_bytes(b"".join(encode_event(event) + b"\n" for event in (events.text("e1"), events.call("e2", "c1"))))
    return ledger


def test_a_planted_unchecked_hash_pyc_is_drift_and_no_command_runs_it(project: Path, run_cli, tmp_path: Path, events) -> None:
    pyc = _plant_unchecked_pyc(project)
    relative = pyc.relative_to(project).as_posix()

    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1, out
    assert f"  bytecode     {relative}\n" in out and out.rstrip().endswith("to fix: resume-contract generate")

    code, out, err = run_cli("--root", str(project), "plan", str(_dangling_call_ledger(tmp_path, events)))
    assert code == 2 and "generated/ does not match spec/ (bytecode " + relative in err, (out, err)

    # generate drops every cache with the old tree, and the project is in sync again.
    code, out, _ = run_cli("--root", str(project), "generate")
    assert (code, out) == (0, f"removed {relative}\n")
    assert not pyc.exists() and run_cli("--root", str(project), "check")[0] == 0


def test_a_projects_contract_is_compiled_from_its_sources_never_read_from_bytecode(project: Path) -> None:
    _plant_unchecked_pyc(project)
    contract = load_project(project, check_sync=False)  # even unchecked, the pyc is never what runs
    assert dict(contract.table.at_end) == {"indeterminate": "pending_tool_result"}


def _import_generated(project: Path, *flags: str) -> None:
    """Import the project's generated modules as Python ordinarily does, writing their bytecode caches."""
    program = "import sys; sys.path.insert(0, sys.argv[1]); import resume_contract_generated.projector_table, resume_contract_generated.catalog"
    subprocess.run([sys.executable, *flags, "-c", program, str(project / "generated")], check=True, env=ENVIRONMENT)


def test_caches_an_ordinary_import_writes_are_not_drift(project: Path, run_cli) -> None:
    _import_generated(project)
    _import_generated(project, "-O")
    assert _pyc(project, TABLE).is_file() and _pyc(project, TABLE, "1").is_file()
    # A hash-based pyc compiled from the source itself runs the source: not drift either.
    catalog = project / MODULES / "catalog.py"
    py_compile.compile(str(catalog), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    assert run_cli("--root", str(project), "check") == (0, "generated/ matches spec/ (9 files)\n", "")


def test_a_stale_cache_python_would_not_load_is_not_drift(project: Path, run_cli) -> None:
    pyc = _plant_unchecked_pyc(project)
    # The same forged code as an ordinary timestamp pyc, whose recorded time is not the source's: Python
    # discards it and compiles the source.
    data = bytearray(pyc.read_bytes())
    data[4:8] = (0).to_bytes(4, "little")
    data[8:16] = (1).to_bytes(4, "little") + (project / TABLE).stat().st_size.to_bytes(4, "little")
    pyc.write_bytes(bytes(data))
    assert run_cli("--root", str(project), "check")[0] == 0
    # ... until its time is the source's: then Python would run it, and it is drift.
    os.utime(project / TABLE, (1, 1))
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and f"  bytecode     {pyc.relative_to(project).as_posix()}\n" in out


CACHE = "generated/resume_contract_generated/__pycache__"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


@pytest.mark.parametrize(
    ("planted", "reported"),
    [
        (f"{CACHE}/evil.py", f"{CACHE}/evil.py"),
        (f"{CACHE}/nested/catalog.cpython-311.pyc", f"{CACHE}/nested"),
        ("generated/resume_contract_generated/extra_module.py", "generated/resume_contract_generated/extra_module.py"),
        ("generated/resume_contract_generated/extra_package/__init__.py", "generated/resume_contract_generated/extra_package/__init__.py"),
        ("generated/resume_contract_generated/hook.pth", "generated/resume_contract_generated/hook.pth"),
        # An extension module beside a source is imported before it: an orphan like any other file.
        (f"generated/resume_contract_generated/projector_table{SUFFIX}", f"generated/resume_contract_generated/projector_table{SUFFIX}"),
    ],
)
def test_any_other_file_beside_the_generated_modules_is_an_orphan(project: Path, run_cli, planted: str, reported: str) -> None:
    path = project / planted
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("import os\n")
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and f"  orphaned     {reported}\n" in out, out


def test_pytests_own_cache_of_the_generated_tests_is_not_drift_and_a_planted_one_is(project: Path, run_cli) -> None:
    # pytest (8 on) loads `<name>.<tag>-pytest-<version>.pyc` when it records the source's hash, whoever wrote it:
    # a planted one would swap the generated tests for a pass.
    tests = project / "generated" / "tests"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider", str(tests)], check=True, env=ENVIRONMENT, capture_output=True)
    written = sorted((tests / "__pycache__").glob("*-pytest-*.pyc"))
    assert written, "pytest wrote no cache: the test tried nothing"
    assert run_cli("--root", str(project), "check")[0] == 0
    source = tests / written[0].name.split(".", 1)[0]
    forged = compile("def test_everything_is_fine():\n    assert True\n", str(source) + ".py", "exec")
    header = importlib.util.MAGIC_NUMBER + b"\x03\x00\x00\x00" + importlib.util.source_hash(Path(str(source) + ".py").read_bytes())[:8]
    written[0].write_bytes(header + marshal.dumps(forged))
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and f"  bytecode     {written[0].relative_to(project).as_posix()}\n" in out


def test_a_projects_oracle_is_compiled_from_its_source_never_read_from_bytecode(tmp_path: Path) -> None:
    from resume_contract_generator.spec.oracle_file import load_module_file

    oracle = tmp_path / "oracle.py"
    oracle.write_text("def decide(rows, expected_high_water):\n    return 'the source'\n")
    planted = tmp_path / "planted.py"
    planted.write_text("raise SystemExit('a planted oracle ran')\n")
    py_compile.compile(str(planted), cfile=importlib.util.cache_from_source(str(oracle)), dfile=str(oracle), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    assert load_module_file(oracle, "oracle").decide([], None) == "the source"
