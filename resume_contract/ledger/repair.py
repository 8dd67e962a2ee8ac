"""`repair`: move a ledger's torn tail to a quarantine file beside it, then truncate to the last complete row.

Idempotent and crash-safe. The quarantine is written to a temporary name, fsynced and renamed into place, so
a file under the final name is always whole; a repair cut off at any step, or failing for lack of space,
leaves either nothing or a whole quarantine, and running it again converges: an existing quarantine with the
same bytes is reused (its name holds the torn tail's offset and hash), a temporary one is removed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import LedgerLocked, NotALedger
from ..system.open_files import OpenFileTable
from .bytes import CHUNK_BYTES, ReadAt, StrPath, file_reader, last_row_end
from .containment import open_directory, open_in, refuse_other_names, split_below, temporary_file
from .locks import lock_for_writing, unlock

QUARANTINE_INFIX = ".torn-"


@dataclass(frozen=True)
class RepairResult:
    """What `repair` did: where the torn bytes went and how many, or nothing when there was no torn tail."""

    path: Path
    quarantine: Path | None
    torn_bytes: int
    committed_bytes: int


def repair_ledger(path: StrPath, *, durable: bool = True, workspace: StrPath | None = None) -> RepairResult:
    """Quarantine a torn tail; nothing is lost (the bytes are kept) and nothing else is changed.

    Everything happens relative to the ledger's directory, opened once: with `workspace`, each step of it
    relative to the one before and never through a symlink, and a ledger with another name (a hard link) is
    refused; the quarantine lands beside the ledger, wherever the path's names point meanwhile.
    """
    path = Path(path)
    if workspace is not None:
        directories, name = split_below(Path(workspace), path)
        directory_fd = open_directory(Path(workspace), directories)
    else:
        name = path.name
        directory_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # O_NONBLOCK: a FIFO where the ledger belongs must not hang the open. Anything but a regular file is
        # refused, as `plan` refuses it: a FIFO reads as empty, and "no torn tail" would say the rest reads clean.
        # Read-only until every other writer is known to be gone: a descriptor this process opened for writing
        # is, for the instant between another thread's fork and its exec, also the forked child's, and the
        # writer scan would name that child (seen in the crash harness, which forks children from threads).
        try:
            if workspace is not None:
                fd = open_in(directory_fd, name, os.O_RDONLY | os.O_NONBLOCK, path)
            else:
                fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK, dir_fd=directory_fd)
        except IsADirectoryError:
            raise NotALedger(f"{path}: not a regular file; nothing to repair, nothing changed") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise NotALedger(f"{path}: not a regular file; nothing to repair, nothing changed")
            if workspace is not None:
                refuse_other_names(fd, path)
            return _repair_open(path, name, fd, directory_fd, durable)
        finally:
            os.close(fd)
    finally:
        os.close(directory_fd)


def _repair_open(path: Path, name: str, fd: int, directory_fd: int, durable: bool) -> RepairResult:
    if not lock_for_writing(fd, wait_seconds=0.2):
        raise LedgerLocked(f"{path}: a live process is writing this ledger; stop it before repairing")
    try:
        # A writer that takes no lock would append behind the truncation: it too must be gone.
        status = os.fstat(fd)
        writers = OpenFileTable.scan(of=status).writers_of(status)
        if writers:
            raise LedgerLocked(f"{path}: open for writing by {', '.join(map(str, writers))}; stop it before repairing")
        write_fd = _reopen_for_writing(path, name, directory_fd, status)
        try:
            return _quarantine_torn_tail(path, fd, write_fd, directory_fd, durable)
        finally:
            os.close(write_fd)
    finally:
        unlock(fd)


def _reopen_for_writing(path: Path, name: str, directory_fd: int, status: os.stat_result) -> int:
    """The locked ledger again, for writing: the same file (never a name swapped in meanwhile, never a symlink)."""
    try:
        write_fd = os.open(name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=directory_fd)
    except OSError as error:
        raise NotALedger(f"{path}: could not be opened for writing ({error.strerror}); nothing changed") from None
    now = os.fstat(write_fd)
    if (now.st_dev, now.st_ino) != (status.st_dev, status.st_ino):
        os.close(write_fd)
        raise LedgerLocked(f"{path}: replaced by another file while it was repaired; nothing changed, run repair again")
    return write_fd


def _quarantine_torn_tail(path: Path, fd: int, write_fd: int, directory_fd: int, durable: bool) -> RepairResult:
    # In bounded memory: the last newline is found reading backwards, and the torn tail is hashed and
    # copied a chunk at a time (a torn row can be as long as any row).
    size = os.fstat(fd).st_size
    read_at = file_reader(fd)
    committed = last_row_end(read_at, size) if size and read_at(size - 1, 1) != b"\n" else size
    if committed == size:
        return RepairResult(path, None, 0, size)
    digest = hashlib.sha256()
    for piece in _pieces(read_at, committed, size):
        digest.update(piece)
    name = f"{path.name}{QUARANTINE_INFIX}{committed}-{digest.hexdigest()[:12]}"
    _keep(directory_fd, name, read_at, committed, size)
    os.ftruncate(write_fd, committed)
    if durable:
        os.fsync(write_fd)
    return RepairResult(path, path.with_name(name), size - committed, committed)


def _pieces(read_at: ReadAt, start: int, end: int) -> Iterator[bytes]:
    for offset in range(start, end, CHUNK_BYTES):
        piece = read_at(offset, min(CHUNK_BYTES, end - offset))
        if not piece:
            raise OSError(f"the ledger shrank while it was repaired (at byte {offset})")
        yield piece


def _keep(directory_fd: int, name: str, read_at: ReadAt, start: int, end: int) -> None:
    """Make `name` (in the ledger's directory) hold exactly the ledger's bytes from `start` to `end`, durably,
    whatever an earlier, interrupted repair left there."""
    try:
        existing = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=directory_fd)
    except OSError:
        existing = -1
    if existing >= 0:
        try:
            if stat.S_ISREG(os.fstat(existing).st_mode) and _holds(existing, read_at, start, end):
                return  # an earlier repair got this far
        finally:
            os.close(existing)
    temporary = f".{name}.{os.getpid()}.tmp"
    with temporary_file(directory_fd, temporary, _pieces(read_at, start, end), Path(temporary)):
        os.replace(temporary, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
    os.fsync(directory_fd)


def _holds(fd: int, read_at: ReadAt, start: int, end: int) -> bool:
    """Whether the file open at `fd` holds exactly the ledger's bytes from `start` to `end`."""
    if os.fstat(fd).st_size != end - start:
        return False
    theirs = file_reader(fd)
    return all(theirs(offset - start, len(piece)) == piece for offset, piece in zip(range(start, end, CHUNK_BYTES), _pieces(read_at, start, end)))
