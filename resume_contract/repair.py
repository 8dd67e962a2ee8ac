"""`repair`: move a ledger's torn tail to a quarantine file beside it, then truncate to the last complete row.

Idempotent and crash-safe. The quarantine is written to a temporary name, fsynced and renamed into place, so
a file under the final name is always whole; a repair cut off at any step, or failing for lack of space,
leaves either nothing or a whole quarantine, and running it again converges: an existing quarantine with the
same bytes is reused (its name holds the torn tail's offset and hash), a temporary one is removed.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .containment import check_contained, open_contained
from .locks import lock_for_writing, unlock
from .store import LedgerLocked, fsync_directory

QUARANTINE_INFIX = ".torn-"


@dataclass(frozen=True)
class RepairResult:
    """What `repair` did: where the torn bytes went and how many, or nothing when there was no torn tail."""

    path: Path
    quarantine: Path | None
    torn_bytes: int
    committed_bytes: int


def repair_ledger(path: Path, *, durable: bool = True, workspace: Path | None = None) -> RepairResult:
    """Quarantine a torn tail; nothing is lost (the bytes are kept) and nothing else is changed."""
    path = Path(path)
    if workspace is not None:
        check_contained(workspace, path)
    fd = open_contained(path, os.O_RDWR) if workspace is not None else os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        if not lock_for_writing(fd, wait_seconds=0.2):
            raise LedgerLocked(f"{path}: a live process is writing this ledger; stop it before repairing")
        try:
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read()
            committed = data.rfind(b"\n") + 1
            if committed == len(data):
                return RepairResult(path, None, 0, len(data))
            torn = data[committed:]
            quarantine = path.with_name(f"{path.name}{QUARANTINE_INFIX}{committed}-{hashlib.sha256(torn).hexdigest()[:12]}")
            _keep(quarantine, torn)
            os.ftruncate(fd, committed)
            if durable:
                os.fsync(fd)
            return RepairResult(path, quarantine, len(torn), committed)
        finally:
            unlock(fd)
    finally:
        os.close(fd)


def _keep(quarantine: Path, torn: bytes) -> None:
    """Make `quarantine` hold exactly `torn`, durably, whatever an earlier, interrupted repair left."""
    if quarantine.is_file() and not quarantine.is_symlink() and quarantine.read_bytes() == torn:
        return  # an earlier repair got this far
    temporary = quarantine.with_name(f".{quarantine.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "xb") as handle:
            handle.write(torn)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, quarantine)  # a partial quarantine left by an older version is replaced whole
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    fsync_directory(quarantine.parent)
