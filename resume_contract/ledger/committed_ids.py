"""Where each committed event id's row starts: what a writer keeps to tell an exact retry from a new event.

A writer reopening a ledger used to hold every event decoded, then a digest per id (1.1 GB to reopen a
170 MB ledger). Only the row's offset is kept now: the row itself is read back from the file when an append
names its id, and compared there. Up to `IN_A_DICT` ids sit in a dict by id (~100 bytes each, no NumPy
imported: most ledgers are small); beyond, a 64-bit hash of each id, sorted, beside its offset in int64
arrays (16 bytes an event; NumPy's when it is installed, core/int64_sort.py's otherwise). A hash found only names rows to read back: a collision of two ids costs a read,
never a wrong answer.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from ..core.int64_sort import bucket_sorted_pairs, merged_pairs, numpy_or_none

IN_A_DICT = 1 << 16


class CommittedIds:
    """Event id -> the offset of its row, for the rows of one ledger."""

    def __init__(self) -> None:
        self._by_id: dict[str, int] = {}
        self._unsorted: tuple[array, array] | None = None  # (id hashes, offsets) being gathered by `extend`
        self._hashes: Any = None  # NumPy int64 arrays, sorted by hash, once there are many ids
        self._offsets: Any = None

    def extend(self, ids: Iterable[str], offsets: Iterable[int]) -> None:
        """Add many rows (a reopened ledger's, chunk by chunk); `seal` before asking `offsets_of`."""
        if self._unsorted is None:
            self._by_id.update(zip(ids, offsets))
            if len(self._by_id) >= IN_A_DICT:
                self._unsorted = (array("q", map(hash, self._by_id)), array("q", self._by_id.values()))
                self._by_id = {}
        else:
            hashes, kept = self._unsorted
            hashes.extend(map(hash, ids))
            kept.extend(offsets)

    def add(self, event_id: str, offset: int) -> None:
        """Add the row an append just wrote."""
        self._by_id[event_id] = offset
        if len(self._by_id) >= IN_A_DICT:
            self._unsorted = (array("q", map(hash, self._by_id)), array("q", self._by_id.values()))
            self._by_id = {}
            self.seal()

    def seal(self) -> None:
        """Sort what `extend` gathered into the arrays `offsets_of` searches."""
        if self._unsorted is None:
            return
        numpy = numpy_or_none()  # only for a ledger of many events (it costs a command ~0.1 s to start)
        if numpy is None:
            hashes, offsets = bucket_sorted_pairs(*self._unsorted)
            self._unsorted = None
            if self._hashes is None:
                self._hashes, self._offsets = hashes, offsets
            else:
                self._hashes, self._offsets = merged_pairs((self._hashes, self._offsets), (hashes, offsets))
            return
        hashes = numpy.frombuffer(self._unsorted[0], dtype=numpy.int64)
        offsets = numpy.frombuffer(self._unsorted[1], dtype=numpy.int64)
        order = numpy.argsort(hashes, kind="stable")
        hashes, offsets = hashes[order], offsets[order]
        del order
        self._unsorted = None
        if self._hashes is None:
            self._hashes, self._offsets = hashes, offsets
        else:  # merged in place of a sort: linear in the ids already held
            at = numpy.searchsorted(self._hashes, hashes)
            self._hashes = numpy.insert(self._hashes, at, hashes)
            self._offsets = numpy.insert(self._offsets, at, offsets)

    def offsets_of(self, event_id: str) -> list[int]:
        """Offsets of the rows that may hold `event_id` (one row read back tells: ids are unique in a ledger)."""
        found = self._by_id.get(event_id)
        if found is not None:
            return [found]
        if self._hashes is None:
            return []
        key = hash(event_id)
        low, high = bisect_left(self._hashes, key), bisect_right(self._hashes, key)  # (NumPy arrays or int64 ones)
        return [int(offset) for offset in self._offsets[low:high]]
