"""What a planned ledger costs per row the walk leaves out of the replay: a partial row (never replayed) must
cost about what a plain one does. Measured with tracemalloc, as a ratio of two ledgers planned side by side.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from resume_contract import plan_ledger


def row(index: int, partial: bool) -> bytes:
    value = {"id": f"e{index}", "sessionId": "s1", "invocationId": "i", "runId": "r1", "turnId": "t", "ts": index, "partial": partial,
             "author": "agent", "role": "model", "content": {"kind": "text", "text": "x"}}
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def _peak(path: Path) -> int:
    tracemalloc.start()
    try:
        plan = plan_ledger(path, chunk_bytes=1 << 16)  # small chunks: what a row costs is not hidden under a chunk
        for _ in plan.replay_runtime_events:
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_partial_rows_cost_little_more_than_plain_ones(tmp_path: Path) -> None:
    rows = 100_000
    (tmp_path / "plain.jsonl").write_bytes(b"".join(row(index, False) for index in range(rows)))
    (tmp_path / "partial.jsonl").write_bytes(b"".join(row(index, True) for index in range(rows)))
    plain, partial = _peak(tmp_path / "plain.jsonl"), _peak(tmp_path / "partial.jsonl")
    assert (partial - plain) / rows < 40, (partial, plain)  # bytes a row (as a Python list and sets of indexes: ~90)
