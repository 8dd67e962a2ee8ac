"""The reader against the wire format: verbatim rows, duplicate keys, foreign rows, lone surrogates, workspaces.

These are tests of the tool: every ledger here is written by the test itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from conftest import diagnosing_contract, refusing_contract

from resume_contract.contract import build_resume_plan
from resume_contract.errors import LedgerCorruption
from resume_contract.ledger.store import read_ledger
from resume_contract.ledger.workspace import plan_run, read_run


def row(event_id: str, content: dict | None = None, *, session: str = "s1", run: str = "r1", **extra) -> dict:
    value = {"id": event_id, "sessionId": session, "invocationId": "i", "runId": run, "turnId": "t", "ts": 1,
             "partial": False, "author": "user", "role": "user"}
    if content is not None:
        value["content"] = content
    value.update(extra)
    return value


def text(event_id: str, words: str = "hi", **extra) -> dict:
    return row(event_id, {"kind": "text", "text": words}, **extra)


def line(value: dict) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def write(path: Path, *rows: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(rows))
    return path


def corruption(path: Path, **kwargs) -> LedgerCorruption:
    with pytest.raises(LedgerCorruption) as caught:
        read_ledger(path, **kwargs)
    return caught.value


# -- verbatim rows ------------------------------------------------------------------------------------------
def test_rows_are_kept_byte_for_byte_whatever_the_key_order_spacing_or_escapes(tmp_path: Path) -> None:
    odd = (
        b'{ "turnId":"t", "id":"u", "sessionId":"s1","invocationId":"i","runId":"r1","ts":1.50,"partial":false,'
        b'"author":"user","role":"user","content":{"text":"caf\\u00e9 \\/ \xc3\xa9","kind":"text"}}\n'
    )
    call = (
        b'{"id":"c","sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","ts":2,"partial":false,"author":"agent",'
        b'"role":"model","content":{"kind":"function_call","id":"t1","name":"Bash","args":{"n":1e+21,"z":null,"a":[1,2]}}}\n'
    )
    answer = (
        b'{"id":"r","sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","ts":3,"partial":false,"author":"tool",'
        b'"role":"tool","content":{"kind":"function_response","id":"t1","name":"Bash","result":{"exitCode":0}}}\n'
    )
    path = write(tmp_path / "ledger.jsonl", odd, call, answer)
    ledger = read_ledger(path)
    plan = build_resume_plan(ledger.events, rows=ledger.rows)
    assert [bytes(raw) for raw in plan.runtime_events] == [odd[:-1], call[:-1], answer[:-1]]
    assert [bytes(raw) for raw in plan.replay_runtime_events] == [odd[:-1], call[:-1], answer[:-1]]
    assert bytes(plan.operations[0].args) == b'{"n":1e+21,"z":null,"a":[1,2]}'
    encoded = msgspec.json.encode(plan)
    assert odd[:-1] in encoded and call[:-1] in encoded


def test_error_content_keeps_code_reason_and_details_and_nothing_is_added(tmp_path: Path) -> None:
    error = row("e", {"kind": "error", "code": "E1", "reason": "rate_limit", "message": "m", "details": {"retryAfterMs": 5}})
    thinking = row("th", {"kind": "thinking", "text": "t"})
    path = write(tmp_path / "ledger.jsonl", line(error), line(thinking))
    ledger = read_ledger(path)
    plan = build_resume_plan(ledger.events, rows=ledger.rows)
    assert [json.loads(bytes(raw)) for raw in plan.replay_runtime_events] == [error, thinking]


def test_python_built_events_get_their_canonical_rows(events) -> None:
    plan = build_resume_plan([events.text("u")])
    assert json.loads(bytes(plan.runtime_events[0]))["id"] == "u"
    assert plan.replay_event_ids == ("u",)


# -- what the reference writes is read ----------------------------------------------------------------------
def test_branch_attachments_refs_actions_and_lone_surrogates_are_read(tmp_path: Path) -> None:
    rows = [
        text("u", attachments=None) | {"content": {"kind": "text", "text": "see", "attachments": [{"kind": "image"}]}, "branch": "lane-β"},
        row("c", {"kind": "function_call", "id": "t1", "name": "Bash", "args": {"out": "cut \ud83d"}}, refs={"toolCallId": "t1"}),
        row("r", {"kind": "function_response", "id": "t1", "name": "Bash", "result": "\ude00", "isError": False}),
        row("end", None, actions={"endInvocation": True, "stateDelta": {"k": [None]}}, status="completed"),
    ]
    del rows[0]["attachments"]
    data = b"".join(json.dumps(value, separators=(",", ":")).encode() + b"\n" for value in rows)  # ASCII escapes
    assert b"\\ud83d" in data
    ledger = read_ledger(write(tmp_path / "ledger.jsonl", data))
    plan = build_resume_plan(ledger.events, rows=ledger.rows)
    assert plan.disposition == "safe_replay" and plan.terminal_runtime_event_id == "end"
    assert [json.loads(bytes(raw)) for raw in plan.runtime_events] == rows
    assert json.loads(bytes(plan.operations[0].args)) == {"out": "cut \ud83d"}


# -- corruption ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bad", "key"),
    [
        (b'{"id":"x","content":{"kind":"function_call","id":"c","name":"n","args":{}},"content":{"kind":"text","text":"t"},'
         b'"sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","ts":1,"partial":false,"author":"agent","role":"model"}', "content"),
        (b'{"id":"x","sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","ts":1,"partial":false,"author":"agent",'
         b'"role":"model","content":{"kind":"function_call","id":"c","name":"n","args":{"path":"a","path":"b"}}}', "path"),
        (b'{"id":"x","sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","ts":1,"partial":false,"author":"agent",'
         b'"role":"model","content":{"kind":"function_call","id":"c","name":"n","args":{"deep":[{"k":1,"k":1}]}}}', "k"),
        (b'{"id":"x","sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","ts":1,"partial":false,"author":"agent",'
         b'"role":"model","content":{"kind":"text","text":"\\ud83d","text":"t"}}', "text"),
    ],
    ids=["top-level", "in-args", "deep-in-args", "with-a-lone-surrogate"],
)
def test_a_repeated_key_at_any_depth_is_corruption_at_its_line_and_byte(tmp_path: Path, bad: bytes, key: str) -> None:
    first = line(text("u"))
    found = corruption(write(tmp_path / "ledger.jsonl", first, bad + b"\n"))
    assert (found.kind, found.line, found.offset) == ("duplicate_key", 2, len(first))
    assert found.detail == f'the key "{key}" appears twice in one object'


def test_a_row_of_another_run_is_foreign_in_a_bare_file(tmp_path: Path) -> None:
    first = line(text("u"))
    found = corruption(write(tmp_path / "ledger.jsonl", first, line(text("v", run="r2"))), contract=refusing_contract())
    assert (found.kind, found.line, found.offset) == ("foreign_row", 2, len(first))
    assert "run 'r2'" in found.detail and "the ledger's first row" in found.detail


def test_a_row_of_another_run_is_foreign_in_a_workspace(tmp_path: Path) -> None:
    path = write(tmp_path / "sessions" / "s1" / "runs" / "r1" / "runtime-events.jsonl", line(text("u", session="s9", run="r9")))
    with pytest.raises(LedgerCorruption) as caught:
        plan_run(tmp_path, "s1", "r1", contract=refusing_contract())
    assert f"{path}:1: byte offset 0: foreign_row: " in str(caught.value) and "the run directory is session 's1', run 'r1'" in str(caught.value)
    # Planned by its path, a file in a run directory is held to that directory too; copied out, to its first row.
    assert corruption(path, contract=refusing_contract()).kind == "foreign_row"
    alone = write(tmp_path / "copy.jsonl", path.read_bytes())
    assert read_ledger(alone, contract=refusing_contract()).events[0].id == "u"


def test_a_contract_that_diagnoses_another_runs_rows_plans_them_blocked(tmp_path: Path) -> None:
    """Under a contract whose ledger scan names a diagnostic for another run's row (`ledger_anomalies.foreign_row`),
    the row is that diagnostic of a plan that blocks, found where the refusing reader finds it."""
    diagnosed = diagnosing_contract()
    write(tmp_path / "sessions" / "s1" / "runs" / "r1" / "runtime-events.jsonl", line(text("u")), line(text("v", session="s9", run="r9")))
    plan = plan_run(tmp_path, "s1", "r1", contract=diagnosed)
    assert plan.disposition == "blocked"
    assert [(d.code, d.event_id) for d in plan.diagnostics] == [(diagnosed.table.foreign_row_diagnostic, "v")]


def test_an_undeclared_key_or_a_null_in_a_declared_field_is_a_schema_violation(tmp_path: Path) -> None:
    for bad in (text("x", extra_field=1), text("x", branch=None), row("x", {"kind": "error", "message": "m", "hint": "h"})):
        found = corruption(write(tmp_path / "ledger.jsonl", line(bad)))
        assert found.kind == "invalid_event", bad


def test_a_truncated_row_says_what_is_wrong_not_that_input_was_truncated(tmp_path: Path) -> None:
    found = corruption(write(tmp_path / "ledger.jsonl", b'{"id":"x","text":"abc\n'))
    assert found.kind == "invalid_json" and "truncated" not in found.detail.lower()


# -- workspaces: partial snapshots --------------------------------------------------------------------------
def snapshot(run_dir: Path, name: str, event: dict, text_chunks: str = "", after: str | None = None, **header) -> Path:
    value = {"version": 1, "event": event, **header}
    if after is not None:
        value["afterEventId"] = after
    return write(run_dir / "runtime-partials" / name, line(value) + text_chunks.encode())


def partial_text(event_id: str, provider: str, ts: int) -> dict:
    return row(event_id, {"kind": "text", "text": ""}, partial=True, ts=ts, author="agent", role="model", refs={"providerEventId": provider})


def test_snapshots_merge_in_the_reference_order_and_count_in_the_high_water(tmp_path: Path) -> None:
    run_dir = tmp_path / "sessions" / "s1" / "runs" / "r1"
    write(run_dir / "runtime-events.jsonl", line(text("u1", ts=10)), line(text("u2", ts=20)))
    snapshot(run_dir, "b.partial", partial_text("p-after-u1-late", "m2", 15), "second", after="u1")
    snapshot(run_dir, "a.partial", partial_text("p-after-u1", "m1", 12), "Hello, ", after="u1")
    snapshot(run_dir, "c.partial", partial_text("p-first", "m0", 99), "")
    snapshot(run_dir, "d.partial", partial_text("p-orphan", "m3", 1), "x", after="gone")
    ledger = read_run(tmp_path, "s1", "r1")
    assert [event.id for event in ledger.events] == ["p-first", "u1", "p-after-u1", "p-after-u1-late", "u2", "p-orphan"]
    assert ledger.high_water == 6
    assert json.loads(bytes(ledger.rows[2]))["content"]["text"] == "Hello, "


def test_unreadable_snapshots_are_ignored_as_the_reference_ignores_them(tmp_path: Path) -> None:
    run_dir = tmp_path / "sessions" / "s1" / "runs" / "r1"
    write(run_dir / "runtime-events.jsonl", line(text("u1")))
    write(run_dir / "runtime-partials" / "no-newline.partial", json.dumps({"version": 1, "event": partial_text("a", "m", 1)}).encode())
    write(run_dir / "runtime-partials" / "bad-json.partial", b"{nope\nchunk")
    snapshot(run_dir, "version-2.partial", partial_text("b", "m", 1), version=2)
    snapshot(run_dir, "not-partial.partial", text("c"))
    snapshot(run_dir, "other-suffix.tmp", partial_text("d", "m", 1))
    assert [event.id for event in read_run(tmp_path, "s1", "r1").events] == ["u1"]


def test_a_completed_stream_leaves_its_snapshot_out(tmp_path: Path) -> None:
    run_dir = tmp_path / "sessions" / "s1" / "runs" / "r1"
    final = row("m1", {"kind": "text", "text": "Hello"}, author="agent", role="model", refs={"providerEventId": "msg-1", "stepId": "s"})
    write(run_dir / "runtime-events.jsonl", line(text("u1")), line(final))
    snapshot(run_dir, "done.partial", partial_text("m1-0", "msg-1", 5), "Hel", after="u1")
    snapshot(run_dir, "open.partial", partial_text("m2-0", "msg-2", 6), "Wor", after="u1")
    assert [event.id for event in read_run(tmp_path, "s1", "r1").events] == ["u1", "m2-0", "m1"]


def test_a_snapshot_that_breaks_the_format_or_belongs_elsewhere_is_corruption(tmp_path: Path) -> None:
    run_dir = tmp_path / "sessions" / "s1" / "runs" / "r1"
    write(run_dir / "runtime-events.jsonl", line(text("u1")))
    bad = snapshot(run_dir, "bad.partial", partial_text("p", "m", 1) | {"unknownKey": 1})
    with pytest.raises(LedgerCorruption) as caught:
        read_run(tmp_path, "s1", "r1")
    assert (caught.value.path, caught.value.kind) == (bad, "invalid_event")
    bad.write_bytes(line({"version": 1, "event": partial_text("p", "m", 1) | {"runId": "r2"}}))
    with pytest.raises(LedgerCorruption) as caught:
        read_run(tmp_path, "s1", "r1")
    assert caught.value.kind == "foreign_row"
    bad.write_bytes(b'{"version":1,"version":1,"event":' + line(partial_text("p", "m", 1))[:-1] + b"}\n")
    with pytest.raises(LedgerCorruption) as caught:
        read_run(tmp_path, "s1", "r1")
    assert caught.value.kind == "duplicate_key"


def test_the_text_plan_shows_control_bidi_and_surrogate_characters_as_escapes(tmp_path: Path, run_cli) -> None:
    call = row("c\ud800", {"kind": "function_call", "id": "t\ud83d", "name": "B\x1b[2J\u202eash", "args": {}}, author="agent", role="model")
    path = write(tmp_path / "ledger.jsonl", json.dumps(call, separators=(",", ":")).encode() + b"\n")
    code, out, err = run_cli("plan", str(path))
    assert (code, err) == (1, "")
    assert "  B\\x1b[2J\\u202eash  call t\\ud83d  args {}  (committed in event c\\ud800)" in out
    assert "\x1b" not in out and "\u202e" not in out
    code, out, _ = run_cli("plan", "--json", str(path))
    assert json.loads(out)["operations"][0]["toolName"] == "B\x1b[2J\u202eash"  # JSON stays exact


# -- found by review: each once accepted or crashed -----------------------------------------------------------
def test_a_float_that_re_encodes_longer_cannot_hide_another_rows_repeated_key(tmp_path: Path) -> None:
    first = (
        b'{"id":"a","sessionId":"s1","invocationId":"i","runId":"r1","turnId":"t","ts":1,"partial":false,'
        b'"author":"user","role":"user","refs":{"k":1,"k":1},"content":{"kind":"text","text":"hi"}}\n'
    )
    # `1e6` re-encodes as `1000000.0`: six bytes longer, exactly what the repeated `,"k":1` loses.
    second = line(text("b") | {"ts": 0}).replace(b'"ts":0', b'"ts":1e6')
    found = corruption(write(tmp_path / "ledger.jsonl", first, second))
    assert (found.kind, found.line) == ("duplicate_key", 1)


@pytest.mark.parametrize(
    "layout",
    [lambda a, b: a + b + b"\n\n", lambda a, b: a[:20] + b"\n" + a[20:] + b + b"\n"],
    ids=["two-rows-on-a-line-and-a-blank-line", "a-row-across-two-lines"],
)
def test_each_line_holds_exactly_one_row(tmp_path: Path, layout) -> None:
    a, b = line(text("a"))[:-1], line(text("b"))[:-1]
    found = corruption(write(tmp_path / "ledger.jsonl", layout(a, b)))
    assert (found.kind, found.line) == ("invalid_json", 1)


def test_a_number_no_double_holds_is_corruption_not_a_crash(tmp_path: Path, run_cli) -> None:
    call = row("c", {"kind": "function_call", "id": "t", "name": "n", "args": {"s": "\ud83d", "n": 0}})
    bad = json.dumps(call, separators=(",", ":")).encode().replace(b'"n":0', b'"n":1e400') + b"\n"  # the lone surrogate sends the row to the slow path
    code, out, err = run_cli("plan", "--json", str(write(tmp_path / "ledger.jsonl", bad)))
    assert code == 3 and json.loads(out)["outcome"] == "corrupt" and "the number 1e400 is out of range for a double" in err
    run_dir = tmp_path / "sessions" / "s1" / "runs" / "r1"
    write(run_dir / "runtime-events.jsonl", line(text("u1")))
    snapshot(run_dir, "a.partial", partial_text("p", "m", 1) | {"ts": 0})
    partial = run_dir / "runtime-partials" / "a.partial"
    partial.write_bytes(partial.read_bytes().replace(b'"ts":0', b'"ts":1e400'))
    code, _, err = run_cli("plan", "--workspace", str(tmp_path), "--session", "s1", "--run", "r1")
    assert code == 3 and "a.partial:1: byte offset 0: invalid_json: the number 1e400" in err


def test_snapshots_are_read_as_javascript_reads_them(tmp_path: Path) -> None:
    run_dir = tmp_path / "sessions" / "s1" / "runs" / "r1"
    write(run_dir / "runtime-events.jsonl", line(text("u1", ts=10)))
    snapshot(run_dir, "a.partial", partial_text("m1", "p1", 20), "hello", after="u1", version=1.0)  # 1.0 === 1
    snapshot(run_dir, "b.partial", partial_text("B2", "p2", 20), "x", after="u1")
    snapshot(run_dir, "c.partial", partial_text("a2", "p3", 20), "y", after="u1")
    snapshot(run_dir, "d.partial", partial_text("e0", "p4", 30), after="")  # `!afterEventId`: no anchor
    cut = snapshot(run_dir, "e.partial", partial_text("cut", "p5", 40), after="u1")
    cut.write_bytes(cut.read_bytes() + "ok \U0001f600".encode()[:-2])  # a crash inside a character
    ledger = read_run(tmp_path, "s1", "r1")
    assert [event.id for event in ledger.events] == ["e0", "u1", "a2", "B2", "m1", "cut"]
    assert json.loads(bytes(ledger.rows[-1]))["content"]["text"] == "ok \ufffd"
