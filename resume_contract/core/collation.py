"""Strings in the order JavaScript's `a.localeCompare(b)` gives them (the reference breaks ties on `ts` with it).

`localeCompare` is ICU's collation for the default locale (en-US: CLDR's root order, tertiary strength,
punctuation not ignored), where `chunk_1 < chunk-1` and `rt_event_88 < rt_event97`: neither code point order
nor case folding gives that. ICU is not installable from PyPI alone (PyICU needs the system's library), so the
Unicode Collation Algorithm comes from pyuca, with the Default Unicode Collation Element Table of Unicode
10.0.0. It agrees with Node's ICU on every string of ASCII and Latin characters (tests/test_javascript.py holds
it to node and to a frozen fixture node computed); characters assigned after Unicode 10 can order differently.
Only the order of partial snapshots with equal `ts` depends on it, never a decision.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _collator() -> Any:
    # Loaded on first use (about 0.5 s and 15 MiB): only a run with snapshots tied on ts needs it.
    from pyuca.collator import Collator_10_0_0

    return Collator_10_0_0()


def locale_compare_key(text: str) -> tuple[int, ...]:
    """A key that orders strings as `localeCompare` does; equal keys where it returns 0."""
    key: tuple[int, ...] = _collator().sort_key(text)
    return key
