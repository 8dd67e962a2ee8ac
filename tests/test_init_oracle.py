"""`init` gives a project the oracle of the edition its spec names, as one file the project owns (oracle.py).

A spec naming `packaged_oracle: recovery-facts` is judged against the second edition (core/oracle_recovery.py, which
builds on the first): the project's oracle.py must be that edition, standing alone. Expectations are written by hand
from maka-history step 06 (a parked decision parks a dispatched operation; a call whose dispatch never came is not
dispatched under the tool-boundary protocol), so a project given the first edition alone fails here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROW = {"sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": 1, "partial": False}
MARKER = {"runtimeProtocol": {"toolBoundary": "t1_after_preflight_v1"}}
# A dispatch carries the SHA-256 of its call's tool and arguments as JSON with sorted keys (maka's canonicalArgsHash).
BASH_NO_ARGS = "sha256:" + hashlib.sha256(json.dumps({"toolName": "Bash", "args": {}}, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@pytest.fixture(scope="module")
def project_oracle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ModuleType]:
    root = tmp_path_factory.mktemp("init") / "project"
    done = subprocess.run([sys.executable, "-m", "resume_contract", "init", str(root)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    spec = importlib.util.spec_from_file_location("project_oracle_under_test", root / "oracle.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return root, module


def _system(event_id: str, actions: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {**ROW, "id": event_id, "role": "system", "author": "system", "actions": actions, "refs": {"operationId": "op-1", "toolCallId": call_id}}


def _rows(*decision: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {**ROW, "id": "u", "role": "user", "author": "user", "content": {"kind": "text", "text": "go"}, "actions": MARKER},
        {**ROW, "id": "c", "role": "model", "author": "agent", "content": {"kind": "function_call", "id": "a", "name": "Bash", "args": {}}},
        _system("d", {"toolDispatch": {"operationId": "op-1", "providerToolCallId": "a", "toolName": "Bash", "canonicalArgsHash": BASH_NO_ARGS}}, "a"),
    ]
    for disposition in decision:
        payload = {"kind": "maka.tool.recovery_decision", "version": 1, "payload": {"disposition": disposition}}
        rows.append(_system("p", {"toolRecovery": payload}, "a"))
    return rows


def test_the_oracle_init_writes_is_the_edition_the_spec_names_and_stands_alone(project_oracle: tuple[Path, ModuleType]) -> None:
    root, oracle = project_oracle
    invariants = (root / "spec" / "invariants.yaml").read_text(encoding="utf-8")
    if "\npackaged_oracle: recovery-facts\n" not in invariants:
        pytest.skip("the packaged spec names the first edition: init copies core/oracle.py as it is")
    assert "from ." not in (root / "oracle.py").read_text(encoding="utf-8")  # no import of the package's modules
    parked = oracle.decide(_rows("parked"))
    assert (parked.disposition, parked.statuses, parked.requires_verification) == ("blocked", (("a", "parked"),), False)
    in_doubt = oracle.decide(_rows())
    assert (in_doubt.disposition, in_doubt.statuses, in_doubt.requires_verification) == ("blocked", (("a", "indeterminate"),), True)


def test_the_project_passes_check_run_oracle_as_init_left_it(project_oracle: tuple[Path, ModuleType]) -> None:
    root, _ = project_oracle
    done = subprocess.run([sys.executable, "-m", "resume_contract", "check", "--run-oracle"], cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
