"""Phase 1 in the conformance vectors and `conform --decision continuation[-planner]` (issue 26).

Of the contract (spec/): the vectors say what the spec's situations say, and continue-plan agrees with every one.
Of the tool (the frozen Phase 1 spec, tests/frozen_spec/phase1, which is the shared document's contract): a second
implementation written by hand from the shared document agrees with every vector — the spec language says what
the document says — and wrong ones are reported exactly, unsafe when they continue where the contract parks.
Editing spec/ never breaks the tool's half.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parent.parent
FROZEN = REPO / "tests" / "frozen_spec"
SPEC = yaml.safe_load((REPO / "spec" / "continuation.yaml").read_text(encoding="utf-8"))
OUR_CLI = [sys.executable, "-m", "resume_contract", "continue-plan", "--format", "json"]
# The corruption kinds the reader refuses: those of spec/decisions.yaml but the two the projector may diagnose
# instead (spec/projector.yaml ledger_anomalies: duplicate_id, foreign_row).
_DIAGNOSED = yaml.safe_load((REPO / "spec" / "projector.yaml").read_text(encoding="utf-8")).get("ledger_anomalies", {})
KINDS = [
    kind for kind in yaml.safe_load((REPO / "spec" / "decisions.yaml").read_text(encoding="utf-8"))["ledger_rules"]["storage_corruption"]["kinds"]
    if {"duplicate_event_id": "duplicate_id", "foreign_row": "foreign_row"}.get(kind) not in _DIAGNOSED
]
BY_HAND = [sys.executable, str(REPO / "tests" / "adapters" / "continuation_adapter.py")]

# Each wrong adapter gets the frozen project's root first (its contract), then what conform passes; it runs our
# continue-plan and, where its one twist applies, answers otherwise.
_RUN = """import json, subprocess, sys
result = subprocess.run([sys.executable, "-m", "resume_contract", "--root", sys.argv[1], "continue-plan", "--format", "json", *sys.argv[2:]], capture_output=True, text=True)
"""
_AS_IS = """print(result.stdout)
raise SystemExit(result.returncode)
"""
# Our decision, except that a park whose only reason is a pending permission continues (exit 0).
IGNORES_PERMISSIONS = _RUN + """
if result.returncode == 1:
    plan = json.loads(result.stdout)
    if plan["rejectionReasons"] == ["pending_permission"]:
        print(json.dumps({"disposition": "continue", "rejectionReasons": [], "diagnostics": [], "continuation": {"runId": "run-2"}}))
        raise SystemExit(0)
""" + _AS_IS

# The planner form, except that a run another run already continues is continued again (exit 0).
CONTINUES_TWICE = _RUN + """
if result.returncode == 1 and json.loads(result.stdout)["rejectionReasons"] == ["continuation_already_exists"]:
    print(json.dumps({"disposition": "continue", "rejectionReasons": [], "diagnostics": [], "continuation": {"runId": "run-2"}}))
    raise SystemExit(0)
""" + _AS_IS

# Parks wherever the contract continues: wrong, but never unsafe.
ALWAYS_PARKS = _RUN + """
if result.returncode == 0:
    print(json.dumps({"disposition": "park", "rejectionReasons": ["background_operation_pending"], "diagnostics": [{"code": "background_operation_pending"}]}))
    raise SystemExit(1)
""" + _AS_IS


def _vectors_of(root: Path, out: Path) -> Path:
    command = [sys.executable, "-m", "resume_contract", "--root", str(root), "vectors", "--out", str(out), "--depth", "1"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def vectors(tmp_path_factory) -> Path:
    """The contract's vectors (spec/)."""
    return _vectors_of(REPO, tmp_path_factory.mktemp("vectors") / "v")


@pytest.fixture(scope="module")
def phase1_project(tmp_path_factory) -> Path:
    """A project of the frozen spec with the frozen Phase 1 decision, generated."""
    from resume_contract_generator.render.tree import render_all
    from resume_contract_generator.spec.validate import load_spec

    root = tmp_path_factory.mktemp("phase1") / "project"
    shutil.copytree(FROZEN / "spec", root / "spec")
    shutil.copyfile(FROZEN / "phase1" / "continuation.yaml", root / "spec" / "continuation.yaml")
    for relative, text in render_all(load_spec(root)).items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def frozen_vectors(phase1_project: Path, tmp_path_factory) -> Path:
    return _vectors_of(phase1_project, tmp_path_factory.mktemp("frozen-vectors") / "v")


def _section(directory: Path) -> dict:
    return json.loads((directory / "manifest.json").read_text(encoding="utf-8"))["continuation"]


def _conform(run_cli, vectors: Path, *command: str, decision: str = "continuation", root: Path = REPO) -> tuple[int, dict]:
    code, out, err = run_cli("--root", str(root), "conform", "--vectors", str(vectors), "--decision", decision, "--json", "--", *command)
    assert err == ""
    return code, json.loads(out)


