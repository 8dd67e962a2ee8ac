"""The installed package carries everything the generator reads (a wheel once lacked templates/tests/*.jinja,
so the shared pre-commit hook failed with a bare template name)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_package_data_covers_every_template() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["resume_contract_generator"]
    templates = REPO / "generator"
    files = sorted(path.relative_to(templates).as_posix() for path in (templates / "templates").rglob("*.jinja"))
    assert files and "templates/tests/test_contract.py.jinja" in files
    missing = [name for name in files if not any(fnmatch.fnmatchcase(name, pattern) and name.count("/") == pattern.count("/") for pattern in patterns)]
    assert missing == [], f"not in the wheel: {missing}"
