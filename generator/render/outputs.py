"""Compare rendered outputs with generated/ on disk, and write them all or not at all.

"Drift" is the whole truth, sorted by path: files the spec would change (`changed`), files it would add
(`missing`), files under generated/ it would not produce (`orphaned`) and files someone edited by hand
(`hand-edited`: the body no longer matches the content-sha256 in its own header), generated files a
merge left conflict markers in (`conflicted`: regenerating from the merged spec is the resolution), and cached
bytecode this interpreter would run instead of a generated module's source that is not that source compiled
(`bytecode`, see `bytecode.py`; `generate` drops every cache with the old tree).
"""

from __future__ import annotations

import difflib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from resume_contract.core.spec_layout import RETIRED_SUFFIX, STAGING_SUFFIX
from resume_contract.errors import ResumeContractError

from .bytecode import could_change_what_runs
from .headers import HEADER_MARKER, body_sha256, split_header
from .tree import GENERATED_DIR

# Written by running the generated tests, never read as code: not drift.
_IGNORED_DIRS = frozenset({".pytest_cache"})
# Written by importing the generated modules: each pyc in it is held to its module's source (`bytecode.py`).
_BYTECODE_DIR = "__pycache__"


@dataclass(frozen=True)
class Drift:
    changed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    orphaned: tuple[str, ...] = ()
    hand_edited: tuple[str, ...] = ()
    conflicted: tuple[str, ...] = ()
    bytecode: tuple[str, ...] = ()
    # Orphans that carry an untouched generator header: safe for `generate` to delete.
    removable_orphans: tuple[str, ...] = ()
    diffs: dict[str, str] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not (self.changed or self.missing or self.orphaned or self.hand_edited or self.conflicted or self.bytecode)

    def rows(self) -> list[tuple[str, str]]:
        """(kind, path) for every drifted file, sorted by path."""
        rows = [("changed", p) for p in self.changed] + [("missing", p) for p in self.missing]
        rows += [("orphaned", p) for p in self.orphaned] + [("hand-edited", p) for p in self.hand_edited]
        rows += [("conflicted", p) for p in self.conflicted] + [("bytecode", p) for p in self.bytecode]
        return sorted(rows, key=lambda row: (row[1], row[0]))


class RefusedToWrite(ResumeContractError):
    """generate would lose someone's work; nothing was written."""


class UnsafeGeneratedTree(ResumeContractError):
    """generated/ holds (or is) a symlink: reading or writing through it would leave the project."""




def recover_interrupted(root: Path) -> list[str]:
    """Finish or roll back a generate that was cut off; return what was done (empty when nothing was left)."""
    base = root / GENERATED_DIR
    staging = base.with_name(base.name + STAGING_SUFFIX)
    retired = base.with_name(base.name + RETIRED_SUFFIX)
    done = []
    for leftover in (staging, retired):
        if leftover.is_symlink() or (leftover.exists() and not leftover.is_dir()):
            raise UnsafeGeneratedTree(f"{leftover.name} is not a directory an interrupted generate left; remove it")
    if retired.is_dir() and not retired.is_symlink():
        if base.exists():
            shutil.rmtree(retired)  # the swap was complete: generated/ is the new tree
            done.append(f"removed {retired.name} (left by an interrupted generate, after its swap)")
        else:
            os.rename(retired, base)  # cut off between the two renames: put the old tree back
            done.append(f"restored {base.name} from {retired.name} (an interrupted generate had moved it)")
    if staging.is_dir() and not staging.is_symlink():
        shutil.rmtree(staging)
        done.append(f"removed {staging.name} (an interrupted generate's unfinished tree)")
    return done


def swap_in(target: Path, files: dict[str, bytes]) -> None:
    """Make `target` hold exactly `files` (relative paths), all or nothing.

    The whole new tree is written beside `target` and swapped in by two directory renames: a failure or an
    interrupt before the swap leaves `target` as it was; `recover_interrupted` finishes or rolls back a swap
    cut off between its renames.
    """
    staging = target.with_name(target.name + STAGING_SUFFIX)
    retired = target.with_name(target.name + RETIRED_SUFFIX)
    try:
        staging.mkdir()
        for relative, data in files.items():
            path = staging / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        os.rename(target, retired)
    os.rename(staging, target)
    shutil.rmtree(retired, ignore_errors=True)


def interrupted_leftovers(root: Path) -> list[str]:
    """What an interrupted generate left beside generated/ (check reports it and changes nothing)."""
    base = root / GENERATED_DIR
    return [base.name + suffix for suffix in (STAGING_SUFFIX, RETIRED_SUFFIX) if base.with_name(base.name + suffix).exists()]


def files_on_disk(root: Path, caches: list[Path] | None = None) -> dict[str, str | None]:
    """Every file under generated/ (relative path -> text, None when it is not UTF-8 text) outside the bytecode
    caches, whose directories are appended to `caches`."""
    found: dict[str, str | None] = {}
    base = root / GENERATED_DIR
    if base.is_symlink():
        raise UnsafeGeneratedTree(f"{GENERATED_DIR} is a symlink; the generator reads and writes only real files under {GENERATED_DIR}/")
    if not base.exists():
        return found
    for directory, subdirectories, files in os.walk(base):
        for name in sorted(subdirectories + files):
            path = Path(directory) / name
            if path.is_symlink():
                relative = path.relative_to(root).as_posix()
                raise UnsafeGeneratedTree(f"{relative} is a symlink; the generator reads and writes only real files under {GENERATED_DIR}/ (remove it)")
        if caches is not None and _BYTECODE_DIR in subdirectories:
            caches.append(Path(directory) / _BYTECODE_DIR)
        subdirectories[:] = sorted(d for d in subdirectories if d not in _IGNORED_DIRS and d != _BYTECODE_DIR)
        for name in sorted(files):
            path = Path(directory) / name
            if not path.is_file():  # a FIFO or a device: reading it could block forever
                raise UnsafeGeneratedTree(f"{path.relative_to(root).as_posix()} is not a regular file; remove it from {GENERATED_DIR}/")
            relative = path.relative_to(root).as_posix()
            try:
                found[relative] = path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                found[relative] = None
    return found


