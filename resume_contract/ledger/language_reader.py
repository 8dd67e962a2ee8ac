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

from ..core.language_rows import ABSENT, RowMismatch, at, id_key, read_row
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
    """The committed rows of the JSONL file at `path` (as expressions read them), every one of `run` (its run
    parts' values as the file's place names them; None: as its rows name them); raises LedgerCorruption, OSError
    (with `no_link`, for a symlink where the file belongs too)."""
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
    named = _RunNamed(module, run)
    for number, line in enumerate(lines, 1):
        row = _row(path, number, offset, line, module)
        if module.ROW_ID is not None:
            identity = at(row, module.ROW_ID)
            key = id_key(identity)
            if key in seen:
                raise LedgerCorruption(path, number, offset, DUPLICATE_EVENT_ID, f"the event id {identity!r} is on an earlier row")
            seen.add(key)
        foreign = named.check(row, number == 1)
        if foreign is not None:
            raise LedgerCorruption(path, number, offset, FOREIGN_ROW, foreign)
        rows.append(row)
        offsets.append(offset)
        offset += len(line) + 1
    if tail:
        raise LedgerCorruption(path, len(lines) + 1, offset, TORN_ROW, "the file does not end in a newline: the last row was cut off mid-write")
    return Ledger(os.fspath(path), rows, offsets)


class _RunNamed:
    """The run a ledger's rows must all be of: each part as the file's place names it, else as the first row that
    holds it names it; a part read from rows is checked on every row, one read from the first row on that row."""

    def __init__(self, module: ModuleType, run: tuple[Any, ...] | None) -> None:
        self.module = module
        self.values: dict[str, tuple[Any, str]] = {}  # name -> (value, whose)
        for name, value in zip(module.RUN, run or (), strict=False):
            self.values[name] = (value, "the file's place in the workspace belongs")

    def check(self, row: dict[str, Any], first: bool) -> str | None:
        for name, source, path in self.module.RUN_FROM:
            if source == "layout" or (source == "first_row" and not first):
                continue
            value = at(row, path)
            if value is ABSENT:
                return f"the run's first row names no {name} ({'.'.join(path)} is absent)"
            held = self.values.get(name)
            if held is None:
                self.values[name] = (value, "the ledger's first row")
            elif value != held[0] and not (held[1].startswith("the file's") and str(value) == held[0]):
                return f"the row belongs to run {name} {value!r}, {held[1]} to {name} {held[0]!r}"
        return None


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
        return read_row(module, value)[1]
    except RowMismatch as mismatch:
        raise LedgerCorruption(path, number, offset, INVALID_EVENT, f"{mismatch} (a row the contract's row model refuses: if the runtime writes it so, "
                               "the contract does not match the runtime; `resume-contract fit` names every such row)") from None


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
