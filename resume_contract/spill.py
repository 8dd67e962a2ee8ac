"""Hand a large result from a worker process to its parent without holding it twice on either side.

A process pool pickles a worker's result whole: the worker holds its objects and their pickle, the parent the
pickle and the objects, at once. A ledger part's walk holds tens of MiB of arrays (id hashes, call-id hashes,
record positions) and compressed blocks, so that doubled both processes' peak memory. Here the bulky values
are written straight from their buffers into a file the two processes share, and the pickle that travels
holds only where they are; the parent reads each back into a fresh array, piece by piece.
"""

from __future__ import annotations

import io
import pickle
from array import array
from typing import IO, Any

SPILL_AT = 1 << 12  # arrays and bytes of at least this many bytes go to the file, smaller ones stay inline
_READ_BYTES = 1 << 22  # an array is read back this many bytes at a time (`fromfile` reads into a temporary)


def dumps_spilling(value: Any, spill: IO[bytes]) -> bytes:
    """`value` pickled, its large arrays and bytes written to `spill` (from its current end) instead."""

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
    spill.flush()
    return pickled.getvalue()


def loads_spilled(data: bytes, spill: IO[bytes]) -> Any:
    """The value `dumps_spilling` pickled into `data`, its spilled parts read back from `spill`."""

    class Unspilling(pickle.Unpickler):
        def persistent_load(self, pid: Any) -> Any:
            kind, typecode, offset, count = pid
            spill.seek(offset)
            if kind == "bytes":
                read = spill.read(count)
                if len(read) != count:
                    raise EOFError(f"the spill file ends before its {count} bytes at {offset}")
                return read
            values = array(typecode)
            step = max(1, _READ_BYTES // values.itemsize)
            for done in range(0, count, step):
                values.fromfile(spill, min(step, count - done))  # raises EOFError if the file is short
            return values

    return Unspilling(io.BytesIO(data)).load()
