"""A ledger planned in parts, on several processes, gets the plan and the corruption it gets planned whole.

The parts' walks are joined only when that is exact (`Walk.join`); otherwise the ledger is planned whole. So
the property checked on random ledgers, cut at random rows, is: planned in parts == planned whole, always. And
so that it is not met by always declining, a join must be declined only for one of its stated reasons, which
are read here from the rows themselves: a call id named in two parts, a committed terminal event before the
last part, or a call id a walk of the whole ledger finds suspect.

Most tests run the parts' workers as threads (the same code, without a fork per example); one test forks.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from conftest import diagnosing_contract, refusing_contract
from hypothesis import given, settings
from hypothesis import strategies as st
from resume_contract_generated.projector_table import TABLE

from resume_contract.contract import build_resume_plan, event_from_wire
from resume_contract.core.operation_store import OperationStore
from resume_contract.core.plan_json import plan_json
from resume_contract.core.walk import Walk
from resume_contract.errors import LedgerCorruption
from resume_contract.ledger.file_plan import plan_ledger
from resume_contract.ledger.parallel import parts as ledger_parts

KINDS = ["user", "call", "call", "response", "response", "error", "terminal"]


def wire_row(index: int, kind: str, call_id: str, partial: bool = False, session: str = "s") -> dict[str, Any]:
    row: dict[str, Any] = {"id": f"e{index}", "ts": index, "partial": partial, "sessionId": session, "invocationId": "i", "runId": "r", "turnId": "t"}
    if kind == "user":
        row.update(author="user", role="user", content={"kind": "text", "text": "go"})
    elif kind == "terminal":
        row.update(author="agent", role="model", status="completed", content={"kind": "text", "text": "done"})
    elif kind == "call":
        row.update(author="agent", role="model", content={"kind": "function_call", "id": call_id, "name": "write", "args": {"n": index}})
    else:
        content = {"kind": "function_response", "id": call_id, "name": "write", "result": {"n": index}}
        if kind == "error":
            content["isError"] = True
        row.update(author="tool", role="tool", content=content)
    return row


@st.composite
def cut_ledgers(draw: Any) -> tuple[list[dict[str, Any]], list[int]]:
    """Rows (call ids drawn from a few, so some are named on both sides of a cut) and 1-3 row indexes to cut at."""
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=2, max_size=40))
    rows = [
        wire_row(index, kind, draw(st.sampled_from(["a", "b", "c", "d", "e", "f"])), draw(st.integers(0, 9)) == 0)
        for index, kind in enumerate(kinds)
    ]
    cuts = draw(st.lists(st.integers(1, len(rows) - 1), min_size=1, max_size=3, unique=True))
    return rows, sorted(cuts)


def encode(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(row, separators=(",", ":")).encode() + b"\n" for row in rows)


@contextmanager
def in_threads(workers: int, mp_context: Any = None) -> Iterator[ThreadPoolExecutor]:
    """The workers' pool, as threads: `walk_part` runs as it would in a fork, without a fork per example."""
    with ThreadPoolExecutor(workers) as pool:
        yield pool


def plan_in_parts(path: Path, data: bytes, cut_rows: list[int], monkeypatch: pytest.MonkeyPatch, **options: Any) -> tuple[Any, bool]:
    """(the plan with the ledger cut before `cut_rows`, whether the parts were joined)."""
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    joined: list[bool] = []
    walk_in_parts = ledger_parts.walk_in_parts

    def noting(*args: Any) -> Any:
        whole = walk_in_parts(*args)
        joined.append(whole is not None)
        return whole

    monkeypatch.setattr(ledger_parts, "cut_points", lambda read_at, size, processes: [starts[row] for row in cut_rows])
    monkeypatch.setattr(ledger_parts, "walk_in_parts", noting)
    monkeypatch.setattr(ledger_parts, "stoppable_pool", in_threads)
    plan = plan_ledger(path, processes=len(cut_rows) + 1, **options)
    monkeypatch.undo()
    assert len(joined) == 1
    return plan, joined[0]


def declined_for_a_stated_reason(rows: list[dict[str, Any]], cut_rows: list[int]) -> bool:
    bounds = list(zip([0, *cut_rows], [*cut_rows, len(rows)]))
    named = [{row["content"].get("id") for row in rows[start:end] if not row["partial"]} - {None} for start, end in bounds]
    shared = any(named[first] & named[second] for first in range(len(named)) for second in range(first + 1, len(named)))
    early_terminal = any("status" in row and not row["partial"] for row in rows[: cut_rows[-1]])
    # Suspects as the most eager store would find them: every settled operation stored after each row.
    whole = Walk(TABLE, store=OperationStore())
    for index, row in enumerate(rows):
        whole.feed([event_from_wire(row)], index)
    return shared or early_terminal or bool(whole.suspects())


