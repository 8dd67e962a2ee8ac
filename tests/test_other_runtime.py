"""examples/other-runtime: a contract for a runtime whose rows are not maka's, written in the contract language
alone (issue 40). Its sample ledgers decide as examples/other-runtime/expected.json says, which was written by hand
from the contract's prose, never by running the tool; its generated/ is what its spec renders to."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "other-runtime"
EXPECTED = json.loads((EXAMPLE / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example project (a plan remembers verdicts; nothing is written into the checkout)."""
    copy = tmp_path_factory.mktemp("other-runtime") / "project"
    shutil.copytree(EXAMPLE, copy)
    return copy


def test_the_examples_generated_tree_is_what_its_spec_renders_to(example: Path, run_cli) -> None:
    code, out, err = run_cli("--root", str(example), "check")
    assert code == 0, out + err


def _shown(decision: dict) -> dict:
    return {
        "exit": 0 if decision["proceeds"] else 1,
        "decision": decision["decision"],
        "reasons": decision["rejectionReasons"],
        "items": [f"{item['item']}/{item['key']}={item['status']}" for item in decision["items"]],
        "replay": decision["replayEventIds"],
    }


@pytest.mark.parametrize("ledger", sorted(EXPECTED["ledgers"]))
def test_each_sample_ledger_decides_as_the_contract_says(example: Path, ledger: str, run_cli) -> None:
    expected = EXPECTED["ledgers"][ledger]
    code, out, err = run_cli("--root", str(example), "plan", str(example / "ledgers" / ledger), "--json")
    assert code == expected["exit"], out + err
    if "corruption" in expected:
        document = json.loads(out)  # (a document for every outcome: a script reads what is corrupt, and where)
        assert document["outcome"] == "corrupt" and document["proceeds"] is False and expected["corruption"] in out
        assert expected["corruption"] in err
        assert f"{ledger}:" in err  # named at its line
        return
    decision = json.loads(out)
    assert _shown(decision) | {"exit": code} == expected
    assert decision["contract"]["name"] == "other-runtime"


def test_the_text_decision_says_which_item_and_why(example: Path, run_cli) -> None:
    code, out, _ = run_cli("--root", str(example), "plan", str(example / "ledgers" / "in-doubt-and-waiting.jsonl"))
    assert code == 1
    assert "decision:      halt (action_in_doubt, awaiting_input)" in out
    assert "actions 'a1' (tool: calendar_read): in_doubt (opened at e3)" in out
    assert out.splitlines()[-2].startswith("next:          do not replay the run as it stands")
    assert "awaiting_input (interrupts 'i1', at e2): an interrupt awaits its resume" in out


def test_the_examples_generated_tests_pass_as_its_ci_runs_them(example: Path) -> None:
    """`pytest generated/tests` in the example: its scenarios decided in-process, after SIGKILL, and torn."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "generated/tests"], cwd=example, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]  # (a test's name may hold "failed": failed_read)
    assert " passed" in summary and "failed" not in summary, done.stdout


def test_the_example_is_init_language_and_a_yaml_edit(tmp_path: Path, run_cli) -> None:
    """A team whose runtime is not maka's: `init --language`, then spec/contract.yaml edited (here: replaced by the
    example's) and `generate`: the project is the example, byte for byte, and nothing else was needed."""
    project = tmp_path / "mine"
    code, out, err = run_cli("init", "--language", str(project))
    assert code == 0, out + err
    assert "init --language" not in err and "$EDITOR spec/contract.yaml" in out
    shutil.copyfile(EXAMPLE / "spec" / "contract.yaml", project / "spec" / "contract.yaml")
    code, out, err = run_cli("--root", str(project), "generate")
    assert code == 0, out + err
    made = {str(p.relative_to(project)): p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file() and "generated" in p.parts or p.parent.name == "schema"}
    example = {str(p.relative_to(EXAMPLE)): p.read_bytes() for p in sorted(EXAMPLE.rglob("*")) if p.is_file() and "generated" in p.parts or p.parent.name == "schema"}
    assert made == example


