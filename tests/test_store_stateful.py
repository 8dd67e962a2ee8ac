"""A stateful test of the store: random appends, kills (some mid-row), reopens and repairs.

Whatever the order, every acknowledged append survives, nothing unacknowledged appears, and a torn tail is
reported as corruption at exactly the end of the acknowledged rows until `repair` quarantines it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from resume_contract_generated.runtime_event import RuntimeEvent

from resume_contract.contract import encode_event, event_from_wire
from resume_contract.errors import DuplicateEventId, LedgerCorruption, TornTail
from resume_contract.ledger.repair import repair_ledger
from resume_contract.ledger.store import RuntimeEventStore, read_ledger


def _event(number: int, call: bool, size: int) -> RuntimeEvent:
    content = {"kind": "function_call", "id": f"c{number}", "name": "write", "args": {"blob": "x" * size}} if call else {"kind": "text", "text": "y" * size}
    return event_from_wire(
        {"id": f"e{number}", "ts": number, "partial": False, "author": "agent", "role": "model", "sessionId": "s",
         "invocationId": "i", "runId": "r", "turnId": "t", "content": content}
    )


class StoreMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.workspace = Path(tempfile.mkdtemp(prefix="store-stateful-"))
        self.store: RuntimeEventStore | None = None
        self.acknowledged: list[RuntimeEvent] = []
        self.torn = b""

    @property
    def path(self) -> Path:
        return RuntimeEventStore(self.workspace).path("s", "r")

    def committed_bytes(self) -> bytes:
        return b"".join(encode_event(event) + b"\n" for event in self.acknowledged)

    @rule(number=st.integers(min_value=0, max_value=30), call=st.booleans(), size=st.integers(min_value=0, max_value=3000))
    def append(self, number: int, call: bool, size: int) -> None:
        event = _event(number, call, size)
        if self.store is None:
            self.store = RuntimeEventStore(self.workspace)
        known = next((e for e in self.acknowledged if e.id == event.id), None)
        try:
            appended = self.store.append(event)
        except TornTail:
            assert self.torn, "TornTail without a torn tail"
            self.store.close()
            self.store = None
            return
        except DuplicateEventId:
            assert known is not None and known != event
            return
        assert not self.torn
        if known is None:
            assert appended is True
            self.acknowledged.append(event)
        else:
            assert (appended, known) == (False, event)

    @rule(cut=st.integers(min_value=1, max_value=500))
    def kill_mid_row(self, cut: int) -> None:
        """The writer dies while handing a row to the OS: part of the row reaches the file, no ack."""
        if self.store is not None:
            self.store.close()
            self.store = None
        row = encode_event(_event(99, True, 400)) + b"\n"
        piece = row[: min(cut, len(row) - 1)]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as handle:
            handle.write(piece)
        self.torn += piece

    @rule()
    def kill_between_rows(self) -> None:
        if self.store is not None:
            # Drop the descriptor the way a dying process does; the kernel releases the lock.
            for writer in self.store._writers.values():
                os.close(writer.fd)
                writer.fd = -1
            self.store = None

    @rule()
    def reopen(self) -> None:
        if not self.path.exists():
            assert self.acknowledged == [] and not self.torn
            return
        before = self.path.read_bytes()
        if self.torn:
            with pytest.raises(LedgerCorruption) as caught:
                read_ledger(self.path)
            assert (caught.value.kind, caught.value.offset) == ("torn_row", len(self.committed_bytes()))
        else:
            assert list(read_ledger(self.path).events) == self.acknowledged
        assert self.path.read_bytes() == before

    @precondition(lambda self: bool(self.torn))
    @rule()
    def repair(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
        result = repair_ledger(self.path)
        assert result.quarantine is not None and result.quarantine.read_bytes() == self.torn
        result.quarantine.unlink()
        self.torn = b""

    @invariant()
    def acknowledged_rows_are_on_disk_byte_for_byte(self) -> None:
        if hasattr(self, "workspace") and self.path.exists():
            assert self.path.read_bytes() == self.committed_bytes() + self.torn

    def teardown(self) -> None:
        if getattr(self, "store", None) is not None:
            self.store.close()
        if hasattr(self, "workspace"):
            shutil.rmtree(self.workspace, ignore_errors=True)


TestStore = StoreMachine.TestCase
