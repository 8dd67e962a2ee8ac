"""The package as another repository gets it: a built wheel in a fresh venv, and the shared pre-commit hook.

The editable install used by the rest of the suite hides packaging mistakes (a wheel once lacked the tests
template, another the `cli` package), so this test builds the wheel, installs it into a new venv, and runs
`generate` and `check` against a second repository with its own spec/ (a copy of the frozen spec with one
wording changed, to prove the tool reads *that* tree, not its own). Then `pre-commit` installs the hook from a
clone of this repository (`repo:`/`rev:`, as .pre-commit-hooks.yaml offers it) and runs it in that repository:
clean passes, drift fails.

Needs git and the package index pip already uses (for the dependencies and pre-commit); skipped without git.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"
OTHER_WORDING = "A boundary only the second repository has"

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs git and a checkout")


def _run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def _git(cwd: Path, *args: str) -> str:
    return _run("git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args, cwd=cwd).stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel built from a clean clone of this repository's HEAD installed in it."""
    root = tmp_path_factory.mktemp("wheel")
    clone = root / "clone"
    _run("git", "clone", "-q", REPO, clone, cwd=root)
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root / "dist", clone, cwd=root)
    (wheel,) = (root / "dist").glob("resume_contract-*.whl")
    _run(sys.executable, "-m", "venv", root / "venv", cwd=root)
    _run(root / "venv" / "bin" / "pip", "install", "-q", wheel, cwd=root)
    return root / "venv" / "bin"


@pytest.fixture
def other_repository(tmp_path: Path) -> Path:
    """A second repository: its own spec (the frozen one, one boundary reworded) and no generated/ yet."""
    other = tmp_path / "other"
    shutil.copytree(FROZEN_SPEC, other / "spec")
    failpoints = other / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text(encoding="utf-8").replace("Tool implementation in progress", OTHER_WORDING), encoding="utf-8")
    return other


def test_the_wheel_generates_and_checks_another_repositorys_own_spec(installed: Path, other_repository: Path) -> None:
    tool = installed / "resume-contract"
    assert _run(tool, "--version", cwd=other_repository).stdout.startswith("resume-contract ")
    generate = _run(tool, "generate", cwd=other_repository)
    assert "wrote generated/tests/test_contract.py" in generate.stdout  # the template a wheel once lacked
    assert OTHER_WORDING in (other_repository / "generated" / "CONTRACT.md").read_text(encoding="utf-8")
    assert _run(tool, "check", cwd=other_repository).stdout.startswith("generated/ matches spec/")

    contract = other_repository / "generated" / "CONTRACT.md"
    contract.write_text(contract.read_text(encoding="utf-8") + "a hand edit\n", encoding="utf-8")
    drift = _run(tool, "check", cwd=other_repository, check=False)
    assert drift.returncode == 1 and "hand-edited  generated/CONTRACT.md" in drift.stdout


def test_the_shared_hook_installs_from_the_repository_and_checks_the_users_tree(installed: Path, other_repository: Path, tmp_path: Path) -> None:
    _run(installed / "pip", "install", "-q", "pre-commit", cwd=tmp_path)
    source = tmp_path / "hook-source"  # what `repo:` points at: a git repository whose HEAD holds the hook
    _run("git", "clone", "-q", REPO, source, cwd=tmp_path)
    revision = _git(source, "rev-parse", "HEAD").strip()
    _run(installed / "resume-contract", "generate", cwd=other_repository)
    (other_repository / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {source}\n    rev: {revision}\n    hooks:\n      - id: resume-contract-check\n", encoding="utf-8"
    )
    _git(other_repository, "init", "-q")
    _git(other_repository, "add", ".")
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    clean = _run(installed / "pre-commit", "run", "--all-files", cwd=other_repository, env=environment, check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "resume-contract check" in clean.stdout and "Passed" in clean.stdout

    failpoints = other_repository / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text(encoding="utf-8").replace(OTHER_WORDING, "Reworded without regenerating"), encoding="utf-8")
    _git(other_repository, "add", ".")
    drift = _run(installed / "pre-commit", "run", "--all-files", cwd=other_repository, env=environment, check=False)
    assert drift.returncode == 1
    assert "changed      generated/resume_contract_generated/catalog.py" in drift.stdout
