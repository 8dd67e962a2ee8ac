"""Read a committed ledger strictly, in bounded pieces: every row validated, every row kept exactly as written.

A ledger is trusted only whole. Every corruption kind (spec/decisions.yaml, storage_corruption) is found and
reported with its file, line and byte offset; no plan is ever made from a corrupt ledger. The ledger is read
in chunks of about CHUNK_BYTES cut at row ends, so memory is bounded by a chunk, not by the file: each chunk
is decoded into the contract's model (free-JSON values kept as `msgspec.Raw`, bytes) and handed on, and only
what the whole-ledger checks need is kept (a 64-bit hash per event id). The proofs that no row repeats a key
and no event id repeats are in `proofs`.

When the same ledger holds several corruptions, the one reported is chosen as if the whole file were checked
at once, in this order: a torn last row; invalid UTF-8 anywhere; the first row that is not JSON, not a
RuntimeEvent or repeats a key; the first row of another run; the first repeated event id.
"""

from __future__ import annotations

import codecs
import operator
from array import array
from collections.abc import Iterator
from io import BytesIO
from itertools import compress
from typing import Any

import msgspec

from ..contract import active as active_contract
from ..core.columns import column
from ..core.gcpause import gc_paused
from ..core.wire import MAX_NESTING, WireModel, too_deep
from ..errors import DUPLICATE_EVENT_ID, FOREIGN_ROW, LedgerCorruption, RowRefused
from .bytes import CHUNK_BYTES, CHUNKS_AT_HAND, ReadAt, StrPath, check_tail, check_utf8, check_utf8_after, chunk_ends
from .chunk import Chunk, split_rows
from .proofs import check_duplicate_keys, first_repeated_id, keys_proven, repeated_id_indexes, typed_keys

_EVENT_IDS = column("id")

RunIdentity = tuple[str, str]  # (sessionId, runId) every row must carry


class RepeatedIds(Exception):
    """The ledger's event ids repeat, which the contract diagnoses (`tolerate` holds duplicate_event_id): read it
    again with `duplicates=indexes`, the index of every row holding an earlier row's id."""

    def __init__(self, indexes: frozenset[int]) -> None:
        super().__init__(f"{len(indexes)} rows repeat an earlier row's event id")
        self.indexes = indexes


class CommittedLedger(msgspec.Struct, frozen=True):
    """What a reader may trust: the committed events in order, the rows they were read from, the high-water."""

    path: StrPath
    events: tuple[Any, ...]
    rows: tuple[msgspec.Raw, ...]

    @property
    def high_water(self) -> int:
        """Committed rows, partial events included."""
        return len(self.events)


def scan_ledger(
    path: StrPath,
    read_at: ReadAt,
    size: int,
    *,
    run: RunIdentity | None = None,
    model: WireModel | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    tolerate: frozenset[str] = frozenset(),
    duplicates: frozenset[int] | None = None,
) -> Iterator[Chunk]:
    """The chunks of a committed ledger, each fully checked, in order; raises LedgerCorruption.

    A consumer must not trust what it built from the chunks until the iterator is exhausted: the checks
    over the whole ledger (rows of another run, repeated event ids) end it. `run` is the (sessionId, runId)
    every row must carry (the run directory's); without it, the first row's.

    The kinds in `tolerate` (FOREIGN_ROW, DUPLICATE_EVENT_ID) are the contract's diagnostics, not corruption:
    such rows are flagged in their chunk (`Chunk.flagged`) for the walk. Repeated ids are known only at the end:
    then RepeatedIds ends the iterator, to be read again with `duplicates` (their indexes) flagged.
    """
    if model is None:
        model = active_contract().model
    if size == 0:
        return
    check_tail(path, read_at, size, chunk_bytes)
    if duplicates is not None:
        for chunk in scan_rows(path, read_at, size, None, run=run, model=model, chunk_bytes=chunk_bytes, tolerate=tolerate):
            _flag(chunk, duplicates, DUPLICATE_EVENT_ID)
            yield chunk
        return
    if size <= CHUNKS_AT_HAND * chunk_bytes:
        # A small ledger: its event ids are kept, and compared as they are (a hash of each in an int64 array costs
        # about 1,200 instructions an event, to convert it there and back); only a repeat is looked for again.
        ids: list[str] = []
        with gc_paused():
            for chunk in scan_rows(path, read_at, size, None, run=run, model=model, chunk_bytes=chunk_bytes, tolerate=tolerate):
                ids += _EVENT_IDS(chunk.events)
                yield chunk
        if len(set(ids)) != len(ids):
            _check_ids(path, read_at, size, array("q", map(hash, ids)), model, chunk_bytes, tolerate)
        return
    id_hashes = array("q")
    with gc_paused():
        yield from scan_rows(path, read_at, size, id_hashes, run=run, model=model, chunk_bytes=chunk_bytes, tolerate=tolerate)
    _check_ids(path, read_at, size, id_hashes, model, chunk_bytes, tolerate)


