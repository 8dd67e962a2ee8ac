"""The contract language's generator and engine (generator/language, resume_contract/core/language.py, resume_contract/ledger/language_reader.py), on a frozen
contract of their own: every mistake named at spec/contract.yaml:LINE:COL with nothing written, output
byte-identical across hash seeds, and the engine's rules (first entry that applies, partial rows, classes by
test, anomalies, the replay)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "spec" / "schema" / "contract.schema.json"

CONTRACT = """\
name: tiny
phase: Phase 0
summary: A frozen contract for the language's own tests.
semantics: strict
rows:
  id: id
  run: [run]
  tag: type
  partial: partial
  fields:
    id: {type: string, description: id}
    run: {type: string, description: run}
    partial: {type: boolean, optional: true, description: a streaming chunk}
  kinds:
    say: {description: text, fields: {text: {type: string, description: text}}}
    call: {description: a call, fields: {call: {type: string, description: id}, tool: {type: string, description: tool}}}
    done: {description: a result, fields: {call: {type: string, description: id}, ok: {type: boolean, description: ok}}}
classes:
  loud: row.type == "say" && row.text == "HELP"
items:
  calls:
    key: row.call
    initial: none
    states:
      none: {description: none}
      open: {description: open, status: open, at_end: open_call, replay_opener: false}
      closed: {description: closed, status: closed}
      broken: {description: broken, status: broken}
    on:
      - {class: call, from: none, to: open}
      - {class: call, from: [open, closed, broken], anomaly: twice}
      - {class: done, from: open, when: row.ok, to: closed}
      - {class: done, from: open, to: broken}
      - {class: done, from: [none, closed, broken], corrupt: a result for no open call}
  shouts:
    key: '"all"'
    initial: calm
    states:
      calm: {description: calm}
      shouted: {description: shouted, status: shouted, at_end: shouting}
    on:
      - {class: loud, from: [calm, shouted], to: shouted}
replay:
  when: row.type != "done" || row.ok
decision:
  proceed: go
  stop: wait
  diagnostics:
    open_call: {reason: unsettled, message: a call has no result}
    twice: {reason: odd, message: a call id twice}
    shouting: {reason: odd, message: someone shouted}
  reasons:
    odd: something odd
    unsettled: a call is unsettled
