"""A ledger's raw bytes: positioned reads, pieces cut at row ends, and the checks made on bytes before any
decoding: the torn last row, and invalid UTF-8 (each found at its file, line and byte offset)."""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ..errors import INVALID_UTF8, TORN_ROW, LedgerCorruption

if TYPE_CHECKING:
    pass

# A path as every function of the API takes it.
StrPath = str | os.PathLike[str]

# About this many bytes of rows are read, checked and handed on at once (a longer row makes a longer chunk). A
# chunk's events take about twice its bytes: 256 KiB of rows stay in the caches and in memory already touched,
# where 4 MiB cost a plan of a million events 52,000 page faults and 13% more time (14,000 at 256 KiB).
CHUNK_BYTES = 1 << 18
# A ledger of at most this many chunks (4 MiB by default) is walked with every operation and event id at hand:
# no operation store, and its ids compared as they are (tests make it small with a small `chunk_bytes`).
CHUNKS_AT_HAND = 16

ReadAt = Callable[[int, int], bytes]  # (offset, length) -> at most `length` bytes of the ledger from `offset`


def file_reader(fd: int) -> ReadAt:
    """Positioned reads of an open file, which leave its offset alone."""

    def read_at(offset: int, length: int) -> bytes:
        data = os.pread(fd, length, offset)
        while len(data) < length:
            more = os.pread(fd, length - len(data), offset + len(data))
            if not more:
                break
            data += more
        return data

    return read_at


def read_all(fd: int) -> bytes:
    """Every byte of an open file, from its start (through a duplicate, so the caller's offset stays put)."""
    with os.fdopen(os.dup(fd), "rb") as handle:
        handle.seek(0)
        return handle.read()


def chunk_ends(read_at: ReadAt, size: int, chunk_bytes: int = CHUNK_BYTES, start: int = 0) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) pieces of a ledger that ends in a newline, from byte `start` to `size`, each cut just after a newline."""
    offset = start
    while offset < size:
        data = _read_to_last_row_end(read_at, offset, min(chunk_bytes, size - offset), size)
        if data is not None:
            yield offset, data
            offset += len(data)
            continue
        data = read_at(offset, min(chunk_bytes, size - offset))
        cut = data.rfind(b"\n") + 1
        while cut == 0:  # a row longer than a chunk: read on to its end
            more = read_at(offset + len(data), min(max(chunk_bytes, len(data)), size - offset - len(data)))
            if not more:
                raise OSError(f"the ledger shrank while it was read (at byte {offset + len(data)})")
            data += more
            cut = data.rfind(b"\n") + 1
        yield offset, data[:cut] if cut != len(data) else data
        offset += cut


_END_WINDOW = 1 << 16  # how far back from a chunk's end its last row end is looked for first


def _read_to_last_row_end(read_at: ReadAt, offset: int, length: int, size: int) -> bytes | None:
    """The `length` bytes from `offset` up to their last newline, read as they are; None when that is not found
    near their end (a long row there) or the file is not as it was. Where the newline is is read first, in the
    piece's last 64 KB: reading the whole piece and cutting it copied it, and a fresh copy of 4 MB costs more
    here than reading it."""
    if offset + length == size:
        data = read_at(offset, length)  # the ledger's last piece, which ends in a newline
        return data if data.endswith(b"\n") else None
    if length <= _END_WINDOW:
        return None  # a small piece: read once, and cut (only tests read in pieces this small)
    window = _END_WINDOW
    cut = read_at(offset + length - window, window).rfind(b"\n")
    if cut < 0:
        return None
    wanted = length - window + cut + 1
    data = read_at(offset, wanted)
    return data if len(data) == wanted and data.endswith(b"\n") else None


def last_row_end(read_at: ReadAt, size: int, chunk_bytes: int = CHUNK_BYTES) -> int:
    """The offset just after the ledger's last newline (0 when it has none): where a torn tail starts. Read
    backwards a chunk at a time, so a long file with a short tail costs a chunk, not the file."""
    end = size
    while end > 0:
        start = max(0, end - chunk_bytes)
        cut = read_at(start, end - start).rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        end = start
    return 0


def row_at(read_at: ReadAt, offset: int, size: int, chunk_bytes: int = CHUNK_BYTES) -> bytes:
    """The row starting at byte `offset` of a ledger of `size` bytes, without its newline."""
    data = read_at(offset, min(chunk_bytes, size - offset))
    while b"\n" not in data:
        more = read_at(offset + len(data), min(max(chunk_bytes, len(data)), size - offset - len(data)))
        if not more:
            raise OSError(f"the ledger shrank while it was read (at byte {offset + len(data)})")
        data += more
    return data[: data.index(b"\n")]


def check_tail(path: StrPath, read_at: ReadAt, size: int, chunk_bytes: int) -> None:
    if read_at(size - 1, 1) == b"\n":
        return
    row_start = last_row_end(read_at, size, chunk_bytes)  # back to the newline before the torn row
    raise LedgerCorruption(path, _line_at(read_at, row_start, chunk_bytes), row_start, TORN_ROW, f"the last {size - row_start} bytes have no terminating newline")


def _line_at(read_at: ReadAt, row_start: int, chunk_bytes: int) -> int:
    """The line number of the row starting at byte `row_start`: one more than the newlines before it."""
    newlines = 0
    offset = 0
    while offset < row_start:
        data = read_at(offset, min(chunk_bytes, row_start - offset))
        if not data:
            raise OSError(f"the ledger shrank while it was read (at byte {offset})")
        newlines += data.count(b"\n")
        offset += len(data)
    return newlines + 1


def check_utf8(path: StrPath, data: bytes, first_index: int, offset: int) -> None:
    # A newline byte never occurs inside a UTF-8 sequence, so a chunk cut at row ends is checked on its own.
    if data.isascii():
        return  # the common case, without decoding (ASCII is valid UTF-8)
    try:
        codecs.utf_8_decode(data, "strict", True)
    except UnicodeDecodeError as error:
        row_start = data.rfind(b"\n", 0, error.start) + 1
        line = first_index + data.count(b"\n", 0, row_start) + 1
        raise LedgerCorruption(path, line, offset + row_start, INVALID_UTF8, f"invalid UTF-8 at byte {offset + error.start}") from None


def check_utf8_after(path: StrPath, read_at: ReadAt, size: int, start: int, chunk_bytes: int) -> None:
    pieces = chunk_ends(lambda at, length: read_at(at + start, length), size - start, chunk_bytes)
    for relative, data in pieces:
        try:
            codecs.utf_8_decode(data, "strict", True)
        except UnicodeDecodeError:
            check_utf8(path, data, _line_at(read_at, start + relative, chunk_bytes) - 1, start + relative)
