"""A sequence read back on demand, the base of a plan's rows and operations that are not held in memory.

Its own module: a plan of a small ledger holds its operations and never loads the operation store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ReadBack(Sequence[Any]):
    """A sequence read back on demand (from a file, from a store): equal to any sequence of equal items."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(mine == theirs for mine, theirs in zip(self, other))

    __hash__ = None  # type: ignore[assignment]