def test_the_starter_of_init_language_holds_its_own_scenario(tmp_path: Path, run_cli) -> None:
    import subprocess
    import sys

    project = tmp_path / "starter"
    assert run_cli("init", "--language", str(project))[0] == 0
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file()) == [
        ".gitattributes", ".github/workflows/contract.yml", ".pre-commit-config.yaml", "generated/CONTRACT.md",
        "generated/resume_contract_generated/__init__.py", "generated/resume_contract_generated/language.py",
        "generated/resume_contract_generated/py.typed", "generated/tests/test_contract.py", "spec/README.md",
        "spec/contract.yaml", "spec/schema/contract.schema.json",
    ]
    assert run_cli("--root", str(project), "check")[0] == 0
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "generated/tests"], cwd=project, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    code, out, err = run_cli("init", "--language", str(project))
    assert code == 1 and "already holds" in err


def test_verify_finds_the_contract_and_its_oracle_alike(example: Path, run_cli) -> None:
    code, out, err = run_cli("--root", str(example), "verify", "--depth", "3")
    assert code == 0, out + err
    assert "explored 1,464 ledgers up to 3 rows" in out  # 11 letters: 1 + 11 + 121 + 1331
    assert "the contract and its oracle decide every one alike" in out


@pytest.mark.parametrize(
    ("old", "new", "smallest"),
    [
        # an oracle that forgets interrupts: the smallest ledger it decides apart is one interrupt (a row as the
        # scenarios write one: the explorer starts from the contract's own rows)
        ('    if "waiting" in interrupts.values():\n        reasons.append("awaiting_input")\n', "",
         '{"interrupt_id":"i1","kind":"interrupt","reason":"approval","thread":"r","event_id":"e1"}'),
        # an oracle that takes an observation of no action as settled, not corrupt
        ('            if actions.get(row["action_id"]) != "in_doubt":\n                return {"corrupt": True}\n', "", '{"action_id":"a1","error":null,"kind":"observation","output":"201","thread":"r","event_id":"e1"}'),
    ],
)
def test_verify_fails_when_the_oracle_is_wrong_naming_the_smallest_ledger(tmp_path: Path, run_cli, old: str, new: str, smallest: str) -> None:
    project = tmp_path / "wrong"
    shutil.copytree(EXAMPLE, project)
    oracle = (project / "oracle.py").read_text(encoding="utf-8")
    assert old in oracle
    (project / "oracle.py").write_text(oracle.replace(old, new), encoding="utf-8")
    counterexample = tmp_path / "smallest.jsonl"
    code, out, err = run_cli("--root", str(project), "verify", "--depth", "2", "--counterexample", str(counterexample))
    assert code == 1, out + err
    assert "FAILED:" in out
    assert out.split("the smallest:\n")[1].splitlines()[0].strip() == smallest
    assert counterexample.read_text(encoding="utf-8").splitlines()[0] == smallest and f"plan it with: resume-contract plan {counterexample}" in out


