"""Sorted sets of row indexes (the rows a plan leaves out of its replay), held as int64 arrays: 8 bytes a row.

A ledger of partial rows leaves out every row, so the sets can be as long as the ledger: the long ones are sorted
as int64 arrays (int64_sort.py: with NumPy when it is installed, imported only for those, since it costs a command
~0.1 s, more than planning a typical crashed run); the few indexes of an ordinary plan are sorted as Python ints.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from itertools import chain

from .int64_sort import bucket_sorted, numpy_or_none

# Fewer indexes than this are sorted as Python ints (a set of them costs ~70 bytes each); more as arrays.
_SORTED_IN_PYTHON = 1 << 16


def sorted_unique(*parts: array) -> array:
    """The indexes in any of `parts`, sorted, each once, as a new int64 array."""
    if sum(map(len, parts)) < _SORTED_IN_PYTHON:
        return array("q", sorted(set(chain.from_iterable(parts))))
    numpy = numpy_or_none()
    if numpy is None:
        return bucket_sorted([array("q", part) for part in parts], unique=True)  # (copies: the parts stay whole)
    merged = numpy.unique(numpy.concatenate([numpy.frombuffer(part, dtype=numpy.int64) for part in parts]))
    result = array("q")
    result.frombytes(merged.data.cast("B"))  # one copy, no bytes object between
    return result


def extend_shifted(indexes: array, later: array, by: int) -> None:
    """Append `later`'s indexes to `indexes`, each moved on by `by` (a later part's rows, joined after ours)."""
    if len(later) < _SORTED_IN_PYTHON:
        indexes.extend([index + by for index in later])
        return
    numpy = numpy_or_none()
    if numpy is None:
        indexes.extend(index + by for index in later)
        return
    indexes.frombytes((numpy.frombuffer(later, dtype=numpy.int64) + by).data.cast("B"))


def span(indexes: array, first: int, end: int) -> tuple[int, int]:
    """Where the indexes from `first` up to (not including) `end` lie in the sorted `indexes`: [low, high)."""
    return bisect_left(indexes, first), bisect_left(indexes, end)