def _check_ids(path: StrPath, read_at: ReadAt, size: int, hashes: array, model: WireModel, chunk_bytes: int, tolerate: frozenset[str]) -> None:
    if DUPLICATE_EVENT_ID not in tolerate:
        check_unique_ids(path, read_at, size, hashes, model, chunk_bytes)
        return
    repeated = repeated_id_indexes(hashes, lambda: _rechunk(path, read_at, size, model, chunk_bytes))
    if repeated:
        raise RepeatedIds(frozenset(repeated))


def _flag(chunk: Chunk, indexes: frozenset[int], kind: str) -> None:
    """Flag the chunk's rows whose ledger index is in `indexes` as `kind`."""
    end = chunk.first_index + len(chunk.events)
    found = [index for index in indexes if chunk.first_index <= index < end] if indexes else ()
    if found:
        chunk.flagged = {**(chunk.flagged or {}), **dict.fromkeys(found, kind)}


def scan_rows(
    path: StrPath,
    read_at: ReadAt,
    end: int,
    id_hashes: array | None,
    *,
    start: int = 0,
    run: RunIdentity | None,
    model: WireModel,
    chunk_bytes: int = CHUNK_BYTES,
    tolerate: frozenset[str] = frozenset(),
) -> Iterator[Chunk]:
    """The checked chunks of the rows from byte `start` (a row start) to `end` (a row end), as `scan_ledger`
    gives them but for its checks over the whole ledger: the torn tail, and repeated event ids (a 64-bit hash
    of each id is appended to `id_hashes`, unless it is None). Chunks are numbered from the range's first row,
    index 0."""
    foreign: LedgerCorruption | None = None
    whose = "the run directory" if run is not None else "the ledger's first row"
    index = 0
    for offset, data in chunk_ends(read_at, end, chunk_bytes, start):
        check_utf8(path, data, index, offset)
        try:
            chunk = _decode_chunk(path, data, index, offset, model)
        except LedgerCorruption:
            check_utf8_after(path, read_at, end, offset + len(data), chunk_bytes)  # invalid UTF-8 anywhere comes first
            raise
        if chunk.events:
            if run is None:
                run = (chunk.events[0].session_id, chunk.events[0].run_id)
            if FOREIGN_ROW in tolerate:
                _flag(chunk, _foreign_indexes(chunk, run), FOREIGN_ROW)
            elif foreign is None:
                foreign = _first_foreign(path, chunk, run, whose)
            if id_hashes is not None:
                id_hashes.extend(map(hash, _EVENT_IDS(chunk.events)))
        index += len(chunk.events)
        yield chunk
    if foreign is not None:
        raise foreign