def test_every_named_situation_is_a_vector_that_says_what_the_spec_says(vectors: Path) -> None:
    manifest = json.loads((vectors / "manifest.json").read_text(encoding="utf-8"))
    Draft202012Validator(json.loads((vectors / "vectors.schema.json").read_text(encoding="utf-8"))).validate(manifest)
    cases = {case["id"]: case for case in _section(vectors)["cases"]}
    assert _section(vectors)["dispositions"] == {"proceed": SPEC["dispositions"]["proceed"], "stop": SPEC["dispositions"]["stop"]}
    for name, situation in SPEC["situations"]["cases"].items():
        expect = situation["expect"]
        vector = cases[f"continuation-{name}"]
        assert vector["expect"]["disposition"] == expect["disposition"]
        assert vector["expect"]["rejectionReasons"] == expect.get("rejection_reasons", [])
        assert vector["expect"]["diagnostics"] == expect.get("diagnostics", [])
        assert vector["expect"]["continuation"] == expect.get("continuation")
        facts = json.loads((vectors / vector["facts"]).read_text(encoding="utf-8"))
        assert facts == {**SPEC["situations"]["base"]["facts"], **situation.get("facts", {})}
        assert len((vectors / vector["ledger"]).read_bytes().splitlines()) == len(situation["events"])
    corrupt = [case for case in cases.values() if case["kind"] == "continuation-corruption"]
    assert {case["expect"]["corruption"] for case in corrupt} == set(KINDS)
    # Each named situation with one boolean input flipped is a vector too (the situations `verify` and `diff` use).
    name, situation = next(iter(SPEC["situations"]["cases"].items()))
    facts = {**SPEC["situations"]["base"]["facts"], **situation.get("facts", {})}
    flag = next(key for key, value in facts.items() if isinstance(value, bool))
    variation = cases[f"continuation-{name}-with-{flag.lower()}-{str(not facts[flag]).lower()}"]
    assert json.loads((vectors / variation["facts"]).read_text(encoding="utf-8")) == {**facts, flag: not facts[flag]}


@pytest.mark.slow
def test_continue_plan_agrees_with_every_continuation_vector(vectors: Path, run_cli) -> None:
    code, report = _conform(run_cli, vectors, *OUR_CLI)
    assert code == 0, [r for r in report["results"] if r["verdict"] != "agrees"][:3]
    assert report["summary"]["agrees"] == report["summary"]["total"] == len(_section(vectors)["cases"])


@pytest.mark.slow
def test_an_implementation_written_from_the_shared_document_agrees_with_every_vector_of_its_contract(frozen_vectors: Path, phase1_project: Path, run_cli) -> None:
    code, report = _conform(run_cli, frozen_vectors, *BY_HAND, "--root", str(phase1_project), root=phase1_project)
    assert code == 0, [r for r in report["results"] if r["verdict"] != "agrees"][:3]
    assert report["summary"]["agrees"] == report["summary"]["total"] == len(_section(frozen_vectors)["cases"])


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_one_that_continues_over_a_pending_permission_is_reported_unsafe_on_exactly_those_vectors(frozen_vectors: Path, phase1_project: Path, run_cli) -> None:
    vectors = frozen_vectors
    code, report = _conform(run_cli, vectors, sys.executable, "-c", IGNORES_PERMISSIONS, str(phase1_project), root=phase1_project)
    expected = sorted(case["id"] for case in _section(vectors)["cases"] if case["expect"].get("rejectionReasons") == ["pending_permission"])
    failing = sorted(result["id"] for result in report["results"] if result["verdict"] != "agrees")
    assert code == 1 and failing == expected and "continuation-pending_permission" in failing
    first = next(result for result in report["results"] if result["id"] == "continuation-pending_permission")
    assert "exit: expected 1 (park), got 0" in first["problems"]
    assert {result["unsafe"] for result in report["results"] if result["verdict"] != "agrees"} == {"park -> continue"}


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_one_that_parks_where_the_contract_continues_disagrees_but_is_not_unsafe(frozen_vectors: Path, phase1_project: Path, run_cli) -> None:
    vectors = frozen_vectors
    code, report = _conform(run_cli, vectors, sys.executable, "-c", ALWAYS_PARKS, str(phase1_project), root=phase1_project)
    continues = {case["id"] for case in _section(vectors)["cases"] if case["expect"].get("disposition") == "continue"}
    assert code == 1 and continues and {r["id"] for r in report["results"] if r["verdict"] != "agrees"} == continues
    assert report["summary"]["unsafe"] == 0


def test_a_phase0_contract_has_no_continuation_vectors_and_conform_says_so(project: Path, tmp_path: Path, run_cli) -> None:
    out = tmp_path / "v"
    code, said, _ = run_cli("--root", str(project), "vectors", "--out", str(out), "--depth", "1")
    assert code == 0 and "continuation" not in said and not (out / "facts").exists()
    assert "continuation" not in json.loads((out / "manifest.json").read_text(encoding="utf-8"))

    code, _, err = run_cli("--root", str(project), "conform", "--vectors", str(out), "--decision", "continuation", "--", "true")

    assert code == 2 and "hold no continuation cases" in err


