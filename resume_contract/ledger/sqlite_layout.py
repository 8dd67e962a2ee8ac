"""Where a workspace keeps its ledgers: the reference's canonical SQLite store, `WS/runtime.sqlite` (since
2026-08), or JSONL files, `WS/sessions/<S>/runs/<R>/runtime-events.jsonl`. Asked of every workspace, so it loads
nothing else (`sqlite_store` reads the store)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import StoreUnreadable
from .bytes import StrPath

STORE_NAME = "runtime.sqlite"
HEADER = b"SQLite format 3\x00"  # the first bytes of every SQLite database file
SIDE_FILES = ("-wal", "-shm", "-journal")


def store_path(workspace: StrPath) -> Path:
    return Path(workspace) / STORE_NAME


def holds_store(workspace: StrPath) -> bool:
    """Whether the workspace keeps its ledgers in `runtime.sqlite` (a symlink there counts: it is refused when read)."""
    return os.path.lexists(os.path.join(workspace, STORE_NAME))


def is_sqlite_file(path: StrPath) -> bool:
    """Whether the file starts with SQLite's header (a database given where a JSONL ledger goes)."""
    try:
        with open(path, "rb") as file:
            return file.read(len(HEADER)) == HEADER
    except OSError:
        return False


def side_files(path: Path) -> dict[str, int]:
    """The side files beside the database: suffix -> size (a `-wal`'s size says whether it holds transactions)."""
    found = {}
    for suffix in SIDE_FILES:
        try:
            status = os.lstat(str(path) + suffix)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(status.st_mode):  # (SQLite would open it through a link, or fail without saying which)
            raise StoreUnreadable(f"{path}{suffix}: not a regular file ({'a symlink' if stat.S_ISLNK(status.st_mode) else 'a directory or device'}) "
                                  "beside the store: refused; find who made it")
        found[suffix] = status.st_size
    return found
