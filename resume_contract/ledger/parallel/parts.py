"""Plan a large ledger on several cores: each part of its rows is checked and walked in a process of its own.

Every part is read by the same strict reader (`ledger.reader.scan_rows`) and walked afresh (`core.walk.Walk`); this process
walks the first part while forked workers walk the others. The walks are then joined in order
(`Walk.join`), which is exact only when no call id is named in two parts (the joined walk then has no
suspects) and no part but the last holds a terminal event. When a join is not exact, or a part is refused as
corrupt, the parts are dropped and the ledger is planned in one process, which finds the same plan, or the
corruption the whole ledger reports first: parts never change what is decided, only how long it takes.

Parts are cut before a user's row where one is near the middle, since a user speaks when no tool call is
open; that only makes a join likely, never exact (the join checks it).
"""

from __future__ import annotations

import multiprocessing
import tempfile
from array import array
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from typing import Any, NamedTuple

from ...contract import Contract
from ...core.gcpause import gc_paused
from ...core.hashes import repeated_hashes
from ...core.operation_store import OperationStore
from ...core.walk import Walk
from ...errors import DUPLICATE_EVENT_ID, LedgerCorruption, RowRefused
from ...system.interrupts import stoppable_pool
from ..bytes import ReadAt, StrPath, check_tail, file_reader
from ..reader import RunIdentity, check_unique_ids, scan_rows
from .spill import dump_spilling, load_spilled

PART_BYTES = 12 << 20  # parts are at least this big (measured here: 2 parts gain nothing at 16 MiB, 19% at 30 MiB)
_USER_ROW = b'"role":"user"'  # where a part may well start: the row of a user speaking
_LOOK_AHEAD = 1 << 20  # how far past a part's middle a user's row is looked for


class WalkedPart(NamedTuple):
    """One part of a ledger, walked: the walk, its chunks (first row, offset, length), its rows, its id hashes."""

    walk: Walk
    chunks: list[tuple[int, int, int]]
    rows: int
    id_hashes: array


def can_split() -> bool:
    """Whether this platform forks (a worker must hash strings as this process does: the id proofs need it)."""
    return "fork" in multiprocessing.get_all_start_methods()


def cut_points(read_at: ReadAt, size: int, processes: int) -> list[int]:
    """Byte offsets of row starts that cut a ledger of `size` bytes into up to `processes` parts."""
    count = min(processes, size // PART_BYTES)
    cuts: list[int] = []
    for number in range(1, count):
        middle = size * number // count
        window = read_at(middle, _LOOK_AHEAD)
        user = window.find(_USER_ROW)
        newline = window.rfind(b"\n", 0, user) if user > 0 else -1
        if newline < 0:
            newline = window.find(b"\n")
        if newline < 0 or middle + newline + 1 >= size:
            break  # no row starts in the window: fewer parts
        if not cuts or middle + newline + 1 > cuts[-1]:
            cuts.append(middle + newline + 1)
    return cuts


def walk_in_parts(
    path: StrPath, fd: int, size: int, run: RunIdentity | None, chunk_bytes: int, cuts: list[int], contract: Contract
) -> WalkedPart | None:
    """The ledger walked in the parts that `cuts` make and joined; None when that was not exact or a part was
    refused (the caller then walks it whole). Raises LedgerCorruption only for a torn last row or a repeated
    event id, which are found exactly as `scan_ledger` finds them."""
    read_at = file_reader(fd)
    check_tail(path, read_at, size, chunk_bytes)  # else the last part would run past the end of the file
    first = _first_event(read_at, size, contract)  # (every part's walk reads the run's facts from it)
    if first is None:
        return None
    if run is None:
        run = first.session_id, first.run_id
    bounds = list(zip([0, *cuts], [*cuts, size]))
    try:
        with ExitStack() as stack:
            # Created before the first submit forks the workers, which inherit them (unlinked: nothing stays).
            spills = [stack.enter_context(tempfile.TemporaryFile()) for _ in bounds[1:]]
            # Leaving by an exception, the pool kills the workers still walking: their work is moot.
            pool = stack.enter_context(stoppable_pool(len(spills), multiprocessing.get_context("fork")))
            later = [
                pool.submit(walk_part_spilled, path, fd, start, end, run, chunk_bytes, spill.fileno(), contract, first)
                for (start, end), spill in zip(bounds[1:], spills)
            ]  # (a worker that already failed breaks the pool: a later submit raises BrokenProcessPool)
            walked = [walk_part(path, fd, *bounds[0], run, chunk_bytes, contract, first)]
            walked += [load_spilled(spill, future.result()) for future, spill in zip(later, spills)]
    except (LedgerCorruption, BrokenProcessPool, OSError):
        # Planned whole, the ledger gets its corruption or read error reported as it always is. OSError also
        # stands for no pipe, temporary file, fork or room for a spill: the machine's state, not the ledger's.
        return None
    # Repeated event ids first: it uses up the parts' id hashes, the most memory they hand back. A contract that
    # diagnoses them has the ledger planned whole, which flags them (a sound ledger, the common case, is not).
    if DUPLICATE_EVENT_ID in contract.table.tolerated:
        if repeated_hashes([part.id_hashes for part in walked]):
            return None
    else:
        check_unique_ids(path, read_at, size, [part.id_hashes for part in walked], contract.model, chunk_bytes)
    whole = walked.pop(0)
    while walked:
        part = walked.pop(0)
        if not whole.walk.join(part.walk, whole.rows):
            return None
        whole.chunks.extend((first + whole.rows, offset, length) for first, offset, length in part.chunks)
        whole = whole._replace(rows=whole.rows + part.rows)
        del part  # what the join took over is now held once, by the joined walk
    return whole if not whole.walk.suspects() else None


def walk_part(
    path: StrPath, fd: int, start: int, end: int, run: RunIdentity, chunk_bytes: int, contract: Contract, first: Any
) -> WalkedPart:
    """The rows from byte `start` to `end`, checked and walked afresh (rows numbered from 0), as rows of the run
    whose first event is `first`."""
    walk = Walk(contract.table, store=OperationStore(), first=first)
    id_hashes = array("q")
    with gc_paused():
        rows_read = scan_rows(
            path, file_reader(fd), end, id_hashes, start=start, run=run, model=contract.model, chunk_bytes=chunk_bytes, tolerate=contract.table.tolerated
        )
        chunks, rows = walk.feed_chunks(rows_read)
    return WalkedPart(walk, chunks, rows, id_hashes)


def walk_part_spilled(
    path: StrPath, fd: int, start: int, end: int, run: RunIdentity, chunk_bytes: int, spill_fd: int, contract: Contract,
    first: Any,
) -> tuple[int, int]:
    """A worker's `walk_part`, written to the file `spill_fd`; returns where (see `spill`)."""
    part = walk_part(path, fd, start, end, run, chunk_bytes, contract, first)
    with open(spill_fd, "w+b", closefd=False) as spill:
        return dump_spilling(part, spill)


def _first_event(read_at: ReadAt, size: int, contract: Contract) -> Any:
    """The first row's event, whose (sessionId, runId) every row must carry; None if it is not readable here
    (the whole ledger is then read in one process, which says why)."""
    line = read_at(0, min(size, _LOOK_AHEAD)).split(b"\n", 1)[0]
    try:
        return contract.model.decode_row(line)
    except RowRefused:
        return None

