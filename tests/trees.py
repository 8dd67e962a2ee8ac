"""A helper the tests share: two directory trees hold the same files with the same bytes."""

from __future__ import annotations

import filecmp
from pathlib import Path


def assert_same_tree(left: Path, right: Path) -> None:
    """Every file of either tree is in the other, with the same bytes, at every depth."""
    stack = [filecmp.dircmp(left, right)]
    while stack:
        current = stack.pop()
        assert not (current.left_only or current.right_only or current.diff_files), (current.left, current.right)
        stack.extend(current.subdirs.values())