@settings(max_examples=300, deadline=None)
@given(cut_ledgers(), st.sampled_from([1, 200, 1 << 22]), st.one_of(st.none(), st.integers(0, 45)))
def test_a_ledger_planned_in_parts_gets_the_plan_it_gets_whole(
    tmp_path_factory: pytest.TempPathFactory, ledger: tuple[list[dict[str, Any]], list[int]], chunk_bytes: int, expected: int | None
) -> None:
    rows, cut_rows = ledger
    data = encode(rows)
    path = tmp_path_factory.mktemp("parts") / "ledger.jsonl"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as monkeypatch:
        in_parts, joined = plan_in_parts(path, data, cut_rows, monkeypatch, chunk_bytes=chunk_bytes, expected_high_water=expected)
    whole = build_resume_plan([event_from_wire(row) for row in rows], expected, rows=[msgspec.Raw(line) for line in data.splitlines()])
    assert plan_json(in_parts) == plan_json(whole)
    assert joined or declined_for_a_stated_reason(rows, cut_rows)


def test_parts_that_share_nothing_are_joined_and_the_plan_is_the_whole_ledgers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Turns of user, call, response: each turn's call id its own, a call left open at the end, a partial row.
    rows = []
    for turn in range(6):
        rows += [wire_row(len(rows), "user", ""), wire_row(len(rows) + 1, "call", f"t{turn}"), wire_row(len(rows) + 2, "response", f"t{turn}")]
    rows += [wire_row(len(rows), "call", "open"), wire_row(len(rows) + 1, "user", "", partial=True)]
    data = encode(rows)
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(data)
    in_parts, joined = plan_in_parts(path, data, [3, 9, 15], monkeypatch, chunk_bytes=100)
    whole = plan_ledger(path)
    assert joined
    assert plan_json(in_parts) == plan_json(whole)
    assert [operation.status for operation in in_parts.operations] == ["succeeded"] * 6 + ["indeterminate"]
    assert in_parts.disposition == "blocked"


def test_every_part_reads_the_run_through_its_first_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A contract's facts are read from the run's first row (`first`), whichever part a row is walked in: here the
    # packaged contract's tool-boundary marker, on row 0 only. Read from a part's own first row instead, a later
    # part's calls would be walked as another protocol's, and the joined plan would differ from the whole one.
    rows = [wire_row(0, "user", "")]
    rows[0]["actions"] = {"runtimeProtocol": {"toolBoundary": "t1_after_preflight_v1"}}
    for turn in range(4):
        call = wire_row(len(rows) + 1, "call", f"t{turn}")
        dispatch = {key: call[key] for key in ("sessionId", "invocationId", "runId", "turnId", "partial")}
        dispatch.update(id=f"d{turn}", ts=len(rows) + 2, author="system", role="system", actions={"toolDispatch": {"providerToolCallId": f"t{turn}"}})
        rows += [wire_row(len(rows), "user", ""), call, dispatch, wire_row(len(rows) + 3, "response", f"t{turn}")]
    rows += [wire_row(len(rows), "user", ""), wire_row(len(rows) + 1, "call", "open")]  # (no dispatch)
    data = encode(rows)
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(data)
    in_parts, joined = plan_in_parts(path, data, [5, 9, 17], monkeypatch, chunk_bytes=100)
    whole = plan_ledger(path)
    assert joined
    assert plan_json(in_parts) == plan_json(whole)


def test_a_call_answered_in_the_next_part_is_not_joined_but_planned_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [wire_row(0, "user", ""), wire_row(1, "call", "x"), wire_row(2, "response", "x"), wire_row(3, "user", "")]
    data = encode(rows)
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(data)
    in_parts, joined = plan_in_parts(path, data, [2], monkeypatch)
    assert not joined
    assert in_parts.disposition == "safe_replay"
    assert [operation.status for operation in in_parts.operations] == ["succeeded"]


