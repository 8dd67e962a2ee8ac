"""A worker's result crosses to its parent with its bulky arrays and bytes in a shared file, not in the pickle."""

from __future__ import annotations

import tempfile
from array import array

import pytest

from resume_contract.ledger.parallel.spill import SPILL_AT, dump_spilling, load_spilled


def test_large_arrays_and_bytes_go_to_the_file_and_come_back_equal() -> None:
    big = array("q", range(3 * SPILL_AT))
    lengths = array("I", range(SPILL_AT))
    block = bytes(range(256)) * (SPILL_AT // 64)
    value = {"hashes": big, "nested": [("lengths", lengths), block], "small": array("q", [1, 2]), "text": "kept inline"}
    with tempfile.TemporaryFile() as spill:
        spill.write(b"something already there")  # spilled values are appended after it
        where = dump_spilling(value, spill)
        assert where[1] < 1000  # the pickle holds where the spilled values are, not the values
        assert where[0] >= len(big) * 8 + len(lengths) * 4 + len(block) and spill.seek(0, 2) == sum(where)
        back = load_spilled(spill, where)
    assert back == value
    assert back["hashes"].typecode == "q" and back["nested"][0][1].typecode == "I"


def test_a_spill_file_cut_short_is_an_error_not_a_shorter_value() -> None:
    with tempfile.TemporaryFile() as spill:
        where = dump_spilling([array("q", range(SPILL_AT)), b"x" * SPILL_AT], spill)
        pickled = spill.seek(where[0]) and spill.read(where[1])
        spill.truncate(SPILL_AT * 8 - 8)
        spill.seek(0, 2)
        spill.write(pickled)  # the pickle is whole, the array it points to is not (nor the bytes after it)
        with pytest.raises(EOFError):
            load_spilled(spill, (spill.seek(0, 2) - len(pickled), len(pickled)))
