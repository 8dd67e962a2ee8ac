"""`resume-contract init [DIR]`: a new contract project, started from the contract packaged with resume-contract.

It writes the packaged spec (with its schemas, so editors complete keys) naming the project's own run loop and
oracle, `generated/` rendered from it, the reference run loop and the packaged oracle (in the edition the spec
names, as one file) as the project's own files to edit, a pre-commit hook and a CI workflow that run the installed resume-contract, `.gitattributes`
and a short README of the loop. It refuses, writing nothing, if any of those files is already there.

It creates nothing outside the directory it is given: DIR itself is the user's choice (it may be a link), but
below it no path init writes may go through a symlink, whatever it points at (a planted `.github` link to a
directory elsewhere): init refuses, naming the link and writing nothing (InitUnsafe). The check comes first; the
writing holds it as it goes too, each directory opened below the one before with O_NOFOLLOW and each file created
with O_CREAT | O_EXCL | O_NOFOLLOW in it, so a link swapped in meanwhile is refused (and what was written undone),
never written through.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..contract import packaged_spec_dir
from ..core import oracle as packaged_oracle
from ..core import oracle_recovery
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
_LANGUAGE_FILES = (
    (".pre-commit-config.yaml", "pre-commit-config.yaml"),
    (".github/workflows/contract.yml", "language-workflow.yml"),
    (".gitattributes", "gitattributes"),
    (f"{SPEC_DIR}/README.md", "language-README.md"),
)
_PACKAGED_RUN_LOOP_LINE = "run_loop: resume_contract/crash/runloop.py"


class InitRefused(ResumeContractError):
    """`init` would overwrite something; nothing was written."""


class InitUnsafe(InitRefused):
    """A path `init` would write goes through a symlink, or would land outside its directory; nothing was written."""


@dataclass(frozen=True)
class Initialized:
    root: Path
    written: tuple[str, ...]

    def next_step(self, cwd: Path, *, language: bool = False) -> str:
        """The commands to run next, from `cwd`: every path in them shell-quoted (DIR may hold `;`, `$(…)`, spaces)."""
        import shlex

        where = "" if self.root == cwd.resolve() else f"cd {shlex.quote(str(self.root))} && "
        if language:
            return (f"{where}$EDITOR spec/contract.yaml && resume-contract generate && resume-contract fit PATH/TO/YOUR/LEDGERS "
                    "(first: does the contract read what your runtime writes? copy a few into samples/ for CI) && pytest generated/tests "
                    "(spec/README.md has the loop)")
        return f"{where}git init && git add . && resume-contract check && resume-contract crash (spec/README.md has the loop)"


def init_project(directory: Path, version: str, *, language: bool = False) -> Initialized:
    """Make a contract project in `directory` (created if missing); raise InitRefused, writing nothing, if a file
    it would write exists. `version` is resume-contract's, for the CI workflow's install line. With `language`,
    the project is a starter contract in the contract language (spec/contract.yaml) for a runtime of one's own."""
    from resume_contract_generator.pipeline import load_checked
    from resume_contract_generator.render.tree import render_all

    root = Path(directory).resolve()
    if root.exists() and not root.is_dir():
        raise InitRefused(f"{root}: not a directory; init makes a project in a directory (nothing was written)")
    files = _language_files(version) if language else _project_files(version)
    for relative in [*files, "generated"]:
        _refuse_unsafe(root, relative)
    taken = sorted(relative for relative in [*files, "generated"] if os.path.lexists(root / relative))
    if taken:
        raise InitRefused(f"{root}: already holds {', '.join(taken)}; init writes only into a directory without them (nothing was written)")
    root.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    made: list[str] = []
    try:
        for relative, data in files.items():
            _write(root, relative, data, written, made)
        if language:
            from resume_contract_generator.language import load_language, render_language

            outputs = render_language(load_language(root))
        else:
            outputs = render_all(load_checked(root))  # the packaged spec as this project states it: checked as any other
        for relative, text in outputs.items():
            _write(root, relative, text.encode("utf-8"), written, made)
    except BaseException:
        _undo(root, written, made)
        raise
    return Initialized(root, tuple(sorted(written)))


def _parts(root: Path, relative: str) -> list[str]:
    """The steps of `relative` below `root`; InitUnsafe for one that could leave it (absolute, `..`)."""
    parts = relative.split("/")
    if relative.startswith("/") or any(part in ("", ".", "..") for part in parts):
        raise InitUnsafe(f"{root}: {relative!r} would be written outside {root}; init writes only inside it (nothing was written)")
    return parts


def _refuse_unsafe(root: Path, relative: str) -> None:
    """InitUnsafe if a step of `relative` below `root` is a symlink; InitRefused if a directory step is a file."""
    step = root
    parts = _parts(root, relative)
    for depth, part in enumerate(parts, 1):
        step = step / part
        try:
            mode = os.lstat(step).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode):
            raise InitUnsafe(_link_refused(root, step))
        if depth < len(parts) and not stat.S_ISDIR(mode):
            raise InitRefused(f"{step}: not a directory, where init writes {relative}; nothing was written")


