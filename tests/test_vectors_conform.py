"""Conformance vectors and `conform` (issue 15): byte-identical vectors, every kind of case, two independent
implementations that agree on every vector, and wrong ones reported exactly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parent.parent
ORACLE_ADAPTER = [sys.executable, str(REPO / "tests" / "adapters" / "oracle_adapter.py")]
OUR_CLI = [sys.executable, "-m", "resume_contract", "plan", "--json"]

# Says safe_replay (exit 0) wherever our plan has an indeterminate operation: a lone call passes as safe.
WRONG_ADAPTER = """
import json, subprocess, sys
result = subprocess.run([sys.executable, "-m", "resume_contract", "plan", "--json", *sys.argv[1:]], capture_output=True, text=True)
if result.returncode in (0, 1):
    plan = json.loads(result.stdout)
    if any(op["status"] == "indeterminate" for op in plan["operations"]):
        plan["disposition"] = "safe_replay"
        print(json.dumps(plan))
        raise SystemExit(0)
    print(result.stdout)
raise SystemExit(result.returncode)
"""

# A Phase 0 reference, roughly: reads every ledger (never exit 3) and checks none of the spec's documented
# anomalies (it says safe_replay where only they would block).
REFERENCE_LIKE = """
import json, subprocess, sys
DOCUMENTED = set(sys.argv[1].split(","))
result = subprocess.run([sys.executable, "-m", "resume_contract", "plan", "--json", *sys.argv[2:]], capture_output=True, text=True)
if result.returncode == 3:
    print(json.dumps({"disposition": "safe_replay", "operations": [], "sourceRuntimeEventHighWater": 0, "replayRuntimeEvents": []}))
    raise SystemExit(0)
plan = json.loads(result.stdout)
if {d["code"] for d in plan["diagnostics"]} & DOCUMENTED:
    plan["disposition"] = "safe_replay"
    print(json.dumps(plan))
    raise SystemExit(0)
