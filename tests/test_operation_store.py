"""The OperationStore a planned file keeps its settled operations in (resume_contract/operation_store.py).

Plans made through it are held to in-memory plans in test_properties.py; these tests pin the store's own
promises with hand-made records: order by operation index whatever the order stored, records read back from
compressed blocks, and no gap passed over silently.
"""

from __future__ import annotations

import pytest

from resume_contract.core import operation_store
from resume_contract.core.operation_store import OperationStore, StoredRecord, decode_piece, encode_records


def _operation(call_id: str) -> StoredRecord:
    return StoredRecord(call_id, "write", operation_store.msgspec.Raw(b'{"n":1}'), "succeeded", f"e-{call_id}", f"r-{call_id}", False)


def _put(store: OperationStore, indexes: list[int]) -> None:
    call_ids = [f"c{index}" for index in indexes]
    records = encode_records([_operation(c) for c in call_ids])
    store.put(indexes, records)


@pytest.mark.parametrize("block_bytes", [1, 300, 1 << 20])
def test_operations_come_back_in_index_order_whatever_order_they_were_stored(block_bytes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(operation_store, "BLOCK_BYTES", block_bytes)
    store = OperationStore()
    _put(store, [2, 3])
    _put(store, [0])
    _put(store, [4, 1])
    assert [decode_piece(piece).tool_call_id for piece in store.pieces()] == ["c0", "c1", "c2", "c3", "c4"]
    assert decode_piece(store.record(3)).call_runtime_event_id == "e-c3"


def test_an_operation_never_stored_is_an_error_not_a_gap() -> None:
    store = OperationStore()
    _put(store, [0, 2])
    with pytest.raises(AssertionError, match="never stored"):
        list(store.pieces())
    with pytest.raises(AssertionError, match="never stored"):
        store.record(1)


@pytest.mark.parametrize("lone_surrogate", [False, True], ids=["plain", "lone surrogate"])
def test_the_audit_lists_the_first_five_operations_without_a_response_in_order(lone_surrogate: bool) -> None:
    from resume_contract.core.operation_store import StoredOperations
    from resume_contract.core.walk import _operation_of
    from resume_contract.ledger.audit import _unsettled

    raw = operation_store.msgspec.Raw(b"{}")
    # Eight operations; c1, c2, c4, c5, c6 and c7 have no response. Stored in two batches, out of order.
    records = {
        index: StoredRecord(f"c{index}", "\ud800" if lone_surrogate and index == 4 else f"t{index}", raw, "indeterminate", f"e{index}")
        if index not in (0, 3)
        else StoredRecord(f"c{index}", f"t{index}", raw, "succeeded", f"e{index}", f"r{index}", False)
        for index in range(8)
    }
    store = OperationStore()
    for batch in ([3, 0, 5, 7], [1, 2, 4, 6]):
        store.put(batch, encode_records([records[index] for index in batch]))
    fourth = "\ud800" if lone_surrogate else "t4"
    assert _unsettled(StoredOperations(store, _operation_of)) == [("t1", "c1"), ("t2", "c2"), (fourth, "c4"), ("t5", "c5"), ("t6", "c6")]
