"""Running someone else's command (a conformance adapter) so that it cannot hang, flood or outlive `conform`.

Each adapter runs in a session (and process group) of its own, with no stdin. Its output is read with a bound: a
plan on stdout up to `STDOUT_LIMIT` (past it the adapter is cut off, a failure of that case alone), the tail of
stderr. Once the adapter itself exits, whatever it left behind in its group is killed, and a pipe a process
outside the group still holds is read for at most `LINGER_SECONDS` more: its answer counts, not when every copy
of its stdout is closed. At the timeout, or when `stop` is called (Ctrl-C, SIGTERM), the group is killed at once.
A process that left the adapter's session is adopted (on Linux) and killed once no adapter runs.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..system.orphans import Orphanage

STDOUT_LIMIT = 16 * 1024 * 1024  # a plan of a conformance vector is a few kilobytes
STDERR_TAIL = 64 * 1024  # only its last line is reported
LINGER_SECONDS = 0.5
_POLL_SECONDS = 0.05
_READ = 65536


@dataclass(frozen=True)
class Ran:
    """What one run of an adapter gave: its exit code (None: killed at the timeout, or stopped), its stdout, the
    tail of its stderr, and whether stdout passed STDOUT_LIMIT (then it was killed)."""

    code: int | None
    out: bytes
    err: bytes
    seconds: float
    flooded: bool = False


class Adapters:
    """The adapters running now, so that `stop` ends every one of them (from any thread). Used as a context
    manager, it also ends what an adapter left outside its session (`system.orphans`), whenever no adapter runs
    and when it closes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self._stopping = threading.Event()
        self._orphanage: Orphanage | None = None

    def __enter__(self) -> Adapters:
        self._orphanage = Orphanage().__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        orphanage, self._orphanage = self._orphanage, None
        if orphanage is None:
            return
        with self._lock:
            orphanage.end_orphans()
        time.sleep(_POLL_SECONDS)  # a killed group's middle process may still be dying: its orphan comes to us then
        with self._lock:
            orphanage.end_orphans()
        orphanage.__exit__()

    def stop(self) -> None:
        """Kill every running adapter's process group; runs after this one return at once, stopped."""
        self._stopping.set()
        with self._lock:
            running = list(self._running)
        for process in running:
            _kill_group(process)

    def run(self, arguments: Sequence[str], timeout: float) -> Ran:
        started = time.monotonic()
        with self._lock:  # never taken for an orphan by `end_orphans` before it is known as an adapter
            process = subprocess.Popen(
                list(arguments), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
            )
            self._running.add(process)
        try:
            answered, out, err, flooded = self._collect(process, started, timeout)
        finally:
            _kill_group(process)  # anything it left in its group; before it is reaped (see _exited)
            code = process.wait()
            with self._lock:
                self._running.discard(process)
                if self._orphanage is not None and not self._running:
                    self._orphanage.end_orphans()
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
        return Ran(code if answered else None, out, err, time.monotonic() - started, flooded)

    def _collect(self, process: subprocess.Popen[bytes], started: float, timeout: float) -> tuple[bool, bytes, bytes, bool]:
        """(whether it exited by itself, its stdout, its stderr's tail, whether stdout passed the limit)."""
        assert process.stdout is not None and process.stderr is not None
        out, err = bytearray(), bytearray()
        deadline = started + timeout
        exited_at: float | None = None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ, out)
            selector.register(process.stderr, selectors.EVENT_READ, err)
            while True:
                now = time.monotonic()
                if self._stopping.is_set() or now >= deadline:
                    return False, bytes(out), bytes(err), False
                if exited_at is None and _exited(process):
                    exited_at = now
                    _kill_group(process)  # what it left behind is not its answer
                if exited_at is not None and (not selector.get_map() or now - exited_at >= LINGER_SECONDS):
                    break  # all read, or a process outside its group holds a pipe: the adapter has answered
                wait = min(deadline - now, _POLL_SECONDS)
                if not selector.get_map():  # it closed both pipes and runs on
                    time.sleep(wait)
                    continue
                for key, _ in selector.select(wait):
                    chunk = os.read(key.fd, _READ)
                    if not chunk:
                        selector.unregister(key.fileobj)
                    elif key.data is out:
                        out += chunk
                        if len(out) > STDOUT_LIMIT:
                            return False, bytes(out[:STDOUT_LIMIT]), bytes(err), True
                    else:
                        err += chunk
                        del err[:-STDERR_TAIL]
        return True, bytes(out), bytes(err), False


def _exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether the adapter has exited, without reaping it: until it is reaped its id, and so its group's, cannot
    be given to another process, so killing the group never reaches someone else's."""
    return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is gone (a zombie leader keeps its id, so a reused id is not someone else's)
