"""A run's partial snapshots read exactly as the reference store reads them, attacked where Python and
JavaScript differ; and a run with snapshots planned in bounded memory, its plan the in-memory one.

What the reference does is read from its store's source (`readRuntimePartials`, `partialRuntimeStream`,
`completedPartialRuntimeStreamKey`, `mergeRuntimePartialSnapshots`): `JSON.parse`, `!x`, `${x}`, Map keys.
Each expected high-water below is the count of rows the reference merges, worked out by hand from those rules.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_contract import plan_json, plan_ledger
from resume_contract.contract import build_resume_plan
from resume_contract.errors import LedgerChanged, LedgerCorruption
from resume_contract.ledger.workspace import plan_run, read_run


def row(event_id: str, content: dict | None = None, **extra) -> dict:
    value = {"id": event_id, "sessionId": "s1", "invocationId": "i", "runId": "r1", "turnId": "t", "ts": 1, "partial": False, "author": "agent", "role": "model"}
    if content is not None:
        value["content"] = content
    return value | extra


def line(value: dict) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def run_dir(tmp_path: Path, *rows: dict) -> Path:
    directory = tmp_path / "ws" / "sessions" / "s1" / "runs" / "r1"
    (directory / "runtime-partials").mkdir(parents=True)
    (directory / "runtime-events.jsonl").write_bytes(b"".join(map(line, rows)))
    return directory


def snapshot(directory: Path, name: str, header: bytes | dict, text: str = "") -> Path:
    path = directory / "runtime-partials" / name
    path.write_bytes((header if isinstance(header, bytes) else line(header)) + text.encode())
    return path


def streaming(event_id: str, provider: object, ts: int = 1, **extra) -> dict:
    return row(event_id, {"kind": "text", "text": ""}, partial=True, ts=ts, refs={"providerEventId": provider}) | extra


def high_water(tmp_path: Path) -> int:
    plan = plan_run(tmp_path / "ws", "s1", "r1")
    in_memory = read_run(tmp_path / "ws", "s1", "r1")
    assert plan.source_runtime_event_high_water == in_memory.high_water
    return plan.source_runtime_event_high_water


# -- item 6: headers JSON.parse refuses are ignored -----------------------------------------------------------
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_header_javascript_cannot_parse_is_ignored_not_corruption(tmp_path: Path, constant: str, run_cli) -> None:
    directory = run_dir(tmp_path, row("u1"))
    header = line({"version": 1, "event": streaming("p", "m"), "afterEventId": "u1", "x": 0}).replace(b'"x":0', f'"x":{constant}'.encode())
    snapshot(directory, "a.partial", header, "hello")
    assert high_water(tmp_path) == 1
    code, out, err = run_cli("plan", "--json", "--workspace", str(tmp_path / "ws"), "--session", "s1", "--run", "r1", "--expected-high-water", "1")
    assert (code, err) == (0, "") and json.loads(out)["sourceRuntimeEventHighWater"] == 1


def test_a_header_with_an_integer_python_cannot_read_is_not_ignored(tmp_path: Path) -> None:
    # JSON.parse reads 5000 digits (as a double); Python's int() refuses them: counted, so held to the rows' rules.
    directory = run_dir(tmp_path, row("u1"))
    snapshot(directory, "a.partial", line({"version": 1, "event": streaming("p", "m"), "x": 0}).replace(b'"x":0', b'"x":' + b"1" * 5000))
    with pytest.raises(LedgerCorruption) as caught:
        plan_run(tmp_path / "ws", "s1", "r1")
    assert caught.value.kind == "invalid_json"


# -- item 11: stream keys as JavaScript spells them -----------------------------------------------------------
@pytest.mark.parametrize(
    ("snapshot_key", "final_key", "merged"),
    [
        ("1.5e-7", 1.5e-7, False),  # `${1.5e-7}` is "1.5e-7" (Python: "1.5e-07"): the final row completes the stream
        ("true", True, False),  # `${true}` is "true" (Python: "True")
        ("1e+21", 1e21, False),
        ("None", None, True),  # a null key is falsy: no stream is completed (Python: "None")
        ("0", 0, True),  # 0 is falsy too
        ("[object Object]", {"a": 1}, False),
        ("1,2", [1, 2], False),
    ],
)
def test_a_final_row_completes_the_stream_the_reference_keys(tmp_path: Path, snapshot_key: str, final_key: object, merged: bool) -> None:
    final = row("m1", {"kind": "text", "text": "done"}, refs={"providerEventId": final_key})
    directory = run_dir(tmp_path, row("u1"), final)
    snapshot(directory, "a.partial", {"version": 1, "event": streaming("m1-0", snapshot_key), "afterEventId": "u1"}, "do")
    assert high_water(tmp_path) == (3 if merged else 2)


def test_a_snapshot_keyed_by_a_number_is_completed_by_its_string(tmp_path: Path) -> None:
    final = row("m1", {"kind": "text", "text": "done"}, refs={"providerEventId": "1.5e-7", "stepId": "s"})
    directory = run_dir(tmp_path, row("u1"), final)
    snapshot(directory, "a.partial", {"version": 1, "event": streaming("m1-0", 1.5e-7), "afterEventId": "u1"})
    assert high_water(tmp_path) == 2


def test_a_checkpoint_taken_from_the_references_count_replays_only_where_it_does(tmp_path: Path, run_cli) -> None:
    # The reference leaves the completed snapshot out: its high-water is 2; one off must block.
    final = row("m1", {"kind": "text", "text": "done"}, refs={"providerEventId": 1.5e-7})
    directory = run_dir(tmp_path, row("u1"), final)
    snapshot(directory, "a.partial", {"version": 1, "event": streaming("m1-0", "1.5e-7"), "afterEventId": "u1"})
    args = ("plan", "--workspace", str(tmp_path / "ws"), "--session", "s1", "--run", "r1", "--expected-high-water")
    assert run_cli(*args, "2")[0] == 0
    code, out, _ = run_cli(*args, "3", "--json")
    assert code == 1 and "runtime_offset_mismatch" in out


@pytest.mark.parametrize("partial", [1, "yes", "false", [], {}])
def test_a_snapshot_the_reference_merges_but_no_row_can_hold_is_corruption(tmp_path: Path, partial: object) -> None:
    directory = run_dir(tmp_path, row("u1"))
    bad = snapshot(directory, "a.partial", {"version": 1, "event": streaming("p", "m") | {"partial": partial}})
    with pytest.raises(LedgerCorruption) as caught:
        plan_run(tmp_path / "ws", "s1", "r1")
    assert (caught.value.path, caught.value.kind) == (bad, "invalid_event")


@pytest.mark.parametrize("partial", [0, "", None, False])
def test_a_snapshot_whose_partial_is_falsy_is_ignored_as_there(tmp_path: Path, partial: object) -> None:
    directory = run_dir(tmp_path, row("u1"))
    snapshot(directory, "a.partial", {"version": 1, "event": streaming("p", "m") | {"partial": partial}})
    assert high_water(tmp_path) == 1


def test_the_streamed_text_goes_into_a_text_event_that_wrote_none(tmp_path: Path) -> None:
    directory = run_dir(tmp_path, row("u1"))
    event = row("p", {"kind": "text"}, partial=True, refs={"providerEventId": "m"})
    snapshot(directory, "a.partial", {"version": 1, "event": event, "afterEventId": "u1"}, "streamed")
    ledger = read_run(tmp_path / "ws", "s1", "r1")
    assert json.loads(bytes(ledger.rows[1]))["content"] == {"kind": "text", "text": "streamed"}


def test_an_anchor_that_is_not_a_string_is_never_found(tmp_path: Path) -> None:
    # The reference's Map tells 5 from "5": the snapshot is an orphan, after every row (not before them).
    directory = run_dir(tmp_path, row("5"), row("u2"))
    snapshot(directory, "a.partial", {"version": 1, "event": streaming("p", "m"), "afterEventId": 5})
    snapshot(directory, "b.partial", {"version": 1, "event": streaming("q", "n"), "afterEventId": 0})  # falsy: first
    assert [event.id for event in read_run(tmp_path / "ws", "s1", "r1").events] == ["q", "5", "u2", "p"]


# -- item 12: ties on ts as localeCompare breaks them ---------------------------------------------------------
def test_snapshots_tied_on_ts_are_ordered_by_locale_compare(tmp_path: Path) -> None:
    directory = run_dir(tmp_path, row("u1"))
    for name, event_id in [("a", "chunk-1"), ("b", "chunk_1"), ("c", "rt_event97"), ("d", "rt_event_88")]:
        snapshot(directory, f"{name}.partial", {"version": 1, "event": streaming(event_id, event_id, ts=7), "afterEventId": "u1"})
    plan = plan_run(tmp_path / "ws", "s1", "r1")
    # node: ["chunk-1","chunk_1","rt_event97","rt_event_88"].sort((a, b) => a.localeCompare(b))
    assert [json.loads(bytes(r))["id"] for r in plan.runtime_events] == ["u1", "chunk_1", "chunk-1", "rt_event_88", "rt_event97"]


# -- item 5: bounded memory, and the same plan ----------------------------------------------------------------
def _text_rows(count: int) -> list[dict]:
    return [row(f"e{index}", {"kind": "text", "text": f"row {index} " + "x" * 200}, ts=index) for index in range(count)]


def _peak(plan_it) -> int:
    tracemalloc.start()
    try:
        plan = plan_it()
        for _ in plan.runtime_events:
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_a_run_with_a_snapshot_is_planned_in_the_memory_of_one_without(tmp_path: Path) -> None:
    directory = run_dir(tmp_path, *_text_rows(30_000))  # about 8 MB, two chunks
    snapshot(directory, "a.partial", {"version": 1, "event": streaming("p", "m"), "afterEventId": "e100"}, "streamed")
    plain = _peak(lambda: plan_ledger(directory / "runtime-events.jsonl"))
    merged = _peak(lambda: plan_run(tmp_path / "ws", "s1", "r1"))
    assert merged < 1.5 * plain, (merged, plain)


def test_a_snapshot_changed_after_the_plan_is_refused_not_copied(tmp_path: Path) -> None:
    directory = run_dir(tmp_path, row("u1"))
    path = snapshot(directory, "a.partial", {"version": 1, "event": streaming("p", "m"), "afterEventId": "u1"}, "abc")
    plan = plan_run(tmp_path / "ws", "s1", "r1")
    with path.open("ab") as handle:
        handle.write(b"def")
    os.utime(path, ns=(1, 1))
    with pytest.raises(LedgerChanged):
        plan_json(plan)


_ANCHORS = st.one_of(st.none(), st.integers(0, 40).map(lambda index: f"e{index}"), st.just("gone"), st.just(7))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    st.integers(0, 40),
    st.lists(st.tuples(_ANCHORS, st.integers(0, 3), st.booleans()), max_size=8),
    st.sampled_from([64, 300, 1 << 22]),
)
def test_the_streamed_plan_is_the_plan_of_the_run_read_whole(tmp_path_factory, rows: int, snapshots: list, chunk_bytes: int) -> None:
    tmp_path = tmp_path_factory.mktemp("run")
    events = [row(f"e{index}", {"kind": "text", "text": "t"}, refs={"providerEventId": f"m{index}"}, ts=index) for index in range(rows)]
    directory = run_dir(tmp_path, *events)
    for number, (anchor, ts, completed) in enumerate(snapshots):
        header: dict = {"version": 1, "event": streaming(f"p{number}", f"m{number}" if completed else f"open{number}", ts=ts)}
        if anchor is not None:
            header["afterEventId"] = anchor
        snapshot(directory, f"{number}.partial", header, f"text {number}")
    ledger = read_run(tmp_path / "ws", "s1", "r1")
    expected = build_resume_plan(ledger.events, 3, rows=ledger.rows)
    assert plan_json(plan_run(tmp_path / "ws", "s1", "r1", 3, chunk_bytes=chunk_bytes)) == plan_json(expected)


def test_planning_runs_leaves_no_descriptor_open_once_the_plans_are_gone(tmp_path: Path) -> None:
    import gc

    from resume_contract.errors import EscapesWorkspace, LedgerMissing

    directory = run_dir(tmp_path, row("e1", {"kind": "text", "text": "hi"}), streaming("e2", "p1"))
    snapshot(directory, "p1.partial", streaming("e2", "p1"), "streamed")
    runs = directory.parent
    (runs / "empty").mkdir()  # no ledger
    (runs / "linked").symlink_to(directory)  # a run directory that is a link
    workspace = tmp_path / "ws"
    assert plan_json(plan_run(workspace, "s1", "r1"))  # (once first: what a first plan opens for the process, it keeps)
    gc.collect()  # (what earlier tests left for the collector is closed before the count, not during it)
    opened = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        plan = plan_run(workspace, "s1", "r1")
        assert plan_json(plan)  # its rows, the snapshot's among them, read back from the files it keeps open
        for run, error in (("empty", LedgerMissing), ("linked", EscapesWorkspace), ("missing", LedgerMissing)):
            with pytest.raises(error):
                plan_run(workspace, "s1", run)
    del plan
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == opened
