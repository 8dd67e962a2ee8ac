"""Which contract a command runs: the project's it is run in (found upward from the current directory, as git
finds a repository, and then used only when trusted: `trust`; or named by --root), checked to be in sync with its
generated/, or outside any project the one packaged with resume-contract. An untrusted project found is refused,
never passed over for another contract.

In sync means exactly what `resume-contract check` says: the spec renders to the files under generated/ (no
changed, missing, orphaned, hand-edited or conflicted file, no bytecode Python would run instead of a source). Rendering costs a few tenths of a second, so a
clean verdict is remembered (`verdicts`): the cache can make a verdict faster, never different.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..core.spec_layout import SPEC_DIR
from ..errors import ResumeContractError

if TYPE_CHECKING:  # loaded only by what runs a contract: `check` finds its project's root without it
    from pathlib import Path  # (a project's paths: outside any project, a plan never imports pathlib)

    from ..contract import Contract

MARKER = f"{SPEC_DIR}/projector.yaml"  # what makes a directory a project's root
LANGUAGE_MARKER = f"{SPEC_DIR}/contract.yaml"  # or, for a contract in the contract language (docs/language.md)


class NotAProject(ResumeContractError):
    """--root names a directory with no spec/."""


class ProjectOutOfSync(ResumeContractError):
    """A project whose generated/ is not what its spec renders to: running it would run another contract."""

    def __init__(self, root: Path, drift: list[tuple[str, str]], leftovers: tuple[str, ...] = ()) -> None:
        self.root = root
        self.drift = drift
        self.leftovers = leftovers
        what = ", ".join(f"{kind} {path}" for kind, path in drift) or f"an interrupted generate left {', '.join(leftovers)}"
        super().__init__(
            f"{root}: generated/ does not match spec/ ({what}): run `resume-contract generate` there (`resume-contract "
            "check --diff` shows the difference); nothing else was done"
        )


def find_root(start: str | os.PathLike[str]) -> Path | None:
    """The nearest directory at or above `start` that holds spec/projector.yaml (or spec/contract.yaml), or None."""
    candidate = os.path.realpath(start)  # what Path.resolve() gives: the walk up is over real directories
    while True:
        if os.path.isfile(os.path.join(candidate, MARKER)) or os.path.isfile(os.path.join(candidate, LANGUAGE_MARKER)):
            from pathlib import Path  # in a project (which loads it anyway)

            return Path(candidate)
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return None
        candidate = parent


def contract_for(root: str | os.PathLike[str] | None, start: str | os.PathLike[str] | None = None) -> Contract:
    """The contract of the project at `root` (or found upward from `start`, default the current directory),
    checked in sync; outside any project, the packaged one. Raises NotAProject, ProjectOutOfSync, SpecInvalid."""
    from ..contract import packaged

    if root is not None:
        from pathlib import Path

        root = Path(root)  # (named as a Path names it: `--root ./p/` is p)
        if not (root / SPEC_DIR).is_dir():
            raise NotAProject(f"--root {root}: no spec/ directory there")
        return load_project(root)
    found = find_root(os.getcwd() if start is None else start)
    if found is None:
        return packaged()
    from .trust import require_trusted

    require_trusted(str(found))  # found, not named: trusted before anything of it is read (`trust`)
    return load_project(found)


def load_project(root: Path, *, check_sync: bool = True) -> Contract:
    """The contract generated into the project at `root`; with `check_sync` (the default), only when generated/
    is exactly what its spec renders to. Raises ProjectOutOfSync, SpecInvalid (a spec `check` refuses)."""
    from pathlib import Path

    from ..contract import load_generated

    root = Path(root).resolve()
    if check_sync:
        ensure_in_sync(root)
    try:
        return load_generated(root)
    except FileNotFoundError:
        raise ProjectOutOfSync(root, [("missing", "generated/")]) from None


def ensure_in_sync(root: Path) -> None:
    """Raise unless generated/ is what the spec under `root` renders to (see the module's docstring)."""
    from .verdicts import remember_in_sync, remembered_in_sync  # inside a project only

    if remembered_in_sync(root):
        return
    from resume_contract_generator.pipeline import check  # rendering: only when the verdict is not remembered

    checked = check(root)
    if not checked.drift.clean or checked.leftovers:
        raise ProjectOutOfSync(root, checked.drift.rows(), checked.leftovers)
    remember_in_sync(root)
