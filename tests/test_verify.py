"""resume-contract verify: clean at depth 5, and able to fail with a shortest counterexample."""

from __future__ import annotations

import ast
import dataclasses
import json
import types
from pathlib import Path
from typing import Any

import msgspec
import pytest
import spec_names as names
import yaml

from resume_contract.cli import proof_commands
from resume_contract.core.oracle import decide
from resume_contract.ledger.store import read_ledger
from resume_contract.proof import verify as verify_module


@pytest.mark.slow
def test_verify_depth_5_is_clean_and_reaches_every_table_entry(project: Path, run_cli, tmp_path: Path) -> None:
    """A tool test, on the frozen contract (tests/frozen_spec/): the explorer's output, and its reach."""
    from resume_contract.contract import load_generated

    contract = load_generated(project)
    counterexample = tmp_path / "cx.jsonl"
    code, out, err = run_cli("--root", str(project), "verify", "--depth", "5", "--counterexample", str(counterexample))
    assert code == 0, out
    # Not a terminal: a progress line at most every few seconds, always the last one, with the rate and an ETA.
    progress = err.splitlines()
    assert progress and all(line.startswith("verify: subtrees ") and " ledgers/s, ETA " in line for line in progress)
    lines = out.splitlines()
    alphabet = verify_module.explored_alphabet(contract)
    subtrees = len(alphabet) + 1  # one per first letter, and the empty ledger
    assert progress[-1].startswith(f"verify: subtrees {subtrees}/{subtrees} (100%)")
    assert lines[0] == f"exploring {alphabet.count(5):,} ledgers up to 5 events on {lines[0].split(' on ')[1].split()[0]} worker(s)"
    assert lines[1].startswith("contract: runtime-resume (Phase 0), spec sha256 ")  # which contract was proven
    assert lines[2].startswith(f"alphabet, from the spec: {alphabet.describe()}, each explored through its first letter: ")
    assert lines[3].startswith(f"explored {alphabet.count(5):,} ledgers in ")
    reachable = len(verify_module.reachable_steps(contract.table))
    assert lines[3].endswith(f"transition-table entries reached: {reachable} of {reachable}")
    assert lines[-1] == "no violation"
    assert not counterexample.exists(), "verify writes only a counterexample"


@pytest.mark.slow
def test_the_packaged_contract_is_clean_at_depth_3(run_cli) -> None:
    """A contract test: the live spec holds every invariant on every ledger up to 3 events (its alphabet, with the
    recovery facts' and hidden rows' letters, makes depth 5 hours long: `resume-contract verify --depth 4` by hand)."""
    code, out, _ = run_cli("verify", "--depth", "3", "--jobs", "2")
    assert (code, out.splitlines()[-1]) == (0, "no violation"), out


def _broken(monkeypatch: pytest.MonkeyPatch, key: tuple[str, str, bool], outcome: tuple[str, str | None]) -> None:
    """Make verify's copy of the table accept `key` as `outcome`, as a wrong generator would."""
    step = dict(verify_module.active().table.step)
    step[key] = outcome
    _with_table(monkeypatch, step=types.MappingProxyType(step))


