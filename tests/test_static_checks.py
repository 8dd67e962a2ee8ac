"""The code's own standards, enforced by the test command: ruff (with complexity ≤ 15, and generated lines
≤ 120 columns), mypy over the three packages and the generated tests, the packages' layering (import-linter's
contracts in pyproject.toml: one direction of dependency, no cycle anywhere, the generator on the pure core
only), and no module in generator/ or resume_contract/ above ~350 lines.

mypy runs with its cache off (`--cache-dir /dev/null`), so the test writes nothing into the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 360  # "about 350": one screenful of slack, not a second job
PACKAGES = {"resume_contract": "resume_contract", "resume_contract_generator": "generator", "resume_contract_generated": "generated/resume_contract_generated"}


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed: it is in the test extras (`pip install -e '.[test]'`)")
    return found


def test_ruff_is_clean_with_the_projects_config() -> None:
    result = subprocess.run([_tool("ruff"), "check", "--no-cache", "."], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_the_architecture_holds(tmp_path: Path) -> None:
    # `--no-cache`: the check writes nothing into the checkout. The packages are found as installed.
    result = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


@pytest.mark.slow
def test_mypy_is_clean(tmp_path: Path) -> None:
    # The packages' import names differ from their directories (generator/ is resume_contract_generator), so
    # mypy reads them through links named as Python imports them.
    for name, directory in PACKAGES.items():
        (tmp_path / name).symlink_to(REPO / directory)
    mypy = [_tool("mypy"), "--cache-dir", "/dev/null", "--config-file", str(REPO / "pyproject.toml")]
    packages = [argument for name in PACKAGES for argument in ("-p", name)]
    generated_tests = [str(path) for path in sorted((REPO / "generated" / "tests").glob("test_*.py"))]  # packages or files, not both
    for targets in (packages, generated_tests):
        result = subprocess.run(mypy + targets, cwd=tmp_path, capture_output=True, text=True, env={"MYPYPATH": str(tmp_path), "PATH": ""})
        assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


@pytest.mark.parametrize("package", ["generator", "resume_contract"])
def test_no_module_does_more_than_one_screenful_of_jobs(package: str) -> None:
    long = {path.relative_to(REPO).as_posix(): n for path in sorted((REPO / package).rglob("*.py")) if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"split these by concern: {long}"
