"""The SIGKILL crash harness: commit a failpoint's prefix in a child process, kill it, reopen, project.

Each case follows the contract's process harness: a temporary workspace; a child Python process appends the
prefix through the real RuntimeEventStore and signals only after every append returned; the parent kills it
with SIGKILL; the child's `finally` marker must be absent; a new store reopens the workspace; the prefix is
projected twice; the ledger's bytes and mtime must be unchanged.

The harness only observes. What the plan must be is the caller's: the generated tests hold the decision
table as literals, and `resume-contract crash` (`catalog_run.run_catalog`) hands what it observed to
`verdict`, which judges it against the generated catalog, and to `report`, which lays it out.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from ..contract import Contract, active, build_resume_plan
from ..core.plan import ResumePlan
from ..errors import LedgerCorruption
from ..ledger.repair import repair_ledger
from ..ledger.store import RuntimeEventStore, read_ledger
from ..system.interrupts import map_in_threads

Observed = TypeVar("Observed")  # what one case observed (a CrashObservation, or a continuation's)
READY_TIMEOUT_SECONDS = 30.0
EXIT_TIMEOUT_SECONDS = 10.0
TORN_ATTEMPTS = 8
LARGE_ROW_BYTES = 16 * 1024 * 1024


@dataclass
class CrashObservation:
    """What one crash case saw; `problems` lists every harness step that did not hold."""

    failpoint: str
    outcome: str
    prefix: str
    committed_ids: tuple[str, ...] = ()
    reopened_ids: tuple[str, ...] = ()
    plan: ResumePlan | None = None
    problems: list[str] = field(default_factory=list)
    child_stderr: str = ""
    # Torn-write cases only.
    corruption: LedgerCorruption | None = None
    committed_bytes: int = 0
    attempts: int = 0
    # Real-boundary cases only.
    side_effect_written: bool | None = None


def canonical_prefix(outcome: str, prefix: str, contract: Contract | None = None) -> list[Any]:
    """The committed prefix of the canonical ledger, as events."""
    contract = contract or active()
    catalog = contract.catalog
    rows = catalog.CANONICAL_LEDGER_ROWS[outcome][: catalog.PREFIX_LENGTHS[prefix]]
    return [contract.model.decode_row(row.encode()) for row in rows]


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL, unless it has exited already."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)


def died_by_kill(returncode: int | None) -> bool:
    return returncode == -signal.SIGKILL


class Children:
    """The children a run of the harness started and has not yet waited for, so an interrupt can kill them all."""

    def __init__(self) -> None:
        self._running: set[_Child] = set()
        self._lock = threading.Lock()

    def add(self, child: _Child) -> None:
        with self._lock:
            self._running.add(child)

    def discard(self, child: _Child) -> None:
        with self._lock:
            self._running.discard(child)

    def kill_all(self) -> None:
        with self._lock:
            running = list(self._running)
        for child in running:
            child.kill()


class _Child:
    """A child process whose stdout lines arrive on a queue, so every wait for them is bounded."""

    def __init__(
        self, children: Children, arguments: Sequence[str], stdin: bytes = b"", environment: dict[str, str] | None = None
    ) -> None:
        self.children = children
        children.add(self)
        self.process = subprocess.Popen(
            [*arguments],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: str | None = None
        threading.Thread(target=self._pump, daemon=True).start()
        assert self.process.stdin is not None
        self.process.stdin.write(stdin)
        self.process.stdin.close()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.decode("utf-8", "replace").strip())
        self.lines.put(None)

    def wait_for(self, expected: str, timeout: float = READY_TIMEOUT_SECONDS) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return False
            if line is None:
                return False
            if line == expected:
                return True

    def killed_at(self, who: str, where: str, *, paused: bool = False) -> list[str]:
        """Wait for the child to die at failpoint `where` (killed by its own hook, or with `paused` killed here once
        it says it paused there); what went wrong, in words naming `who`."""
        problems = []
        if paused:
            if not self.wait_for(f"paused at {where}"):
                problems.append(f"{who} never paused at {where}")
            returncode = self.kill()
        else:
            try:
                returncode = self.process.wait(timeout=READY_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                returncode = self.kill()
                problems.append(f"{who} did not die at {where}")
        if not died_by_kill(returncode):
            problems.append(f"{who} did not die by the kill at {where} (exit {returncode})")
        return problems

    def kill(self) -> int | None:
        kill(self.process)
        try:
            return self.process.wait(timeout=EXIT_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:  # pragma: no cover - a kill that does not kill
            return None

    def stderr(self) -> str:
        """Whatever the child wrote to stderr, once it has exited."""
        if self._stderr is None and self.process.poll() is not None and self.process.stderr is not None:
            self._stderr = self.process.stderr.read().decode("utf-8", "replace")
        return self._stderr or ""

    def close(self) -> None:
        self.kill()
        self.children.discard(self)
        self.stderr()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def _fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


# The children of the run in progress (`run_in_parallel` gives each run its own); a case run alone has its own too.
_CHILDREN: contextvars.ContextVar[Children | None] = contextvars.ContextVar("crash_children", default=None)


# The reference run loop packaged with resume-contract: the packaged contract's (a project names its own).
PACKAGED_RUN_LOOP = Path(__file__).with_name("runloop.py")


def run_loop_of(contract: Contract) -> Path | None:
    """The run loop the harness kills at each failpoint's hook: the one the project's spec names
    (spec/failpoints.yaml `run_loop`), the packaged one for the packaged contract, or None."""
    if contract.root is None:
        return PACKAGED_RUN_LOOP
    return contract.file(contract.catalog.RUN_LOOP)


def _child(
    arguments: Sequence[str], contract: Contract, stdin: bytes = b"", environment: dict[str, str] | None = None
) -> _Child:
    """A child process running `contract` (a Python module of resume-contract's, or any command)."""
    command = [sys.executable, "-m", *arguments[1:]] if arguments[0] == "-m" else [*arguments]
    return _Child(_CHILDREN.get() or Children(), command, stdin, contract.child_environment(dict(environment or os.environ)))


def _canonical_ledger_path(workspace: Path, contract: Contract) -> Path:
    catalog = contract.catalog
    return RuntimeEventStore(workspace, contract=contract).path(catalog.CANONICAL_SESSION_ID, catalog.CANONICAL_RUN_ID)


def _reopen_and_project(observation: CrashObservation, workspace: Path, contract: Contract) -> None:
    """Steps 7-9: reopen with a new store, project twice, and prove the ledger was not touched."""
    catalog = contract.catalog
    path = _canonical_ledger_path(workspace, contract)
    before = _fingerprint(path) if path.exists() else None
    ledger = RuntimeEventStore(workspace, contract=contract).read(catalog.CANONICAL_SESSION_ID, catalog.CANONICAL_RUN_ID)
    observation.reopened_ids = tuple(event.id for event in ledger.events)
    if observation.reopened_ids != observation.committed_ids:
        observation.problems.append(f"reopened ids {list(observation.reopened_ids)} != committed {list(observation.committed_ids)}")
    first = build_resume_plan(ledger.events, contract=contract)
    second = build_resume_plan(ledger.events, contract=contract)
    if first != second or msgspec.json.encode(first) != msgspec.json.encode(second):
        observation.problems.append("projecting the reopened prefix twice gave different plans")
    observation.plan = first
    if (path.exists() and _fingerprint(path)) != (before or False):
        observation.problems.append("projection changed the durable ledger")


def run_crash_case(failpoint: str, outcome: str, prefix: str, *, contract: Contract | None = None) -> CrashObservation:
    """The contract's process harness for one failpoint and tool outcome (of `contract`, by default the active one)."""
    contract = contract or active()
    observation = CrashObservation(failpoint, outcome, prefix)
    events = canonical_prefix(outcome, prefix, contract)
    observation.committed_ids = tuple(event.id for event in events)
    with tempfile.TemporaryDirectory(prefix=f"crash-{failpoint}-") as scratch:
        workspace, marker = Path(scratch) / "workspace", Path(scratch) / "cleanup-marker"
        rows = b"".join(contract.model.encode(event) + b"\n" for event in events)
        child = _child(["-m", "resume_contract.crash.child", str(workspace), str(marker)], contract, stdin=rows)
        try:
            if not child.wait_for("committed"):
                child.kill()
                observation.problems.append(f"the child never signalled its appends committed; stderr: {child.stderr()!r}")
                return observation
            returncode = child.kill()
            if not died_by_kill(returncode):
                observation.problems.append(f"the child did not die by the kill (exit {returncode})")
        finally:
            child.close()
        observation.child_stderr = child.stderr()
        if marker.exists():
            observation.problems.append("the child's finally cleanup ran: it was not killed hard")
        _reopen_and_project(observation, workspace, contract)
    return observation


def run_torn_write_case(prefix: str, outcome: str = "ok", *, contract: Contract | None = None) -> CrashObservation:
    """Kill the child while it appends a multi-megabyte row after the committed prefix; retry until torn."""
    contract = contract or active()
    observation = CrashObservation("torn", outcome, prefix)
    events = canonical_prefix(outcome, prefix, contract)
    observation.committed_ids = tuple(event.id for event in events)
    acknowledged = b"".join(contract.model.encode(event) + b"\n" for event in events)
    observation.committed_bytes = len(acknowledged)
    for attempt in range(1, TORN_ATTEMPTS + 1):
        observation.attempts = attempt
        with tempfile.TemporaryDirectory(prefix="crash-torn-") as scratch:
            workspace, marker = Path(scratch) / "workspace", Path(scratch) / "cleanup-marker"
            path = _canonical_ledger_path(workspace, contract)
            arguments = ["-m", "resume_contract.crash.child", str(workspace), str(marker), str(LARGE_ROW_BYTES)]
            child = _child(arguments, contract, stdin=acknowledged)
            try:
                if not (child.wait_for("committed") and child.wait_for("tearing")):
                    child.kill()
                    observation.problems.append(f"the child never started the large row; stderr: {child.stderr()!r}")
                    return observation
                deadline = time.monotonic() + READY_TIMEOUT_SECONDS
                while path.stat().st_size <= len(acknowledged) and time.monotonic() < deadline:
                    time.sleep(0.0002)
                returncode = child.kill()
            finally:
                child.close()
            data = path.read_bytes()
            if not died_by_kill(returncode) or marker.exists() or data.endswith(b"\n"):
                continue  # the row finished (or never started) before the kill landed: try again
            if data[: len(acknowledged)] != acknowledged:
                observation.problems.append("the acknowledged rows are not byte-identical after the crash")
            before = _fingerprint(path)
            try:
                read_ledger(path, contract=contract)
                observation.problems.append("a torn ledger was read as a committed prefix")
            except LedgerCorruption as corruption:
                observation.corruption = corruption
            if _fingerprint(path) != before:
                observation.problems.append("reading the torn ledger changed it")
            result = repair_ledger(path)
            if result.quarantine is None or result.quarantine.read_bytes() != data[len(acknowledged) :]:
                observation.problems.append("repair did not quarantine exactly the torn bytes")
            _reopen_and_project(observation, workspace, contract)
            return observation
    observation.problems.append(f"no kill landed mid-row in {TORN_ATTEMPTS} attempts")
    return observation


def run_boundary_case(
    failpoint: str, outcome: str, prefix: str, action: str = "kill", *, contract: Contract | None = None
) -> CrashObservation:
    """Run the contract's run loop with RESUME_FAILPOINTS=<failpoint>=<action> and let it die there."""
    contract = contract or active()
    observation = CrashObservation(failpoint, outcome, prefix)
    observation.committed_ids = tuple(event.id for event in canonical_prefix(outcome, prefix, contract))
    run_loop = run_loop_of(contract)
    if run_loop is None:
        observation.problems.append("the spec names no run loop (spec/failpoints.yaml `run_loop`): nothing to kill at a real boundary")
        return observation
    with tempfile.TemporaryDirectory(prefix=f"boundary-{failpoint}-") as scratch:
        workspace = Path(scratch) / "workspace"
        environment = {**os.environ, "RESUME_FAILPOINTS": f"{failpoint}={action}"}
        command = [sys.executable, str(run_loop)] if run_loop.suffix == ".py" else [str(run_loop)]
        child = _child([*command, str(workspace), outcome], contract, environment=environment)
        try:
            observation.problems += child.killed_at("the run loop", failpoint, paused=action == "pause")
        finally:
            child.close()
        observation.child_stderr = child.stderr()
        observation.side_effect_written = (workspace / "side-effects").exists()
        _reopen_and_project(observation, workspace, contract)
    return observation


def run_in_parallel(jobs: Sequence[Callable[[], Observed]], workers: int | None = None) -> list[Observed]:
    """Run cases concurrently (children are processes; threads only wait on them), results in job order."""
    workers = workers or max(2, (os.cpu_count() or 1) * 2)
    children = Children()

    def run(job: Callable[[], Observed]) -> Observed:
        _CHILDREN.set(children)  # in this worker thread: the job's children join this run's
        return job()

    return map_in_threads(run, jobs, workers, stop=children.kill_all)