def _decode_chunk(path: StrPath, data: bytes, first_index: int, offset: int, model: WireModel) -> Chunk:
    events = _decode_framed(data, model)
    counted = None
    if events is not None:
        counted = typed_keys(events, model)
        # The typed part of a row nests a few levels; only free JSON can nest deeper, and it needs the brackets:
        # a long free value sends the chunk to the line-by-line path, which checks depth before parsing.
        if max(map(len, counted[1]), default=0) > MAX_NESTING - _TYPED_DEPTH:
            events = None
    if events is not None:
        chunk = Chunk(first_index, offset, data, events)
    else:
        lines = split_rows(data)
        # A row nested deeper than MAX_NESTING holds more than twice as many bytes: only long rows are looked at.
        if any(map(too_deep, compress(lines, map((2 * MAX_NESTING).__lt__, map(len, lines))))):
            # Read row by row, where each row's depth is checked before it is parsed (an earlier bad row comes first).
            return Chunk(first_index, offset, data, _decode_row_by_row(path, first_index, offset, lines, model), lines)
        try:
            # One decode per line: a line holding two values, or half of one, is refused by construction.
            events = list(map(model.decoder.decode, lines))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return Chunk(first_index, offset, data, _decode_row_by_row(path, first_index, offset, lines, model), lines)
        chunk = Chunk(first_index, offset, data, events, lines)
    if not keys_proven(data, chunk.events, model, counted):
        check_duplicate_keys(path, chunk, model)
    if model.refusals and model.any_refused(chunk.events):
        # A row the format refuses (`invalid_when`): read row by row, which names the first corrupt row, whatever
        # its corruption.
        return Chunk(first_index, offset, data, _decode_row_by_row(path, first_index, offset, lines := split_rows(data), model), lines)
    return chunk