"""


def _project(tmp_path: Path, text: str = CONTRACT) -> Path:
    (tmp_path / "spec" / "schema").mkdir(parents=True)
    (tmp_path / "spec" / "contract.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "spec" / "schema" / "contract.schema.json").write_bytes(SCHEMA.read_bytes())
    return tmp_path


def _ledger(tmp_path: Path, *rows: dict) -> Path:
    path = tmp_path / "ledger.jsonl"
    path.write_text("".join(json.dumps({"run": "r", **row}) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def tiny(tmp_path: Path, run_cli) -> Path:
    root = _project(tmp_path / "tiny")
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 0, out + err
    return root


def _plan(run_cli, root: Path, ledger: Path) -> tuple[int, dict | str]:
    code, out, err = run_cli("--root", str(root), "plan", str(ledger), "--json")
    return code, (json.loads(out) if out and code != 3 else err)  # (a corrupt ledger: the message, said on stderr)


def test_first_entry_that_applies_decides_and_the_replay_leaves_out_what_the_contract_says(tmp_path: Path, run_cli) -> None:
    tiny = _project(tmp_path / "reporting", CONTRACT.replace("    key: row.call\n", "    key: row.call\n    report: {tool: row.tool}\n"))
    assert run_cli("--root", str(tiny), "generate")[0] == 0
    ledger = _ledger(
        tmp_path,
        {"id": "1", "type": "say", "text": "hi"},
        {"id": "2", "type": "call", "call": "a", "tool": "x"},
        {"id": "3", "type": "call", "call": "b", "tool": "y"},
        {"id": "4", "type": "done", "call": "b", "ok": False},
        {"id": "5", "type": "say", "text": "partial", "partial": True},
    )
    code, decision = _plan(run_cli, tiny, ledger)
    assert code == 1
    assert decision["decision"] == "wait"
    assert [(i["item"], i["key"], i["status"], i["eventId"]) for i in decision["items"]] == [("calls", "a", "open", "2"), ("calls", "b", "broken", "3")]
    assert [i["report"] for i in decision["items"]] == [{"tool": "x"}, {"tool": "y"}]
    assert decision["rejectionReasons"] == ["unsettled"]
    # 2 opened an item that ends open (replay_opener false); 4 fails the replay test; 5 is partial
    assert decision["replayEventIds"] == ["1", "3"]
    assert decision["highWater"] == 5


def test_an_anomaly_and_a_class_by_test_raise_diagnostics_in_the_contracts_reason_order(tiny: Path, tmp_path: Path, run_cli) -> None:
    ledger = _ledger(
        tmp_path,
        {"id": "1", "type": "call", "call": "a", "tool": "x"},
        {"id": "2", "type": "done", "call": "a", "ok": True},
        {"id": "3", "type": "call", "call": "a", "tool": "x"},
        {"id": "4", "type": "say", "text": "HELP"},
    )
    code, decision = _plan(run_cli, tiny, ledger)
    assert code == 1
    assert [(d["code"], d["eventId"]) for d in decision["diagnostics"]] == [("twice", "3"), ("shouting", "4")]
    assert decision["rejectionReasons"] == ["odd"]
    assert [(i["key"], i["status"]) for i in decision["items"]] == [("a", "closed"), ("all", "shouted")]


def test_proceeds_when_nothing_is_raised(tiny: Path, tmp_path: Path, run_cli) -> None:
    ledger = _ledger(tmp_path, {"id": "1", "type": "call", "call": "a", "tool": "x"}, {"id": "2", "type": "done", "call": "a", "ok": True})
    code, decision = _plan(run_cli, tiny, ledger)
    assert (code, decision["decision"], decision["replayEventIds"]) == (0, "go", ["1", "2"])


@pytest.mark.parametrize(
    ("rows", "kind"),
    [
        ([{"id": "1", "type": "done", "call": "a", "ok": True}], "corrupt_sequence: a result for no open call"),
        ([{"id": "1", "type": "say"}], "invalid_event: the row lacks a field the contract declares in a say row (string) - at `$.text`"),
        ([{"id": "1", "type": "shout", "text": "x"}], "invalid_event"),
        ([{"id": "1", "type": "say", "text": 3}], "invalid_event: Expected `str`, got `int`"),
    ],
)
def test_corruption_exits_3_naming_the_line(tiny: Path, tmp_path: Path, run_cli, rows: list, kind: str) -> None:
    code, err = _plan(run_cli, tiny, _ledger(tmp_path, *rows))
    assert code == 3
    assert "ledger.jsonl:1:" in err and kind in err


def test_an_expression_that_cannot_judge_a_row_is_exit_2_naming_it(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", CONTRACT.replace("when: row.ok, to: closed", "when: row.ok == (1 / 0 == 1), to: closed"))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 0, out + err
    ledger = _ledger(tmp_path, {"id": "1", "type": "call", "call": "a", "tool": "x"}, {"id": "2", "type": "done", "call": "a", "ok": True})
    code, err = _plan(run_cli, root, ledger)
    assert code == 2
    assert "item calls" in err and "'2'" in err


@pytest.mark.parametrize(
    ("old", "new", "where", "message"),
    [
        ("      - {class: done, from: open, to: broken}\n", "", ":30:", "a row of class done in state open matches no entry"),
        ("from: none, to: open}", "from: none, to: opened}", ":30:", "'opened' is not a declared state"),
        ("at_end: shouting}", "at_end: shout}", ":40:", "'shout' is not a declared diagnostic"),
        ("key: row.call", "key: row.call == \"a\"", ":22:", "an item's key is a string or a number"),
        ("when: row.ok,", "when: row.okay,", ":32:", "okay"),
        ("  id: id\n", "  id: ident\n", ":6:", "rows.id names 'ident'"),
        ("class: loud", "class: quiet", ":42:", "'quiet' is not a declared class"),
        ("    twice: {reason: odd,", "    twice: {reason: strange,", ":50:", "'strange' is not a declared reason"),
        ("      - {class: done, from: open, to: broken}\n", "      - {class: done, from: open, to: broken}\n      - {class: done, from: open, to: closed}\n", ":34:", "never applies: the entry at line 33"),
        ("  reasons:\n", "    lonely: {reason: odd, message: nothing raises it}\n  reasons:\n", ":52:", "diagnostic 'lonely' is declared but nothing raises it"),
        ("    unsettled: a call is unsettled\n", "    unsettled: a call is unsettled\n    idle: no diagnostic gives it\n", ":55:", "reason 'idle' is declared but no diagnostic gives it"),
    ],
)
def test_a_mistake_is_named_at_its_line_and_nothing_is_written(tmp_path: Path, run_cli, old: str, new: str, where: str, message: str) -> None:
    assert old in CONTRACT
    root = _project(tmp_path / "p", CONTRACT.replace(old, new, 1))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2, out + err
    assert f"spec/contract.yaml{where}" in err and message in err, err
    assert not (root / "generated").exists()


def test_a_misspelt_key_of_an_entry_is_said_once_at_the_key(tmp_path: Path, run_cli) -> None:
    # (not first as "{...} is not valid under any of the given schemas": the entry may take several shapes)
    assert "when: row.ok, to: closed" in CONTRACT
    root = _project(tmp_path / "p", CONTRACT.replace("when: row.ok, to: closed", "when: row.ok, too: closed", 1))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2 and "unknown key 'too' (did you mean 'to'?)" in err and "not valid under any" not in err, err
    assert "the spec has 1 error" in err


def test_a_spec_holding_both_languages_is_refused(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p")
    (root / "spec" / "projector.yaml").write_text("initial: absent\n", encoding="utf-8")
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2
    assert "holds both" in err


def test_generate_is_byte_identical_across_hash_seeds(tmp_path: Path) -> None:
    trees = []
    for seed in ("1", "2"):
        root = _project(tmp_path / seed)
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(root), "generate"], check=True, env=env, capture_output=True)
        trees.append({str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "generated").rglob("*")) if p.is_file()})
    assert trees[0] == trees[1]
    assert "generated/resume_contract_generated/language.py" in trees[0]


SCENARIO = """\
scenarios:
  two_calls:
    description: two calls, one settled
    start: {decision: go}
    rows:
      - row: {id: "1", run: r, type: call, call: a, tool: x}
        then: {decision: wait, reasons: [unsettled], items: [calls/a=open]}
      - row: {id: "2", run: r, type: done, call: a, ok: true}
        then: {decision: go, items: [calls/a=closed]}
