"""Plan a ledger file in bounded memory: rows are read a chunk at a time and walked, never all held.

`build_resume_plan(events)` plans events already in memory; this is how a file is planned. The plan holds
its operations and diagnostics as usual, but its `runtime_events` and `replay_runtime_events` are
`LedgerRows`: the committed rows read back from the file when they are iterated or written, the plan
keeping only which rows it leaves out. The file stays open for that (the plan owns a descriptor of it),
and a file that changed since it was planned is refused rather than copied.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from ..contract import Contract, active
from ..core.indexes import sorted_unique, span
from ..core.plan import ResumePlan
from ..core.read_back import ReadBack
from ..core.walk import Walk
from ..errors import LedgerChanged
from ..system.open_files import OpenFileTable
from .bytes import CHUNK_BYTES, CHUNKS_AT_HAND, StrPath, file_reader
from .chunk import Chunk
from .committed_file import absolute, open_committed, path_text, run_identity
from .reader import RepeatedIds, RunIdentity, scan_ledger


class PlannedFile:
    """A descriptor of the planned ledger, where its chunks start, and what it looked like when planned."""

    def __init__(self, path: StrPath, fd: int, *, kept: bool = True) -> None:
        self.path = path
        # Kept: a duplicate, closed with the last plan that reads from it (`__del__`). Not kept (a walk whose rows
        # are never read back, the audit's): `fd` itself, read only while its opener keeps it open.
        self.fd = os.dup(fd) if kept else fd
        self._owned = kept
        stat = os.fstat(self.fd)
        self.identity = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        self.read_at = file_reader(self.fd)
        self.chunks: list[tuple[int, int, int]] = []  # (first row index, byte offset, byte length)
        self.rows = 0
        # A ledger of one chunk: its bytes as walked, which its rows are written from (else read again for each of
        # the two arrays of rows a plan writes), and those rows as JSON. Held with the plan: at most two chunks.
        self.held: bytes | None = None
        self._held_as_json: bytes | None = None

    def __del__(self, close: Callable[[int], None] = os.close) -> None:
        # A finalizer rather than weakref.finalize, which costs every plan the import of `weakref`. `close` is
        # bound here: at interpreter exit the module's globals may be gone.
        if getattr(self, "_owned", False):
            close(self.fd)

    def held_as_json(self) -> bytes:
        """The held chunk's rows joined by commas, as in a JSON array (made once: a plan writes its rows twice)."""
        if self._held_as_json is None:
            assert self.held is not None
            self._held_as_json = self.held.replace(b"\n", b",")[:-1]
        return self._held_as_json

    def chunk_data(self) -> Iterator[tuple[int, bytes]]:
        """(first row index, rows) of every chunk, read again from the file (a held chunk as it was walked)."""
        stat = os.fstat(self.fd)
        if (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns) != self.identity:
            raise LedgerChanged(f"{self.path}: the ledger changed after it was planned; plan it again")
        for first_index, offset, length in self.chunks:
            data = self.held if self.held is not None else self.read_at(offset, length)
            if len(data) != length:
                raise LedgerChanged(f"{self.path}: the ledger changed after it was planned; plan it again")
            yield first_index, data


class LedgerRows(ReadBack):
    """Committed rows of a planned ledger file, in order, but those at the indexes in `skip`; read on demand.

    `skip` is a sorted array of unique int64 indexes: 8 bytes a row left out, so a ledger of partial rows
    (none of them replayed) costs about what a plain one does."""

    def __init__(self, source: PlannedFile, count: int, skip: array | None = None) -> None:
        self._source = source
        self._count = count
        self._skip = array("q") if skip is None else skip

    def without(self, skip: array) -> LedgerRows:
        return LedgerRows(self._source, self._count, sorted_unique(self._skip, skip) if len(self._skip) else skip)

    def __len__(self) -> int:
        return self._count - len(self._skip)

    def chunks(self) -> Iterator[tuple[int, int, bytes]]:
        """(first row index, end row index, bytes) of each chunk of the file, every row of it, read again."""
        ends = [first_index for first_index, _, _ in self._source.chunks[1:]] + [self._source.rows]
        for (first_index, data), end in zip(self._source.chunk_data(), ends):
            yield first_index, end, data

    def _chunk_rows(self) -> Iterator[tuple[bool, list[bytes] | bytes]]:
        # (whole, rows): a chunk none of whose rows is skipped comes whole (its bytes), else as kept rows.
        skip = self._skip
        for first_index, end, data in self.chunks():
            low, high = span(skip, first_index, end)
            if low == high:
                yield True, data
            else:
                skipped = set(skip[low:high].tolist())
                lines = data.split(b"\n")
                lines.pop()
                yield False, [line for index, line in enumerate(lines, first_index) if index not in skipped]

    def __iter__(self) -> Iterator[msgspec.Raw]:
        for _, rows in self._chunk_rows():
            if isinstance(rows, bytes):
                rows = rows.split(b"\n")
                rows.pop()
            yield from map(msgspec.Raw, rows)

    def __getitem__(self, index: Any) -> Any:
        return tuple(self)[index]

    def __repr__(self) -> str:
        return f"<LedgerRows of {self._source.path}: {len(self)} rows>"

    def json_pieces(self) -> Iterator[bytes]:
        """The rows as a JSON array, in pieces of about a chunk, each row's bytes exactly as committed."""
        yield b"["
        first = True
        held = b""  # a whole chunk's rows, each ending in a comma: a separator if more rows follow, else dropped
        for _, rows in self._chunk_rows():
            if not rows:
                continue
            if held:
                yield held
            elif not first:
                yield b","
            first = False
            if isinstance(rows, bytes):
                # Rows hold no newline (the reader proves it), so a chunk's newlines are exactly its row ends. The
                # chunk is not cut to drop its last first: a fresh copy of a chunk costs more here than the replace.
                if rows is self._source.held:  # the ledger's one chunk, every row of it
                    yield self._source.held_as_json()
                    continue
                held = rows.replace(b"\n", b",")
            else:
                held = b""
                yield b",".join(rows)
        if held:
            yield held[:-1]
        yield b"]"


