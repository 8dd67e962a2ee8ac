"""Where a run's snapshots go among its JSONL rows, as the reference's `mergeRuntimePartialSnapshots` puts them.

Snapshots without an anchor first, then each JSONL row followed by the snapshots anchored after it (the first
row of that id), each group by ts then id (`snapshots.in_order`); snapshots whose anchor no row has go last, a
group per anchor in the order the anchor was first seen. A snapshot whose stream a JSONL row completes is left
out; one whose id is a JSONL row's or another snapshot's is corruption (`duplicate_event_id`).

What is needed of the JSONL is found while it is walked, chunk by chunk (`JsonlWatch`), and the merged rows are
read back on demand (`MergedRows`): a run with snapshots is planned in the memory of one without.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from ..core.read_back import ReadBack
from ..errors import DUPLICATE_EVENT_ID, LedgerCorruption
from .chunk import Chunk, split_rows
from .file_plan import LedgerRows
from .snapshots import Anchor, Snapshot, Stream, completed_streams, in_order

_EVENT_ID = attrgetter("id")

Placed = list[tuple[int, Snapshot]]  # (JSONL rows before it, snapshot), in merged order


class JsonlWatch:
    """Shown a run's JSONL chunk by chunk, in order: finds the row of each anchor, the streams final rows
    complete, and the snapshot ids a row repeats. Shown the same chunks twice, it finds the same."""

    def __init__(self, snapshots: list[Snapshot]) -> None:
        self.snapshots = snapshots
        self._anchors = {snapshot.anchor for snapshot in snapshots if isinstance(snapshot.anchor, str)}
        self._ids = {snapshot.event_id for snapshot in snapshots}
        self._watched = self._anchors | self._ids
        self._streams = {snapshot.stream for snapshot in snapshots if snapshot.stream is not None}
        self.anchor_rows: dict[str, int] = {}  # anchor id -> the index of the first JSONL row with that id
        self.repeated: set[str] = set()  # snapshot ids a JSONL row has too
        self.completed: set[Stream] = set()

    def __call__(self, chunk: Chunk) -> None:
        events = chunk.events
        if not self._watched.isdisjoint(map(_EVENT_ID, events)):  # rare: seen at C speed otherwise
            for index, event in enumerate(events, chunk.first_index):
                if event.id in self._anchors:
                    self.anchor_rows.setdefault(event.id, index)
                if event.id in self._ids:
                    self.repeated.add(event.id)
        if self._streams:
            self.completed.update(completed_streams(events, self._streams))

    def placed(self, jsonl: str | Path, rows: int) -> Placed:
        """Once the whole JSONL of `rows` rows was shown: the snapshots the reference merges, where they go."""
        visible = [snapshot for snapshot in self.snapshots if snapshot.stream is None or snapshot.stream not in self.completed]
        seen: dict[str, str | Path] = {}
        for snapshot in visible:
            if snapshot.event_id in self.repeated or snapshot.event_id in seen:
                other = jsonl if snapshot.event_id in self.repeated else seen[snapshot.event_id]
                raise LedgerCorruption(snapshot.path, 1, 0, DUPLICATE_EVENT_ID, f"event id {snapshot.event_id!r} is already in {other}")
            seen[snapshot.event_id] = snapshot.path
        placed: Placed = [(0, snapshot) for snapshot in in_order([s for s in visible if s.anchor is None])]
        groups: dict[Anchor, list[Snapshot]] = {}
        for snapshot in visible:
            if snapshot.anchor is not None:
                groups.setdefault(snapshot.anchor, []).append(snapshot)
        found = sorted((self.anchor_rows[anchor], anchor) for anchor in groups if isinstance(anchor, str) and anchor in self.anchor_rows)
        for index, anchor in found:
            placed += [(index + 1, snapshot) for snapshot in in_order(groups.pop(anchor))]
        for group in groups.values():  # anchors no row has, in the order first seen
            placed += [(rows, snapshot) for snapshot in in_order(group)]
        return placed


class MergedRows(ReadBack):
    """A run's merged rows, in order: all of its JSONL's `LedgerRows`, with each snapshot's row (`read_row`,
    read again from its file when reached) where `placed` puts it."""

    def __init__(self, rows: LedgerRows, placed: Placed, read_row: Callable[[Snapshot], msgspec.Raw]) -> None:
        self._rows = rows
        self._placed = placed
        self._read_row = read_row

    def __len__(self) -> int:
        return len(self._rows) + len(self._placed)

    def _pieces(self) -> Iterator[bytes | list[bytes]]:
        # A chunk's bytes (rows ending in newlines) where no snapshot goes, else its rows and snapshots as a list.
        placed, at = self._placed, 0
        for first_index, end, data in self._rows.chunks():
            if at < len(placed) and placed[at][0] < end:
                rows: list[bytes] = []
                for index, line in enumerate(split_rows(data), first_index):
                    while at < len(placed) and placed[at][0] == index:
                        rows.append(bytes(self._read_row(placed[at][1])))
                        at += 1
                    rows.append(line)
                yield rows
            else:
                yield data
        yield [bytes(self._read_row(snapshot)) for _, snapshot in placed[at:]]  # after the last row

    def __iter__(self) -> Iterator[msgspec.Raw]:
        for piece in self._pieces():
            yield from map(msgspec.Raw, split_rows(piece) if isinstance(piece, bytes) else piece)

    def __getitem__(self, index: Any) -> Any:
        return tuple(self)[index]

    def __repr__(self) -> str:
        return f"<MergedRows: {len(self)} rows, {len(self._placed)} of them snapshots>"

    def json_pieces(self) -> Iterator[bytes]:
        """The rows as a JSON array, in pieces of about a chunk, each row's bytes as committed or read."""
        yield b"["
        first = True
        for piece in self._pieces():
            body = piece[:-1].replace(b"\n", b",") if isinstance(piece, bytes) else b",".join(piece)
            if body:
                yield body if first else b"," + body
                first = False
        yield b"]"


def merged(events: tuple[Any, ...], rows: tuple[msgspec.Raw, ...], placed: Placed, read: Callable[[Snapshot], tuple[Any, msgspec.Raw]]) -> tuple[list[Any], list[msgspec.Raw]]:
    """A JSONL's events and rows held in memory, with the snapshots merged where `placed` puts them."""
    merged_events: list[Any] = []
    merged_rows: list[msgspec.Raw] = []
    at = 0
    for index in range(len(events) + 1):
        while at < len(placed) and placed[at][0] == index:
            event, row = read(placed[at][1])
            merged_events.append(event)
            merged_rows.append(row)
            at += 1
        if index < len(events):
            merged_events.append(events[index])
            merged_rows.append(rows[index])
    return merged_events, merged_rows
