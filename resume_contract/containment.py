"""Workspace containment: nothing outside a workspace is read as a ledger, written, truncated or created.

Every path the store builds is `<workspace>/sessions/<S>/runs/<R>/...`. A symlink at any of those steps could
send a read, a repair's truncation or a quarantine file anywhere on the machine, so each step below the
workspace root is checked with lstat (a symlink is refused, whatever it points at), and files are opened
with O_NOFOLLOW. The root itself is the caller's choice and may be a link.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class EscapesWorkspace(Exception):
    """A path under the workspace that is a symlink (or otherwise not what the layout says it is)."""


def check_contained(workspace: Path, path: Path) -> None:
    """Refuse `path` if any existing step of it below `workspace` is a symlink."""
    workspace = Path(workspace)
    relative = Path(path).relative_to(workspace)
    current = workspace
    for part in relative.parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return  # nothing further exists yet, so nothing further can be a link
        if stat.S_ISLNK(mode):
            raise EscapesWorkspace(f"{current}: a symlink inside the workspace; refusing to follow it out of {workspace}")


def open_contained(path: Path, flags: int, mode: int = 0o644) -> int:
    """os.open that refuses to follow a symlink at the last step (the steps before are check_contained's)."""
    try:
        return os.open(path, flags | NOFOLLOW | getattr(os, "O_BINARY", 0), mode)
    except OSError as error:
        if os.path.islink(path):
            raise EscapesWorkspace(f"{path}: a symlink inside the workspace; refusing to follow it") from None
        raise error
