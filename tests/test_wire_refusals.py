"""Rows a wire format refuses although every field has its type (spec/runtime_event.yaml `invalid_when`): read on a
frozen spec with one refusal, whichever path reads them (a chunk decoded at once, row by row, a SQLite payload
batch), the first refused row is corruption at its place, and a row the test does not hold for is read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from resume_contract_generator.spec.tables import decoder_of
from resume_contract_generator.spec.validate import load_spec

from resume_contract.core.wire import WireModel
from resume_contract.errors import INVALID_EVENT, LedgerCorruption, RowRefused
from resume_contract.ledger.reader import decode_payloads, decode_rows

FROZEN = Path(__file__).parent / "frozen_spec" / "spec"
REFUSING = Path(__file__).parent / "review_cases" / "WIRE_REFUSAL_ADDED" / "current"  # refuses branch "side"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> WireModel:
    root = tmp_path_factory.mktemp("refusing")
    shutil.copytree(FROZEN, root / "spec")
    shutil.copyfile(REFUSING / "runtime_event.yaml", root / "spec" / "runtime_event.yaml")
    shutil.copyfile(REFUSING / "runtime_event.schema.json", root / "spec" / "schema" / "runtime_event.schema.json")
    return decoder_of(load_spec(root))


def row(index: int, **extra: Any) -> dict[str, Any]:
    head = {"id": f"e{index}", "ts": index, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "partial": False}
    return {**head, "author": "user", "role": "user", "content": {"kind": "text", "text": "go"}, **extra}


def ledger(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(value, separators=(",", ":")).encode() + b"\n" for value in rows)


@pytest.mark.parametrize("chunk_bytes", [1, 4096, 1 << 22], ids=["row by row", "small chunks", "one chunk"])
def test_the_first_refused_row_is_corruption_at_its_line(model: WireModel, chunk_bytes: int) -> None:
    rows = [row(index, branch="main") for index in range(300)]
    rows[200]["branch"] = "side"
    rows[250]["branch"] = "side"
    with pytest.raises(LedgerCorruption) as raised:
        decode_rows(Path("ledger.jsonl"), ledger(rows), model=model, chunk_bytes=chunk_bytes)
    assert (raised.value.line, raised.value.kind) == (201, INVALID_EVENT)
    assert "the side branch is not written by this runtime" in str(raised.value)


def test_rows_the_test_does_not_hold_for_are_read(model: WireModel) -> None:
    rows = [row(0), row(1, branch="main"), row(2, branch="sidecar")]
    events, _ = decode_rows(Path("ledger.jsonl"), ledger(rows), model=model)
    assert [event.id for event in events] == ["e0", "e1", "e2"]


def test_a_payload_batch_with_a_refused_row_is_left_to_be_read_row_by_row(model: WireModel) -> None:
    payloads = [json.dumps(row(index, branch="main")).encode() for index in range(3)]
    assert decode_payloads(payloads, model) is not None
    payloads[1] = json.dumps(row(1, branch="side")).encode()
    assert decode_payloads(payloads, model) is None
    with pytest.raises(RowRefused) as refused:
        model.decode_row(payloads[1])
    assert refused.value.kind == INVALID_EVENT
