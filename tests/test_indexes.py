"""The sorted index sets a plan leaves out of its replay: the same sets whether sorted as Python ints (few) or
as arrays (many: with NumPy, and without it), against Python's own sorted(set())."""

from __future__ import annotations

import random
from array import array

import pytest

from resume_contract.core.indexes import _SORTED_IN_PYTHON, extend_shifted, sorted_unique, span


@pytest.mark.parametrize("size", [0, 5, _SORTED_IN_PYTHON - 1, _SORTED_IN_PYTHON, 3 * _SORTED_IN_PYTHON])
def test_sorted_unique_is_pythons_sorted_set_at_every_size(size: int, numpy_or_not: str) -> None:
    rng = random.Random(size)
    parts = [array("q", (rng.randrange(size * 2 + 1) for _ in range(size // 2))), array("q", (rng.randrange(size * 2 + 1) for _ in range(size - size // 2)))]
    expected = sorted(set(parts[0]) | set(parts[1]))
    result = sorted_unique(*parts)
    assert isinstance(result, array) and result.typecode == "q"
    assert result.tolist() == expected


@pytest.mark.parametrize("size", [3, 2 * _SORTED_IN_PYTHON])
def test_extend_shifted_appends_each_index_moved_on(size: int, numpy_or_not: str) -> None:
    indexes, later = array("q", [1, 2]), array("q", range(size))
    extend_shifted(indexes, later, 10)
    assert indexes.tolist() == [1, 2, *(index + 10 for index in range(size))]


def test_span_is_the_half_open_range_of_indexes_in_a_row_window() -> None:
    indexes = array("q", [2, 5, 9, 10])
    assert [span(indexes, first, end) for first, end in ((0, 2), (0, 3), (5, 10), (11, 20))] == [(0, 0), (0, 1), (1, 3), (4, 4)]


def test_without_numpy_a_long_sort_is_pythons_and_stable_for_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    from resume_contract.core.int64_sort import bucket_sorted, bucket_sorted_pairs, merged_pairs, repeats_in_sorted

    rng = random.Random(7)
    values = [rng.randrange(-(1 << 63), 1 << 63) for _ in range(5000)] + [-(1 << 63), (1 << 63) - 1, 0, 0]
    parts = [array("q", values[:2000]), array("q", values[2000:])]
    assert bucket_sorted(parts).tolist() == sorted(values) and [len(part) for part in parts] == [0, 0]
    assert bucket_sorted([array("q", values)], unique=True).tolist() == sorted(set(values))
    assert repeats_in_sorted(array("q", sorted(values + values[:3]))) == {0, *values[:3]}
    keys = array("q", [rng.randrange(50) for _ in range(3000)])
    carried = array("q", range(3000))
    sorted_keys, sorted_carried = bucket_sorted_pairs(keys, carried)
    assert list(zip(sorted_keys, sorted_carried)) == sorted(zip(keys, carried), key=lambda pair: pair[0])
    more = bucket_sorted_pairs(array("q", [3, 3, 60, -1]), array("q", [-1, -2, -3, -4]))
    merged = merged_pairs((sorted_keys, sorted_carried), more)
    assert list(zip(*merged)) == sorted([*zip(keys, carried), *zip(*more)], key=lambda pair: pair[0])