print(result.stdout)
raise SystemExit(result.returncode)
"""


def _make(tmp_path_factory, *depth: str) -> Path:
    out = tmp_path_factory.mktemp("vectors") / "v"
    command = [sys.executable, "-m", "resume_contract", "--root", str(REPO), "vectors", "--out", str(out), *depth]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def vectors(tmp_path_factory) -> Path:
    """The default vectors (depth 3): both real implementations must agree on every one."""
    return _make(tmp_path_factory)


@pytest.fixture(scope="module")
def few_vectors(tmp_path_factory) -> Path:
    """Depth 1: every canonical, high-water, corruption and anomaly case a one-event ledger reaches, for the
    adapters that run two processes per vector."""
    return _make(tmp_path_factory, "--depth", "1")


def _manifest(directory: Path) -> dict:
    return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))


def _files(directory: Path) -> dict[str, bytes]:
    return {path.relative_to(directory).as_posix(): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()}


def _conform(run_cli, *args: str) -> tuple[int, str, str]:
    return run_cli("--root", str(REPO), "conform", *args)


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_vectors_are_byte_identical_across_runs_and_hash_seeds(vectors: Path, tmp_path: Path) -> None:
    for seed in ("0", "1"):
        out = tmp_path / f"seed-{seed}"
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        command = [sys.executable, "-m", "resume_contract", "--root", str(REPO), "vectors", "--out", str(out)]
        assert subprocess.run(command, capture_output=True, env=environment).returncode == 0
        assert _files(out) == _files(vectors)


def test_outside_any_project_the_vectors_are_the_packaged_contracts(tmp_path: Path) -> None:
    # As every command outside a project runs the packaged contract: the vectors of a project holding its spec.
    from resume_contract.contract import packaged_spec_dir

    shutil.copytree(packaged_spec_dir(), tmp_path / "project" / "spec", ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    command = [sys.executable, "-m", "resume_contract", "vectors", "--depth", "1", "--out"]
    given = subprocess.run([*command, str(tmp_path / "given")], capture_output=True, text=True, cwd=tmp_path / "project")
    outside = subprocess.run([*command, str(tmp_path / "outside")], capture_output=True, text=True, cwd=tmp_path)
    assert (given.returncode, outside.returncode) == (0, 0), given.stderr + outside.stderr
    assert _files(tmp_path / "outside") == _files(tmp_path / "given")


def test_the_manifest_holds_every_kind_of_case_and_satisfies_its_schema(vectors: Path) -> None:
    from resume_contract_generated.catalog import CORRUPTION_KINDS, OUTCOMES, PREFIX_LENGTHS
    from resume_contract_generated.projector_table import TABLE

    manifest = _manifest(vectors)
    Draft202012Validator(json.loads((vectors / "vectors.schema.json").read_text())).validate(manifest)
    ids = {case["id"] for case in manifest["cases"]}
    assert {f"canonical-{prefix}-{outcome}" for prefix in PREFIX_LENGTHS for outcome in OUTCOMES} <= ids
    assert {f"corruption-{kind}" for kind in CORRUPTION_KINDS if kind not in TABLE.tolerated} <= ids
    assert {f"anomaly-ledger-{kind}" for kind in TABLE.tolerated} <= ids  # the kinds the contract diagnoses instead
    assert {case["kind"] for case in manifest["cases"]} == {"canonical", "high-water", "table", "anomaly", "corruption", "explored", "letter"}
    assert sum(len(data) for data in _files(vectors).values()) < 3_000_000  # (2.1 MB for maka's contract at step 08)
    for case in manifest["cases"]:
        assert (vectors / case["ledger"]).is_file()


def test_the_vectors_hold_every_status_content_kind_and_the_terminal_flag_the_spec_declares(vectors: Path) -> None:
    # Issue 24: the vectors were drawn from a hand-written alphabet (one terminal status, two content kinds), so
    # an implementation that ends a run only on `completed` agreed with every one of them.
    from resume_contract_generator.spec.validate import load_spec

    wire = load_spec(REPO).wire
    rows = []
    for path, data in _files(vectors).items():
        for line in data.splitlines() if path.startswith("ledgers/") else []:
            try:
                rows.append(json.loads(line))
            except ValueError:  # the corruption vectors' rows
                continue
    statuses = {row.get("status") for row in rows if row.get("partial") is False}
    assert set(wire.field("status").enum) <= statuses
    kinds = {(row.get("content") or {}).get("kind") for row in rows if row.get("partial") is False}
    assert {kind.name for kind in wire.content_kinds} <= kinds
    assert any((row.get(wire.terminal_flag_field) or {}).get(wire.terminal_flag_key) is True for row in rows)
    assert any(row.get("partial") is True and row.get("status") in wire.terminal_statuses for row in rows)


def test_the_canonical_vectors_say_what_the_decision_table_says(vectors: Path) -> None:
    from resume_contract_generated.catalog import DECISIONS

    cases = {case["id"]: case for case in _manifest(vectors)["cases"]}
    for prefix, decision in DECISIONS.items():
        for outcome, statuses in decision.operation_statuses.items():
            expect = cases[f"canonical-{prefix}-{outcome}"]["expect"]
            assert expect["disposition"] == decision.disposition
            assert [op["status"] for op in expect["operations"]] == list(statuses)
            assert expect["diagnostics"] == list(decision.diagnostics)
            assert expect["rejectionReasons"] == list(decision.rejection_reasons)
            assert expect["replayEventIds"] == list(decision.replay_event_ids[outcome])
            assert (expect["terminalRuntimeEventId"] is not None) == decision.terminal_fact


@pytest.mark.slow
@pytest.mark.parametrize("adapter", [OUR_CLI, ORACLE_ADAPTER], ids=["our-cli", "independent-oracle"])
def test_two_implementations_agree_on_every_vector(vectors: Path, run_cli, adapter: list[str]) -> None:
    code, out, err = _conform(run_cli, "--vectors", str(vectors), "--json", "--", *adapter)
    report = json.loads(out)
    assert (code, err) == (0, ""), [r for r in report["results"] if r["verdict"] != "agrees"][:3]
    assert report["summary"]["agrees"] == report["summary"]["total"] == len(_manifest(vectors)["cases"])


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_a_wrong_implementation_is_reported_with_exactly_its_failing_vectors(few_vectors: Path, run_cli, tmp_path: Path) -> None:
    vectors = few_vectors
    junit = tmp_path / "conform.xml"
    code, out, _ = _conform(run_cli, "--vectors", str(vectors), "--json", "--junit", str(junit), "--", sys.executable, "-c", WRONG_ADAPTER)
    report = json.loads(out)
    expected = sorted(
        case["id"]
        for case in _manifest(vectors)["cases"]
        if "operations" in case["expect"] and any(op["status"] == "indeterminate" for op in case["expect"]["operations"])
    )
    failing = sorted(result["id"] for result in report["results"] if result["verdict"] != "agrees")
    assert code == 1 and failing == expected and "canonical-after_function_call-ok" in failing
    first = next(result for result in report["results"] if result["id"] == "canonical-after_function_call-ok")
    assert 'disposition: expected "blocked", got "safe_replay"' in first["problems"]
    # It replays unresolved calls: every disagreement is marked unsafe, in every format.
    assert {result["unsafe"] for result in report["results"] if result["verdict"] != "agrees"} == {"blocked -> safe_replay"}
    assert report["summary"]["unsafe"] == len(expected)
    from resume_contract.conformance.conform import DISAGREES, Case, Result, as_text

    case = Case(first["id"], first["kind"], "a lone call", vectors / "x.jsonl", None, {})
    text = as_text([Result(case, DISAGREES, first["problems"], unsafe=first["unsafe"])], ["adapter"])
    assert "           UNSAFE: more permissive than the contract: blocked -> safe_replay\n" in text and "disagree (1 unsafe)" in text
    suite = ElementTree.parse(junit).getroot()
    assert suite.tag == "testsuite" and int(suite.get("tests")) == len(report["results"]) and int(suite.get("failures")) == len(expected)
    assert all((case.find("failure").text or "").startswith("UNSAFE: ") for case in suite.iter("testcase") if case.find("failure") is not None)
    assert sorted(case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None) == expected


# Says blocked (exit 1) wherever our plan is safe_replay: wrong, but never unsafe.
STRICTER_ADAPTER = """
import json, subprocess, sys
result = subprocess.run([sys.executable, "-m", "resume_contract", "plan", "--json", *sys.argv[1:]], capture_output=True, text=True)
if result.returncode == 0:
    plan = json.loads(result.stdout)
    plan["disposition"] = "blocked"
    plan["rejectionReasons"] = ["dangling_tool_state"]
    print(json.dumps(plan))
    raise SystemExit(1)
