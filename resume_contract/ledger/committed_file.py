"""A committed ledger file, opened to be read: never a FIFO or a directory, never one a live writer holds, opened
below a workspace without following a link; and the run a ledger's place in a workspace names.

Everything a plan of a bare ledger file needs from the store's side, apart from the store: the plan of a small
ledger loads neither the writer nor pathlib.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import LedgerCorruption, LedgerInUse, LedgerMissing, NotALedger
from ..system.open_files import OpenFileTable
from .bytes import StrPath
from .containment import open_directory, open_in, split_below
from .locks import has_live_writer

if TYPE_CHECKING:
    from .reader import RunIdentity

LEDGER_NAME = "runtime-events.jsonl"


def path_text(path: StrPath) -> str:
    """`str(Path(path))` without pathlib: `.` steps and repeated or trailing `/` dropped, `..` kept. A ledger named
    `runtime-events.jsonl/` is planned as the file (as it was when paths were Paths), and named as Path names it."""
    text = os.fspath(path)
    root = "//" if text.startswith("//") and not text.startswith("///") else "/" if text.startswith("/") else ""
    return root + "/".join(part for part in text.split("/") if part not in ("", ".")) or "."


def absolute(path: StrPath) -> str:
    """`Path(path).absolute()`: joined to the current directory, `..` kept (a run's place is read as written)."""
    path = os.fspath(path)
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def run_identity(path: StrPath) -> RunIdentity | None:
    """(sessionId, runId) of a ledger stored at `.../sessions/<S>/runs/<R>/runtime-events.jsonl`, else None."""
    parts = path_text(path).split("/")  # Path(path).parts, the root written as empty parts
    if len(parts) >= 5 and parts[-1] == LEDGER_NAME and parts[-3] == "runs" and parts[-5] == "sessions":
        return parts[-4], parts[-2]
    return None


@contextmanager
def open_committed(
    path: StrPath, *, refuse_live: bool | OpenFileTable = False, workspace: StrPath | None = None, directory_fd: int | None = None
) -> Iterator[int]:
    """A descriptor of the ledger at `path` (a regular file), open for reading while the block runs.

    With `refuse_live`, a ledger a writer holds raises LedgerInUse: its last row may be in flight, and a
    running run is not a crashed one. The probe takes and at once releases a shared lock (a writer opening
    then waits for it, never fails), and is taken again when the block ends: a writer that started
    meanwhile, or a file that changed, also raises LedgerInUse, so the verdict holds for the whole read.
    The probe decides first: a corruption the block found (a row torn because a writer that started
    meanwhile is between its pieces) or a file that shrank under it is LedgerInUse when the second probe
    finds a writer or a changed file. A writer that takes no lock is found, where the system shows it, among
    the processes' open files (`system.open_files`): scanned now, or `refuse_live` is a table scanned once
    for many ledgers (the audit). `workspace`: the ledger is opened below it, never through a link;
    `directory_fd`: its directory, so opened already (the ledger's name is opened in it).
    """
    try:
        fd = _open_for_reading(path, workspace, directory_fd)
    except FileNotFoundError:
        if os.path.lexists(path):
            raise LedgerMissing(f"{path}: a symlink to a file that does not exist") from None
        raise LedgerMissing(f"{path}: no such ledger") from None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise NotALedger(f"{path}: not a regular file")
        if refuse_live:
            _refuse_if_open_for_writing(path, fd, before, refuse_live)
        try:
            yield fd
        except (LedgerCorruption, OSError) as error:
            if refuse_live:
                _refuse_if_written_meanwhile(path, fd, before, cause=error)
            raise
        if refuse_live:
            _refuse_if_written_meanwhile(path, fd, before)
    finally:
        os.close(fd)


def _refuse_if_open_for_writing(path: StrPath, fd: int, status: os.stat_result, refuse_live: bool | OpenFileTable) -> None:
    # A writer that takes no lock (the reference's store) is seen only in the processes' open files. Before the
    # lock probe, which is the one repeated after the read.
    table = refuse_live if isinstance(refuse_live, OpenFileTable) else OpenFileTable.scan(of=status)
    writers = table.writers_of(status)
    if writers:
        named = ", ".join(str(writer) for writer in writers)
        raise LedgerInUse(f"{path}: open for writing by {named}; plan it once that process has stopped")
    if has_live_writer(fd):
        raise LedgerInUse(f"{path}: a live process is writing this ledger; plan it once that process has stopped")


def _refuse_if_written_meanwhile(path: StrPath, fd: int, before: os.stat_result, cause: BaseException | None = None) -> None:
    after = os.fstat(fd)
    if has_live_writer(fd) or (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        raise LedgerInUse(f"{path}: a process started writing this ledger while it was read; plan it once that process has stopped") from cause


def _open_for_reading(path: StrPath, workspace: StrPath | None, directory_fd: int | None) -> int:
    # Without blocking: a FIFO in a ledger's place must not hang the reader (fstat then refuses it).
    flags = os.O_RDONLY | os.O_NONBLOCK
    if directory_fd is not None:  # its directory, opened below the workspace by the caller
        return open_in(directory_fd, os.path.basename(path), flags, path)
    if workspace is None:
        return os.open(path, flags)
    from pathlib import Path  # a workspace's run: a bare file's plan never loads pathlib

    directories, name = split_below(Path(workspace), Path(path))
    directory_fd = open_directory(Path(workspace), directories)
    try:
        return open_in(directory_fd, name, flags, path)
    finally:
        os.close(directory_fd)