# (what the bad row is, its index in a 12-row ledger cut before rows 4 and 8); each is found in another part.
CORRUPT_PARTS = {
    "invalid_json in the last part": ("invalid_json", 9),
    "invalid_utf8 in the last part, invalid_json in the first": ("invalid_utf8", 10),
    "foreign_row in the middle part": ("foreign_row", 5),
    "duplicate_event_id across parts": ("duplicate_event_id", 11),
}


@pytest.mark.parametrize("case", sorted(CORRUPT_PARTS))
def test_a_corrupt_part_is_reported_as_the_whole_ledger_reports_it(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind, bad = CORRUPT_PARTS[case]
    lines = [json.dumps(wire_row(index, "user", ""), separators=(",", ":")).encode() for index in range(12)]
    if kind == "invalid_utf8":
        lines[1] = lines[1][:-1]  # an earlier row that is not JSON: invalid UTF-8 anywhere still comes first
        lines[bad] = lines[bad].replace(b'"go"', b'"\xff"')
    elif kind == "invalid_json":
        lines[bad] = lines[bad][:-1]
    elif kind == "foreign_row":
        lines[bad] = json.dumps(wire_row(bad, "user", "", session="other"), separators=(",", ":")).encode()
        lines[10] = json.dumps(wire_row(0, "user", ""), separators=(",", ":")).encode()  # and a later repeated id
    else:
        lines[bad] = lines[bad].replace(b'"id":"e11"', b'"id":"e2"')
    data = b"".join(line + b"\n" for line in lines)
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(data)
    offset = sum(len(line) + 1 for line in lines[:bad])
    refusing = refusing_contract()  # a contract whose reader refuses a repeated id or another run's row
    with pytest.raises(LedgerCorruption) as whole:
        plan_ledger(path, contract=refusing)
    with pytest.raises(LedgerCorruption) as in_parts:
        plan_in_parts(path, data, [4, 8], monkeypatch, contract=refusing)
    assert (in_parts.value.kind, in_parts.value.line, in_parts.value.offset) == (kind, bad + 1, offset)
    assert str(in_parts.value) == str(whole.value)


@pytest.mark.parametrize("case", ["foreign_row in the middle part", "duplicate_event_id across parts"])
def test_a_row_the_contract_diagnoses_is_planned_in_parts_as_whole(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a contract whose ledger scan diagnoses a repeated id or another run's row, the plan in parts is the whole
    ledger's: blocked, on that row (parts repeating an id are declined: the repeat is found from the whole ledger)."""
    kind, bad = CORRUPT_PARTS[case]
    lines = [json.dumps(wire_row(index, "user", ""), separators=(",", ":")).encode() for index in range(12)]
    if kind == "foreign_row":
        lines[bad] = json.dumps(wire_row(bad, "user", "", session="other"), separators=(",", ":")).encode()
    else:
        lines[bad] = lines[bad].replace(b'"id":"e11"', b'"id":"e2"')
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    diagnosing = diagnosing_contract()
    code = diagnosing.table.foreign_row_diagnostic if kind == "foreign_row" else diagnosing.table.duplicate_id_diagnostic
    in_parts, joined = plan_in_parts(path, path.read_bytes(), [4, 8], monkeypatch, contract=diagnosing)
    assert joined == (kind == "foreign_row")
    assert plan_json(in_parts) == plan_json(plan_ledger(path, contract=diagnosing))
    assert [d.code for d in in_parts.diagnostics] == [code] and in_parts.disposition == "blocked"
    assert in_parts.diagnostics[0].event_id == f"e{bad}" if kind == "foreign_row" else "e2"


def test_cuts_are_row_starts_before_a_user_row_near_each_middle(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [wire_row(index, "user" if index % 5 == 0 else "call", f"c{index}") for index in range(100)]
    data = encode(rows)
    monkeypatch.setattr(ledger_parts, "PART_BYTES", len(data) // 4)
    cuts = ledger_parts.cut_points(lambda at, length: data[at : at + length], len(data), 3)
    starts = {0} | {index + 1 for index, byte in enumerate(data) if byte == ord("\n")}
    assert len(cuts) == 2 and cuts == sorted(cuts)
    for number, cut in enumerate(cuts, 1):
        assert cut in starts and cut >= len(data) * number // 3
        assert b'"role":"user"' in data[cut : data.index(b"\n", cut)]
        assert cut - len(data) * number // 3 < 5 * max(map(len, data.splitlines())) + 5  # the next user row
    assert ledger_parts.cut_points(lambda at, length: data[at : at + length], len(data), 1) == []
    monkeypatch.setattr(ledger_parts, "PART_BYTES", len(data))
    assert ledger_parts.cut_points(lambda at, length: data[at : at + length], len(data), 2) == []  # too small to cut


@pytest.mark.skipif(not ledger_parts.can_split(), reason="this platform does not fork")
def test_a_ledger_cut_in_two_is_walked_by_a_forked_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = []
    for turn in range(400):
        rows += [wire_row(len(rows), "user", ""), wire_row(len(rows) + 1, "call", f"t{turn}"), wire_row(len(rows) + 2, "response", f"t{turn}")]
    data = encode(rows)
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(ledger_parts, "PART_BYTES", len(data) // 2)
    submitted: list[tuple[int, set[int]]] = []
    answers: list[Any] = []
    stoppable_pool = ledger_parts.stoppable_pool

    @contextmanager
    def recording(*args: Any) -> Iterator[Any]:
        with stoppable_pool(*args) as pool:
            submit = pool.submit

            def noting(function: Any, *arguments: Any) -> Any:
                future = submit(function, *arguments)
                future.add_done_callback(lambda done: answers.append(done.result()))
                submitted.append((arguments[2], set(pool._processes)))  # (the part's first byte, the workers' pids)
                return future

            pool.submit = noting  # type: ignore[method-assign]
            yield pool

    monkeypatch.setattr(ledger_parts, "stoppable_pool", recording)
    plan = plan_ledger(path, processes=2, chunk_bytes=4096)
    [(start, workers)] = submitted
    assert 0 < start < len(data) and workers and os.getpid() not in workers
    # What crossed the pool's pipe is where the result is in the spill file: small enough to be written whole.
    [where] = answers
    assert isinstance(where, tuple) and len(pickle.dumps(where)) < 512
    assert plan_json(plan) == plan_json(plan_ledger(path))
    assert len(plan.operations) == 400


def test_a_part_that_cannot_be_handed_back_is_planned_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker whose spill file finds no room (OSError) costs time, never the plan.
    rows = [wire_row(index, "user", "") for index in range(6)]
    data = encode(rows)
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(data)

    def no_room(*args: Any) -> tuple[int, int]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ledger_parts, "dump_spilling", no_room)
    in_parts, joined = plan_in_parts(path, data, [3], monkeypatch)
    assert not joined
    assert plan_json(in_parts) == plan_json(plan_ledger(path))


def test_a_corruption_raised_in_a_worker_reaches_the_parent_whole() -> None:
    # Unpicklable, it broke the pool instead (BrokenProcessPool), which a later submit raised as an error.
    import pickle

    raised = LedgerCorruption(Path("ledger.jsonl"), 7, 1234, "invalid_json", "empty row")
    back = pickle.loads(pickle.dumps(raised))
    assert (type(back), back.path, back.line, back.offset, back.kind, back.detail, str(back)) == (
        LedgerCorruption, Path("ledger.jsonl"), 7, 1234, "invalid_json", "empty row", str(raised)
    )


@pytest.mark.skipif(not ledger_parts.can_split(), reason="this platform does not fork")
@pytest.mark.parametrize("bad_part", [1, 2])
def test_a_corrupt_part_in_a_forked_worker_is_reported_as_the_whole_ledger_reports_it(bad_part: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps(wire_row(index, "user", ""), separators=(",", ":")).encode() for index in range(300)]
    bad = 100 * bad_part + 50
    lines[bad] = lines[bad][:-1]
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    with pytest.raises(LedgerCorruption) as whole:
        plan_ledger(path)
    starts = [sum(len(line) + 1 for line in lines[:row]) for row in (100, 200)]
    monkeypatch.setattr(ledger_parts, "cut_points", lambda read_at, size, processes: starts)
    with pytest.raises(LedgerCorruption) as in_parts:
        plan_ledger(path, processes=3)
    assert (in_parts.value.line, str(in_parts.value)) == (bad + 1, str(whole.value))


def test_no_temporary_file_or_pipe_to_be_had_plans_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Running short of descriptors (or of a fork) is the machine's state, not the ledger's: it costs time only.
    import tempfile

    rows = [wire_row(index, "user", "") for index in range(6)]
    data = encode(rows)
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(data)

    def no_descriptor(*args: Any, **kwargs: Any) -> Any:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(tempfile, "TemporaryFile", no_descriptor)
    in_parts, joined = plan_in_parts(path, data, [3], monkeypatch)
    assert not joined
    assert plan_json(in_parts) == plan_json(plan_ledger(path))
