"""Compare rendered outputs with generated/ on disk, and write them all or not at all.

"Drift" is the whole truth, sorted by path: files the spec would change (`changed`), files it would add
(`missing`), files under generated/ it would not produce (`orphaned`) and files someone edited by hand
(`hand-edited`: the body no longer matches the content-sha256 in its own header).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

from .render import GENERATED_DIR, body_sha256, split_header

# Produced by running the generated code and its tests, never by the generator; not drift.
_IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache"})


@dataclass(frozen=True)
class Drift:
    changed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    orphaned: tuple[str, ...] = ()
    hand_edited: tuple[str, ...] = ()
    # Orphans that carry an untouched generator header: safe for `generate` to delete.
    removable_orphans: tuple[str, ...] = ()
    diffs: dict[str, str] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not (self.changed or self.missing or self.orphaned or self.hand_edited)

    def rows(self) -> list[tuple[str, str]]:
        """(kind, path) for every drifted file, sorted by path."""
        rows = [("changed", p) for p in self.changed] + [("missing", p) for p in self.missing]
        rows += [("orphaned", p) for p in self.orphaned] + [("hand-edited", p) for p in self.hand_edited]
        return sorted(rows, key=lambda row: (row[1], row[0]))


class RefusedToWrite(Exception):
    """generate would lose someone's work; nothing was written."""


def files_on_disk(root: Path) -> dict[str, str | None]:
    """Every file under generated/ (relative path -> text, None when it is not UTF-8 text)."""
    found: dict[str, str | None] = {}
    base = root / GENERATED_DIR
    if not base.exists():
        return found
    for directory, subdirectories, files in os.walk(base):
        subdirectories[:] = sorted(d for d in subdirectories if d not in _IGNORED_DIRS)
        for name in sorted(files):
            path = Path(directory) / name
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


def compare(root: Path, outputs: dict[str, str]) -> Drift:
    """How generated/ differs from `outputs`."""
    disk = files_on_disk(root)
    changed, missing, hand_edited, diffs = [], [], [], {}
    for path, expected in outputs.items():
        actual = disk.get(path)
        if path not in disk:
            missing.append(path)
        elif actual == expected:
            continue
        elif _is_pristine(actual):
            changed.append(path)
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
    a file it did not generate. Every new file is staged beside its target first and only then moved into
    place, so a failure part-way leaves the old files, not a mix.
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
    to_write = sorted(set(drift.changed) | set(drift.missing) | set(drift.hand_edited))
    staged: list[tuple[Path, Path]] = []
    try:
        for relative in to_write:
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.resume-contract-tmp")
            temporary.write_text(outputs[relative], encoding="utf-8", newline="\n")
            staged.append((temporary, target))
    except BaseException:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        raise
    for temporary, target in staged:
        os.replace(temporary, target)
    for relative in drift.removable_orphans:
        (root / relative).unlink()
    return sorted(to_write + list(drift.removable_orphans))
