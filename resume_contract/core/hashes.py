"""Which 64-bit hashes repeat among many: how the reader proves event ids unique and the walk call ids.

Only a hash of each id is kept while a ledger is read; a repeated hash sends the caller back to compare the
ids themselves, so a collision costs time, never a wrong answer.
"""

from __future__ import annotations

from array import array
from itertools import chain

from .int64_sort import bucket_sorted, numpy_or_none, repeats_in_sorted

# Fewer hashes than this are checked with a set; more are sorted (int64_sort.py: with NumPy when it is installed).
_HASHES_IN_A_SET = 1 << 16


def repeated_hashes(hashes: array | list[array]) -> set[int]:
    """The hashes that occur more than once, in one array or in several. Uses the arrays up (they are the
    scan's own): they are empty afterwards."""
    arrays = hashes if isinstance(hashes, list) else [hashes]
    total = sum(map(len, arrays))
    if total < _HASHES_IN_A_SET:
        repeated = _repeats(arrays[0] if len(arrays) == 1 else array("q", chain.from_iterable(arrays)))  # (no copy of one)
    else:
        # A set costs ~70 bytes and ~0.25 us a hash; sorted in place, 8 bytes and ~0.03 us. Equal hashes end up
        # side by side.
        numpy = numpy_or_none()
        if numpy is None:
            return repeats_in_sorted(bucket_sorted(arrays))
        if len(arrays) == 1:
            values = numpy.frombuffer(arrays[0], dtype=numpy.int64)  # the array itself, sorted in place
        else:
            values = numpy.empty(total, dtype=numpy.int64)
            at = 0
            for part in arrays:
                values[at : at + len(part)] = numpy.frombuffer(part, dtype=numpy.int64)
                at += len(part)
                del part[:]  # held about once: each array is let go as soon as it is copied
        values.sort()
        repeated = set(values[1:][values[1:] == values[:-1]].tolist())
        del values  # (a view of the array keeps it from being emptied below)
    for part in arrays:
        del part[:]
    return repeated


def _repeats(hashes: array) -> set[int]:
    seen: set[int] = set()
    repeated: set[int] = set()
    if len(set(hashes)) == len(hashes):
        return repeated
    for value in hashes:
        if value in seen:
            repeated.add(value)
        seen.add(value)
    return repeated
