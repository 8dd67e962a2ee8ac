"""Shared fixtures: a throw-away copy of the project, and a snapshot of every file under a directory."""

from __future__ import annotations

import hashlib
import io
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from resume_contract.cli import main

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of spec/ and generated/ (no caches), to change and regenerate without touching the repo."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copytree(REPO / "spec", root / "spec")
    shutil.copytree(REPO / "generated", root / "generated", ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return root


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    return {
        path.relative_to(root).as_posix(): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def snapshot() -> Callable[[Path], dict[str, tuple[str, int]]]:
    """relative path -> (sha256, mtime) of every file under a root, to prove a command wrote nothing."""
    return _snapshot


@pytest.fixture
def run_cli() -> Callable[..., tuple[int, str, str]]:
    """Run `resume-contract ARGS...` in-process; return (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(args), out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    return run