def plan_ledger(
    path: StrPath,
    expected_high_water: int | None = None,
    *,
    run: RunIdentity | None = None,
    refuse_live: bool | OpenFileTable = False,
    workspace: StrPath | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    processes: int = 1,
    contract: Contract | None = None,
) -> ResumePlan:
    """Read and plan one ledger file in bounded memory; the strictness and the plan are `read_ledger`'s and
    `build_resume_plan`'s (the arguments are `read_ledger`'s). The plan's rows are `LedgerRows`.

    With `processes` > 1, a ledger of more than `parallel.parts.PART_BYTES` per process is walked in parts by
    forked workers, where that gives the same plan (see `ledger.parallel`)."""
    path = path_text(path)  # (a str, not a Path: a small ledger's plan does not pay for importing pathlib)
    contract = contract or active()
    with open_committed(path, refuse_live=refuse_live, workspace=workspace) as fd:
        source = PlannedFile(path, fd)
        walk = walk_ledger(source, run or run_identity(absolute(path)), chunk_bytes, processes, contract)
    rows = LedgerRows(source, source.rows)
    return walk.plan(source.rows, expected_high_water, rows, rows.without)


def walk_ledger(
    source: PlannedFile,
    run: RunIdentity | None,
    chunk_bytes: int,
    processes: int,
    contract: Contract,
    observe: Callable[[Chunk], None] | None = None,
) -> Walk:
    """The walk of a whole ledger file, noting in `source` where its chunks lie; `run` is the (sessionId, runId)
    every row must carry (None: the first row's). `observe`, when given, is
    shown every checked chunk, in order, once or (when the file is walked twice) twice; it is not used with
    parts, so a caller that observes walks in one process."""
    walk = _walk_parts(source, run, chunk_bytes, processes, contract) if processes > 1 and observe is None else None
    if walk is None and source.identity[2] <= CHUNKS_AT_HAND * chunk_bytes:
        # A small ledger: its operations stay in the walk (a few thousand at most), and a store would encode,
        # keep and hand back each one, and walk again when a call id is named twice.
        walk = Walk(contract.table, chunks_kept=source.identity[2] <= chunk_bytes)  # one chunk: at most chunk_bytes of rows kept
        return _walk_file(source, walk, run, chunk_bytes, contract, observe)
    from ..core.operation_store import OperationStore  # a ledger of more than CHUNKS_AT_HAND chunks

    if walk is None:
        walk = _walk_file(source, Walk(contract.table, store=OperationStore()), run, chunk_bytes, contract, observe)
        suspects = walk.suspects()
        if suspects:
            # Some call id was named again after its operation may have been stored: walk the file once more,
            # keeping every operation of those call ids in the walk's hands, which makes the plan exact.
            walk = _walk_file(source, Walk(contract.table, store=OperationStore(), keep=suspects), run, chunk_bytes, contract, observe)
    return walk


def _walk_parts(source: PlannedFile, run: RunIdentity | None, chunk_bytes: int, processes: int, contract: Contract) -> Walk | None:
    from .parallel.parts import can_split, cut_points, walk_in_parts  # fenced: only a multi-process plan loads it

    size = source.identity[2]
    cuts = cut_points(source.read_at, size, processes) if can_split() else []
    whole = walk_in_parts(source.path, source.fd, size, run, chunk_bytes, cuts, contract) if cuts else None
    if whole is None:
        return None
    source.chunks, source.rows = whole.chunks, whole.rows
    return whole.walk


def _walk_file(
    source: PlannedFile, walk: Walk, run: RunIdentity | None, chunk_bytes: int, contract: Contract, observe: Callable[[Chunk], None] | None
) -> Walk:
    """Feed the whole file to `walk`, chunk by chunk, noting where each chunk lies."""
    tolerate = contract.table.tolerated
    chunks = scan_ledger(source.path, source.read_at, source.identity[2], run=run, model=contract.model, chunk_bytes=chunk_bytes, tolerate=tolerate)
    if observe is not None:
        chunks = _observed(chunks, observe)
    if source.identity[2] <= chunk_bytes:
        chunks = _held(chunks, source)
    try:
        source.chunks, source.rows = walk.feed_chunks(chunks)
    except RepeatedIds as repeated:  # (the contract diagnoses them: walked again, those rows flagged)
        walk = Walk(contract.table, walk.trace, walk.store and type(walk.store)(), walk.keep, not walk.copy_arguments)
        chunks = scan_ledger(source.path, source.read_at, source.identity[2], run=run, model=contract.model, chunk_bytes=chunk_bytes, tolerate=tolerate, duplicates=repeated.indexes)
        source.chunks, source.rows = walk.feed_chunks(_held(chunks, source) if source.identity[2] <= chunk_bytes else chunks)
    return walk


def _held(chunks: Iterator[Chunk], source: PlannedFile) -> Iterator[Chunk]:
    for chunk in chunks:
        source.held = chunk.data
        yield chunk


def _observed(chunks: Iterator[Chunk], observe: Callable[[Chunk], None]) -> Iterator[Chunk]:
    for chunk in chunks:
        observe(chunk)
        yield chunk
