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


def test_the_public_api_is_importable_from_the_package_and_lazy() -> None:
    import subprocess
    import sys

    import resume_contract

    assert set(resume_contract.__all__) == set(resume_contract._EXPORTS) | {"__version__"}
    for name in resume_contract.__all__:
        assert getattr(resume_contract, name) is not None, name
    # `import resume_contract` (every command does it) must not load the store, the reader or msgspec.
    probe = "import sys, resume_contract; print(sorted(m for m in sys.modules if m.startswith(('resume_contract.', 'msgspec'))))"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_version_is_the_installed_distributions() -> None:
    import subprocess
    import sys
    import tempfile
    from importlib.metadata import version

    from resume_contract.contract import packaged

    # Outside any project (a temporary directory): the packaged contract, named with its spec's sha256.
    with tempfile.TemporaryDirectory() as elsewhere:
        result = subprocess.run([sys.executable, "-m", "resume_contract", "--version"], capture_output=True, text=True, cwd=elsewhere)
    identity = packaged().identity
    assert (result.returncode, result.stdout) == (
        0,
        f"resume-contract {version('resume-contract')}\ncontract: {identity.name} ({identity.phase}), spec sha256 "
        f"{identity.spec_sha256[:12]}; packaged with resume-contract\n",
    )


def test_every_package_is_marked_typed() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = config["tool"]["setuptools"]["package-data"]
    directories = {"resume_contract": "resume_contract", "resume_contract_generator": "generator", "resume_contract_generated": "generated/resume_contract_generated"}
    for package, directory in directories.items():
        assert "py.typed" in package_data[package], package
        assert (REPO / directory / "py.typed").is_file(), directory


def test_every_subpackage_is_in_the_wheel() -> None:
    # Packages are listed by hand (the import names differ from the directories); a folder left out would be
    # missing from the wheel while an editable install still finds it.
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    roots = {"resume_contract": REPO / "resume_contract", "resume_contract_generator": REPO / "generator"}
    found = {
        ".".join([name, *init.parent.relative_to(root).parts])
        for name, root in roots.items()
        for init in root.rglob("__init__.py")
        if "templates" not in init.parts
    }
    assert found <= listed, f"not in the wheel: {sorted(found - listed)}"
