"""Load a spec from a git revision or a directory, for `resume-contract diff`.

A revision's spec/ is copied out with `git show` into a temporary directory, which the pipeline loads through
the same validated path as the working tree, so both sides of a diff are held to the same checks.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from resume_contract.core.spec_layout import LANGUAGE_SPEC
from resume_contract.errors import ResumeContractError

from ..errors import Mark, SpecError, SpecInvalid
from ..spec.files import OPTIONAL_SPEC_FILES, SCHEMA_DIR, SPEC_DIR, SPEC_FILES

WORKING_TREE = "WORKTREE"


class SpecSourceError(ResumeContractError):
    """The revision or directory cannot be read (not a spec error: exit 2 all the same)."""


def _git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SpecSourceError(f"git {' '.join(args)}: {result.stderr.strip() or 'failed'}")
    return result.stdout


def default_base(root: Path) -> str:
    """The merge base of HEAD with the default branch (origin's HEAD, else main, else master)."""
    candidates = []
    try:
        candidates.append(_git(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD").strip())
    except SpecSourceError:
        pass
    candidates += ["main", "master"]
    for branch in candidates:
        try:
            return _git(root, "merge-base", "HEAD", branch).strip()
        except SpecSourceError:
            continue
    raise SpecSourceError("cannot find the default branch (origin/HEAD, main or master) to diff against; name BASE")


def _project_dir(root: Path, source: str) -> Path | None:
    """The project directory `source` names (WORKTREE or a directory: a project root or its spec/), or None
    for a git revision."""
    if source == WORKING_TREE:
        return root
    path = Path(source)
    if not path.is_dir():
        return None
    project = path.parent if (path / "projector.yaml").is_file() else path
    if not (project / SPEC_DIR).is_dir():
        raise SpecSourceError(f"{source}: neither a spec/ directory nor a directory that holds one")
    return project


def side_file(root: Path, source: str, name: str) -> bytes | None:
    """The bytes of `name` (relative to the project root) on one side of a diff, or None when it has none."""
    project = _project_dir(root, source)
    if project is not None:
        path = project / name
        return path.read_bytes() if path.is_file() else None
    shown = subprocess.run(["git", "-C", str(root), "show", f"{source}:{name}"], capture_output=True)
    return shown.stdout if shown.returncode == 0 else None


def commit_of(root: Path, source: str) -> str | None:
    """The commit a git-revision side names (for links to its files), or None for a directory or the working tree."""
    if _project_dir(root, source) is not None:
        return None
    return _git(root, "rev-parse", "--verify", "--quiet", f"{source}^{{commit}}").strip() or None


@contextmanager
def side_directory(root: Path, source: str) -> Iterator[Path]:
    """The project directory that holds `source`'s spec while the block runs: WORKTREE or a directory (a
    project root or its spec/) as it is, a git revision's spec/ copied out into a temporary directory."""
    project = _project_dir(root, source)
    if project is not None:
        yield project
        return
    try:
        revision = _git(root, "rev-parse", "--verify", "--quiet", f"{source}^{{commit}}").strip()
    except SpecSourceError:
        raise SpecSourceError(f"{source!r} is neither a spec directory nor a git revision in {root}") from None
    with tempfile.TemporaryDirectory(prefix="resume-contract-diff-") as scratch:
        project = Path(scratch)
        language = [LANGUAGE_SPEC, f"{SCHEMA_DIR}/contract.schema.json"]  # a contract in the contract language: its one file
        if subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"{revision}:{LANGUAGE_SPEC}"], capture_output=True).returncode == 0:
            for name in language:
                shown = subprocess.run(["git", "-C", str(root), "show", f"{revision}:{name}"], capture_output=True)
                if shown.returncode != 0:
                    raise SpecSourceError(f"{source}: {name} is missing at that revision")
                (project / name).parent.mkdir(parents=True, exist_ok=True)
                (project / name).write_bytes(shown.stdout)
            yield project
            return
        names = [f"{SPEC_DIR}/{name}.yaml" for name in SPEC_FILES] + [f"{SCHEMA_DIR}/{name}.schema.json" for name in SPEC_FILES]
        optional = [f"{SPEC_DIR}/{name}.yaml" for name in OPTIONAL_SPEC_FILES]
        names += optional + [f"{SCHEMA_DIR}/{name}.schema.json" for name in OPTIONAL_SPEC_FILES]
        for name in names:
            shown = subprocess.run(["git", "-C", str(root), "show", f"{revision}:{name}"], capture_output=True)
            if shown.returncode != 0 and (name in optional or (name.startswith(SCHEMA_DIR) and _optional_schema(name))):
                continue  # an optional spec file that revision does not have (its schema is needed only with it)
            if shown.returncode != 0:
                if name.startswith(SCHEMA_DIR):
                    raise SpecSourceError(f"{source}: {name} is missing at that revision")
                raise SpecInvalid([SpecError(Mark(name, 1, 1), f"missing spec file at revision {source}")])
            target = project / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(shown.stdout)
        yield project  # (the spec alone: a review runs no revision's oracle, nor any of its code)


def _optional_schema(name: str) -> bool:
    return any(name == f"{SCHEMA_DIR}/{optional}.schema.json" for optional in OPTIONAL_SPEC_FILES)