print(result.stdout)
raise SystemExit(result.returncode)
"""


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_a_stricter_implementation_disagrees_but_is_not_unsafe(few_vectors: Path, run_cli) -> None:
    code, out, _ = _conform(run_cli, "--vectors", str(few_vectors), "--json", "--", sys.executable, "-c", STRICTER_ADAPTER)
    report = json.loads(out)
    assert code == 1 and report["summary"]["disagrees"] > 0
    assert report["summary"]["unsafe"] == 0 and all(result["unsafe"] is None for result in report["results"])


@pytest.mark.slow
def test_reference_strictness_accepts_exactly_the_documented_differences(few_vectors: Path, run_cli) -> None:
    vectors = few_vectors
    documented = ",".join(_manifest(vectors)["referenceDifferences"]["anomalies"])
    adapter = [sys.executable, "-c", REFERENCE_LIKE, documented]
    code, out, _ = _conform(run_cli, "--vectors", str(vectors), "--json", "--", *adapter)
    assert code == 1 and json.loads(out)["summary"]["disagrees"] > 0  # exact: the differences are differences
    code, out, _ = _conform(run_cli, "--vectors", str(vectors), "--json", "--strictness", "reference", "--", *adapter)
    assert code == 0, [r for r in json.loads(out)["results"] if r["verdict"] != "agrees"][:3]


def test_crashes_timeouts_and_usage(vectors: Path, run_cli, tmp_path: Path) -> None:
    few = tmp_path / "few"
    few.mkdir()
    manifest = _manifest(vectors)
    manifest["cases"] = manifest["cases"][:2]
    (few / "manifest.json").write_text(json.dumps(manifest))
    (few / "ledgers").symlink_to(vectors / "ledgers")
    code, out, _ = _conform(run_cli, "--vectors", str(few), "--", sys.executable, "-c", "raise SystemExit(5)")
    assert code == 1 and out.count("CRASHED") == 2 and "exit 5" in out
    code, out, _ = _conform(run_cli, "--vectors", str(few), "--timeout", "0.5", "--", sys.executable, "-c", "import time; time.sleep(30)")
    assert code == 1 and out.count("TIMED OUT") == 2
    assert _conform(run_cli, "--vectors", str(few))[0] == 2  # no command
    assert _conform(run_cli, "--vectors", str(tmp_path / "nowhere"), "--", "true")[0] == 2
    for timeout in ("nan", "inf", "0", "-1"):  # nan slipped past `<= 0` into a traceback; inf would never time out
        code, _, err = _conform(run_cli, "--vectors", str(few), "--timeout", timeout, "--", "true")
        assert code == 2 and "--timeout takes a number of seconds above 0 and below a day" in err, timeout
