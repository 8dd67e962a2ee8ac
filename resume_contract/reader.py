"""Read a committed ledger strictly: every row validated, every row kept exactly as written.

A ledger is trusted only whole. Every corruption kind (spec/decisions.yaml, storage_corruption) is found and
reported with its file, line and byte offset; no plan is ever made from a corrupt ledger. Rows are kept as
the bytes that were committed (`msgspec.Raw`), and decoded only into the generated model, whose free-JSON
values are themselves kept as bytes.

The fast path is a few msgspec calls over the whole buffer; only a ledger they refuse (or a row msgspec
cannot prove free of duplicate keys) is read again row by row, which is where every error is located.
"""

from __future__ import annotations

import codecs
import operator
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import msgspec

from .gcpause import gc_paused
from .wire import (
    DUPLICATE_KEY,
    INVALID_EVENT,
    INVALID_JSON,
    RAW,
    RAW_DICT,
    FreeFields,
    RowRefused,
    WireModel,
    python_json,
)

# Corruption kinds; their names and meanings are the spec's (spec/decisions.yaml, storage_corruption).
TORN_ROW = "torn_row"
INVALID_UTF8 = "invalid_utf8"
DUPLICATE_EVENT_ID = "duplicate_event_id"
FOREIGN_ROW = "foreign_row"
CORRUPTION_KINDS = (TORN_ROW, INVALID_UTF8, INVALID_JSON, INVALID_EVENT, DUPLICATE_EVENT_ID, DUPLICATE_KEY, FOREIGN_ROW)

_RAW_LINES = msgspec.json.Decoder(msgspec.Raw)
_UNTYPED = msgspec.json.Decoder()
_ENCODE = msgspec.json.Encoder().encode
_EVENT_ID = operator.attrgetter("id")
_SESSION_ID = operator.attrgetter("session_id")
_RUN_ID = operator.attrgetter("run_id")
_CONTENT = operator.attrgetter("content")
_UTF8_CHUNK = 1 << 24


class LedgerCorruption(Exception):
    """A ledger that is not a legal committed prefix; no plan may be made from it."""

    def __init__(self, path: Path, line: int, offset: int, kind: str, detail: str) -> None:
        self.path = path
        self.line = line
        self.offset = offset
        self.kind = kind
        self.detail = detail
        super().__init__(f"{path}:{line}: byte offset {offset}: {kind}: {detail}")


@dataclass(frozen=True)
class CommittedLedger:
    """What a reader may trust: the committed events in order, the rows they were read from, the high-water."""

    path: Path
    events: tuple[Any, ...]
    rows: tuple[msgspec.Raw, ...]

    @property
    def high_water(self) -> int:
        """Committed rows, partial events included."""
        return len(self.events)


RunIdentity = tuple[str, str]  # (sessionId, runId) every row must carry


def decode_ledger(path: Path, data: bytes, *, run: RunIdentity | None = None, model: WireModel | None = None) -> tuple[Any, ...]:
    """The committed events of a whole ledger's bytes (see `decode_rows`)."""
    return decode_rows(path, data, run=run, model=model)[0]


def decode_rows(
    path: Path, data: bytes, *, run: RunIdentity | None = None, model: WireModel | None = None
) -> tuple[tuple[Any, ...], tuple[msgspec.Raw, ...]]:
    """(events, rows) of a whole ledger's bytes, or LedgerCorruption.

    `run` is the (sessionId, runId) every row must carry (the run directory's); without it, the first row's.
    """
    if model is None:
        from .events import MODEL as model  # the generated model; imported late so `generate` runs without it
    if not data:
        return (), ()
    if not data.endswith(b"\n"):
        start = data.rfind(b"\n") + 1
        raise LedgerCorruption(path, data.count(b"\n", 0, start) + 1, start, TORN_ROW, f"the last {len(data) - start} bytes have no terminating newline")
    _check_utf8(path, data)
    with gc_paused():
        try:
            rows = _RAW_LINES.decode_lines(data)
            events = model.decoder.decode_lines(data)
            whole = _one_value_per_line(data, rows)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            whole = False
        if whole:
            _check_duplicate_keys(path, data, events, rows, model)
        else:
            events, rows = _decode_row_by_row(path, data, model)
        _check_run(path, data, events, run)
        _check_unique_ids(path, data, events)
        return tuple(events), tuple(rows)