def test_verify_counts_a_ledger_the_oracle_does_not_judge(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "raises"
    shutil.copytree(EXAMPLE, project)
    (project / "oracle.py").write_text("def decide(rows):\n    if rows:\n        return rows[0]['missing']\n    return {'decision': 'replayable', 'reasons': []}\n", encoding="utf-8")
    code, out, err = run_cli("--root", str(project), "verify", "--depth", "1", "--counterexample", str(tmp_path / "smallest.jsonl"))
    assert code == 1
    assert "11 the oracle did not judge" in out and "raised KeyError" in out


def test_verify_fails_where_the_contract_cannot_judge_a_ledger(tmp_path: Path, run_cli) -> None:
    # An expression that fails on some row leaves `plan` without a decision (exit 2): verify fails there, whatever the
    # oracle says, and names it undecided (never corrupt).
    project = tmp_path / "undecided"
    shutil.copytree(EXAMPLE, project)
    spec = project / "spec" / "contract.yaml"
    text = spec.read_text(encoding="utf-8")
    assert "when: row.error == null" in text
    spec.write_text(text.replace("when: row.error == null", "when: row.error == null && (row.output == \"201\" || row.output > 0)", 1), encoding="utf-8")
    assert run_cli("--root", str(project), "generate")[0] == 0
    code, out, err = run_cli("--root", str(project), "verify", "--depth", "2", "--counterexample", str(tmp_path / "smallest.jsonl"))
    assert code == 1, out + err
    assert "the contract: {'undecided': 'an expression failed" in out and "'corrupt'" not in out.split("the contract:")[1].splitlines()[0]


@pytest.mark.parametrize(("command", "option"), [("verify", "--json"), ("verify", "--junit=x.xml"), ("verify", "--jobs=2"), ("crash", "--failpoint=P3"), ("crash", "--json"), ("crash", "--outcome=ok")])
def test_an_option_a_language_contract_does_not_honour_is_refused(example: Path, run_cli, command: str, option: str) -> None:
    code, out, err = run_cli("--root", str(example), command, option)
    assert code == 2 and out == "", out + err
    assert f"not {option.split('=')[0]}" in err and "spec/contract.yaml" in err


def test_verify_without_an_oracle_says_how_to_name_one(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "none"
    shutil.copytree(EXAMPLE, project)
    spec = project / "spec" / "contract.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("oracle: oracle.py\n", ""), encoding="utf-8")
    assert run_cli("--root", str(project), "generate")[0] == 0
    code, out, err = run_cli("--root", str(project), "verify")
    assert code == 2
    assert "add `oracle: oracle.py` to spec/contract.yaml" in err


def test_an_expected_high_water_that_differs_halts_with_the_contracts_offset_diagnostic(example: Path, run_cli) -> None:
    ledger = str(example / "ledgers" / "action-in-doubt.jsonl")
    code, out, err = run_cli("--root", str(example), "plan", ledger, "--expected-high-water", "3", "--json")
    decision = json.loads(out)
    assert (code, decision["rejectionReasons"]) == (1, ["offset_mismatch", "action_in_doubt"])
    assert decision["diagnostics"][0] == {
        "code": "offset_mismatch", "reason": "offset_mismatch", "message": "the reopened ledger is not the prefix the runtime checkpointed (expected 3, found 2)",
        "eventId": None, "item": None, "key": None,
    }
    code, out, err = run_cli("--root", str(example), "plan", str(example / "ledgers" / "done.jsonl"), "--expected-high-water", "6")
    assert code == 0
    code, out, err = run_cli("--root", str(example), "plan", ledger, "--expected-high-water", "-1")
    assert code == 2 and "0 or more" in err
    code, out, err = run_cli("--root", str(example), "plan", "--workspace", str(example / "ledgers"), "--expected-high-water", "2")
    assert code == 2 and "one run's: give --run VALUE with it" in err


@pytest.mark.parametrize(
    ("oracle", "code", "said"),
    [
        ("import sys\n\ndef decide(rows):\n    sys.exit(0)\n", 1, "raised SystemExit"),
        ("raise SystemExit(0)\n", 2, "the oracle oracle.py could not be loaded: SystemExit"),
    ],
)
def test_an_oracle_that_exits_verifies_nothing_and_says_so(tmp_path: Path, run_cli, oracle: str, code: int, said: str) -> None:
    project = tmp_path / "exits"
    shutil.copytree(EXAMPLE, project)
    (project / "oracle.py").write_text(oracle, encoding="utf-8")
    got, out, err = run_cli("--root", str(project), "verify", "--depth", "1", "--counterexample", str(tmp_path / "smallest.jsonl"))
    assert got == code and said in out + err, out + err
