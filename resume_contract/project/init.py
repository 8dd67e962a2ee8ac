"""`resume-contract init [DIR]`: a new contract project, started from the contract packaged with resume-contract.

It writes the packaged Phase 0 spec (with its schemas, so editors complete keys) naming the project's own run
loop and oracle, `generated/` rendered from it, the reference run loop and the Phase 0 oracle as the project's
own files to edit, a pre-commit hook and a CI workflow that run the installed resume-contract, `.gitattributes`
and a short README of the loop. It refuses, writing nothing, if any of those files is already there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..contract import packaged_spec_dir
from ..core import oracle as packaged_oracle
from ..core.spec_layout import OPTIONAL_SPEC_FILES, SCHEMA_DIR, SPEC_DIR, SPEC_FILES
from ..crash.harness import PACKAGED_RUN_LOOP
from ..errors import ResumeContractError

TEMPLATES = Path(__file__).with_name("templates")
RUN_LOOP = "runloop.py"
ORACLE = "oracle.py"
# (file written, its template in templates/)
_PROJECT_FILES = (
    (".pre-commit-config.yaml", "pre-commit-config.yaml"),
    (".github/workflows/contract.yml", "workflow.yml"),
    (".gitattributes", "gitattributes"),
    (f"{SPEC_DIR}/README.md", "README.md"),
)
_PACKAGED_RUN_LOOP_LINE = "run_loop: resume_contract/crash/runloop.py"


class InitRefused(ResumeContractError):
    """`init` would overwrite something; nothing was written."""


@dataclass(frozen=True)
class Initialized:
    root: Path
    written: tuple[str, ...]


def init_project(directory: Path, version: str) -> Initialized:
    """Make a contract project in `directory` (created if missing); raise InitRefused, writing nothing, if a file
    it would write exists. `version` is resume-contract's, for the CI workflow's install line."""
    from resume_contract_generator.pipeline import load_checked
    from resume_contract_generator.render.tree import render_all

    root = Path(directory).resolve()
    if root.exists() and not root.is_dir():
        raise InitRefused(f"{root}: not a directory; init makes a project in a directory (nothing was written)")
    files = _project_files(version)
    taken = sorted(relative for relative in [*files, "generated"] if (root / relative).exists() or (root / relative).is_symlink())
    if taken:
        raise InitRefused(f"{root}: already holds {', '.join(taken)}; init writes only into a directory without them (nothing was written)")
    written: list[Path] = []
    try:
        for relative, data in files.items():
            _write(root / relative, data, written)
        spec = load_checked(root)  # the packaged spec as this project states it: checked as any other
        for relative, text in render_all(spec).items():
            _write(root / relative, text.encode("utf-8"), written)
    except BaseException:
        _undo(root, written)
        raise
    return Initialized(root, tuple(sorted(path.relative_to(root).as_posix() for path in written)))


def _project_files(version: str) -> dict[str, bytes]:
    """Every file init writes but generated/: relative path -> bytes."""
    source = packaged_spec_dir()
    files: dict[str, bytes] = {}
    for name in SPEC_FILES:
        files[f"{SPEC_DIR}/{name}.yaml"] = (source / f"{name}.yaml").read_bytes()
        files[f"{SCHEMA_DIR}/{name}.schema.json"] = (source / "schema" / f"{name}.schema.json").read_bytes()
    for name in OPTIONAL_SPEC_FILES:  # a Phase 0 start; the schema is there for the day the project adds the file
        files[f"{SCHEMA_DIR}/{name}.schema.json"] = (source / "schema" / f"{name}.schema.json").read_bytes()
    failpoints = files[f"{SPEC_DIR}/failpoints.yaml"].decode("utf-8")
    if _PACKAGED_RUN_LOOP_LINE not in failpoints:
        raise InitRefused(f"the packaged spec no longer names its run loop as `{_PACKAGED_RUN_LOOP_LINE}`: a broken installation")
    files[f"{SPEC_DIR}/failpoints.yaml"] = failpoints.replace(_PACKAGED_RUN_LOOP_LINE, f"run_loop: {RUN_LOOP}").encode("utf-8")
    invariants = files[f"{SPEC_DIR}/invariants.yaml"].decode("utf-8")
    files[f"{SPEC_DIR}/invariants.yaml"] = invariants.replace(
        "\ninvariants:\n",
        f"\n# The independent oracle `matches_oracle` compares plans with, written from the contract's text: edit it\n"
        f"# when the contract's meaning (not only its wording) changes, e.g. a renamed rejection reason.\noracle: {ORACLE}\n\ninvariants:\n",
        1,
    ).encode("utf-8")
    files[RUN_LOOP] = PACKAGED_RUN_LOOP.read_bytes()
    files[ORACLE] = Path(str(packaged_oracle.__file__)).read_bytes()
    for relative, template in _PROJECT_FILES:
        files[relative] = (TEMPLATES / template).read_text(encoding="utf-8").replace("@VERSION@", version).encode("utf-8")
    return files


def _undo(root: Path, written: list[Path]) -> None:
    """Remove what an init cut off wrote, and the directories it made for it (empty ones only)."""
    for path in reversed(written):
        path.unlink(missing_ok=True)
    directories = {parent for path in written for parent in path.relative_to(root).parents if str(parent) != "."}
    for directory in sorted(directories, key=lambda relative: -len(relative.parts)):
        try:
            (root / directory).rmdir()
        except OSError:
            pass


def _write(path: Path, data: bytes, written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as handle:  # never over a file that appeared meanwhile
        written.append(path)
        handle.write(data)


__all__ = ["InitRefused", "Initialized", "init_project"]
