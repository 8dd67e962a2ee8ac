"""A chunk: consecutive committed rows as the reader hands them on, with their decoded events."""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import msgspec


class Chunk(msgspec.Struct):  # (a struct: a dataclass costs every command a millisecond to define)
    """Consecutive committed rows: their events, and where they sit in the ledger."""

    first_index: int  # the first row's index in the ledger (its line is first_index + 1)
    offset: int  # the first row's byte offset
    data: bytes  # the rows, each ending in a newline
    events: list[Any]
    _lines: list[bytes] | None = None
    _starts: list[int] | None = None
    # Rows the contract diagnoses rather than refuses (spec/projector.yaml ledger_anomalies): ledger index ->
    # corruption kind (duplicate_event_id, foreign_row); None: none here
    flagged: dict[int, str] | None = None

    @property
    def lines(self) -> list[bytes]:
        """The rows without their newlines (split only when asked: the fast path never needs them)."""
        if self._lines is None:
            self._lines = split_rows(self.data)
        return self._lines

    def row_offset(self, index: int) -> int:
        """The byte offset in the ledger of this chunk's row `index` (0-based within the chunk)."""
        if self._starts is None:
            self._starts = [0, *accumulate(len(line) + 1 for line in self.lines)]
        return self.offset + self._starts[index]


def split_rows(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    lines.pop()  # the chunk ends in a newline
    return lines