def _decode_framed(data: bytes, model: WireModel) -> list[Any] | None:
    """The chunk's events decoded in one call, when it is proven that each line held exactly one of them;
    None when that is not proven or a row is refused (the caller then reads line by line, which finds it).

    `decode_lines` reads a stream of JSON values separated by any whitespace, so the framing is proven
    apart: every line starts with `{` and ends with `}` (each newline sits in `}\n{`). Inside an object or
    array, `}` is never followed by `{`, so each newline is between two top-level values: every line holds
    whole values, at least one, and as many values as lines means exactly one on each. (The lines are found
    by BytesIO, with memchr: `bytes.count` of a newline, or of `}\n{`, reads the chunk a byte at a time, at
    about five instructions a byte.)
    """
    if not data.endswith(b"}\n"):
        return None
    lines = BytesIO(data).readlines()  # each ends in its newline: at least 2 bytes when it starts with `{`
    rows = len(lines)
    if list(map(_FIRST_BYTE, lines)).count(_OPEN) != rows or list(map(_LAST_BYTE, lines)).count(_CLOSE) != rows:
        return None
    del lines
    try:
        events = model.decoder.decode_lines(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return events if len(events) == rows else None


_FIRST_BYTE = operator.itemgetter(0)
_LAST_BYTE = operator.itemgetter(-2)  # the byte before the newline
_OPEN, _CLOSE = ord("{"), ord("}")
_TYPED_DEPTH = 4  # levels the typed part of a row can add: the event, its content, a list or dict of free JSON


def decode_payloads(payloads: list[bytes], model: WireModel) -> list[Any] | None:
    """Each payload (one whole row: a SQLite store's `payload_json`) decoded under the reader's proofs, as a chunk's
    rows are: valid UTF-8, nesting within bounds, no key repeated in one object at any depth (`keys_proven`). None
    when a payload is refused or a proof does not settle: the caller then reads each with `model.decode_row`, which
    decides exactly and names the kind."""
    data = b"\n".join(payloads)
    if not data.isascii():
        try:
            codecs.utf_8_decode(data, "strict", True)
        except UnicodeDecodeError:
            return None
    # A row nested deeper than MAX_NESTING holds more than twice as many bytes: only long rows are looked at.
    if any(map(too_deep, compress(payloads, map((2 * MAX_NESTING).__lt__, map(len, payloads))))):
        return None
    try:
        events = list(map(model.decoder.decode, payloads))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if model.refusals and model.any_refused(events):
        return None
    return events if keys_proven(data, events, model) else None


def _decode_row_by_row(path: StrPath, first_index: int, offset: int, lines: list[bytes], model: WireModel) -> list[Any]:
    events: list[Any] = []
    for index, line in enumerate(lines):
        try:
            events.append(model.decode_row(line))
        except RowRefused as refused:
            raise LedgerCorruption(path, first_index + index + 1, offset, refused.kind, refused.detail) from None
        offset += len(line) + 1
    return events


def _foreign_indexes(chunk: Chunk, run: RunIdentity) -> frozenset[int]:
    session_id, run_id = run
    return frozenset(chunk.first_index + index for index, event in enumerate(chunk.events) if event.session_id != session_id or event.run_id != run_id)


def _first_foreign(path: StrPath, chunk: Chunk, run: RunIdentity, whose: str) -> LedgerCorruption | None:
    events = chunk.events
    session_id, run_id = run
    # The common case, in one pass that compares (each id is a fresh string, its hash not yet known, so a set costs more).
    if not [event for event in events if event.session_id != session_id or event.run_id != run_id]:
        return None
    for index, event in enumerate(events):
        if event.session_id != session_id or event.run_id != run_id:
            return LedgerCorruption(
                path,
                chunk.first_index + index + 1,
                chunk.row_offset(index),
                FOREIGN_ROW,
                f"the row belongs to session {event.session_id!r}, run {event.run_id!r}, but {whose} is session "
                f"{session_id!r}, run {run_id!r}",
            )
    return None


def check_unique_ids(path: StrPath, read_at: ReadAt, size: int, hashes: array | list[array], model: WireModel, chunk_bytes: int) -> None:
    """Refuse a repeated event id; only a 64-bit hash of each id was kept, in order (in one array, or in several,
    one after the other), and the arrays are used up (see `first_repeated_id`)."""
    repeated = first_repeated_id(hashes, lambda: _rechunk(path, read_at, size, model, chunk_bytes))
    if repeated is not None:
        chunk, index, first_line = repeated
        raise LedgerCorruption(
            path,
            chunk.first_index + index + 1,
            chunk.row_offset(index),
            DUPLICATE_EVENT_ID,
            f"event id {chunk.events[index].id!r} is already on line {first_line}",
        )


def _rechunk(path: StrPath, read_at: ReadAt, size: int, model: WireModel, chunk_bytes: int) -> Iterator[Chunk]:
    index = 0
    for offset, data in chunk_ends(read_at, size, chunk_bytes):
        chunk = _decode_chunk(path, data, index, offset, model)
        index += len(chunk.events)
        yield chunk


def decode_rows(
    path: StrPath, data: bytes, *, run: RunIdentity | None = None, model: WireModel | None = None, chunk_bytes: int = CHUNK_BYTES,
    tolerate: frozenset[str] = frozenset(),
) -> tuple[tuple[Any, ...], tuple[msgspec.Raw, ...]]:
    """(events, rows) of a whole ledger's bytes, or LedgerCorruption (see `scan_ledger`). Rows the contract
    diagnoses rather than refuses (`tolerate`) are read as any row: the walk finds them again."""
    view = memoryview(data)
    events: list[Any] = []
    rows: list[msgspec.Raw] = []
    read_at = lambda at, length: bytes(view[at : at + length])  # noqa: E731
    try:
        chunks = list(scan_ledger(path, read_at, len(data), run=run, model=model, chunk_bytes=chunk_bytes, tolerate=tolerate))
    except RepeatedIds as repeated:
        chunks = list(scan_ledger(path, read_at, len(data), run=run, model=model, chunk_bytes=chunk_bytes, tolerate=tolerate, duplicates=repeated.indexes))
    if chunks and (chunks[0].flagged or {}).get(0) == FOREIGN_ROW:
        # The walk of events in memory judges rows by the first one's run: a ledger whose first row is another
        # run's is not this run's ledger at all (refused, as without the contract's scan).
        first = chunks[0].events[0]
        raise LedgerCorruption(path, 1, 0, FOREIGN_ROW, f"the first row belongs to session {first.session_id!r}, run {first.run_id!r}, not the run it is read as")
    for chunk in chunks:
        events += chunk.events
        rows += map(msgspec.Raw, chunk.lines)
    return tuple(events), tuple(rows)
