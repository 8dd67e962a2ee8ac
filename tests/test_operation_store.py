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


def test_the_audit_lists_the_first_five_operations_without_a_response_in_order_when_the_settled_ones_are_stored(events) -> None:
    # Eight calls, fed in three pieces; c0 and c3 get their response (and are handed to the store), the rest do not.
    from resume_contract.contract import active
    from resume_contract.core.walk import Walk

    walk = Walk(active().table, store=OperationStore())
    pieces = [
        [events.call("e0", "c0"), events.call("e1", "c1"), events.response("e2", "c0"), events.call("e3", "c2")],
        [events.call("e4", "c3"), events.call("e5", "c4"), events.response("e6", "c3"), events.call("e7", "c5")],
        [events.call("e8", "c6"), events.call("e9", "c7")],
    ]
    first = 0
    for piece in pieces:
        walk.feed(piece, first)
        first += len(piece)
    assert walk.unsettled(5) == [("write_file", call_id) for call_id in ("c1", "c2", "c4", "c5", "c6")]
    assert walk.unsettled(10) == [("write_file", call_id) for call_id in ("c1", "c2", "c4", "c5", "c6", "c7")]
    assert {"c0", "c3"}.isdisjoint(walk.operations)  # they were stored: the listing did not need them

