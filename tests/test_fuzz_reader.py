"""Fuzz the ledger reader: whatever the bytes, it returns committed events or raises LedgerCorruption.

Never another exception, never a plan from a broken row. Truncation is exhaustive (every byte); the rest is
Hypothesis within the CI budget (`HYPOTHESIS_PROFILE=long` for a longer run).
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from resume_contract_generated.catalog import CANONICAL_LEDGER_ROWS
from resume_contract_generated.runtime_event import RuntimeEvent

from resume_contract.contract import encode_event
from resume_contract.errors import LedgerCorruption
from resume_contract.ledger.reader import decode_rows

PATH = Path("fuzz/runtime-events.jsonl")
EVENTS = [msgspec.json.decode(row, type=RuntimeEvent) for row in CANONICAL_LEDGER_ROWS["error"]]
ROWS = [encode_event(event) + b"\n" for event in EVENTS]
LEDGER = b"".join(ROWS)
ROW_ENDS = [sum(len(row) for row in ROWS[: n + 1]) for n in range(len(ROWS))]


def _read(data: bytes) -> tuple[RuntimeEvent, ...] | LedgerCorruption:
    try:
        return decode_rows(PATH, data)[0]
    except LedgerCorruption as corruption:
        return corruption


def test_truncation_at_every_byte_is_a_committed_prefix_or_a_torn_row() -> None:
    for cut in range(len(LEDGER) + 1):
        result = _read(LEDGER[:cut])
        committed = sum(1 for end in ROW_ENDS if end <= cut)
        if cut == 0 or cut in ROW_ENDS:
            assert result == tuple(EVENTS[:committed]), cut
        else:
            assert isinstance(result, LedgerCorruption), cut
            start = ROW_ENDS[committed - 1] if committed else 0
            assert (result.kind, result.line, result.offset) == ("torn_row", committed + 1, start), cut


@given(st.lists(st.tuples(st.integers(min_value=0, max_value=len(LEDGER) - 1), st.integers(min_value=0, max_value=7)), min_size=1, max_size=8))
def test_bit_flips_never_crash_the_reader(flips: list[tuple[int, int]]) -> None:
    data = bytearray(LEDGER)
    for position, bit in flips:
        data[position] ^= 1 << bit
    result = _read(bytes(data))
    if not isinstance(result, LedgerCorruption):
        # A flip may leave valid rows (e.g. one letter of a text changed): then they are all rows.
        assert len(result) == bytes(data).count(b"\n")


@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_crash_the_reader(data: bytes) -> None:
    result = _read(data)
    assert isinstance(result, (LedgerCorruption, tuple))


@given(st.integers(min_value=0, max_value=len(ROWS)), st.binary(min_size=1, max_size=200))
def test_garbage_inserted_between_rows_is_found_on_its_line(index: int, garbage: bytes) -> None:
    garbage = garbage.replace(b"\n", b" ") + b"\n"
    data = b"".join(ROWS[:index]) + garbage + b"".join(ROWS[index:])
    result = _read(data)
    if isinstance(result, LedgerCorruption):
        # The garbage row itself, or (if it is a valid event reusing a later row's id) that later row.
        assert result.line == index + 1 or (result.kind == "duplicate_event_id" and result.line > index + 1)
    else:  # the garbage happened to be a valid, new event
        assert len(result) == len(ROWS) + 1


@pytest.mark.parametrize(
    ("data", "kind", "line"),
    [
        (b"\xef\xbb\xbf" + LEDGER, "invalid_json", 1),  # a byte order mark
        (ROWS[0] + b"\xff\xfe" + ROWS[1], "invalid_utf8", 2),
        (ROWS[0] + b'{"id": "\xc3\x28"}\n', "invalid_utf8", 2),
        (ROWS[0] + b"[" * 200_000 + b"]" * 200_000 + b"\n", "invalid_json", 2),  # deeply nested
        (ROWS[0] + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"\n", "invalid_json", 2),
        (ROWS[0] + b'"' + b"x" * 20_000_000 + b'"\n', "invalid_event", 2),  # a huge line
        (ROWS[0] + b"x" * 5_000_000, "torn_row", 2),  # a huge torn tail
        (ROWS[0] + b"\n" + ROWS[1], "invalid_json", 2),  # an empty row
        (ROWS[0] + b"   \n" + ROWS[1], "invalid_json", 2),
        (ROWS[0] + ROWS[0], "duplicate_event_id", 2),
    ],
)
def test_hostile_ledgers_are_typed_corruption(data: bytes, kind: str, line: int) -> None:
    result = _read(data)
    assert isinstance(result, LedgerCorruption)
    assert (result.kind, result.line) == (kind, line)
    assert result.offset == sum(len(row) for row in data.split(b"\n")[: line - 1]) + (line - 1)


def test_crlf_rows_are_read_as_the_same_events() -> None:
    # JSON allows the carriage return as whitespace; the writer never produces it, the reader tolerates it.
    assert _read(LEDGER.replace(b"\n", b"\r\n")) == tuple(EVENTS)