"""


def test_a_scenario_the_contract_decides_otherwise_is_named_at_its_then(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", CONTRACT + SCENARIO.replace("then: {decision: go, items: [calls/a=closed]}", "then: {decision: go, items: [calls/a=open]}"))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2
    assert "spec/contract.yaml:63:15: after row 2 (id '2') the contract decides go [] items ['calls/a=closed'], the scenario says go [] items ['calls/a=open']" in err
    assert not (root / "generated").exists()


def test_a_scenario_row_the_model_refuses_is_named_at_the_row(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", CONTRACT + SCENARIO.replace('{id: "2", run: r, type: done,', '{id: "2", run: r, type: dnoe,'))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2
    assert "spec/contract.yaml:62:14: row 2 (id '2') is not a row the contract reads (" in err and "dnoe" in err, err
    root = _project(tmp_path / "q", CONTRACT + SCENARIO.replace("then: {decision: go, items: [calls/a=closed]}", "then: {corrupt: true}").replace(
        '{id: "2", run: r, type: done,', '{id: "2", run: r, type: dnoe,'))
    assert run_cli("--root", str(root), "generate")[0] == 0  # (a scenario may say such a row is corrupt)


def test_a_scenario_of_two_runs_is_refused(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", CONTRACT + SCENARIO.replace('{id: "2", run: r,', '{id: "2", run: q,'))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2
    assert "a scenario's rows are one run's" in err


def test_crash_kills_a_child_at_each_prefix_and_fails_when_a_reading_is_wrong(tmp_path: Path, run_cli, monkeypatch) -> None:
    root = _project(tmp_path / "p", CONTRACT + SCENARIO)
    assert run_cli("--root", str(root), "generate")[0] == 0
    assert (root / "generated" / "tests" / "test_contract.py").is_file()
    code, out, err = run_cli("--root", str(root), "crash")
    assert code == 0, out + err
    assert out.count("ok   two_calls") == 5  # 3 prefixes after SIGKILL, 2 with the next row torn
    assert "torn next row: refused (torn_row); after repair: wait [unsettled]" in out
    from resume_contract.crash import language_crash

    monkeypatch.setattr(language_crash, "outcome_of", lambda ledger, module: {"decision": "go", "reasons": [], "items": []})
    code, out, err = run_cli("--root", str(root), "crash")
    assert code == 1
    assert "FAIL two_calls after 1 row(s), SIGKILL: go" in out


def test_a_workspace_is_read_by_the_contracts_layout(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", CONTRACT.replace("  partial: partial\n", "  partial: partial\n  layout: runs/{run}.jsonl\n"))
    assert run_cli("--root", str(root), "generate")[0] == 0
    workspace = tmp_path / "ws"
    (workspace / "runs").mkdir(parents=True)

    def run(name: str, *rows: dict) -> None:
        (workspace / "runs" / f"{name}.jsonl").write_text("".join(json.dumps({"run": name, **row}) + "\n" for row in rows), encoding="utf-8")

    run("a", {"id": "1", "type": "say", "text": "hi"})
    run("b", {"id": "1", "type": "call", "call": "c", "tool": "x"})
    run("c", {"id": "1", "type": "done", "call": "c", "ok": True})
    (workspace / "runs" / "d.jsonl").write_text(json.dumps({"run": "a", "id": "1", "type": "say", "text": "x"}) + "\n", encoding="utf-8")
    (workspace / "runs" / "e.jsonl").symlink_to(workspace / "runs" / "a.jsonl")
    (workspace / "notes.txt").write_text("not a run\n", encoding="utf-8")
    code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace))
    assert code == 3, out + err
    assert out.splitlines() == [
        "wait       b: unsettled",
        "corrupt    c: " + str(workspace / "runs" / "c.jsonl") + ":1: byte offset 0: corrupt_sequence: a result for no open call (item calls, key 'c', in state none, a row of class done)",
        "corrupt    d: " + str(workspace / "runs" / "d.jsonl") + ":1: byte offset 0: foreign_row: the row belongs to run run 'a', the file's place in the workspace belongs to run 'd'",
        "unreadable e: " + str(workspace / "runs" / "e.jsonl") + ": a symlink where a run's rows belong: refused, never followed",
        "5 runs: 1 go, 1 wait, 2 corrupt, 1 unreadable",
    ]
    code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace), "--run", "b", "--json")
    assert (code, json.loads(out)["rejectionReasons"]) == (1, ["unsettled"])
    for args, message in (
        (["--run", "../a"], "cannot name a file in the workspace"),
        (["--run", "e"], "a symlink where a run's rows belong"),
        (["--run", "zz"], "no such ledger"),
        (["--session", "s", "--run", "a"], "named by run alone"),
        (["--run", "a", "--expected-high-water", "1"], "declares no offset check (decision.offset_mismatch"),
    ):
        code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace), *args)
        assert code == 2 and message in err, (args, err)


def test_a_workspace_needs_a_layout_and_a_layout_names_each_run_field(tiny: Path, tmp_path: Path, run_cli) -> None:
    code, out, err = run_cli("--root", str(tiny), "plan", "--workspace", str(tmp_path))
    assert code == 2 and "declares no layout (rows.layout" in err
    for layout, message in (("runs/x.jsonl", "must match"), ("{id}/{run}.jsonl", "names each run field once"), ("../{run}.jsonl", "relative path inside the workspace")):
        root = _project(tmp_path / layout.replace("/", "_"), CONTRACT.replace("  partial: partial\n", f"  partial: partial\n  layout: \"{layout}\"\n"))
        code, out, err = run_cli("--root", str(root), "generate")
        assert code == 2 and "spec/contract.yaml:10:" in err and message in err, err


def test_contract_md_shows_hostile_text_as_text(tmp_path: Path, run_cli) -> None:
    hostile = "a | b [x](https://evil.example) `code` <b>bold</b>"
    root = _project(tmp_path / "p", CONTRACT.replace("message: a call has no result", f"message: \"{hostile}\"").replace("summary: A frozen contract for the language's own tests.", "summary: \"# not a heading\""))
    assert run_cli("--root", str(root), "generate")[0] == 0
    document = (root / "generated" / "CONTRACT.md").read_text(encoding="utf-8")
    assert "a \\| b \\[x\\](https://evil.example) \\`code\\` &lt;b>bold&lt;/b>" in document
    assert "\n# not a heading" not in document and "[x](https" not in document


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("    call: {description: a call,", "    call_: {description: a twin, fields: {}}\n    call: {description: a call,", "kinds 'call_' and 'call' both become the struct CallRow"),
        ("    say: {description: text,", "    any: {description: any, fields: {}}\n    say: {description: text,", "'any' is the class of every row"),
        ("text: {type: string, description: text}", "Any: {type: string, optional: true, description: x}, text: {type: string, description: text}", "'Any' cannot be a field's name"),
        ("      none: {description: none}", "      none: {description: none, status: none, at_end: open_call}", "the initial state is where an item is before any row moves it"),
    ],
)
def test_names_the_generated_model_cannot_hold_are_refused(tmp_path: Path, run_cli, old: str, new: str, message: str) -> None:
    assert old in CONTRACT
    root = _project(tmp_path / "p", CONTRACT.replace(old, new, 1))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2 and "spec/contract.yaml:" in err and message in err, err
    assert not (root / "generated").exists()


def test_the_contracts_name_never_becomes_code(tmp_path: Path, run_cli) -> None:
    marker = tmp_path / "PWNED"
    name = f'x"""; __import__("pathlib").Path({str(marker)!r}).touch(); """'
    root = _project(tmp_path / "p", CONTRACT.replace("name: tiny", f"name: {json.dumps(name)}").replace("phase: Phase 0", f"phase: {json.dumps(name)}"))
    assert run_cli("--root", str(root), "generate")[0] == 0
    code, out, err = run_cli("--root", str(root), "plan", str(_ledger(tmp_path, {"id": "1", "type": "say", "text": "hi"})), "--json")
    assert code == 0 and json.loads(out)["contract"]["name"] == name
    assert not marker.exists()


def test_a_key_of_free_json_must_be_a_string_or_a_number(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", CONTRACT.replace("call: {type: string, description: id}", "call: {type: json, description: id}"))
    assert run_cli("--root", str(root), "generate")[0] == 0
    ledger = _ledger(tmp_path, {"id": "1", "type": "call", "call": 1, "tool": "x"}, {"id": "2", "type": "done", "call": True, "ok": True})
    code, out, err = run_cli("--root", str(root), "plan", str(ledger))
    assert code == 2 and "a key is a string or a number, not a boolean" in err, out + err
    code, out, err = run_cli("--root", str(root), "plan", str(_ledger(tmp_path, {"id": "1", "type": "call", "call": {"a": 1}, "tool": "x"})))
    assert code == 2 and "not a map" in err


def test_an_id_holding_a_lone_surrogate_is_written_escaped(tiny: Path, tmp_path: Path, run_cli) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text('{"id":"\\ud800","run":"r","type":"say","text":"hi"}\n', encoding="utf-8")
    code, out, err = run_cli("--root", str(tiny), "plan", str(ledger), "--json")
    assert code == 0, err
    assert '"replayEventIds":["\\ud800"]' in out


def test_check_run_oracle_says_verify_holds_a_language_contract_to_its_oracle(tiny: Path, run_cli) -> None:
    code, out, err = run_cli("--root", str(tiny), "check", "--run-oracle")
    assert code == 2 and "resume-contract verify" in err


def test_diff_reads_a_language_contract_at_git_revisions_and_sees_a_key_change(tmp_path: Path, run_cli) -> None:
    base = CONTRACT.replace("      - {class: call, from: [open, closed, broken], anomaly: twice}\n", "      - {class: call, from: [open, closed, broken], to: open}\n").replace(
        "    twice: {reason: odd, message: a call id twice}\n", "")  # (a diagnostic nothing raises is refused)
    root = _project(tmp_path / "repo", base)
    assert run_cli("--root", str(root), "generate")[0] == 0

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-q", "-m", "base")
    (root / "spec" / "contract.yaml").write_text(base.replace("key: row.call", "key: row.run"), encoding="utf-8")
    assert run_cli("--root", str(root), "generate")[0] == 0
    git("commit", "-q", "-am", "one item for every call")
    code, out, err = run_cli("--root", str(root), "diff", "main~1", "main", "--fail-on", "weakens-safety")
    assert code == 1, out + err
    assert "weakens-safety  LANGUAGE_ITEM_CHANGED: item 'calls' changed: key `row.call` -> `row.run`" in out


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ('{"id":"1","run":"r","type":"say","text":"a","text":"b"}', "duplicate_key"),
        ('{"id":"1","run":"r","type":"call","call":"c","tool":"x","x":{"a":1,"a":2}}', "duplicate_key"),
        ('{"id":"1","run":"r","type":"say","text":NaN}', "invalid_json"),
        ('{"id":"1","run":"r","type":"say","text":"a","n":1e999}', "invalid_json"),
        ('[1,2]', "invalid_event"),
        ('', "invalid_json"),
        ('{"id":"1","run":"r","type":"say","text":"a"} trailing', "invalid_json"),
    ],
)
def test_a_row_that_is_no_json_object_of_the_model_is_corruption(tiny: Path, tmp_path: Path, run_cli, line: str, kind: str) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text(line + "\n", encoding="utf-8")
    code, out, err = run_cli("--root", str(tiny), "plan", str(ledger))
    assert code == 3 and f"ledger.jsonl:1: byte offset 0: {kind}:" in err, err


@pytest.mark.parametrize(("group", "code"), [("anomaly: twice", 1), ("corrupt: a loud row is no row", 3)])
def test_a_row_in_two_classes_of_an_exclusive_group_is_its_anomaly_or_corruption(tmp_path: Path, run_cli, group: str, code: int) -> None:
    root = _project(tmp_path / "p", CONTRACT.replace("items:\n", f"exclusive:\n  - {{classes: [loud, say], {group}}}\nitems:\n", 1))
    assert run_cli("--root", str(root), "generate")[0] == 0
    got, out, err = run_cli("--root", str(root), "plan", str(_ledger(tmp_path, {"id": "1", "type": "say", "text": "hi"})), "--json")
    assert got == 0, out + err  # (a quiet row is in one class of the group)
    got, out, err = run_cli("--root", str(root), "plan", str(_ledger(tmp_path, {"id": "1", "type": "say", "text": "HELP"})), "--json")
    assert got == code, out + err
    if code == 1:
        assert [d["code"] for d in json.loads(out)["diagnostics"]][:1] == ["twice"]
    else:
        assert "corrupt_sequence: a loud row is no row (a row of the classes loud, say, which exclude each other)" in err


def test_an_exclusive_group_names_classes_and_a_declared_diagnostic(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", CONTRACT.replace("items:\n", "exclusive:\n  - {classes: [loud, quiet], anomaly: nope}\nitems:\n", 1))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 2 and "'quiet' is no class a group can hold" in err and "'nope' is not a declared diagnostic" in err


def test_repair_moves_a_torn_tail_aside_and_reads_the_rest_with_the_contract(tiny: Path, tmp_path: Path, run_cli) -> None:
    ledger = tmp_path / "torn.jsonl"
    ledger.write_text('{"id":"1","run":"r","type":"say","text":"hi"}\n{"id":"2","run":"r","ty', encoding="utf-8")
    code, out, err = run_cli("--root", str(tiny), "repair", str(ledger))
    assert code == 0, out + err
    assert run_cli("--root", str(tiny), "plan", str(ledger))[0] == 0
    still = tmp_path / "still.jsonl"
    still.write_text('{"id":"1","run":"r","type":"done","call":"a","ok":true}\n{"id":"2","run":"r","ty', encoding="utf-8")
    code, out, err = run_cli("--root", str(tiny), "repair", str(still))
    assert code == 3 and "still corrupt" in err and "corrupt_sequence" in err


def test_a_command_that_runs_only_the_catalogues_contracts_says_which_do(tiny: Path, tmp_path: Path, run_cli) -> None:
    code, out, err = run_cli("--root", str(tiny), "recover", "--workspace", str(tmp_path))
    assert code == 2 and "not one in the contract language" in err and "plan, fit, repair, crash, verify" in err


def test_checks_over_the_whole_prefix_raise_their_diagnostics_after_the_items(tmp_path: Path, run_cli) -> None:
    checks = (
        "  checks:\n"
        "    - {when: 'size(events) > 0 && last(events).type == \"call\"', raise: shouting}\n"
        "    - {when: 'items.calls.exists(c, c.status == \"broken\")', raise: twice}\n"
    )
    root = _project(tmp_path / "p", CONTRACT.replace("  diagnostics:\n", checks + "  diagnostics:\n", 1))
    code, out, err = run_cli("--root", str(root), "generate")
    assert code == 0, out + err
    ledger = _ledger(tmp_path, {"id": "1", "type": "call", "call": "a", "tool": "x"}, {"id": "2", "type": "done", "call": "a", "ok": False})
    code, out, err = run_cli("--root", str(root), "plan", str(ledger), "--json")
    decision = json.loads(out)
    assert (code, [d["code"] for d in decision["diagnostics"]], decision["rejectionReasons"]) == (1, ["twice"], ["odd"])
    ledger = _ledger(tmp_path, {"id": "1", "type": "call", "call": "a", "tool": "x"})
    code, out, err = run_cli("--root", str(root), "plan", str(ledger), "--json")
    assert [d["code"] for d in json.loads(out)["diagnostics"]] == ["open_call", "shouting"]
    wrong = _project(tmp_path / "w", CONTRACT.replace("  diagnostics:\n", "  checks:\n    - {when: 'events.nope', raise: nope}\n  diagnostics:\n", 1))
    code, out, err = run_cli("--root", str(wrong), "generate")
    assert code == 2 and "'nope' is not a declared diagnostic" in err


def test_the_audit_reads_each_run_apart_and_refuses_what_is_no_run_file(tmp_path: Path, run_cli) -> None:
    import os

    layout = CONTRACT.replace("  partial: partial\n", "  partial: partial\n  layout: \"{run}.jsonl\"\n").replace(
        "  diagnostics:\n", "  checks:\n    - {when: 'size(events) > 1 && 1 / (size(events) - 2) > 0', raise: twice}\n  diagnostics:\n", 1
    )
    root = _project(tmp_path / "p", layout)
    assert run_cli("--root", str(root), "generate")[0] == 0
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name, rows in (("a", 1), ("b", 2), ("c", 3)):
        (workspace / f"{name}.jsonl").write_text("".join(json.dumps({"id": str(i), "run": name, "type": "say", "text": "x"}) + "\n" for i in range(rows)), encoding="utf-8")
    os.mkfifo(workspace / "f.jsonl")
    (workspace / "d.jsonl").mkdir()
    code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace), "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 2, out + err
    assert [(line["run"], line["outcome"]) for line in lines[:-1]] == [("a", "proceed"), ("b", "undecided"), ("c", "stop"), ("d", "unreadable"), ("f", "unreadable")]
    assert lines[-1]["summary"] == {"proceed": 1, "stop": 1, "corrupt": 0, "unreadable": 2, "undecided": 1}
    assert lines[-1]["words"] == {"proceed": "go", "stop": "wait"}
    for args, message in ((["--run", ""], "--run is empty"),):
        code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace), *args)
        assert code == 2 and message in err, err


def test_a_run_is_never_read_through_a_symlinked_directory_nor_a_value_read_as_a_field(tmp_path: Path, run_cli) -> None:
    two = CONTRACT.replace("  run: [run]\n", "  run: [run, id]\n").replace("  partial: partial\n", "  partial: partial\n  layout: \"{run}/{id}.jsonl\"\n")
    root = _project(tmp_path / "p", two)
    assert run_cli("--root", str(root), "generate")[0] == 0
    elsewhere, workspace = tmp_path / "elsewhere", tmp_path / "ws"
    elsewhere.mkdir()
    workspace.mkdir()
    (elsewhere / "1.jsonl").write_text(json.dumps({"id": "1", "run": "L", "type": "say", "text": "x"}) + "\n", encoding="utf-8")
    (workspace / "L").symlink_to(elsewhere)
    code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace), "--run", "L/1")
    assert code == 2 and "is a symlink where the workspace's runs belong" in err
    code, out, err = run_cli("--root", str(root), "plan", "--workspace", str(workspace), "--run", "{id}/1")
    assert code == 2 and "no such ledger" in err and "{id}" in err


def test_a_report_that_cannot_read_the_opening_row_is_null_and_never_stops_the_decision(tmp_path: Path, run_cli) -> None:
    root = _project(tmp_path / "p", CONTRACT.replace("    key: row.call\n", "    key: row.call\n    report: {n: 'size(row.tool) / (size(row.tool) - 1)'}\n"))
    assert run_cli("--root", str(root), "generate")[0] == 0
    ledger = _ledger(tmp_path, {"id": "1", "type": "call", "call": "a", "tool": "x"}, {"id": "2", "type": "done", "call": "a", "ok": True})
    code, out, err = run_cli("--root", str(root), "plan", str(ledger), "--json")
    assert code == 0, err
    assert json.loads(out)["items"][0]["report"] == {"n": None}