def _with_table(monkeypatch: pytest.MonkeyPatch, contract: Any = None, **changes: object) -> None:
    """Make verify check the installed contract (or `contract`) with some of its table's fields changed (as a spec
    would)."""
    contract = contract or verify_module.active()  # the contract the commands run here, broken in one step
    broken = msgspec.structs.replace(contract, table=msgspec.structs.replace(contract.table, **changes))
    monkeypatch.setattr(proof_commands, "selected_contract", lambda args, **_: broken)


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_a_table_that_accepts_a_misnamed_response_is_caught_with_the_shortest_ledger(monkeypatch, run_cli, tmp_path: Path) -> None:
    _broken(monkeypatch, ("indeterminate", "function_response", False), ("succeeded", None))
    counterexample = tmp_path / "cx.jsonl"
    code, out, _ = run_cli("verify", "--depth", "3", "--jobs", "1", "--counterexample", str(counterexample))
    assert code == 1
    assert "VIOLATION matches_oracle: projector safe_replay" in out
    assert "VIOLATION table_matches_machine:" in out
    assert "VIOLATION replay_well_formed: replayed response e2 has no matching call before it" in out
    assert "  shortest ledger: function_call(a), function_response(a, other tool)\n" in out
    assert out.rstrip().endswith(f"replay it with: resume-contract plan {counterexample}")
    ledger = read_ledger(counterexample)
    assert [(event.content.id, event.content.name) for event in ledger.events] == [("a", "write"), ("a", "delete")]
    # The counterexample replays through the real command, which (with the real table) blocks it.
    code, out, _ = run_cli("plan", str(counterexample))
    assert code == 1 and all(code in out for code in names.MISNAMED)


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_a_table_that_forgets_an_anomaly_breaks_monotonic_evidence(monkeypatch, run_cli, tmp_path: Path) -> None:
    _broken(monkeypatch, ("succeeded", "function_response", True), ("succeeded", None))
    code, out, _ = run_cli("verify", "--depth", "3", "--jobs", "1", "--counterexample", str(tmp_path / "cx.jsonl"))
    assert code == 1
    assert "shortest ledger: function_call(a), function_response(a), function_response(a)" in out


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
    alphabet = verify_module.explored_alphabet()
    assert alphabet.spell((0, 2)) == "function_call(a), function_response(a)"


# Issue 24, item 2: a spec that narrows the terminal statuses to [completed], or renames the terminal flag's key,
# lets a run go on after a `cancelled` (or endInvocation-only) event. The oracle keeps the contract text's
# meaning of terminal, and the alphabet holds an event with each of its statuses and its flag, so verify says so.
# (A contract whose Phase 0 plan blocks a row after the terminal event: the gallery's base. maka's, since its ledger
# scan, reads such a row as any other, and its oracle with it.)


@pytest.fixture(scope="module")
def after_terminal_blocks(gallery_step: Any) -> Any:
    from resume_contract.contract import load_generated

    contract = load_generated(gallery_step("base"))
    assert contract.table.after_terminal_diagnostic is not None
    return contract


def test_a_table_that_narrows_the_terminal_statuses_disagrees_with_the_oracle(monkeypatch, run_cli, tmp_path: Path, after_terminal_blocks: Any) -> None:
    _with_table(monkeypatch, after_terminal_blocks, terminal_statuses=frozenset({"completed"}))
    code, out, _ = run_cli("verify", "--depth", "2", "--jobs", "1", "--counterexample", str(tmp_path / "cx.jsonl"))
    assert code == 1
    assert "VIOLATION matches_oracle: projector safe_replay [] replay ['e1', 'e2']; oracle blocked [] replay ['e1', 'e2']\n" in out
    assert "  shortest ledger: status failed, text\n" in out
    # ... and `cancelled` is in the alphabet: it stands in the same class as `failed`.
    assert "status failed (also status aborted, status cancelled)" in out


def test_a_table_that_renames_the_terminal_flag_disagrees_with_the_oracle(monkeypatch, run_cli, tmp_path: Path, after_terminal_blocks: Any) -> None:
    _with_table(monkeypatch, after_terminal_blocks, terminal_flag=("actions", "done"))
    code, out, _ = run_cli("verify", "--depth", "2", "--jobs", "1", "--counterexample", str(tmp_path / "cx.jsonl"))
    assert code == 1
    assert "VIOLATION matches_oracle: projector safe_replay [] replay ['e1', 'e2']; oracle blocked [] replay ['e1', 'e2']\n" in out
    assert "  shortest ledger: actions.endInvocation, text\n" in out


def test_the_alphabet_is_read_off_the_spec_every_kind_status_flag_and_partial_form() -> None:
    from resume_contract_generator.spec.validate import load_spec

    wire = load_spec(Path(__file__).resolve().parent.parent).wire
    names = {letter.name for letter in verify_module.explored_alphabet().letters}
    tool_kinds = [kind for kind in wire.content_kinds if kind.tool_call is not None]
    assert {f"{kind.name}(a)" for kind in tool_kinds} <= names
    assert {kind.name for kind in wire.content_kinds if kind.tool_call is None} <= names
    assert {f"status {value}" for value in wire.field("status").enum} <= names
    assert f"{wire.terminal_flag_field}.{wire.terminal_flag_key}" in names
    # Every letter is explored partial too, but a probe no run's first row is read through (a partial row is read
    # no further, and only a run's facts read the first row, partial or not).
    committed_only = {name for name, _, first in verify_module.active().table.probes if not first}
    assert {f"partial {name}" for name in names if not name.startswith("partial ")} - {f"partial {name}" for name in committed_only} <= names


