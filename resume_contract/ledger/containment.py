"""Workspace containment: nothing outside a workspace is read as a ledger, written, truncated or created.

Every path the store builds is `<workspace>/sessions/<S>/runs/<R>/...`. A symlink at any of those steps could
send a read, a repair's truncation or a quarantine file anywhere on the machine. Checking the path first and
using it later leaves a window in which a step can be swapped for a link, so the steps are not used as paths
at all: each directory is opened relative to the one before it (`openat`) with O_NOFOLLOW, and every file
below is opened, created, renamed and fsynced relative to its directory's descriptor. A symlink at any step
is refused, whatever it points at; a file with more than one hard link (another name, possibly outside) is
not truncated or appended to. The workspace root itself is the caller's choice and may be a link.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import EscapesWorkspace

if TYPE_CHECKING:
    from pathlib import Path


def _refuse_link(parent_fd: int, name: str, where: str | os.PathLike[str]) -> None:
    try:
        mode = os.lstat(name, dir_fd=parent_fd).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise EscapesWorkspace(f"{where}: a symlink inside the workspace; refusing to follow it")


def open_directory(root: Path, parts: Sequence[str], *, create: bool = False) -> int:
    """A descriptor of `root/parts...`, each step opened relative to the one before, never through a link."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, part in enumerate(parts, 1):
            try:
                step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                step = _make_directory(fd, part, root, parts[:depth])
            except OSError as error:
                _refuse_step(fd, part, error, root, parts[:depth])
                raise
            os.close(fd)
            fd = step
        return fd
    except BaseException:
        os.close(fd)
        raise


def _make_directory(fd: int, part: str, root: Path, steps: Sequence[str]) -> int:
    """Create the directory `part` in `fd` and open it. Idempotent under concurrency: when another process made
    it first (EEXIST), the directory it made is opened, as if this one had; what is there is still opened with
    O_NOFOLLOW, so a symlink or a file that took the name is refused, never followed."""
    try:
        os.mkdir(part, 0o755, dir_fd=fd)
    except FileExistsError:
        pass  # a racing writer made it (or a link or a file took the name): the open below decides
    try:
        return os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as error:
        _refuse_step(fd, part, error, root, steps)
        raise


def _refuse_step(fd: int, part: str, error: OSError, root: Path, steps: Sequence[str]) -> None:
    """Raise EscapesWorkspace, naming the path up to it, when a step could not be opened because it is a link."""
    if error.errno in (errno.ELOOP, errno.ENOTDIR):
        from pathlib import Path  # (a plan of a bare file never comes here, nor imports pathlib)

        _refuse_link(fd, part, Path(root, *steps))  # (the path made only to be said: an audit opens thousands)


def open_in(directory_fd: int, name: str, flags: int, where: str | os.PathLike[str], mode: int = 0o644) -> int:
    """Open `name` in an opened directory, never through a link."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=directory_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
            _refuse_link(directory_fd, name, where)
        raise


@contextmanager
def temporary_file(directory_fd: int, name: str, pieces: Iterable[bytes], where: str | os.PathLike[str], *, durable: bool = True) -> Iterator[None]:
    """Write `pieces` to a new file `name` in an opened directory (fsynced when `durable`), for the block to put in
    place (rename, replace or link it); if the block, or the writing, fails, the file is removed."""
    fd = open_in(directory_fd, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, where)
    try:
        try:
            for piece in pieces:
                view = memoryview(piece)
                while view:
                    view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        yield
    except BaseException:
        try:
            os.unlink(name, dir_fd=directory_fd)
        except FileNotFoundError:
            pass
        raise


def refuse_other_names(fd: int, where: str | os.PathLike[str]) -> None:
    """A file about to be truncated or appended to must have no other name (a hard link could be anywhere)."""
    if os.fstat(fd).st_nlink > 1:
        raise EscapesWorkspace(f"{where}: has {os.fstat(fd).st_nlink} hard links; refusing to change a file reachable by another name")


def split_below(root: Path, path: Path) -> tuple[list[str], str]:
    """(directory steps, file name) of `path` below `root`."""
    from pathlib import Path  # a workspace's run: a plan of a bare file never imports pathlib

    parts = Path(path).relative_to(root).parts
    return list(parts[:-1]), parts[-1]


def check_contained(workspace: Path, path: Path) -> None:
    """Refuse `path` if any existing step of it below `workspace` is a symlink (an early, friendly check;
    the descriptor-relative opens are what holds)."""
    directories, name = split_below(workspace, path)
    try:
        fd = open_directory(workspace, directories)
    except FileNotFoundError:
        return
    try:
        _refuse_link(fd, name, path)
    finally:
        os.close(fd)
