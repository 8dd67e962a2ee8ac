"""Hand a large result from a worker process to its parent without holding it twice on either side.

A process pool pickles a worker's result whole: the worker holds its objects and their pickle, the parent the
pickle and the objects, at once. A ledger part's walk holds tens of MiB of arrays (id hashes, call-id hashes,
record positions) and compressed blocks, so that doubled both processes' peak memory. Here the bulky values
are written straight from their buffers into a file the two processes share, then the pickle of the rest,
which holds where they are; the parent reads each back into a fresh array, piece by piece.

What travels through the pool's pipe is only where the pickle is: a few bytes, which a pipe writes whole or
not at all. A result larger than the pipe's buffer is written in several pieces, and a worker killed between
two of them left the pool's reader thread waiting for the rest for good (the process never exited).
"""

from __future__ import annotations

import io
import pickle
from array import array
from typing import IO, Any

SPILL_AT = 1 << 12  # arrays and bytes of at least this many bytes go to the file, smaller ones stay inline
_READ_BYTES = 1 << 22  # an array is read back this many bytes at a time (`fromfile` reads into a temporary)


def dump_spilling(value: Any, spill: IO[bytes]) -> tuple[int, int]:
    """Write `value` to `spill` (from its current end): its large arrays and bytes, then the pickle of the rest.
    Returns where that pickle is, for `load_spilled`."""

    class Spilling(pickle.Pickler):
        def persistent_id(self, obj: Any) -> Any:
            kind = type(obj)
            if kind is array and len(obj) * obj.itemsize >= SPILL_AT:
                spill.seek(0, io.SEEK_END)
                offset = spill.tell()
                obj.tofile(spill)
                return ("array", obj.typecode, offset, len(obj))
            if kind is bytes and len(obj) >= SPILL_AT:
                spill.seek(0, io.SEEK_END)
                offset = spill.tell()
                spill.write(obj)
                return ("bytes", "", offset, len(obj))
            return None

    pickled = io.BytesIO()
    Spilling(pickled, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    spill.seek(0, io.SEEK_END)
    offset = spill.tell()
    spill.write(pickled.getbuffer())
    spill.flush()
    return offset, pickled.tell()


def load_spilled(spill: IO[bytes], where: tuple[int, int]) -> Any:
    """The value `dump_spilling` wrote to `spill`, which returned `where`."""

    def read(offset: int, count: int) -> bytes:
        spill.seek(offset)
        data = spill.read(count)
        if len(data) != count:
            raise EOFError(f"the spill file ends before its {count} bytes at {offset}")
        return data

    class Unspilling(pickle.Unpickler):
        def persistent_load(self, pid: Any) -> Any:
            kind, typecode, offset, count = pid
            if kind == "bytes":
                return read(offset, count)
            spill.seek(offset)
            values = array(typecode)
            step = max(1, _READ_BYTES // values.itemsize)
            for done in range(0, count, step):
                values.fromfile(spill, min(step, count - done))  # raises EOFError if the file is short
            return values

    return Unspilling(io.BytesIO(read(*where))).load()
