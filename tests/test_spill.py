"""A worker's result crosses to its parent with its bulky arrays and bytes in a shared file, not in the pickle."""

from __future__ import annotations

import tempfile
from array import array

import pytest

from resume_contract.spill import SPILL_AT, dumps_spilling, loads_spilled


def test_large_arrays_and_bytes_go_to_the_file_and_come_back_equal() -> None:
    big = array("q", range(3 * SPILL_AT))
    lengths = array("I", range(SPILL_AT))
    block = bytes(range(256)) * (SPILL_AT // 64)
    value = {"hashes": big, "nested": [("lengths", lengths), block], "small": array("q", [1, 2]), "text": "kept inline"}
    with tempfile.TemporaryFile() as spill:
        spill.write(b"something already there")  # spilled values are appended after it
        pickled = dumps_spilling(value, spill)
        assert len(pickled) < 1000  # only where the spilled values are, not the values
        assert spill.seek(0, 2) >= len(big) * 8 + len(lengths) * 4 + len(block)
        back = loads_spilled(pickled, spill)
    assert back == value
    assert back["hashes"].typecode == "q" and back["nested"][0][1].typecode == "I"


def test_a_spill_file_cut_short_is_an_error_not_a_shorter_value() -> None:
    with tempfile.TemporaryFile() as spill:
        pickled = dumps_spilling([array("q", range(SPILL_AT)), b"x" * SPILL_AT], spill)
        spill.truncate(SPILL_AT * 8 - 8)
        with pytest.raises(EOFError):
            loads_spilled(pickled, spill)
