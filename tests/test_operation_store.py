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


class _OnlyAsJson(operation_store.StoredOperations):
    """Stored operations that can only be read as their JSON: decoding each one whole is not allowed."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise AssertionError("the operations were decoded one by one")


def _stored(records: dict[int, StoredRecord], batches: list[list[int]]) -> OperationStore:
    store = OperationStore()
    for batch in batches:
        store.put(batch, encode_records([records[index] for index in batch]))
    return store


def _record(index: int, settled: bool, tool_name: str | None = None) -> StoredRecord:
    raw = operation_store.msgspec.Raw(b"{}")
    if settled:
        return StoredRecord(f"c{index}", tool_name or f"t{index}", raw, "succeeded", f"e{index}", f"r{index}", False)
    return StoredRecord(f"c{index}", tool_name or f"t{index}", raw, "indeterminate", f"e{index}")


def test_the_audit_lists_the_first_five_operations_without_a_response_in_order_from_their_json() -> None:
    from resume_contract.core.operation_store import tool_operation_of
    from resume_contract.ledger.audit import _unsettled

    # Eight operations; c1, c2, c4, c5, c6 and c7 have no response. Stored in two batches, out of order.
    records = {index: _record(index, settled=index in (0, 3)) for index in range(8)}
    store = _stored(records, [[3, 0, 5, 7], [1, 2, 4, 6]])
    assert _unsettled(_OnlyAsJson(store, tool_operation_of)) == [("t1", "c1"), ("t2", "c2"), ("t4", "c4"), ("t5", "c5"), ("t6", "c6")]


@pytest.mark.parametrize("surrogate_at", [4, 4500], ids=["in the first piece", "in a later piece"])
def test_the_audit_lists_the_operations_without_a_response_when_a_tool_name_holds_a_lone_surrogate(surrogate_at: int) -> None:
    from resume_contract.core.operation_store import StoredOperations, tool_operation_of
    from resume_contract.ledger.audit import _unsettled

    # 5,000 operations (their JSON comes in pieces of 4,096); only the first four and the surrogate's are unsettled.
    records = {
        index: _record(index, settled=not (index < 4 or index == surrogate_at), tool_name="\ud800" if index == surrogate_at else None)
        for index in range(5000)
    }
    store = _stored(records, [list(range(0, 5000, 2)), list(range(1, 5000, 2))])
    expected = [("t0", "c0"), ("t1", "c1"), ("t2", "c2"), ("t3", "c3"), ("\ud800", f"c{surrogate_at}")]
    assert _unsettled(StoredOperations(store, tool_operation_of)) == expected
