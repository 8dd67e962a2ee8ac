"""Sorting long arrays of 64-bit integers (id hashes, row indexes) in little memory, without NumPy.

Only large ledgers need it (more than 65,536 events: below, callers sort Python ints). NumPy, when installed
(`pip install 'resume-contract[numpy]'`), sorts them in place at 8 bytes a value; `numpy_or_none` says whether
it is, and it is imported only then (it costs a command ~0.1 s to start). Without it, the functions here deal the
values into 256 buckets by range and sort each bucket as Python ints: the same result, a few times slower,
holding a 256th of the values as Python objects at a time (~80 bytes each) beside the arrays (8 bytes a value).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import islice
from typing import Any

_BUCKETS = 256


def numpy_or_none() -> Any:
    """The NumPy module when it is installed, else None."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def bucket_sorted(parts: Iterable[array], *, unique: bool = False) -> array:
    """The values of `parts`, sorted, as one new int64 array (each once, with `unique`). Empties each part as
    soon as it is dealt out."""
    parts = list(parts)
    present = [part for part in parts if part]
    if not present:
        return array("q")
    low, high = min(map(min, present)), max(map(max, present))
    width = (high - low) // _BUCKETS + 1  # bucket b holds [low + b*width, low + (b+1)*width): buckets in order
    buckets = [array("q") for _ in range(_BUCKETS)]
    for part in parts:
        for value in part:
            buckets[(value - low) // width].append(value)
        del part[:]
    result = array("q")
    for bucket in buckets:
        result.extend(sorted(set(bucket)) if unique else sorted(bucket))
        del bucket[:]
    return result


def bucket_sorted_pairs(values: array, carried: array) -> tuple[array, array]:
    """`values` sorted, and `carried` (as long) reordered alike; equal values keep their order."""
    if not values:
        return array("q"), array("q")
    low, high = min(values), max(values)
    width = (high - low) // _BUCKETS + 1
    buckets = [array("q") for _ in range(_BUCKETS)]  # value, carried, value, carried...
    for value, other in zip(values, carried):
        bucket = buckets[(value - low) // width]
        bucket.append(value)
        bucket.append(other)
    sorted_values, sorted_carried = array("q"), array("q")
    for bucket in buckets:
        pairs = sorted(zip(bucket[0::2], bucket[1::2]), key=_first)  # a stable sort
        del bucket[:]
        sorted_values.extend([value for value, _ in pairs])
        sorted_carried.extend([other for _, other in pairs])
    return sorted_values, sorted_carried


def merged_pairs(first: tuple[array, array], second: tuple[array, array]) -> tuple[array, array]:
    """Two (sorted values, carried) pairs as one, sorted (the first's before the second's where equal): linear."""
    (a, a_carried), (b, b_carried) = first, second
    values, carried = array("q"), array("q")
    i = j = 0
    while i < len(a) and j < len(b):
        if b[j] < a[i]:
            values.append(b[j])
            carried.append(b_carried[j])
            j += 1
        else:
            values.append(a[i])
            carried.append(a_carried[i])
            i += 1
    values.extend(a[i:])
    carried.extend(a_carried[i:])
    values.extend(b[j:])
    carried.extend(b_carried[j:])
    return values, carried


def repeats_in_sorted(values: array) -> set[int]:
    """The values that occur more than once in sorted `values`."""
    return {value for previous, value in zip(values, islice(values, 1, None)) if previous == value}


def _first(pair: tuple[int, int]) -> int:
    return pair[0]