def test_letters_the_walk_reads_alike_are_walked_alike() -> None:
    # The reduction is sound only if `walk_reads.reading` says everything the walk reads: every two-letter ledger
    # over all letters plans as the ledger of its letters' class representatives (classes by the projector alone).
    from resume_contract.core.explore import Alphabet, letters_of, projector_view
    from resume_contract.core.project import project
    from resume_contract.core.summary import PlanSummary

    contract = verify_module.active()
    alphabet = Alphabet.reduced(letters_of(contract.table, contract.model), [projector_view(contract.table, contract.model)])
    representative = {index: group[0] for group in alphabet.classes for index in group}

    def planned(letters: list[int]) -> PlanSummary:
        rows = [alphabet.letters[index].wire(f"e{position}") for position, index in enumerate(letters, 1)]
        return PlanSummary.of(project([contract.model.event_from_wire(row) for row in rows], contract.table))

    assert len(alphabet.classes) < len(alphabet.letters)
    for first in range(len(alphabet.letters)):
        for second in range(len(alphabet.letters)):
            assert planned([first, second]) == planned([representative[first], representative[second]]), (first, second)


def test_letters_the_oracle_reads_alike_are_decided_alike() -> None:
    from resume_contract.core.explore import letters_of
    from resume_contract.core.oracle import END_FLAG, TERMINAL, decide, reading

    contract = verify_module.active()
    letters = letters_of(contract.table, contract.model, statuses=TERMINAL, flags=(END_FLAG,))
    by_reading: dict[object, int] = {}
    for index, letter in enumerate(letters):
        by_reading.setdefault(reading(letter.wire("e1")), index)

    def decided(indexes: list[int]) -> object:
        return decide([letters[index].wire(f"e{position}") for position, index in enumerate(indexes, 1)])

    for first in range(len(letters)):
        for second in range(len(letters)):
            same = [by_reading[reading(letters[index].wire("e1"))] for index in (first, second)]
            assert decided([first, second]) == decided(same), (letters[first].name, letters[second].name)


def _without_check(monkeypatch: pytest.MonkeyPatch, check: str) -> None:
    """Make every contract's continuation table lose one check, as a wrong generator (or spec edit) would."""
    from resume_contract.contract import Contract

    real = Contract.continuation.func  # type: ignore[attr-defined]

    def broken(self: Contract) -> object:
        table = real(self)
        return dataclasses.replace(table, checks=tuple(c for c in table.checks if c.name != check))

    monkeypatch.setattr(Contract, "continuation", property(broken))


def test_a_continuation_table_without_its_identity_check_breaks_fresh_identity(monkeypatch, run_cli) -> None:
    _without_check(monkeypatch, "identity_reused")

    code, out, _ = run_cli("verify", "--depth", "1", "--jobs", "1")

    assert code == 1
    assert "VIOLATION fresh_identity: continues with invocationId, runId, turnId equal to the source's\n  situation: identity_reused\n" in out
    assert "no violation" not in out
    code, out, _ = run_cli("verify", "--depth", "1", "--jobs", "1", "--json")
    assert code == 1
    phase1 = json.loads(out)["continuation"]
    assert phase1["violations"] == [{"invariant": "fresh_identity", "message": "continues with invocationId, runId, turnId equal to the source's", "situation": "identity_reused"}]
    assert "fresh_identity" in phase1["invariants"]


def test_verify_reports_the_continuation_invariants_it_proved(run_cli) -> None:
    code, out, _ = run_cli("verify", "--depth", "1", "--jobs", "1", "--json")

    assert code == 0
    phase1 = json.loads(out)["continuation"]
    declared = yaml.safe_load((Path(__file__).resolve().parent.parent / "spec" / "continuation.yaml").read_text(encoding="utf-8"))["invariants"]
    assert phase1["invariants"] == list(declared)
    assert phase1["violations"] == []
    assert phase1["explored"] > len(declared)