def _link_refused(root: Path, link: Path) -> str:
    try:
        target = f" (to {os.readlink(link)})"
    except OSError:
        target = ""
    return (f"{link}: a symlink{target} where init would write; init never writes through a link nor outside {root} "
            "(nothing was written)")


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
    files[ORACLE] = _oracle_source(invariants)
    for relative, template in _PROJECT_FILES:
        files[relative] = (TEMPLATES / template).read_text(encoding="utf-8").replace("@VERSION@", version).encode("utf-8")
    return files


def _oracle_source(invariants: str) -> bytes:
    """The packaged oracle in the edition the packaged spec names (`packaged_oracle:` in spec/invariants.yaml), as
    the ONE file a project owns: the second edition (oracle_recovery.py) builds on the first, so it is written
    after it, without its imports of it, and its `decide_recovery` is the file's `decide`."""
    first = Path(str(packaged_oracle.__file__)).read_bytes()
    if not re.search(r"""^packaged_oracle:[ \t]*["']?recovery-facts["']?[ \t]*(#.*)?\r?$""", invariants, re.MULTILINE):
        return first
    second = Path(str(oracle_recovery.__file__)).read_text(encoding="utf-8")
    dropped = (  # (the first edition imports these too)
        "from __future__ import annotations\n\n",
        "from collections.abc import Sequence\n",
        "from typing import Any\n\n",
        "from .oracle import CALL, PROTOCOL, RESPONSE, OracleDecision, reading\n",
    )
    for line in dropped:
        if line not in second:
            raise InitRefused(f"the packaged oracle_recovery.py no longer reads `{line.strip()}`: a broken installation")
        second = second.replace(line, "", 1)
    edition = "\n\n# -- the second edition (maka-history step 06), over the first " + "-" * 50 + "\n" + second
    return first + edition.encode("utf-8") + b"\n\ndecide = decide_recovery  # noqa: F811 (the edition the spec names)\n"


def _language_files(version: str) -> dict[str, bytes]:
    """Every file `init --language` writes but generated/: the starter contract, its schema, the hooks and CI."""
    files = {
        f"{SPEC_DIR}/contract.yaml": (TEMPLATES / "contract.yaml").read_bytes(),
        f"{SCHEMA_DIR}/contract.schema.json": (packaged_spec_dir() / "schema" / "contract.schema.json").read_bytes(),
    }
    for relative, template in _LANGUAGE_FILES:
        files[relative] = (TEMPLATES / template).read_text(encoding="utf-8").replace("@VERSION@", version).encode("utf-8")
    return files


def _undo(root: Path, written: list[str], made: list[str]) -> None:
    """Remove what an init cut off wrote, and the directories it made (empty ones only), never through a link."""
    for relative in reversed(written):
        *directories, name = relative.split("/")
        _in_directory(root, directories, functools.partial(_unlink_at, name))
    for relative in sorted(made, key=lambda made_one: -made_one.count("/")):
        *directories, name = relative.split("/")
        _in_directory(root, directories, functools.partial(_rmdir_at, name))


def _unlink_at(name: str, fd: int) -> None:
    os.unlink(name, dir_fd=fd)


def _rmdir_at(name: str, fd: int) -> None:
    os.rmdir(name, dir_fd=fd)


def _in_directory(root: Path, directories: list[str], action: Callable[[int], object]) -> None:
    try:
        fd = _open_steps(root, directories, None)
    except (OSError, InitUnsafe):
        return
    try:
        action(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _open_steps(root: Path, directories: list[str], made: list[str] | None) -> int:
    """A descriptor of `root/directories...`, each step opened below the one before with O_NOFOLLOW (created when
    `made` is given, and recorded there); InitUnsafe for a step that is a link."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, part in enumerate(directories, 1):
            if made is not None:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                    made.append("/".join(directories[:depth]))
                except FileExistsError:
                    pass  # there already (the check saw to it that it is a directory): opened below, never followed
            try:
                step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise InitUnsafe(_link_refused(root, root.joinpath(*directories[:depth]))) from None
                raise
            os.close(fd)
            fd = step
        return fd
    except BaseException:
        os.close(fd)
        raise


def _write(root: Path, relative: str, data: bytes, written: list[str], made: list[str]) -> None:
    """Create `root/relative` (never over anything that appeared meanwhile, never through a link) holding `data`."""
    *directories, name = _parts(root, relative)
    directory_fd = _open_steps(root, directories, made)
    try:
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=directory_fd)
        except FileExistsError:
            if stat.S_ISLNK(os.lstat(name, dir_fd=directory_fd).st_mode):
                raise InitUnsafe(_link_refused(root, root / relative)) from None
            raise InitRefused(f"{root / relative}: appeared while init was writing; nothing of init's was kept") from None
        written.append(relative)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    finally:
        os.close(directory_fd)


__all__ = ["InitRefused", "InitUnsafe", "Initialized", "init_project"]
