"""resume-contract verify: clean at depth 6, and able to fail with a shortest counterexample."""

from __future__ import annotations

import ast
import dataclasses
import types
from pathlib import Path

import pytest
import spec_names as names

from resume_contract.cli import proof_commands
from resume_contract.core.explore import ALPHABET, count_words, spell
from resume_contract.core.oracle import decide
from resume_contract.ledger.store import read_ledger
from resume_contract.proof import verify as verify_module


@pytest.mark.slow
def test_verify_depth_6_is_clean_and_reaches_every_table_entry(run_cli, tmp_path: Path) -> None:
    counterexample = tmp_path / "cx.jsonl"
    code, out, err = run_cli("verify", "--depth", "6", "--counterexample", str(counterexample))
    assert code == 0
    # Not a terminal: a progress line at most every few seconds, always the last one, with the rate and an ETA.
    progress = err.splitlines()
    assert progress and all(line.startswith("verify: subtrees ") and " ledgers/s, ETA " in line for line in progress)
    assert progress[-1].startswith("verify: subtrees 11/11 (100%)")
    lines = out.splitlines()
    assert lines[0] == f"exploring {count_words(6):,} ledgers up to 6 events on {lines[0].split(' on ')[1].split()[0]} worker(s)"
    assert lines[1].startswith("contract: runtime-resume (Phase 0), spec sha256 ")  # which contract was proven
    assert lines[2].startswith(f"explored {count_words(6):,} ledgers in ")
    reachable = len(verify_module.reachable_steps(verify_module.active().table))
    assert lines[2].endswith(f"transition-table entries reached: {reachable} of {reachable}")
    assert lines[-1] == "no violation"
    assert not counterexample.exists(), "verify writes only a counterexample"


def _broken(monkeypatch: pytest.MonkeyPatch, key: tuple[str, str, bool], outcome: tuple[str, str | None]) -> None:
    """Make verify's copy of the table accept `key` as `outcome`, as a wrong generator would."""
    contract = verify_module.active()  # the contract the commands run here, broken in one step
    step = dict(contract.table.step)
    step[key] = outcome
    broken = dataclasses.replace(contract, table=dataclasses.replace(contract.table, step=types.MappingProxyType(step)))
    monkeypatch.setattr(proof_commands, "selected_contract", lambda args: broken)


def test_a_table_that_accepts_a_misnamed_response_is_caught_with_the_shortest_ledger(monkeypatch, run_cli, tmp_path: Path) -> None:
    _broken(monkeypatch, ("indeterminate", "function_response", False), ("succeeded", None))
    counterexample = tmp_path / "cx.jsonl"
    code, out, _ = run_cli("verify", "--depth", "3", "--jobs", "1", "--counterexample", str(counterexample))
    assert code == 1
    assert "VIOLATION matches_oracle: projector safe_replay" in out
    assert "VIOLATION table_matches_machine:" in out
    assert "VIOLATION replay_well_formed: replayed response e2 has no matching call before it" in out
    assert "  shortest ledger: call(a), ok(a, other tool)\n" in out
    assert out.rstrip().endswith(f"replay it with: resume-contract plan {counterexample}")
    ledger = read_ledger(counterexample)
    assert [(event.content.id, event.content.name) for event in ledger.events] == [("a", "write"), ("a", "delete")]
    # The counterexample replays through the real command, which (with the real table) blocks it.
    code, out, _ = run_cli("plan", str(counterexample))
    assert code == 1 and names.MISNAMED in out


def test_a_table_that_forgets_an_anomaly_breaks_monotonic_evidence(monkeypatch, run_cli, tmp_path: Path) -> None:
    _broken(monkeypatch, ("succeeded", "function_response", True), ("succeeded", None))
    code, out, _ = run_cli("verify", "--depth", "3", "--jobs", "1", "--counterexample", str(tmp_path / "cx.jsonl"))
    assert code == 1
    assert "shortest ledger: call(a), ok(a), ok(a)" in out


def test_verify_rejects_a_silly_depth(run_cli) -> None:
    assert run_cli("verify", "--depth", "9")[0] == 2


def test_the_oracle_is_independent_of_the_spec_and_the_generated_code() -> None:
    tree = ast.parse(Path(decide.__code__.co_filename).read_text())
    imported = {
        ("." * node.level) + (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert imported == {"__future__", "collections.abc", "dataclasses", "typing"}


def test_the_alphabet_spells_readably() -> None:
    assert spell((1, 3)) == "call(a), ok(a)"
    assert len(ALPHABET) == 10
