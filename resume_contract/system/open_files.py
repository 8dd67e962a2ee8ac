"""Which processes hold a file open for writing, as far as the operating system lets us see.

A writer that takes our `flock` (`RuntimeEventStore`) is seen by the lock probe; one that takes none (the
reference TypeScript store appends without a lock) is seen only here. On Linux every process's open files are
listed under `/proc/<pid>/fd` (a link to the open file) and `/proc/<pid>/fdinfo/<fd>` (its open flags): a ledger
open with write access in any process we may inspect is live. Matched by device and inode, not by path, so a
ledger reached through a symlinked workspace, or renamed while open, is still found.

What cannot be seen: other users' processes (unless run as root), other machines, other containers' process
namespaces, and writers on network filesystems; elsewhere than Linux nothing is seen. `VISIBLE` says whether
this scan sees anything at all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import msgspec

_PROC = "/proc"
VISIBLE = os.path.isdir("/proc/self/fdinfo")
_ACCESS_MODE = 0o3  # O_ACCMODE: O_RDONLY 0, O_WRONLY 1, O_RDWR 2
_TRIES = 3

FileKey = tuple[int, int]  # (device, inode)


# Structs, not dataclasses: a dataclass costs every command about a millisecond to define.
class Writer(msgspec.Struct, frozen=True):
    """A process holding a file open with write access."""

    pid: int
    command: str
    descriptor: int

    def __str__(self) -> str:
        return f"process {self.pid} ({self.command})" if self.command else f"process {self.pid}"


class OpenFileTable(msgspec.Struct, frozen=True):
    """The regular files processes held open for writing when it was scanned, by (device, inode)."""

    writers: Mapping[FileKey, tuple[Writer, ...]]

    @classmethod
    def scan(cls, of: os.stat_result | None = None) -> OpenFileTable:
        """Every process we may inspect, once: one stat per open descriptor, and its flags read only for regular
        files (a few milliseconds for a hundred processes); with `of`, only for that file (one plan's ledger)."""
        found: dict[FileKey, list[Writer]] = {}
        if not VISIBLE:
            return cls({})
        only = None if of is None else (of.st_dev, of.st_ino)
        with os.scandir(_PROC) as processes:
            for entry in processes:
                if not entry.name.isdigit():
                    continue
                pid = int(entry.name)
                written = _written_files(pid, only)
                command = _command(pid) if written else ""
                for key, descriptor in written:
                    found.setdefault(key, []).append(Writer(pid, command, descriptor))
        return cls({key: tuple(writers) for key, writers in found.items()})

    def writers_of(self, status: os.stat_result) -> tuple[Writer, ...]:
        """The processes holding the file of `status` open for writing (this one too: `repair` scans before it
        opens the ledger for writing)."""
        return self.writers.get((status.st_dev, status.st_ino), ())


def _written_files(pid: int, only: FileKey | None) -> list[tuple[FileKey, int]]:
    """(device, inode) and descriptor of each regular file `pid` holds open with write access (only the file
    `only`, when given); nothing for a process we may not inspect or that ended meanwhile."""
    keys = []
    try:
        with os.scandir(f"{_PROC}/{pid}/fd") as descriptors:
            for descriptor in descriptors:
                key = _written_file(pid, descriptor, only)
                if key is not None:
                    keys.append((key, int(descriptor.name)))
    except OSError:
        pass
    return keys


def _written_file(pid: int, descriptor: os.DirEntry[str], only: FileKey | None) -> FileKey | None:
    """The file of one descriptor, when it is open with write access. The process goes on meanwhile: a
    descriptor closed and its number reused between the link's stat and the flags' read would pair one file with
    another's flags (a racing reader of the ledger read as its writer). So the flags count only when the
    descriptor names the same file before and after they are read; one that will not hold still for a few tries
    counts as written (a live writer is never missed)."""
    for _ in range(_TRIES):
        try:
            before = os.stat(descriptor.path)  # follows the link: the open file itself (DirEntry.stat() caches)
        except OSError:
            return None
        key = (before.st_dev, before.st_ino)
        if (only is not None and key != only) or (before.st_mode & 0o170000) != 0o100000:
            return None
        flags = _open_flags(pid, descriptor.name)
        if flags is None:
            return None
        try:
            after = os.stat(descriptor.path)
        except OSError:
            return None
        if (after.st_dev, after.st_ino) == key:
            return key if flags & _ACCESS_MODE in (os.O_WRONLY, os.O_RDWR) else None
    return key


def _open_flags(pid: int, fd: str) -> int | None:
    """The descriptor's open flags (None: it is gone)."""
    try:
        with open(f"{_PROC}/{pid}/fdinfo/{fd}", "rb") as handle:
            info = handle.read()
    except OSError:
        return None
    for line in info.splitlines():
        if line.startswith(b"flags:"):
            return int(line.split()[1], 8)
    return None


def _command(pid: int) -> str:
    """The process's command line, shortened: what an operator needs to recognise it."""
    try:
        with open(f"{_PROC}/{pid}/cmdline", "rb") as handle:
            arguments = handle.read().split(b"\0")
    except OSError:
        return ""
    text = " ".join(
        " ".join(argument.decode("utf-8", "backslashreplace").split()) for argument in arguments if argument
    )
    return text if len(text) <= 120 else text[:117] + "..."