def _check_utf8(path: Path, data: bytes) -> None:
    # In chunks cut at row ends (a newline byte never occurs inside a UTF-8 sequence), so no copy of the
    # whole ledger is ever decoded at once.
    view = memoryview(data)
    start = 0
    while start < len(data):
        end = data.find(b"\n", min(start + _UTF8_CHUNK, len(data) - 1)) + 1
        try:
            codecs.utf_8_decode(view[start:end], "strict", True)
        except UnicodeDecodeError as error:
            bad = start + error.start
            row_start = data.rfind(b"\n", 0, bad) + 1
            line = data.count(b"\n", 0, row_start) + 1
            raise LedgerCorruption(path, line, row_start, INVALID_UTF8, f"invalid UTF-8 at byte {bad}") from None
        start = end


def _rows(data: bytes):
    offset = 0
    line = 1
    while offset < len(data):
        end = data.index(b"\n", offset)
        yield line, offset, data[offset:end]
        offset = end + 1
        line += 1


def _line_start(data: bytes, line: int) -> int:
    offset = 0
    for _ in range(line - 1):
        offset = data.index(b"\n", offset) + 1
    return offset


def _decode_row_by_row(path: Path, data: bytes, model: WireModel) -> tuple[list[Any], list[msgspec.Raw]]:
    events: list[Any] = []
    rows: list[msgspec.Raw] = []
    for line, offset, row in _rows(data):
        try:
            events.append(model.decode_row(row))
        except RowRefused as refused:
            raise LedgerCorruption(path, line, offset, refused.kind, refused.detail) from None
        rows.append(msgspec.Raw(row))
    return events, rows


_CHUNK_ROWS = 4096


def _one_value_per_line(data: bytes, rows: list[msgspec.Raw]) -> bool:
    """Whether each line holds exactly one JSON value, as the writer writes them (else: read row by row).

    msgspec's `decode_lines` splits on value boundaries, not on newlines: two values on one line, or one
    spread over two, decode too. With no newline inside a value and no byte outside the values but one
    newline after each, the only way left to misplace a value is a blank line (and a line holding two).
    """
    if sum(map(len, rows)) + len(rows) != len(data) or data.startswith(b"\n") or b"\n\n" in data:
        return False
    return not any(b"\n" in b"".join(rows[start : start + _CHUNK_ROWS]) for start in range(0, len(rows), _CHUNK_ROWS))


def _check_duplicate_keys(path: Path, data: bytes, events: list[Any], rows: list[msgspec.Raw], model: WireModel) -> None:
    """Refuse a row that repeats a key in one object, at any depth, without decoding every row again.

    msgspec keeps the last of two equal keys. Two proofs at C speed cover almost every row; the rest are read
    again key by key by the standard library:
    - in the event and its content, re-encoding never makes a token longer (strings and integers are written
      minimally; only a float can grow, so rows holding one are read again), so a re-encoded chunk of events
      exactly as long as its rows dropped no key;
    - free JSON (kept as Raw) that msgspec writes back byte for byte holds no repeated key (equal bytes are
      equal tokens).
    """
    # Rows holding a float are read again whatever their length: a float that re-encodes longer could make up
    # for a key another row lost, so no chunk holding one is proven by its total length.
    suspects = set(_rows_with_floats(events, model))
    for start in range(0, len(events), _CHUNK_ROWS):
        part = events[start : start + _CHUNK_ROWS]
        indexes = range(start, start + len(part))
        # "[" + rows joined by "," + "]"
        if suspects.isdisjoint(indexes) and len(_ENCODE(part)) == sum(map(len, rows[start : start + _CHUNK_ROWS])) + len(part) + 1:
            continue
        suspects.update(i for i in indexes if i not in suspects and len(_ENCODE(events[i])) != len(rows[i]))
    suspects.update(_rows_with_suspect_free_json(events, model))
    for index in sorted(suspects):
        try:
            python_json(rows[index])
        except RowRefused as refused:
            line = index + 1
            raise LedgerCorruption(path, line, _line_start(data, line), refused.kind, refused.detail) from None


