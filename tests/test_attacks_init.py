"""Attack (issue 39): `resume-contract init DIR` into a directory someone planted a symlink in, and its printed hint.

The promises: `init` creates nothing outside the directory it is given — a path it would write that goes through a
symlink (a `.github` link to a directory elsewhere) is refused, exit 2, naming the link, with nothing written
anywhere — and every path it prints in a command is shell-quoted. On 557b96c init wrote through the link, and
printed `cd DIR && …` with DIR as it is.

Each test runs the real CLI in a subprocess.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest


def _init(cwd: Path, directory: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "resume_contract", "init", directory], cwd=cwd, capture_output=True, text=True, timeout=300)


def _tree(root: Path) -> list[str]:
    """Every entry below `root`, links not followed."""
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


@pytest.mark.parametrize("link", [".github", ".github/workflows", "spec", "spec/schema"])
def test_init_refuses_a_symlink_on_any_path_it_would_write_and_writes_nothing(tmp_path: Path, link: str) -> None:
    project = tmp_path / "project"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / link).parent.mkdir(parents=True)
    (project / link).symlink_to(elsewhere, target_is_directory=True)
    before = _tree(project)
    result = _init(tmp_path, "project")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert f"{project / link}: a symlink (to {elsewhere}) where init would write" in result.stderr
    assert "nothing was written" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert _tree(elsewhere) == []  # nothing written through the link
    assert _tree(project) == before  # nor anything beside it


def test_init_refuses_a_dangling_symlink_where_it_would_write(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".github").symlink_to(tmp_path / "not-yet")
    result = _init(tmp_path, "project")
    assert result.returncode == 2 and f"{project / '.github'}: a symlink" in result.stderr
    assert not (tmp_path / "not-yet").exists() and _tree(project) == [".github"]


def test_init_into_a_linked_directory_itself_is_the_users_choice(tmp_path: Path) -> None:
    # DIR itself may be a link (the user named it): init writes into its target, below which nothing is a link.
    (tmp_path / "real").mkdir()
    (tmp_path / "named").symlink_to(tmp_path / "real", target_is_directory=True)
    result = _init(tmp_path, "named")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "real" / ".github" / "workflows" / "contract.yml").is_file()


@pytest.mark.parametrize("name", ["my project", "proj; touch pwned", "x $(touch pwned) `touch pwned`", "-dash 'quote'"])
def test_the_next_step_command_quotes_the_directory(tmp_path: Path, name: str) -> None:
    result = _init(tmp_path, name)
    assert result.returncode == 0, result.stderr
    root = (tmp_path / name).resolve()
    hint = result.stdout.splitlines()[-1]
    command = hint.split("Next: ", 1)[1]
    assert command.startswith(f"cd {shlex.quote(str(root))} && git init && ")
    words = shlex.split(command.split(" (", 1)[0])
    assert words[:3] == ["cd", str(root), "&&"]  # the shell reads the directory back as one word, nothing run
    assert not (tmp_path / "pwned").exists()
