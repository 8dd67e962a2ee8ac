"""Settled tool operations, kept compact so a plan over a ledger of any length fits in bounded memory.

A ledger of ten million events holds millions of tool calls; as objects (ids, tool name, arguments, the walk's
record) they would cost about 650 bytes each. Once an operation is settled, the walk (`walk.Walk`) hands it
here: its ToolOperation as the JSON the plan will print, appended to blocks that are compressed once full
(zlib: the JSON of many operations repeats its keys and tool names, about 10x). What stays in memory per
operation is where its record is (12 bytes).
Nothing stored is ever changed: the walk proves, or makes sure by walking again, that no event after an
operation was stored names its call id (see `walk.Walk.suspects`).

`StoredOperations` is the plan's `operations` over a store: a sequence of ToolOperations read back in order,
or, for `--json`, the JSON pieces copied without decoding.
"""

from __future__ import annotations

import bisect
import operator
from array import array
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

import msgspec

from .plan import ToolOperation
from .read_back import ReadBack
from .wire import encode_plan_value, python_json

BLOCK_BYTES = 1 << 20  # records are compressed a block of about this many bytes at a time
_NOT_HERE = -1  # the operation is in the walk's hands, not stored


class StoredRecord(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """A stored ToolOperation read back, arguments still as written."""

    tool_call_id: str
    tool_name: str
    args: msgspec.Raw
    status: str
    call_runtime_event_id: str
    response_runtime_event_id: str | None = None
    response_is_error: bool | None = None


_RECORD = msgspec.json.Decoder(StoredRecord)
_ENCODER = msgspec.json.Encoder()


class OperationStore:
    """Records of operations by index (the order of their first call), in compressed blocks."""

    def __init__(self) -> None:
        self._blocks: list[bytes] = []  # compressed, each holding the records from _block_starts[i] on
        self._block_starts = array("q")
        self._open = bytearray()  # the block being filled, uncompressed
        self._open_start = 0  # where it starts in the stream of all records
        self._position = array("q")  # per operation: where its record starts in that stream, or _NOT_HERE
        self._length = array("I")
        self._cache: tuple[int, bytes] | None = None  # the last block decompressed

    def __len__(self) -> int:
        return len(self._position)

    def put(self, indexes: list[int], records: list[bytes]) -> None:
        """Store operations: `records` are `encode_records`'s, of the operations at `indexes`, each stored once."""
        position, length = self._position, self._length
        known = max(indexes) + 1
        if known > len(position):  # operations the walk numbered since: not stored yet
            position.extend(array("q", [_NOT_HERE]) * (known - len(position)))
            length.extend(array("I", [0]) * (known - len(length)))
        lengths = list(map(len, records))
        starts = list(accumulate(lengths, initial=self._open_start + len(self._open)))
        starts.pop()
        first, last = indexes[0], indexes[-1]
        if last - first == len(indexes) - 1 and all(map(operator.lt, indexes, indexes[1:])):
            position[first : last + 1] = array("q", starts)  # the common case: stored in the order they were called
            length[first : last + 1] = array("I", lengths)
        else:
            for index, start, size in zip(indexes, starts, lengths):
                position[index] = start
                length[index] = size
        self._open += b"".join(records)
        if len(self._open) >= BLOCK_BYTES:
            self._seal()

    def extend(self, other: OperationStore, first_index: int) -> None:
        """Take over every record of `other`, a store whose operation 0 is this store's `first_index`."""
        if self._open:
            self._seal()  # a block holds whole records: `other`'s start after this one's
        shift = self._open_start
        self._blocks += other._blocks
        self._block_starts.extend(start + shift for start in other._block_starts)
        self._open, self._open_start = bytearray(other._open), other._open_start + shift
        missing = first_index - len(self._position)
        self._position.extend(array("q", [_NOT_HERE]) * missing)
        self._length.extend(array("I", [0]) * missing)
        self._position.extend(start + shift if start != _NOT_HERE else _NOT_HERE for start in other._position)
        self._length.extend(other._length)
        self._cache = None

    def _seal(self) -> None:
        import zlib  # once a block is full: a plan of a few hundred operations never needs it

        self._blocks.append(zlib.compress(self._open, 1))
        self._block_starts.append(self._open_start)
        self._open_start += len(self._open)
        self._open = bytearray()

    def record(self, index: int) -> bytes:
        """The record (ToolOperation JSON) of a stored operation."""
        start, length = self._position[index], self._length[index]
        if start == _NOT_HERE:
            raise AssertionError(f"operation {index} was never stored")
        if start >= self._open_start:
            return bytes(self._open[start - self._open_start : start - self._open_start + length])
        block = bisect.bisect_right(self._block_starts, start) - 1
        if self._cache is None or self._cache[0] != block:
            import zlib

            self._cache = (block, zlib.decompress(self._blocks[block]))
        offset = start - self._block_starts[block]
        return self._cache[1][offset : offset + length]

    def pieces(self) -> Iterator[bytes]:
        """Every operation's ToolOperation JSON, in order; every operation must be stored."""
        base, end, data = 0, 0, b""
        for start, length in zip(self._position, self._length):
            if start < base or start + length > end:  # not in the block at hand (records never straddle blocks)
                if start == _NOT_HERE:
                    raise AssertionError("an operation was never stored")
                if start >= self._open_start:
                    base, data = self._open_start, bytes(self._open)
                else:
                    block = bisect.bisect_right(self._block_starts, start) - 1
                    import zlib

                    base, data = self._block_starts[block], zlib.decompress(self._blocks[block])
                end = base + len(data)
            yield data[start - base : start - base + length]


def encode_records(operations: list[Any]) -> list[bytes]:
    """Records for `put`: each ToolOperation's JSON, as the plan prints it."""
    try:
        # ToolOperation JSON holds no raw newline (JSON escapes them in strings), so the lines are the records.
        records = _ENCODER.encode_lines(operations).split(b"\n")
        records.pop()
        return records
    except UnicodeEncodeError:
        return list(map(encode_plan_value, operations))


def decode_piece(piece: bytes) -> StoredRecord:
    """A stored ToolOperation's JSON, read back."""
    try:
        return _RECORD.decode(piece)
    except msgspec.DecodeError:  # lone surrogate escapes (written as the row wrote them): the standard library reads them
        value = python_json(piece)
        value["args"] = msgspec.Raw(encode_plan_value(value["args"]))
        return msgspec.convert(value, StoredRecord)


def tool_operation_of(stored: StoredRecord) -> ToolOperation:
    """The ToolOperation a stored record holds (its arguments a copy, not a view into the store's block)."""
    return ToolOperation(
        stored.tool_call_id,
        stored.tool_name,
        stored.args.copy(),
        stored.status,
        stored.call_runtime_event_id,
        stored.response_runtime_event_id,
        stored.response_is_error,
    )


class StoredOperations(ReadBack):
    """A plan's ToolOperations, read back from an OperationStore in order (each decoded when reached)."""

    def __init__(self, store: OperationStore, make: Any) -> None:
        self._store = store
        self._make = make  # StoredRecord -> ToolOperation

    def __len__(self) -> int:
        return len(self._store)

    def __iter__(self) -> Iterator[Any]:
        for piece in self._store.pieces():
            yield self._make(decode_piece(piece))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int):
            if index < 0:
                index += len(self)
            if not 0 <= index < len(self):
                raise IndexError(index)
            return self._make(decode_piece(self._store.record(index)))
        return tuple(self)[index]

    def __repr__(self) -> str:
        return f"<StoredOperations: {len(self)} operations>"

    def json_pieces(self) -> Iterator[bytes]:
        """The operations as the members of a JSON array, in pieces (no brackets), each copied as stored."""
        batch: list[bytes] = []
        for piece in self._store.pieces():
            batch.append(piece)
            if len(batch) >= 4096:
                yield b",".join(batch)
                batch = []
        if batch:
            yield b",".join(batch)
