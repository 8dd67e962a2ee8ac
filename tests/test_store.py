"""The file-backed RuntimeEventStore: ids, commit, single writer, strict reads, torn tails and repair."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import refusing_contract
from resume_contract_generated.catalog import CORRUPTION_KINDS as SPEC_CORRUPTION_KINDS

from resume_contract.errors import (
    CORRUPTION_KINDS,
    DuplicateEventId,
    InvalidLedgerId,
    LedgerCorruption,
    LedgerLocked,
    LedgerMissing,
    TornTail,
)
from resume_contract.ledger.store import RuntimeEventStore, read_ledger


def _fingerprint(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def _write_two(tmp_path: Path, events) -> tuple[RuntimeEventStore, Path]:
    store = RuntimeEventStore(tmp_path)
    store.append(events.text("e1"))
    store.append(events.call("e2", "c1"))
    return store, store.path("s1", "r1")


def test_the_store_uses_the_spec_corruption_kinds() -> None:
    assert set(CORRUPTION_KINDS) == set(SPEC_CORRUPTION_KINDS)


@pytest.mark.parametrize("bad", ["..", ".", "a/b", "", "a\0b", "x" * 129, "a b", "../../etc", "é"])
def test_invalid_ids_are_refused_before_the_disk_is_touched(tmp_path: Path, bad: str, events) -> None:
    store = RuntimeEventStore(tmp_path / "ws")
    with pytest.raises(InvalidLedgerId):
        store.read(bad, "r1")
    with pytest.raises(InvalidLedgerId):
        store.path("s1", bad)
    import msgspec
    from resume_contract_generated.runtime_event import RuntimeEvent

    event = msgspec.structs.replace(events.text("e1"), session_id=bad)
    assert isinstance(event, RuntimeEvent)
    with pytest.raises(InvalidLedgerId):
        store.append(event)
    assert not (tmp_path / "ws").exists()


def test_append_then_read_gives_the_committed_events_and_high_water(tmp_path: Path, events) -> None:
    store, path = _write_two(tmp_path, events)
    store.close()
    ledger = RuntimeEventStore(tmp_path).read("s1", "r1")
    assert [event.id for event in ledger.events] == ["e1", "e2"]
    assert ledger.high_water == 2
    assert path == tmp_path / "sessions" / "s1" / "runs" / "r1" / "runtime-events.jsonl"
    assert path.read_bytes().count(b"\n") == 2 and path.read_bytes().endswith(b"\n")


def test_a_missing_ledger_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(LedgerMissing, match="no such ledger"):
        RuntimeEventStore(tmp_path).read("s1", "r1")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_empty_ledger_is_the_empty_prefix(tmp_path: Path) -> None:
    path = RuntimeEventStore(tmp_path).path("s1", "r1")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    ledger = RuntimeEventStore(tmp_path).read("s1", "r1")
    assert (ledger.events, ledger.rows, ledger.high_water) == ((), (), 0)


def test_an_exact_retry_is_a_no_op_and_a_different_event_with_the_same_id_is_refused(tmp_path: Path, events) -> None:
    store, path = _write_two(tmp_path, events)
    before = path.read_bytes()
    assert store.append(events.call("e2", "c1")) is False
    with pytest.raises(DuplicateEventId):
        store.append(events.call("e2", "c2"))
    assert path.read_bytes() == before
    store.close()
    # A new writer knows the ids already committed.
    with RuntimeEventStore(tmp_path) as again:
        with pytest.raises(DuplicateEventId):
            again.append(events.text("e1", "different"))
    assert path.read_bytes() == before


def test_a_second_writer_in_this_process_is_refused(tmp_path: Path, events) -> None:
    store, path = _write_two(tmp_path, events)
    with pytest.raises(LedgerLocked, match="another process is writing this ledger"):
        RuntimeEventStore(tmp_path).append(events.text("e3"))
    store.close()
    with RuntimeEventStore(tmp_path) as second:
        assert second.append(events.text("e3")) is True


def test_a_second_writer_in_another_process_is_refused(tmp_path: Path, events) -> None:
    store, _ = _write_two(tmp_path, events)
    script = textwrap.dedent(
        f"""
        import msgspec
        from pathlib import Path
        from resume_contract_generated.runtime_event import RuntimeEvent
        from resume_contract import RuntimeEventStore, LedgerLocked
        store = RuntimeEventStore(Path({str(tmp_path)!r}))
        event = msgspec.json.decode(Path({str(store.path("s1", "r1"))!r}).read_bytes().splitlines()[0], type=RuntimeEvent)
        try:
            store.append(msgspec.structs.replace(event, id="from-child"))
        except LedgerLocked:
            raise SystemExit(42)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 42, result.stderr
    store.close()


