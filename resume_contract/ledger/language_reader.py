"""A language contract's JSONL ledger read to its committed rows: each row a JSON object the contract's row model
accepts, one run's, every event id once, or LedgerCorruption naming the file, line and byte offset.

Corruption kinds, as the packaged contract names them: torn_row (the file does not end in a newline),
invalid_utf8, invalid_json (and a key repeated in one object: duplicate_key), invalid_event (not a row of the
model), duplicate_event_id, foreign_row (another run's row).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from types import ModuleType
from typing import Any

import msgspec

from ..core.wire import json_value
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


def read_ledger(path: str | os.PathLike[str], module: ModuleType, run: tuple[Any, ...] | None = None, *, no_link: bool = False) -> Ledger:
    """The committed rows of the JSONL file at `path`, every one of `run` (its run fields' values; None: the first
    row's); raises LedgerCorruption, OSError (with `no_link`, for a symlink where the file belongs too)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | (os.O_NOFOLLOW if no_link else 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # (a FIFO would block the read, a device never end it)
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    with os.fdopen(fd, "rb") as file:
        data = file.read()
    lines = data.split(b"\n")
    tail = lines.pop()
    rows: list[dict[str, Any]] = []
    offsets: list[int] = []
    offset = 0
    seen: set[Any] = set()
    whose = "the file's place in the workspace belongs"
    for number, line in enumerate(lines, 1):
        row = _row(path, number, offset, line, module)
        identity = row[module.ROW_ID]
        if identity in seen:
            raise LedgerCorruption(path, number, offset, DUPLICATE_EVENT_ID, f"the event id {identity!r} is on an earlier row")
        seen.add(identity)
        this_run = tuple(row[name] for name in module.RUN)
        if run is None:
            run, whose = this_run, "the ledger's first row"
        elif this_run != run:
            raise LedgerCorruption(path, number, offset, FOREIGN_ROW, f"the row belongs to run {_named(module, this_run)}, {whose} to {_named(module, run)}")
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
        value = json_value(line)
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


def plan_file(
    path: str | os.PathLike[str], module: ModuleType, run: tuple[Any, ...] | None = None, *, no_link: bool = False, expected_high_water: int | None = None
) -> Any:
    """The decision over the committed ledger at `path` (a LanguageDecision); raises LedgerCorruption, OSError,
    ExpressionFailed."""
    from ..core.language import SequenceCorrupt, decide

    ledger = read_ledger(path, module, run, no_link=no_link)
    try:
        return decide(module, ledger.rows, expected_high_water)
    except SequenceCorrupt as corrupt:
        raise LedgerCorruption(path, corrupt.index + 1, ledger.offsets[corrupt.index], CORRUPT_SEQUENCE, corrupt.message) from None


def layout_pattern(module: ModuleType) -> re.Pattern[str]:
    """The contract's layout (`rows.layout`) as a pattern of a path relative to the workspace, one group per run
    field, in the order of `rows.run`."""
    pattern = ""
    for piece in re.split(r"(\{[^{}]*\})", module.LAYOUT):
        pattern += f"(?P<{piece[1:-1]}>[^/]+)" if piece.startswith("{") else re.escape(piece)
    return re.compile(pattern)


def run_path(workspace: str, module: ModuleType, values: tuple[str, ...]) -> str:
    """Where the run with these run-field values keeps its rows (ValueError for a value that is no file name, and for
    a symlink on the way to it: only the workspace itself may be one)."""
    given = dict(zip(module.RUN, values, strict=True))
    for name, value in given.items():
        if not value or value in (".", "..") or "/" in value or "\0" in value:
            raise ValueError(f"{name} {value!r} cannot name a file in the workspace")
    relative = re.sub(r"\{([^{}]*)\}", lambda field: given[field.group(1)], module.LAYOUT)  # (one pass: a value is never read as a field)
    step = workspace
    for part in relative.split("/")[:-1]:
        step = os.path.join(step, part)
        if os.path.islink(step):
            raise ValueError(f"{step} is a symlink where the workspace's runs belong: refused, never followed")
    return os.path.join(workspace, relative)


def discover(workspace: str, module: ModuleType) -> list[tuple[tuple[str, ...], str]]:
    """Every run the workspace holds by the contract's layout: (its run-field values, its file), sorted."""
    pattern = layout_pattern(module)
    depth = module.LAYOUT.count("/")
    found = []
    for directory, subdirectories, files in os.walk(workspace):
        relative_directory = os.path.relpath(directory, workspace)
        level = 0 if relative_directory == "." else relative_directory.count("/") + 1
        here = files + (subdirectories if level == depth else [])  # (a directory where a run's file belongs: unreadable)
        if level >= depth:
            subdirectories.clear()
        for name in here:
            relative = name if relative_directory == "." else f"{relative_directory}/{name}"
            match = pattern.fullmatch(relative)
            if match is not None:
                found.append((tuple(match.group(field) for field in module.RUN), os.path.join(workspace, relative)))
    return sorted(found)
