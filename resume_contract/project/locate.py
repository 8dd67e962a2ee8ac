"""Which contract a command runs: the project's it is run in (found upward from the current directory, as git
finds a repository, or named by --root), checked to be in sync with its generated/, or outside any project the
one packaged with resume-contract.

In sync means exactly what `resume-contract check` says: the spec renders to the files under generated/ (no
changed, missing, orphaned, hand-edited or conflicted file, no bytecode Python would run instead of a source).
Rendering costs a few tenths of a second, so a clean verdict is remembered in a cache outside the project (`$RESUME_CONTRACT_CACHE_DIR`, else
`$XDG_CACHE_HOME/resume-contract`, else `~/.cache/resume-contract`), keyed by the sha256 of everything the verdict
depends on: every spec, schema and waivers file, the oracle the spec names, every file under generated/ (hidden
ones and byte code included), the generator's and the core's own files, and the versions of the libraries
rendering uses. Any difference is a new key, and a full check: the cache can make a verdict faster, never
different. A cache that cannot be written only costs the next command that check again.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from pathlib import Path

from ..contract import Contract, load_generated, packaged
from ..core.spec_layout import ALL_SPEC_FILES, SCHEMA_DIR, SPEC_DIR
from ..errors import ResumeContractError

CACHE_VARIABLE = "RESUME_CONTRACT_CACHE_DIR"
MARKER = f"{SPEC_DIR}/projector.yaml"  # what makes a directory a project's root
_RENDERING_LIBRARIES = ("jinja2", "PyYAML", "jsonschema", "msgspec", "python-statemachine")


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


def find_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` that holds spec/projector.yaml, or None."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / MARKER).is_file():
            return candidate
    return None


def contract_for(root: Path | None, start: Path | None = None) -> Contract:
    """The contract of the project at `root` (or found upward from `start`, default the current directory),
    checked in sync; outside any project, the packaged one. Raises NotAProject, ProjectOutOfSync, SpecInvalid."""
    if root is not None:
        if not (Path(root) / SPEC_DIR).is_dir():
            raise NotAProject(f"--root {root}: no spec/ directory there")
        return load_project(Path(root))
    found = find_root(start or Path.cwd())
    return packaged() if found is None else load_project(found)


def load_project(root: Path, *, check_sync: bool = True) -> Contract:
    """The contract generated into the project at `root`; with `check_sync` (the default), only when generated/
    is exactly what its spec renders to. Raises ProjectOutOfSync, SpecInvalid (a spec `check` refuses)."""
    root = Path(root).resolve()
    if check_sync:
        ensure_in_sync(root)
    try:
        return load_generated(root)
    except FileNotFoundError:
        raise ProjectOutOfSync(root, [("missing", "generated/")]) from None


def ensure_in_sync(root: Path) -> None:
    """Raise unless generated/ is what the spec under `root` renders to (see the module's docstring)."""
    key = _fingerprint(root)
    marker = _cache_dir() / "in-sync" / (key or "")
    if key is not None and marker.is_file():
        return
    from resume_contract_generator.pipeline import check  # rendering: only when the verdict is not remembered

    checked = check(root)
    if not checked.drift.clean or checked.leftovers:
        raise ProjectOutOfSync(root, checked.drift.rows(), checked.leftovers)
    if key is None:
        return
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        temporary = marker.with_name(f".{key}.{os.getpid()}")
        temporary.write_bytes(b"")
        temporary.replace(marker)
    except OSError:
        pass  # no cache: the next command checks again


def _cache_dir() -> Path:
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "resume-contract"


def _fingerprint(root: Path) -> str | None:
    """The cache key of `root`'s verdict, or None when it cannot be computed safely (then nothing is remembered)."""
    oracle = _oracle(root)
    if oracle is None:
        return None
    digest = hashlib.sha256(_tool_fingerprint().encode())
    named = [f"{SPEC_DIR}/{name}.yaml" for name in ALL_SPEC_FILES] + [f"{SCHEMA_DIR}/{name}.schema.json" for name in ALL_SPEC_FILES]
    named += [f"{SPEC_DIR}/review-waivers.yaml", *oracle]
    for relative in named:
        _add(digest, relative, root / relative)
    generated = root / "generated"
    _add(digest, "generated", generated)
    if generated.is_dir() and not generated.is_symlink():
        for directory, subdirectories, files in os.walk(generated):
            subdirectories.sort()
            for name in sorted(files + [d for d in subdirectories if Path(directory, d).is_symlink()]):
                path = Path(directory, name)
                _add(digest, path.relative_to(root).as_posix(), path)
    return digest.hexdigest()


def _add(digest: hashlib._Hash, relative: str, path: Path) -> None:
    digest.update(relative.encode("utf-8", "surrogateescape") + b"\0")
    try:
        if path.is_symlink():
            digest.update(b"<symlink>" + os.readlink(path).encode("utf-8", "surrogateescape"))
        elif path.is_file():
            digest.update(path.read_bytes())
        else:
            digest.update(b"<not a file>")
    except OSError as error:
        digest.update(f"<unreadable {error.errno}>".encode())
    digest.update(b"\0")


_ORACLE_LINE = re.compile(r"""oracle:[ \t]*(['"]?)([^'"#\s]+)\1[ \t]*(?:#.*)?""")


def _oracle(root: Path) -> list[str] | None:
    """The oracle file the spec names (its bytes decide the invariants `check` runs), found without the generator
    (a plain `oracle: path` line); None when some line names it otherwise, so that no verdict is remembered."""
    try:
        lines = (root / SPEC_DIR / "invariants.yaml").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    named = [line for line in lines if line.lstrip().startswith(("oracle:", "'oracle'", '"oracle"'))]
    if not named:
        return []
    found = [_ORACLE_LINE.fullmatch(line) for line in named]
    return [match.group(2) for match in found if match] if all(found) else None


@functools.cache
def _tool_fingerprint() -> str:
    """What rendering depends on besides the project: this installation's generator and core, and its libraries."""
    from importlib.metadata import PackageNotFoundError, version

    import resume_contract_generator

    from .. import core

    digest = hashlib.sha256(sys.version.encode())
    for package in (resume_contract_generator, core):
        base = Path(str(package.__file__)).parent
        for path in sorted(base.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                _add(digest, path.relative_to(base).as_posix(), path)
    for library in _RENDERING_LIBRARIES:
        try:
            digest.update(f"{library}=={version(library)}\0".encode())
        except PackageNotFoundError:
            digest.update(f"{library} missing\0".encode())
    return digest.hexdigest()
