"""Ledgers of runtimes that are not maka, decided as those runtimes write them, under contracts written in YAML
alone (issue 54): examples/integer-ids (integer ids, one file a run), examples/codex-rollouts (no id or run field,
the kind nested in `payload`, the session named by the first row, arguments as JSON text in a string) and
examples/temporal-histories (ids as digits or numbers, a kind spelled two ways, a start naming its schedule row,
ids that must increase, the run named by the file). Each example's expected.json was written by hand from its
contract's prose, never by running the tool.

Tool tests of the row model's grammar own their inputs (small contracts written here).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SHAPES = ("integer-ids", "codex-rollouts", "temporal-histories")
CASES = [(shape, ledger) for shape in SHAPES for ledger in sorted(json.loads((EXAMPLES / shape / "expected.json").read_text(encoding="utf-8"))["ledgers"])]


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A copy of each example (a plan remembers verdicts: nothing is written into the checkout)."""
    root = tmp_path_factory.mktemp("shapes")
    return {shape: Path(shutil.copytree(EXAMPLES / shape, root / shape)) for shape in SHAPES}


@pytest.mark.parametrize("shape", SHAPES)
def test_each_examples_generated_tree_is_what_its_spec_renders_to(shapes: dict[str, Path], shape: str, run_cli) -> None:
    code, out, err = run_cli("--root", str(shapes[shape]), "check")
    assert code == 0, out + err


@pytest.mark.parametrize(("shape", "ledger"), CASES)
def test_each_ledger_decides_as_written_with_no_converter(shapes: dict[str, Path], shape: str, ledger: str, run_cli) -> None:
    expected = json.loads((EXAMPLES / shape / "expected.json").read_text(encoding="utf-8"))["ledgers"][ledger]
    path = shapes[shape] / "ledgers" / ledger
    assert (EXAMPLES / shape / "ledgers" / ledger).read_bytes() == path.read_bytes()  # (the runtime's bytes, as written)
    code, out, err = run_cli("--root", str(shapes[shape]), "plan", str(path), "--json")
    assert code == expected["exit"], out + err
    if "corruption" in expected:
        assert expected["corruption"] in err and f"{ledger}:{expected['line']}:" in err, err
        return
    decision = json.loads(out)
    shown = {
        "exit": code,
        "decision": decision["decision"],
        "reasons": decision["rejectionReasons"],
        "items": [f"{item['item']}/{item['key']}={item['status']}" for item in decision["items"]],
        "replay": decision["replayEventIds"],
    }
    assert shown == expected


def test_a_temporal_workspace_names_each_run_by_its_file(shapes: dict[str, Path], run_cli) -> None:
    project = shapes["temporal-histories"]
    code, out, _ = run_cli("--root", str(project), "plan", "--workspace", str(project / "ledgers"), "--run", "order-1002")
    assert code == 1 and "activities '5' (activity: ChargeCard): started" in out, out
    code, out, _ = run_cli("--root", str(project), "plan", "--workspace", str(project / "ledgers"))
    assert code == 3 and out.splitlines()[-1] == "6 runs: 3 resume, 1 hold, 2 corrupt, 0 unreadable", out


def test_a_contract_declaring_seq_a_string_refuses_integer_ids_naming_the_row_and_field(tmp_path: Path, run_cli) -> None:
    project = Path(shutil.copytree(EXAMPLES / "integer-ids", tmp_path / "project"))
    contract = project / "spec" / "contract.yaml"
    text = contract.read_text(encoding="utf-8").replace("    seq: {type: integer,", "    seq: {type: string,")
    for number in range(1, 5):
        text = text.replace(f"row: {{seq: {number},", f'row: {{seq: "{number}",')
    contract.write_text(text, encoding="utf-8")
    assert run_cli("--root", str(project), "generate")[0] == 0
    code, out, err = run_cli("--root", str(project), "plan", str(project / "ledgers" / "done.jsonl"))
    assert code == 3 and out == ""
    assert "done.jsonl:1:" in err and "`$.seq`" in err and "the contract declares string" in err and "resume-contract fit" in err, err


def _seq_a_string(project: Path) -> None:
    contract = project / "spec" / "contract.yaml"
    text = contract.read_text(encoding="utf-8").replace("    seq: {type: integer,", "    seq: {type: string,")
    for number in range(1, 5):
        text = text.replace(f"row: {{seq: {number},", f'row: {{seq: "{number}",')
    contract.write_text(text, encoding="utf-8")