def test_a_torn_tail_is_corruption_at_its_offset_and_reading_changes_nothing(tmp_path: Path, events) -> None:
    store, path = _write_two(tmp_path, events)
    store.close()
    committed = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b'{"id":"e3","ts":1,"par')
    before = _fingerprint(path)

    with pytest.raises(LedgerCorruption) as caught:
        read_ledger(path)

    error = caught.value
    assert (error.kind, error.line, error.offset) == ("torn_row", 3, len(committed))
    assert str(error).startswith(f"{path}:3: byte offset {len(committed)}: torn_row: ")
    assert _fingerprint(path) == before


def test_append_after_a_torn_tail_is_refused_until_repair(tmp_path: Path, events) -> None:
    store, path = _write_two(tmp_path, events)
    store.close()
    committed = path.read_bytes()
    torn = b'{"id":"e3","ts":1,"par'
    with path.open("ab") as handle:
        handle.write(torn)
    before = _fingerprint(path)

    with pytest.raises(TornTail, match="run `resume-contract repair` first"):
        RuntimeEventStore(tmp_path).append(events.text("e3"))
    assert _fingerprint(path) == before

    result = RuntimeEventStore(tmp_path).repair("s1", "r1")
    assert result.quarantine is not None and result.quarantine.parent == path.parent
    assert result.quarantine.read_bytes() == torn, "the torn bytes are kept, not lost"
    assert (result.torn_bytes, result.committed_bytes) == (len(torn), len(committed))
    assert path.read_bytes() == committed

    with RuntimeEventStore(tmp_path) as store:
        assert store.append(events.text("e3")) is True
    assert [event.id for event in read_ledger(path).events] == ["e1", "e2", "e3"]


def test_repair_without_a_torn_tail_changes_nothing(tmp_path: Path, events) -> None:
    store, path = _write_two(tmp_path, events)
    store.close()
    before = _fingerprint(path)
    result = RuntimeEventStore(tmp_path).repair("s1", "r1")
    assert result.quarantine is None and _fingerprint(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["runtime-events.jsonl"]


def test_repair_is_refused_while_a_writer_is_live(tmp_path: Path, events) -> None:
    store, path = _write_two(tmp_path, events)
    with pytest.raises(LedgerLocked):
        RuntimeEventStore(tmp_path).repair("s1", "r1")
    store.close()


GOOD = b'{"id":"ok","ts":1,"partial":false,"author":"user","role":"user","sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","content":{"kind":"text","text":"hi"}}\n'


@pytest.mark.parametrize(
    ("bad_row", "kind", "detail"),
    [
        (b'{"id":"x","ts":1,"text":"\xff"}\n', "invalid_utf8", "invalid UTF-8 at byte"),
        (b'{"id": "x", oops}\n', "invalid_json", "Expecting property name enclosed in double quotes: line 1 column 13 (char 12)"),
        (b"\n", "invalid_json", "empty row"),
        (b"[1, 2]\n", "invalid_event", "Expected `object`, got `array`"),
        (GOOD.replace(b'"ts":1,', b""), "invalid_event", "Object missing required field `ts`"),
        (GOOD.replace(b'"ts":1', b'"ts":true'), "invalid_event", "at `$.ts`"),
        (GOOD.replace(b'"kind":"text"', b'"kind":"video"'), "invalid_event", "Invalid value 'video' - at `$.content.kind`"),
        (GOOD.replace(b'"author":"user"', b'"author":"robot"'), "invalid_event", "at `$.author`"),
        (GOOD, "duplicate_event_id", "event id 'ok' is already on line 1"),
    ],
)
def test_each_kind_of_corruption_is_found_at_its_line_and_offset(tmp_path: Path, bad_row: bytes, kind: str, detail: str) -> None:
    path = tmp_path / "runtime-events.jsonl"
    path.write_bytes(GOOD + bad_row + GOOD.replace(b'"ok"', b'"after"'))
    before = _fingerprint(path)
    with pytest.raises(LedgerCorruption) as caught:
        read_ledger(path, contract=refusing_contract())  # (a repeated id is corruption unless the contract diagnoses it)
    assert (caught.value.kind, caught.value.line, caught.value.offset) == (kind, 2, len(GOOD))
    assert detail in caught.value.detail
    assert _fingerprint(path) == before


def test_durable_mode_appends_the_same_bytes(tmp_path: Path, events) -> None:
    with RuntimeEventStore(tmp_path / "a", durable=True) as durable, RuntimeEventStore(tmp_path / "b") as plain:
        for store in (durable, plain):
            store.append(events.text("e1"))
            store.append(events.call("e2", "c1"))
    assert (tmp_path / "a").joinpath("sessions/s1/runs/r1/runtime-events.jsonl").read_bytes() == (
        tmp_path / "b"
    ).joinpath("sessions/s1/runs/r1/runtime-events.jsonl").read_bytes()