PLANNER = SPEC["planner"]["situations"]


def test_every_named_planner_situation_is_a_workspace_vector_that_says_what_the_spec_says(vectors: Path) -> None:
    cases = {case["id"]: case for case in _section(vectors)["plannerCases"]}
    for name, situation in PLANNER["cases"].items():
        expect, vector = situation["expect"], cases[f"continuation-planner-{name}"]
        assert vector["expect"]["disposition"] == expect["disposition"]
        assert vector["expect"]["rejectionReasons"] == expect.get("rejection_reasons", [])
        assert vector["expect"]["diagnostics"] == expect.get("diagnostics", [])
        assert vector["expect"]["continuation"] == expect.get("continuation")
        assert vector["run"] == (None if situation.get("latest") else "run-1")
        runs = vectors / vector["workspace"] / "sessions" / vector["session"] / "runs"
        header = runs / "run-1" / "run.json"
        if situation.get("header", {}) is None:
            assert not header.exists()
        else:
            assert json.loads(header.read_text(encoding="utf-8")) == {**PLANNER["base"]["header"], **situation.get("header", {})}
        assert sorted(path.name for path in runs.iterdir()) == sorted(["run-1", *situation.get("other_runs", {})])
        assert json.loads((vectors / vector["host"]).read_text(encoding="utf-8")) == {**PLANNER["base"]["host"], **situation.get("host", {})}


@pytest.mark.slow
def test_continue_plan_agrees_with_every_planner_vector(vectors: Path, run_cli) -> None:
    code, report = _conform(run_cli, vectors, *OUR_CLI, decision="continuation-planner")
    assert code == 0, [r for r in report["results"] if r["verdict"] != "agrees"][:3]
    assert report["summary"]["agrees"] == len(_section(vectors)["plannerCases"])


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_one_that_continues_a_run_twice_is_reported_unsafe_on_exactly_those_planner_vectors(frozen_vectors: Path, phase1_project: Path, run_cli) -> None:
    vectors = frozen_vectors
    code, report = _conform(run_cli, vectors, sys.executable, "-c", CONTINUES_TWICE, str(phase1_project), decision="continuation-planner", root=phase1_project)
    expected = sorted(case["id"] for case in _section(vectors)["plannerCases"] if case["expect"]["rejectionReasons"] == ["continuation_already_exists"])
    failing = sorted(result["id"] for result in report["results"] if result["verdict"] != "agrees")
    assert code == 1 and failing == expected and "continuation-planner-already_continued" in failing
    assert {result["unsafe"] for result in report["results"] if result["verdict"] != "agrees"} == {"park -> continue"}


# Our planner form, then a claim written into the workspace it was handed (as an executor would after a continue).
WRITES_A_CLAIM = _RUN + """
workspace = sys.argv[sys.argv.index("--workspace") + 1]
import os
claim = os.path.join(workspace, "sessions", sys.argv[sys.argv.index("--session") + 1], "runs", "run-99")
os.makedirs(claim, exist_ok=True)
with open(os.path.join(claim, "run.json"), "w") as handle:
    json.dump({"runId": "run-99", "status": "created", "continuationSource": {"sourceRunId": "run-1", "sourceRuntimeEventHighWater": 2}}, handle)
""" + _AS_IS


def _tree(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_an_implementation_that_writes_into_its_workspace_changes_neither_the_vectors_nor_a_second_run(frozen_vectors: Path, phase1_project: Path, run_cli) -> None:
    before = _tree(frozen_vectors)
    for _ in range(2):  # the second run sees no claim the first one wrote
        code, report = _conform(run_cli, frozen_vectors, sys.executable, "-c", WRITES_A_CLAIM, str(phase1_project), decision="continuation-planner", root=phase1_project)
        assert (code, report["summary"]["agrees"]) == (0, len(_section(frozen_vectors)["plannerCases"]))
        assert _tree(frozen_vectors) == before


def test_vectors_that_check_nothing_or_point_outside_are_refused(frozen_vectors: Path, run_cli, tmp_path: Path) -> None:
    manifest = json.loads((frozen_vectors / "manifest.json").read_text(encoding="utf-8"))
    for name, change in (("empty", lambda m: m["continuation"].update(cases=[])), ("outside", lambda m: m["continuation"]["cases"][0].update(ledger="../../../etc/passwd"))):
        copy = tmp_path / name
        shutil.copytree(frozen_vectors, copy)
        edited = json.loads(json.dumps(manifest))
        change(edited)
        (copy / "manifest.json").write_text(json.dumps(edited), encoding="utf-8")
        code, out, err = run_cli("--root", str(REPO), "conform", "--vectors", str(copy), "--decision", "continuation", "--", "true")
        assert (code, out) == (2, "") and ("hold no continuation cases" if name == "empty" else "not a path inside the vectors directory") in err, err
