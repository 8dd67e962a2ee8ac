"""Shared fixtures: a throw-away copy of the project, and a snapshot of every file under a directory."""

from __future__ import annotations

import atexit
import hashlib
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Property and fuzz tests: a bounded budget in CI; `HYPOTHESIS_PROFILE=long` for a longer run. No example
# database, so a test run writes nothing into the checkout.
settings.register_profile("ci", max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=20_000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# A project's in-sync verdicts are remembered in a cache outside it (resume_contract/project/verdicts.py): the
# suite keeps its own, in a temporary directory, so that it writes nothing into the user's home. The process that
# made it (under xdist, the controller: its workers inherit the variable, and share the verdicts) removes it at exit.
if "RESUME_CONTRACT_CACHE_DIR" not in os.environ:
    os.environ["RESUME_CONTRACT_CACHE_DIR"] = tempfile.mkdtemp(prefix="resume-contract-test-cache-")
    atexit.register(shutil.rmtree, os.environ["RESUME_CONTRACT_CACHE_DIR"], ignore_errors=True)

from resume_contract.cli import main

REPO = Path(__file__).resolve().parent.parent
# Helpers the tests share as modules (`import spec_names`): importlib mode keeps tests/ off sys.path otherwise.
sys.path.insert(0, str(Path(__file__).resolve().parent))
# The tool tests' own spec: a frozen copy of the contract, never updated along with spec/. Tests of the tool
# (generator, drift check, review, bad-spec messages) read it, so editing the contract cannot break them.
FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"


@pytest.fixture(scope="session")
def _frozen_outputs() -> dict[str, str]:
    from resume_contract_generator.render.tree import render_all
    from resume_contract_generator.spec.validate import load_spec

    return render_all(load_spec(FROZEN_SPEC.parent))


@pytest.fixture
def project(tmp_path: Path, _frozen_outputs: dict[str, str]) -> Path:
    """A throw-away project for tests of the tool: the frozen spec (tests/frozen_spec/, not the live spec/) and
    the generated/ tree it renders to, to change and regenerate without touching the repo."""
    root = tmp_path / "project"
    shutil.copytree(FROZEN_SPEC, root / "spec")
    for relative, text in _frozen_outputs.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    return {
        path.relative_to(root).as_posix(): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def snapshot() -> Callable[[Path], dict[str, tuple[str, int]]]:
    """relative path -> (sha256, mtime) of every file under a root, to prove a command wrote nothing."""
    return _snapshot


@pytest.fixture
def run_cli() -> Callable[..., tuple[int, str, str]]:
    """Run `resume-contract ARGS...` in-process; return (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(args), out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    return run


class EventFactory:
    """Builds valid RuntimeEvents for one run with readable one-liners."""

    def __init__(self, session_id: str = "s1", run_id: str = "r1") -> None:
        self.session_id = session_id
        self.run_id = run_id

    def _event(self, event_id: str, author: str, role: str, content: dict | None, **extra):
        from resume_contract.contract import event_from_wire

        wire = {
            "id": event_id,
            "ts": 1,
            "partial": extra.pop("partial", False),
            "author": author,
            "role": role,
            "sessionId": self.session_id,
            "invocationId": "i1",
            "runId": self.run_id,
            "turnId": "t1",
        }
        if content is not None:
            wire["content"] = content
        wire.update(extra)
        return event_from_wire(wire)

    def text(self, event_id: str, text: str = "hello", **extra):
        return self._event(event_id, "user", "user", {"kind": "text", "text": text}, **extra)

    def call(self, event_id: str, call_id: str, name: str = "write_file", **extra):
        return self._event(event_id, "agent", "model", {"kind": "function_call", "id": call_id, "name": name, "args": {"n": 1}}, **extra)

    def response(self, event_id: str, call_id: str, name: str = "write_file", is_error: bool = False, **extra):
        content = {"kind": "function_response", "id": call_id, "name": name, "result": {"ok": not is_error}}
        if is_error:
            content["isError"] = True
        return self._event(event_id, "tool", "tool", content, **extra)

    def terminal(self, event_id: str, **extra):
        return self._event(event_id, "agent", "model", {"kind": "text", "text": "done"}, status="completed", **extra)


@pytest.fixture
def events() -> EventFactory:
    return EventFactory()


@pytest.fixture(scope="session")
def gallery_step(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A contract project at a step of examples/maka-history (tools/gallery.py materialise), made once a session."""
    import importlib.util

    made: dict[str, Path] = {}

    def at(step: str) -> Path:
        if step not in made:
            spec = importlib.util.spec_from_file_location("gallery_for_tests", Path(__file__).resolve().parent.parent / "tools" / "gallery.py")
            assert spec is not None and spec.loader is not None
            gallery = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(gallery)
            made[step] = gallery.materialise(tmp_path_factory.mktemp(step) / "project", through=step)
        return made[step]

    return at



def refusing_contract() -> Any:
    """The packaged contract with no ledger scan (`ledger_anomalies` without `duplicate_id`/`foreign_row`, as the seed's
    contract was): the reader refuses a repeated event id or another run's row as corruption. For tests of the reader,
    which hold whatever the live spec declares."""
    import msgspec

    from resume_contract.contract import active

    contract = active()
    table = msgspec.structs.replace(contract.table, duplicate_id_diagnostic=None, foreign_row_diagnostic=None)
    return msgspec.structs.replace(contract, table=table)


def diagnosing_contract() -> Any:
    """The packaged contract with a ledger scan (`ledger_anomalies.duplicate_id: duplicate_event_id`, `foreign_row:
    foreign_run_row`, codes chosen here), whatever the live spec declares."""
    import msgspec

    from resume_contract.contract import active

    contract = active()
    reason = contract.table.reason_order[0]
    codes = {"duplicate_event_id": (reason, "an event id repeats"), "foreign_run_row": (reason, "a row of another run")}
    table = msgspec.structs.replace(
        contract.table, diagnostics={**contract.table.diagnostics, **codes}, duplicate_id_diagnostic="duplicate_event_id", foreign_row_diagnostic="foreign_run_row"
    )
    return msgspec.structs.replace(contract, table=table)


@pytest.fixture(params=["numpy", "no numpy"])
def numpy_or_not(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A large ledger's path twice: with NumPy, and as an install without the `numpy` extra runs it."""
    if request.param == "no numpy":
        monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` raises ImportError, as when not installed
        from resume_contract.core.int64_sort import numpy_or_none

        assert numpy_or_none() is None
    return str(request.param)