def _is_pristine(text: str | None) -> bool:
    if text is None:
        return False
    parts = split_header(text)
    return parts is not None and parts[0].get("content-sha256") == body_sha256(parts[1])


_CONFLICT_MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ")


def _is_merge_conflict(text: str | None) -> bool:
    """A generated file in which a merge left conflict markers (two branches each regenerated it)."""
    if text is None or HEADER_MARKER not in text[:400]:
        return False
    lines = text.splitlines()
    return all(any(line.startswith(marker) for line in lines) for marker in _CONFLICT_MARKERS)


def _cached_bytecode(root: Path, caches: list[Path], outputs: dict[str, str]) -> tuple[list[str], dict[str, str | None]]:
    """The pycs under `caches` that could run instead of their generated module's source, and the files there that
    no import writes (a directory, anything but a pyc): orphans."""
    suspect: list[str] = []
    orphans: dict[str, str | None] = {}
    for cache in caches:
        for entry in sorted(cache.iterdir()):
            relative = entry.relative_to(root).as_posix()
            if entry.is_symlink():
                raise UnsafeGeneratedTree(f"{relative} is a symlink; the generator reads and writes only real files under {GENERATED_DIR}/ (remove it)")
            if entry.is_file() and entry.name.endswith(".pyc"):
                source = cache.parent / (entry.name.split(".", 1)[0] + ".py")
                if source.relative_to(root).as_posix() in outputs and could_change_what_runs(source, entry):
                    suspect.append(relative)
            elif entry.is_dir() or entry.is_file():
                orphans[relative] = entry.read_bytes().decode("utf-8", "replace") if entry.is_file() else None
            else:
                raise UnsafeGeneratedTree(f"{relative} is not a regular file; remove it from {GENERATED_DIR}/")
    return suspect, orphans


def compare(root: Path, outputs: dict[str, str]) -> Drift:
    """How generated/ differs from `outputs`."""
    caches: list[Path] = []
    disk = files_on_disk(root, caches)
    bytecode, cache_orphans = _cached_bytecode(root, caches, outputs)
    disk.update(cache_orphans)
    changed, missing, hand_edited, conflicted, diffs = [], [], [], [], {}
    for path, expected in outputs.items():
        actual = disk.get(path)
        if path not in disk:
            missing.append(path)
        elif actual == expected:
            continue
        elif _is_pristine(actual):
            changed.append(path)
        elif _is_merge_conflict(actual):
            conflicted.append(path)
        else:
            hand_edited.append(path)
        diffs[path] = _diff(path, actual, expected)
    orphaned = sorted(set(disk) - set(outputs))
    for path in orphaned:
        diffs[path] = _diff(path, disk[path], None)
    return Drift(
        changed=tuple(changed),
        missing=tuple(missing),
        orphaned=tuple(orphaned),
        hand_edited=tuple(hand_edited),
        conflicted=tuple(conflicted),
        bytecode=tuple(bytecode),
        removable_orphans=tuple(path for path in orphaned if _is_pristine(disk[path])),
        diffs=dict(sorted(diffs.items())),
    )


def _diff(path: str, actual: str | None, expected: str | None) -> str:
    before = (actual or "").splitlines(keepends=True)
    after = (expected or "").splitlines(keepends=True)
    lines = difflib.unified_diff(
        before,
        after,
        fromfile=f"a/{path}" if actual is not None else "/dev/null",
        tofile=f"b/{path}" if expected is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def write_outputs(root: Path, outputs: dict[str, str], drift: Drift, force: bool = False) -> list[str]:
    """Bring generated/ in line with `outputs`; return the paths written or removed, sorted.

    Refuses, writing nothing, when it would overwrite a hand edit (unless `force`) or when generated/ holds
    a file it did not generate. The new tree is written whole beside generated/ and swapped in by two
    directory renames, so generated/ is always wholly old or wholly new.
    """
    unknown = [path for path in drift.orphaned if path not in drift.removable_orphans]
    if unknown:
        raise RefusedToWrite(
            "generated/ holds files the generator does not produce and did not write: "
            + ", ".join(unknown)
            + "; move them out of generated/ (nothing was written)"
        )
    if drift.hand_edited and not force:
        raise RefusedToWrite(
            "hand-edited generated files would be overwritten: "
            + ", ".join(drift.hand_edited)
            + "; move the change into spec/ and run `resume-contract generate --force` (nothing was written)"
        )
    # A conflicted file needs no --force: both sides were generated, and the merged spec decides its content.
    to_write = sorted(set(drift.changed) | set(drift.missing) | set(drift.hand_edited) | set(drift.conflicted))
    tree = {Path(relative).relative_to(GENERATED_DIR).as_posix(): text.encode("utf-8") for relative, text in outputs.items()}
    swap_in(root / GENERATED_DIR, tree)
    return sorted(to_write + list(drift.removable_orphans) + list(drift.bytecode))