def _rows_with_floats(events: list[Any], model: WireModel) -> list[int]:
    found = []
    for name in model.number_fields:
        values = list(map(operator.attrgetter(name), events))
        if float in set(map(type, values)):
            found += [index for index, value in enumerate(values) if type(value) is float]
    if model.content_with_numbers:
        found += [index for index, event in enumerate(events) if type(event.content) in model.content_with_numbers]
    return found


def _free_json(owners: list[Any], fields: FreeFields) -> Iterator[msgspec.Raw]:
    """Every free-JSON value the owners hold in `fields`, gathered at C speed (UNSET and empty ones are falsy)."""
    for name, shape in fields:
        present = filter(None, map(operator.attrgetter(name), owners))
        if shape == RAW:
            yield from present
        else:
            yield from chain.from_iterable(map(dict.values, present) if shape == RAW_DICT else present)


def _rows_with_suspect_free_json(events: list[Any], model: WireModel) -> list[int]:
    contents = list(map(_CONTENT, events))
    values = list(_free_json(events, model.free_fields))
    for cls, fields in model.content_free_fields.items():
        if fields:
            values += _free_json(list(filter(cls.__instancecheck__, contents)), fields)
    suspect: set[int] = set()
    for start in range(0, len(values), _CHUNK_ROWS):
        part = values[start : start + _CHUNK_ROWS]
        joined = b"[" + b",".join(part) + b"]"
        if _ENCODE(_decode_untyped(joined)) != joined:
            suspect.update(id(raw) for raw in part if _ENCODE(_decode_untyped(raw)) != bytes(raw))
    if not suspect:
        return []
    # Rare: find the rows that hold the values msgspec could not prove (e.g. a number written `1e+21`).
    return [index for index, event in enumerate(events) if suspect & set(map(id, _free_json([event], model.free_fields)))
            or suspect & set(map(id, _free_json([event.content], model.content_free_fields.get(type(event.content), ()))))]


def _decode_untyped(value: Any) -> Any:
    try:
        return _UNTYPED.decode(value)
    except (msgspec.DecodeError, RecursionError):
        return None  # not provable here: the row is read again key by key


def _check_run(path: Path, data: bytes, events: list[Any], run: RunIdentity | None) -> None:
    if not events:
        return
    session_id, run_id = run if run is not None else (events[0].session_id, events[0].run_id)
    if set(zip(map(_SESSION_ID, events), map(_RUN_ID, events))) == {(session_id, run_id)}:
        return  # the common case, checked at C speed
    whose = "the run directory" if run is not None else "the ledger's first row"
    for index, event in enumerate(events):
        if event.session_id != session_id or event.run_id != run_id:
            line = index + 1
            raise LedgerCorruption(
                path,
                line,
                _line_start(data, line),
                FOREIGN_ROW,
                f"the row belongs to session {event.session_id!r}, run {event.run_id!r}, but {whose} is session "
                f"{session_id!r}, run {run_id!r}",
            )


def _check_unique_ids(path: Path, data: bytes, events: list[Any]) -> None:
    if len(set(map(_EVENT_ID, events))) == len(events):
        return  # the common case, checked at C speed
    first_line: dict[str, int] = {}
    for index, event in enumerate(events):
        if event.id in first_line:
            line = index + 1
            raise LedgerCorruption(
                path, line, _line_start(data, line), DUPLICATE_EVENT_ID, f"event id {event.id!r} is already on line {first_line[event.id]}"
            )
        first_line[event.id] = index + 1


def read_ledger(path: Path, *, run: RunIdentity | None = None, model: WireModel | None = None) -> CommittedLedger:
    """Read one ledger file strictly, writing nothing; a missing file raises FileNotFoundError."""
    path = Path(path)
    data = path.read_bytes()
    events, rows = decode_rows(path, data, run=run, model=model)
    return CommittedLedger(path, events, rows)
