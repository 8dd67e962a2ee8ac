"""Pause Python's cyclic garbage collector around bulk work that creates no reference cycles.

With a million live objects every full collection walks all of them: decoding a 1M-event ledger takes ~6x
longer with the collector running. Reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
