"""A review that cannot be fooled (issue 53): the explorer looks where the contract looks, classes come from what
decisions do, and every finding shows a ledger with its class.

The contracts are three teams' own, in tests/review_explorer/ (frozen: a contract edit of spec/ moves nothing here):
retries.yaml (a tool call's `attempt`), rollouts.yaml (Codex CLI rollouts: the kind nested in `payload`) and
histories.yaml (Temporal histories: an activity's events name its schedule row inside their attribute objects).
Each pull request below read "neutral, no explored ledger decides differently" on 876d4c8; each witness ledger is
then planned for real, with `plan`, under both sides: the review's claim is checked by the command users run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "review_explorer"
SCHEMA = Path(__file__).resolve().parent.parent / "examples" / "other-runtime" / "spec" / "schema" / "contract.schema.json"
OTHER_RUNTIME = Path(__file__).resolve().parent.parent / "examples" / "other-runtime"


def _project(where: Path, contract: str, text: str | None = None, run_cli=None) -> Path:
    (where / "spec" / "schema").mkdir(parents=True)
    (where / "spec" / "contract.yaml").write_text(text if text is not None else (HERE / f"{contract}.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    shutil.copyfile(SCHEMA, where / "spec" / "schema" / "contract.schema.json")
    oracle = HERE / f"{contract}_oracle.py"
    if oracle.exists():
        shutil.copyfile(oracle, where / "oracle.py")
    if run_cli is not None:
        code, out, err = run_cli("--root", str(where), "generate")
        assert code == 0, out + err
    return where


def _edited(contract: str, *pairs: str) -> str:
    text = (HERE / f"{contract}.yaml").read_text(encoding="utf-8")
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert old in text, old
        text = text.replace(old, new)
    return text


def _review(run_cli, tmp_path: Path, contract: str, *pairs: str) -> tuple[int, dict, Path, Path]:
    base = _project(tmp_path / "base", contract, run_cli=run_cli)
    head = _project(tmp_path / "head", contract, _edited(contract, *pairs), run_cli=run_cli)
    code, out, err = run_cli("--root", str(head), "diff", str(base), str(head), "--format", "json", "--fail-on", "weakens-safety")
    assert code in (0, 1), out + err
    return code, json.loads(out), base, head


def _planned(run_cli, root: Path, tmp_path: Path, ledger: dict) -> int:
    path = tmp_path / "witness.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ledger["events"]), encoding="utf-8")
    return run_cli("--root", str(root), "plan", str(path))[0]


def _witness(review: dict, effect: str) -> dict:
    return next(ledger for ledger in review["evidence"]["ledgers"] if ledger["effect"] == effect)


def test_raising_a_guards_constant_weakens_safety_with_a_ledger_between_the_two(tmp_path: Path, run_cli) -> None:
    # `row.attempt > 1` refused a call retried more than once; `> 9` lets attempts 2 to 9 through. The explorer
    # tried 0 and 1 only: "1 neutral". It now tries each constant of both sides and its neighbours.
    code, review, base, head = _review(run_cli, tmp_path, "retries", "row.attempt > 1", "row.attempt > 9")
    assert code == 1 and review["verdict"] == "weakens-safety"
    witness = _witness(review, "weakens-safety")
    attempts = [row["attempt"] for row in witness["events"] if row["type"] == "tool_call"]
    assert attempts and all(1 < attempt <= 9 for attempt in attempts), witness
    assert witness["base"]["refused"].startswith("corrupt") and not witness["head"].get("refused")
    assert _planned(run_cli, base, tmp_path, witness) == 3 and _planned(run_cli, head, tmp_path, witness) in (0, 1)


def test_a_weakening_of_rows_whose_kind_is_nested_in_payload_is_found(tmp_path: Path, run_cli) -> None:
    # Codex CLI rollouts: `{"type": "response_item", "payload": {"type": "function_call", ...}}`. A pull request lets
    # unanswered write_stdin calls resume; the explorer held `payload` as one plain value and never built a call:
    # "neutral".
    code, review, base, head = _review(run_cli, tmp_path, "rollouts", "      - {class: function_call, from: none, to: open}\n",
                                       "      - {class: function_call, from: none, when: 'row.payload.name == \"write_stdin\"', to: answered}\n"
                                       "      - {class: function_call, from: none, to: open}\n")
    assert code == 1 and review["verdict"] == "weakens-safety", review["changes"]
    witness = _witness(review, "weakens-safety")
    calls = [row["payload"] for row in witness["events"] if isinstance(row.get("payload"), dict) and row["payload"].get("type") == "function_call"]
    assert calls and calls[0].get("name") == "write_stdin", witness  # (a call built inside payload, as the runtime writes it)
    assert _planned(run_cli, base, tmp_path, witness) == 1 and _planned(run_cli, head, tmp_path, witness) == 0


def test_switching_off_the_unanswered_call_rule_of_nested_rows_weakens_safety(tmp_path: Path, run_cli) -> None:
    # Every call made answered at once: the open state is never entered (its diagnostic declared, raised by nothing
    # reachable), and the scenario that said stop after the call now says resume.
    code, review, base, head = _review(run_cli, tmp_path, "rollouts",
                                       "      - {class: function_call, from: none, to: open}\n", "      - {class: function_call, from: none, to: answered}\n",
                                       "        then: {decision: stop, reasons: [unanswered]}", "        then: {decision: resume}",
                                       "      - {class: function_call_output, from: open, to: answered}\n", "      - {class: function_call_output, from: [open, answered], to: answered}\n",
                                       "      - {class: function_call_output, from: [none, answered], corrupt", "      - {class: function_call_output, from: [none], corrupt")
    assert code == 1 and review["verdict"] == "weakens-safety"
    explored = [ledger for ledger in review["evidence"]["ledgers"] if ledger["effect"] == "weakens-safety" and not ledger["label"].startswith("scenario")]
    assert explored, "only the scenario showed it: the explorer must build the call itself"
    assert _planned(run_cli, base, tmp_path, explored[0]) == 1 and _planned(run_cli, head, tmp_path, explored[0]) == 0
    scenario = [change for change in review["changes"] if change["rule"] == "LANGUAGE_SCENARIO_CHANGED"]
    assert scenario and scenario[0]["class"] == "weakens-safety" and "after row 2: stop [unanswered] -> resume" in scenario[0]["message"]


def test_temporal_histories_a_weakening_and_a_tightening_each_get_their_class(tmp_path: Path, run_cli) -> None:
    # Temporal: an activity's start names its schedule row by `scheduledEventId` inside its attribute object.
    # Explored attribute objects were null or "v": no explored history held a started activity, and both pull
    # requests read "neutral".
    weakening = ("      - {class: activity_task_started, from: scheduled, to: started}", "      - {class: activity_task_started, from: scheduled, to: completed}",
                 "        then: {decision: hold, reasons: [in_doubt], items: [activities/2=started]}", "        then: {decision: resume, items: [activities/2=completed]}",
                 "        then: {decision: hold, reasons: [in_doubt], items: [activities/1=started]}", "        then: {decision: resume, items: [activities/1=completed]}",
                 "        then: {decision: resume, items: [activities/1=failed]}", "        then: {corrupt: true}",
                 "      - {class: activity_task_completed, from: started, to: completed}", "      - {class: activity_task_completed, from: [started, completed], to: completed}",
                 "      - {class: activity_task_completed, from: [none, scheduled, completed, failed], corrupt", "      - {class: activity_task_completed, from: [none, scheduled, failed], corrupt")
    code, review, base, head = _review(run_cli, tmp_path / "weaker", "histories", *weakening)
    assert code == 1 and review["verdict"] == "weakens-safety", review["changes"]
    explored = [ledger for ledger in review["evidence"]["ledgers"] if ledger["effect"] == "weakens-safety" and not ledger["label"].startswith("scenario")]
    assert explored, "only the scenarios showed it: the explorer must link a start to its schedule row"
    started = [row for row in explored[0]["events"] if row["eventType"] == "activity_task_started"]
    scheduled = [row["eventId"] for row in explored[0]["events"] if row["eventType"] == "activity_task_scheduled"]
    assert started and started[0]["activityTaskStartedEventAttributes"]["scheduledEventId"] in scheduled  # (ids as the runtime writes them)
    assert _planned(run_cli, base, tmp_path, explored[0]) == 1 and _planned(run_cli, head, tmp_path, explored[0]) == 0
    tightening = ('scheduled: {description: "scheduled, not started (nothing ran)", status: scheduled}',
                  'scheduled: {description: "scheduled, not started (nothing ran)", status: scheduled, at_end: activity_in_doubt}',
                  "        then: {decision: resume, items: [activities/2=scheduled]}", "        then: {decision: hold, reasons: [in_doubt], items: [activities/2=scheduled]}",
                  "        then: {decision: resume, items: [activities/1=scheduled]}", "        then: {decision: hold, reasons: [in_doubt], items: [activities/1=scheduled]}")
    code, review, _, _ = _review(run_cli, tmp_path / "tighter", "histories", *tightening)
    assert code == 0 and review["verdict"] == "tightens", review["changes"]
    assert all(ledger["effect"] == "tightens" for ledger in review["evidence"]["ledgers"])


def _never_blocks(contract: str) -> str:
    word = {"other-runtime": "replayable", "rollouts": "resume", "histories": "resume"}[contract]
    return f"def decide(rows):\n    return {{'decision': {word!r}, 'reasons': []}}\n"


@pytest.mark.parametrize("contract", ["other-runtime", "rollouts", "histories"])
def test_verify_fails_an_oracle_that_never_blocks(tmp_path: Path, run_cli, contract: str) -> None:
    if contract == "other-runtime":
        project = tmp_path / "project"
        shutil.copytree(OTHER_RUNTIME, project, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        project = _project(tmp_path / "project", contract, run_cli=run_cli)
        code, out, err = run_cli("--root", str(project), "verify", "--depth", "2")
        assert code == 0, out + err  # (the team's own oracle agrees, ids written as the runtime writes them)
    (project / "oracle.py").write_text(_never_blocks(contract), encoding="utf-8")
    code, out, err = run_cli("--root", str(project), "verify", "--depth", "2", "--counterexample", str(tmp_path / "smallest.jsonl"))
    assert code == 1 and "FAILED:" in out, out + err


def test_verify_fails_a_temporal_oracle_that_drops_the_unfinished_activity_rule(tmp_path: Path, run_cli) -> None:
    project = _project(tmp_path / "project", "histories", run_cli=run_cli)
    oracle = (project / "oracle.py").read_text(encoding="utf-8")
    dropped = oracle.replace('reasons = ["in_doubt"] if "started" in activities.values() else []', "reasons = []")
    assert dropped != oracle
    (project / "oracle.py").write_text(dropped, encoding="utf-8")
    code, out, err = run_cli("--root", str(project), "verify", "--depth", "2", "--counterexample", str(tmp_path / "smallest.jsonl"))
    assert code == 1 and "decided apart" in out and "activity_task_started" in out, out + err


def test_verify_fails_a_recovery_oracle_that_never_blocks_for_the_packaged_contract(tmp_path: Path, run_cli) -> None:
    # The catalogue's contract (an init project: the packaged contract and its own oracle): an oracle replaying
    # everything is found.
    project = tmp_path / "project"
    code, out, err = run_cli("init", str(project))
    assert code == 0, out + err
    oracle = project / "oracle.py"
    oracle.write_text(oracle.read_text(encoding="utf-8") + "\n\nimport dataclasses as _dataclasses\n_decide = decide\n\n\n"
                      "def decide(rows, expected_high_water=None):\n"
                      "    return _dataclasses.replace(_decide(rows, expected_high_water), disposition='safe_replay')\n", encoding="utf-8")
    code, out, err = run_cli("--root", str(project), "verify", "--depth", "1", "--counterexample", str(tmp_path / "smallest.jsonl"))
    assert code == 1 and "VIOLATION matches_oracle" in out, out + err


@pytest.mark.slow  # materialises a gallery step and reviews it: CI runs it, the edit loop (-m 'not slow') does not
def test_a_dispatch_hashed_another_way_weakens_safety_with_a_call_whose_arguments_tell_the_ways_apart(tmp_path: Path, run_cli, gallery_step) -> None:
    # A user's trial (issue 56): the packaged contract's switch from sha256_json to sha256(json_mainline_v1(...)) read
    # "neutral, none of the 69845 ledgers decides otherwise": every explored call had the arguments {}, which every
    # canonical encoding writes alike. The explorers now also write a call whose arguments they write apart
    # (array-index keys, __proto__, required/enum arrays), and a dispatch agreeing with it under each side. (The base,
    # hashing with sha256_json, is reviewed from its spec alone: its own generate now fails the packaged oracle, which
    # hashes as maka does, on exactly that call.)
    head = gallery_step("06-recovery-facts")
    mainline = 'sha256(json_mainline_v1({"toolName": call.name, "args": call.args}))'
    shutil.copytree(head / "spec", tmp_path / "base" / "spec")
    projector = tmp_path / "base" / "spec" / "projector.yaml"
    text = projector.read_text(encoding="utf-8")
    assert mainline in text
    projector.write_text(text.replace(mainline, 'sha256_json({"toolName": call.name, "args": call.args})'), encoding="utf-8")
    code, out, err = run_cli("--root", str(head), "diff", str(tmp_path / "base" / "spec"), str(head / "spec"), "--format", "json", "--fail-on", "weakens-safety")
    review = json.loads(out)
    assert code == 1 and review["summary"]["weakens-safety"] >= 1, out + err
    witness = _witness(review, "weakens-safety")
    call = next(row["content"] for row in witness["events"] if row.get("content", {}).get("kind") == "function_call")
    assert {"10", "9", "__proto__", "required"} <= set(call["args"]), witness
    # The witness, planned for real under the head, decides as the review says it does there.
    path = tmp_path / "witness.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in witness["events"]), encoding="utf-8")
    code, out, err = run_cli("--root", str(head), "plan", str(path), "--format", "json")
    plan = json.loads(out)
    assert witness["base"]["toVerify"] == ["a"] and witness["head"]["toVerify"] == [], witness  # the call's operation: in doubt -> corrupt
    assert (plan["disposition"], plan["requiresVerification"]) == (witness["head"]["disposition"], False), plan
    assert [operation["status"] for operation in plan["operations"]] == ["corruption"], plan
