"""The row model's grammar (issue 54, docs/language.md "Rows of any shape"), on small contracts of its own: each
rule's error named at spec/contract.yaml:LINE:COL with nothing written, and each construct read as it says
(nested kinds and fields, several spellings of one kind, ids of any scalar type or none, a run named by its first
row or its file, references, orders, JSON text in a string, keys per class, YAML anchors and merge keys)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "spec" / "schema" / "contract.schema.json"

NESTED = """\
name: nested
phase: Phase 0
summary: Rows whose kind is nested in their payload, with no id and no run field.
semantics: strict
x-shared:
  - &free {type: object, description: free}
rows:
  run: [{name: session, first_row: payload.id}]
  tag: [type, payload.type]
  fields:
    ts: {type: string, description: when}
  kinds:
    meta: {description: first, match: {type: meta}, fields: {payload: {type: object, description: p, fields: {id: {type: string, description: id}}}}}
    note: {description: a note, match: {type: [note, Note]}, fields: {payload: *free}}
    call:
      description: a call
      match: {type: item, payload.type: call}
      fields:
        payload:
          type: object
          description: the call
          fields:
            call_id: {type: string, description: id}
            args: {type: json, encoded: json, description: arguments as JSON text}
    output:
      description: an output
      match: {type: item, payload.type: output}
      fields:
        payload:
          type: object
          description: the output
          fields:
            call_id: {type: string, description: id}
            of: {type: integer, refers: {to: position, kinds: [call]}, description: the call's row}
items:
  calls:
    key: {call: row.payload.call_id, output: row.payload.call_id}
    initial: none
    states:
      none: {description: none}
      open: {description: open, status: open, at_end: open_call}
      done: {description: done, status: done}
    on:
      - {class: call, from: none, when: 'row.payload.args.mode != "dry"', to: open}
      - {class: call, from: none, to: done}
      - {class: call, from: [open, done], corrupt: a call id twice}
      - {class: output, from: open, to: done}
      - {class: output, from: [none, done], corrupt: an output for no open call}
decision:
  proceed: go
  stop: wait
  diagnostics:
    open_call: {reason: unsettled, message: a call has no output}
  reasons:
    unsettled: a call is unsettled
"""


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "spec" / "schema").mkdir(parents=True)
    (tmp_path / "spec" / "contract.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "spec" / "schema" / "contract.schema.json").write_bytes(SCHEMA.read_bytes())
    return tmp_path


def _rows(tmp_path: Path, *rows: dict, name: str = "ledger.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


META = {"ts": "t", "type": "meta", "payload": {"id": "s1"}}
CALL = {"ts": "t", "type": "item", "payload": {"type": "call", "call_id": "c1", "args": '{"mode": "live"}'}}


@pytest.fixture
def nested(tmp_path: Path, run_cli) -> Path:
    root = _project(tmp_path / "nested", NESTED)
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 0, out + err
    return root


def _plan(run_cli, root: Path, ledger: Path) -> tuple[int, dict | str]:
    code, out, err = run_cli("--root", str(root), "plan", str(ledger), "--json")
    return code, (json.loads(out) if out and code != 3 else err)  # (a corrupt ledger: the message, said on stderr)


def test_a_nested_kind_position_ids_and_json_text_are_read_as_written(nested: Path, tmp_path: Path, run_cli) -> None:
    output = {"ts": "t", "type": "item", "payload": {"type": "output", "call_id": "c1", "of": 3}}
    note = {"ts": "t", "type": "Note", "payload": {"anything": 1}}
    code, decision = _plan(run_cli, nested, _rows(tmp_path, META, note, CALL))
    assert code == 1 and decision["items"][0] | {"report": {}} == {"item": "calls", "key": "c1", "status": "open", "eventId": 3, "report": {}}
    code, decision = _plan(run_cli, nested, _rows(tmp_path, META, note, CALL, output))
    assert code == 0 and decision["replayEventIds"] == [1, 2, 3, 4]
    dry = {**CALL, "payload": {**CALL["payload"], "args": '{"mode": "dry"}'}}  # (the guard reads inside the JSON text)
    assert _plan(run_cli, nested, _rows(tmp_path, META, dry))[0] == 0


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ({"ts": "t", "type": "item", "payload": {"type": "cal", "call_id": "c1", "args": "{}"}}, "no kind of the contract has type \"item\", payload.type \"cal\""),
        ({"ts": "t", "type": "item", "payload": {"type": "call", "call_idd": "c1", "args": "{}"}}, "`$.payload.call_idd`"),
        ({"ts": "t", "type": "item", "payload": {"type": "call", "call_id": 7, "args": "{}"}}, "the contract declares string in a call row) - at `$.payload.call_id`"),
        ({"ts": "t", "type": "item", "payload": {"type": "call", "call_id": "c1", "args": {"mode": "live"}}}, "the contract declares JSON text in a string"),
        ({"ts": "t", "type": "item", "payload": {"type": "call", "call_id": "c1", "args": "{mode"}}, "the string holds no JSON text"),
    ],
)
def test_a_row_the_model_refuses_names_its_path_and_the_declaration(nested: Path, tmp_path: Path, run_cli, row: dict, said: str) -> None:
    code, err = _plan(run_cli, nested, _rows(tmp_path, META, row))
    assert code == 3 and "ledger.jsonl:2:" in str(err) and "invalid_event" in str(err) and said in str(err), err


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ([META, {"ts": "t", "type": "item", "payload": {"type": "output", "call_id": "c1", "of": 1}}], "dangling_reference: payload.of names position 1, a meta row, not a row of call"),
        ([META, {"ts": "t", "type": "item", "payload": {"type": "output", "call_id": "c1", "of": 5}}], "dangling_reference: payload.of names position 5, no earlier row"),
        ([{"ts": "t", "type": "note", "payload": {}}, CALL], "the run's first row names no session (payload.id is absent)"),
    ],
)
def test_references_and_the_first_rows_run_are_checked(nested: Path, tmp_path: Path, run_cli, rows: list[dict], said: str) -> None:
    code, err = _plan(run_cli, nested, _rows(tmp_path, *rows))
    assert code == 3 and said in str(err), err


def test_an_expression_reading_a_misspelt_nested_field_is_refused(tmp_path: Path, run_cli) -> None:
    text = NESTED.replace("key: {call: row.payload.call_id,", "key: {call: row.payload.cal_id,")
    root = _project(tmp_path / "p", text)
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2 and "spec/contract.yaml:" in err and "cal_id" in err and not (root / "generated").exists(), err


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("match: {type: [note, Note]}", "match: {type: [note, meta]}", "kinds 'meta' and 'note' both match a row with type \"meta\""),
        ("match: {type: meta}", "match: {payload.type: call}", "kinds 'meta' and 'call' both match a row with"),
        ("match: {type: meta}", "match: {kind: meta}", "'kind' is not a tag path; rows.tag: [type, payload.type]"),
        ("match: {type: meta}, ", "", "kind 'meta' needs `match:`"),
        ("first_row: payload.id}", "first_row: payload.ident}", "run part 'session' is read from the first row's 'payload.ident', which no kind of row declares"),
        ("refers: {to: position, kinds: [call]}", "refers: id", "`refers: id` names a row by its id, and rows declare no `id`"),
        ("kinds: [call]}", "kinds: [cal]}", "'cal' is not a declared kind"),
        ("key: {call: row.payload.call_id, output: row.payload.call_id}", "key: {call: row.payload.call_id}", "a row of class output moves it, and `key` gives that class no key"),
        ("    ts: {type: string, description: when}\n", "    ts: {type: string, description: when}\n    type: {type: string, description: t}\n", "'type' is the tag (rows.tag)"),
        ("  run: [{name: session, first_row: payload.id}]\n", "  run: [{name: session, layout: true}]\n", "needs rows.layout"),
    ],
)
def test_each_row_model_rule_is_named_at_its_line(tmp_path: Path, run_cli, old: str, new: str, said: str) -> None:
    assert old in NESTED
    root = _project(tmp_path / "p", NESTED.replace(old, new, 1))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2 and said in err and "spec/contract.yaml:" in err, err
    assert not (root / "generated").exists()


ORDERED = """\
name: ordered
phase: Phase 0
summary: Integer ids that must increase; the run named by the file.
semantics: strict
rows:
  id: n
  run: [{name: run, layout: true}]
  layout: "{run}.jsonl"
  tag: t
  order: {by: n, corrupt: n increases}
  fields:
    n: {type: [string, integer], description: the id}
  kinds:
    a: {description: a row, fields: {}}
items:
  rows:
    key: row.n
    initial: none
    states:
      none: {description: none}
      seen: {description: seen, status: seen}
    on:
      - {class: a, from: none, to: seen}
      - {class: a, from: seen, anomaly: twice}
decision:
  proceed: go
  stop: wait
  diagnostics:
    twice: {reason: odd, message: an id twice}
  reasons:
    odd: something odd
"""


@pytest.mark.parametrize(
    ("ids", "code", "said"),
    [([1, 2, 10], 0, None), (["1", "2", "10"], 0, None), (["1", "10", "9"], 3, "n increases (n '9' after '10')"), ([2, 2], 3, "duplicate_event_id")],
)
def test_ids_of_any_scalar_type_and_a_declared_order(tmp_path: Path, run_cli, ids: list, code: int, said: str | None) -> None:
    root = _project(tmp_path / "p", ORDERED)
    assert run_cli("--root", str(root), "generate")[0] == 0
    got, decision = _plan(run_cli, root, _rows(tmp_path, *({"n": value, "t": "a"} for value in ids), name="r1.jsonl"))
    assert got == code, decision
    if said is not None:
        assert said in str(decision)
    else:
        assert isinstance(decision, dict) and decision["replayEventIds"] == ids


def test_a_run_named_by_its_directory_is_read_by_the_layout(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", ORDERED.replace('layout: "{run}.jsonl"', 'layout: "{run}/events.jsonl"'))
    assert run_cli("--root", str(root), "generate")[0] == 0
    workspace = tmp_path / "ws"
    for run, ids in (("w1", [1, 2]), ("w2", [1, 1])):
        (workspace / run).mkdir(parents=True)
        _rows(workspace / run, *({"n": value, "t": "a"} for value in ids), name="events.jsonl")
    code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace), "--run", "w1", "--json")
    assert code == 0 and json.loads(out)["replayEventIds"] == [1, 2], out + err
    code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace))
    assert code == 3 and "w2" in out and out.splitlines()[-1].startswith("2 runs: 1 go"), out + err
