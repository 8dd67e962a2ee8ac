"""The child process of the crash harness: commit rows through the store, say so, then wait to be killed.

    python -m resume_contract.crash.child WORKSPACE MARKER [LARGE_ROW_BYTES]  < rows.jsonl

Reads RuntimeEvent rows on stdin and appends each through a real RuntimeEventStore. Only after every append
has returned does it print "committed". Then it either waits (the parent kills it), or, with
LARGE_ROW_BYTES, prints "tearing" and appends one more event that large, in small pieces, so that the
kill lands mid-row. Its `finally` writes MARKER: a SIGKILL never lets it run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import msgspec

from ..contract import decode_event
from ..ledger.store import RuntimeEventStore

LARGE_EVENT_ID = "evt-torn-large-row"
PIECE_BYTES = 4096


def main(argv: list[str]) -> int:
    workspace, marker = Path(argv[0]), Path(argv[1])
    large_row_bytes = int(argv[2]) if len(argv) > 2 else 0
    events = [decode_event(line) for line in sys.stdin.buffer.read().splitlines()]
    try:
        # Rows are handed to the OS in small pieces, so the kill can land in the middle of the large one (the
        # committed rows are each shorter than a piece: one write each, as outside the harness).
        with RuntimeEventStore(workspace, write_piece_bytes=PIECE_BYTES if large_row_bytes else None) as store:
            for event in events:
                store.append(event)
            print("committed", flush=True)
            if large_row_bytes:
                template = events[-1]
                blob = msgspec.Raw(msgspec.json.encode("x" * large_row_bytes))  # free JSON is held as Raw
                large = msgspec.structs.replace(template, id=LARGE_EVENT_ID, content=msgspec.UNSET, actions={"blob": blob})
                print("tearing", flush=True)
                store.append(large)
                print("whole", flush=True)
            while True:
                time.sleep(3600)
    finally:
        marker.write_text("cleanup ran\n")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