def test_fit_names_the_first_mismatching_row_and_field_and_passes_on_matching_ledgers(tmp_path: Path, run_cli) -> None:
    project = Path(shutil.copytree(EXAMPLES / "integer-ids", tmp_path / "project"))
    code, out, err = run_cli("--root", str(project), "fit", str(project / "ledgers"))
    assert code == 0 and "6 file(s), 13 rows: 0 the contract's row model refuses, 1 corrupt" in out, out + err  # (the torn sample: damage, not a mismatch)
    project = Path(shutil.copytree(EXAMPLES / "integer-ids", tmp_path / "mismatched"))  # (a contract is loaded once a process)
    _seq_a_string(project)
    assert run_cli("--root", str(project), "generate")[0] == 0
    code, out, err = run_cli("--root", str(project), "fit", str(project / "ledgers" / "done.jsonl"), str(project / "ledgers"))
    assert code == 1, out + err
    first = out.splitlines()[0]
    assert first.startswith("mismatch  ") and "done.jsonl:1  $.seq: Expected `str`, got `int` (the contract declares string in a user_message row)" in first, out
    assert f"next: the contract does not read what the runtime writes (first at {project / 'ledgers' / 'done.jsonl'}:1, $.seq)" in out
    document = json.loads(run_cli("--root", str(project), "fit", str(project / "ledgers"), "--format", "json")[1])
    assert document["mismatches"] == 13 and document["corrupt"] == 1 and document["rows"] == 13
    assert {(finding["field"], finding["kind"]) for finding in document["findings"]} == {("$.seq", "mismatch"), ("", "corrupt")}


def test_fit_of_a_missing_sample_is_a_usage_error(tmp_path: Path, run_cli) -> None:
    code, out, err = run_cli("--root", str(EXAMPLES / "integer-ids"), "fit", str(tmp_path / "nowhere"))
    assert code == 2 and "cannot read" in err


def test_init_language_says_to_fit_the_teams_own_ledgers_first(tmp_path: Path, run_cli) -> None:
    code, out, err = run_cli("init", "--language", str(tmp_path / "p"))
    assert code == 0 and "resume-contract fit" in out + err, out + err
    assert "resume-contract fit samples" in (tmp_path / "p" / ".github" / "workflows" / "contract.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize("shape", SHAPES)
def test_each_examples_second_pull_request_is_a_yaml_edit_classed_as_it_says(tmp_path: Path, shape: str, run_cli) -> None:
    """Each example's second-pr.patch edits spec/contract.yaml alone; after it the ledgers it names decide as
    expected.json's `second_pull_request` says (written by hand), and `diff` classes it as it says, with a ledger."""
    import subprocess

    example = EXAMPLES / shape
    expected = json.loads((example / "expected.json").read_text(encoding="utf-8"))["second_pull_request"]
    head = Path(shutil.copytree(example, tmp_path / "head"))
    patch = example / expected["patch"]
    assert [line.split(" b/")[-1] for line in patch.read_text(encoding="utf-8").splitlines() if line.startswith("diff --git")] == ["spec/contract.yaml"]
    subprocess.run(["git", "apply", str(patch)], cwd=head, check=True)
    code, out, err = run_cli("--root", str(head), "generate")
    assert code == 0, out + err
    for ledger, want in expected["changes"].items():
        code, out, err = run_cli("--root", str(head), "plan", str(head / "ledgers" / ledger), "--json")
        decision = json.loads(out)
        assert (code, decision["decision"], decision["rejectionReasons"]) == (want["exit"], want["decision"], want["reasons"]), out + err
    code, out, err = run_cli("--root", str(head), "diff", str(example), str(head), "--format", "json")
    review = json.loads(out)
    assert review["verdict"] == expected["class"], review["changes"]
    assert any(ledger["effect"] == expected["class"] for ledger in review["evidence"]["ledgers"])  # (a witness of its class)


def test_fit_reads_maka_ledgers_and_maka_stores_under_the_packaged_contract(tmp_path: Path, run_cli) -> None:
    reference = Path(__file__).resolve().parent / "conformance_sqlite" / "reference"
    workspace = Path(shutil.copytree(reference / "T_P6" / "WS", tmp_path / "WS"))
    code, out, err = run_cli("fit", str(workspace))
    assert code == 0 and "0 the contract's row model refuses, 0 corrupt" in out, out + err
    jsonl = Path(__file__).resolve().parent / "conformance" / "reference"
    code, out, err = run_cli("fit", str(jsonl))
    assert code == 0 and "0 the contract's row model refuses" in out, out + err
    code, out, err = run_cli("--root", str(EXAMPLES / "integer-ids"), "fit", str(workspace))
    assert code == 2 and "declares no SQLite layout yet" in err, out + err
