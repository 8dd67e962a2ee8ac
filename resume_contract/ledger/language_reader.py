"""A language contract's JSONL ledger read to its committed rows: each row a JSON object the contract's row model
accepts, one run's, every event id once, or LedgerCorruption naming the file, line and byte offset.

Corruption kinds, as the packaged contract names them: torn_row (the file does not end in a newline),
invalid_utf8, invalid_json (and a key repeated in one object: duplicate_key), invalid_event (not a row of the
model), duplicate_event_id, foreign_row (another run's row).
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import msgspec

from ..core.wire import python_json
from ..errors import (
    DUPLICATE_EVENT_ID,
    FOREIGN_ROW,
    INVALID_EVENT,
    INVALID_UTF8,
    TORN_ROW,
    LedgerCorruption,
    RowRefused,
)


class Ledger(msgspec.Struct, frozen=True):
    path: str
    rows: list[dict[str, Any]]
    offsets: list[int]  # each row's byte offset


def read_ledger(path: str | os.PathLike[str], module: ModuleType) -> Ledger:
    """The committed rows of the JSONL file at `path`; raises LedgerCorruption, OSError."""
    with open(path, "rb") as file:
        data = file.read()
    lines = data.split(b"\n")
    tail = lines.pop()
    rows: list[dict[str, Any]] = []
    offsets: list[int] = []
    offset = 0
    seen: set[Any] = set()
    run: tuple[Any, ...] | None = None
    for number, line in enumerate(lines, 1):
        row = _row(path, number, offset, line, module)
        identity = row[module.ROW_ID]
        if identity in seen:
            raise LedgerCorruption(path, number, offset, DUPLICATE_EVENT_ID, f"the event id {identity!r} is on an earlier row")
        seen.add(identity)
        this_run = tuple(row[name] for name in module.RUN)
        if run is None:
            run = this_run
        elif this_run != run:
            raise LedgerCorruption(path, number, offset, FOREIGN_ROW, f"the row belongs to run {_named(module, this_run)}, the ledger's first row to {_named(module, run)}")
        rows.append(row)
        offsets.append(offset)
        offset += len(line) + 1
    if tail:
        raise LedgerCorruption(path, len(lines) + 1, offset, TORN_ROW, "the file does not end in a newline: the last row was cut off mid-write")
    return Ledger(os.fspath(path), rows, offsets)


def _row(path: str | os.PathLike[str], number: int, offset: int, line: bytes, module: ModuleType) -> dict[str, Any]:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise LedgerCorruption(path, number, offset, INVALID_UTF8, str(error)) from None
    try:
        value = python_json(line)
    except RowRefused as refused:
        raise LedgerCorruption(path, number, offset, refused.kind, refused.detail) from None
    if not isinstance(value, dict):
        raise LedgerCorruption(path, number, offset, INVALID_EVENT, f"a row is a JSON object, not {type(value).__name__}")
    try:
        msgspec.convert(value, module.Row, strict=True)
    except msgspec.ValidationError as error:
        raise LedgerCorruption(path, number, offset, INVALID_EVENT, str(error)) from None
    return value


def _named(module: ModuleType, run: tuple[Any, ...]) -> str:
    return ", ".join(f"{name} {value!r}" for name, value in zip(module.RUN, run, strict=True))


CORRUPT_SEQUENCE = "corrupt_sequence"  # rows the contract's items declare corrupt (an entry's `corrupt`)


def plan_file(path: str | os.PathLike[str], module: ModuleType) -> Any:
    """The decision over the committed ledger at `path` (a LanguageDecision); raises LedgerCorruption, OSError,
    ExpressionFailed."""
    from ..core.language import SequenceCorrupt, decide

    ledger = read_ledger(path, module)
    try:
        return decide(module, ledger.rows)
    except SequenceCorrupt as corrupt:
        raise LedgerCorruption(path, corrupt.index + 1, ledger.offsets[corrupt.index], CORRUPT_SEQUENCE, corrupt.message) from None
