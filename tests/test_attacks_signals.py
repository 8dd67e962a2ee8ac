"""Signals (issue 10, item 14): SIGINT and SIGTERM to the parent cancel pending work, end every worker within
a second or two, and exit 130 / 143; no process is left behind.

Each command runs in a session of its own, so "left behind" is checked on the whole process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

AUDIT_SLOWLY = (
    "import sys, time\n"
    "from resume_contract.ledger import audit\n"
    "real = audit.summarize\n"
    "def slow(job, *rest):\n"
    "    time.sleep(0.5)\n"
    "    return real(job, *rest)\n"
    "audit.summarize = slow\n"
    "from resume_contract.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def _default_sigint() -> None:
    # A shell starts background jobs with SIGINT ignored and children inherit that, so Python would install no
    # KeyboardInterrupt handler: give the command the disposition a terminal gives it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _interrupt(command: list[str], signum: int, started_when: str) -> tuple[int, float, str]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_default_sigint)
    deadline = time.monotonic() + 30
    assert process.stdout is not None
    if started_when:
        line = process.stdout.readline()
        assert started_when in line, line
    time.sleep(1.0)  # the workers are busy by now
    assert process.poll() is None and time.monotonic() < deadline, "finished before it could be interrupted"
    sent = time.monotonic()
    os.kill(process.pid, signum)
    try:
        code = process.wait(timeout=10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    took = time.monotonic() - sent
    for _ in range(50):  # the group's last members may take a moment to be reaped
        if not _group_alive(process.pid):
            break
        time.sleep(0.05)
    assert not _group_alive(process.pid), "a process of the command's group outlived it"
    return code, took, process.stderr.read() if process.stderr else ""


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["sigterm", "sigint"])
def test_verify_stops_its_workers_and_exits(signum: int, code: int) -> None:
    command = [sys.executable, "-m", "resume_contract", "verify", "--depth", "7", "--jobs", "2"]
    returncode, took, err = _interrupt(command, signum, "exploring")
    assert returncode == code and took < 3, (took, err)
    assert "Traceback" not in err


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["sigterm", "sigint"])
def test_the_audit_stops_its_workers_and_exits(tmp_path: Path, signum: int, code: int) -> None:
    for run in range(40):
        ledger = tmp_path / "sessions" / "s" / "runs" / f"r{run}" / "runtime-events.jsonl"
        ledger.parent.mkdir(parents=True)
        ledger.write_bytes(b"")
    command = [sys.executable, "-c", AUDIT_SLOWLY, "plan", "--workspace", str(tmp_path), "--jobs", "2"]
    returncode, took, err = _interrupt(command, signum, "")
    assert returncode == code and took < 3, (took, err)
    assert "Traceback" not in err


def test_crash_stops_its_children_and_exits() -> None:
    command = [sys.executable, "-m", "resume_contract", "crash", "--jobs", "1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_default_sigint)
    time.sleep(1.0)
    if process.poll() is not None:
        pytest.skip("the catalog finished within a second on this machine")
    os.kill(process.pid, signal.SIGTERM)
    assert process.wait(timeout=10) == 143
    for _ in range(50):
        if not _group_alive(process.pid):
            break
        time.sleep(0.05)
    assert not _group_alive(process.pid)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_burst_of_signals_still_stops_every_worker(tmp_path: Path, signum: int) -> None:
    for run in range(60):
        ledger = tmp_path / "sessions" / "s" / "runs" / f"r{run}" / "runtime-events.jsonl"
        ledger.parent.mkdir(parents=True)
        ledger.write_bytes(b"")
    command = [sys.executable, "-c", AUDIT_SLOWLY, "plan", "--workspace", str(tmp_path), "--jobs", "4"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_default_sigint)
    time.sleep(1.0)
    for _ in range(5):  # an impatient operator
        if process.poll() is None:
            os.kill(process.pid, signum)
        time.sleep(0.01)
    try:
        code = process.wait(timeout=10)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    for _ in range(50):
        if not _group_alive(process.pid):
            break
        time.sleep(0.05)
    assert not _group_alive(process.pid), "a worker outlived the command"
    assert code == (130 if signum == signal.SIGINT else 143)
    assert "Traceback" not in (process.stderr.read() if process.stderr else "")


# The pool's own guarantees, found by attacking `plan --jobs 2` (resume_contract/interrupts.py).


def _worker_state() -> tuple[set[int], int]:
    """(signals blocked, the parent-death signal) as a pool worker sees them."""
    import ctypes

    death = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(2, ctypes.byref(death))  # PR_GET_PDEATHSIG
    return set(signal.pthread_sigmask(signal.SIG_BLOCK, [])), death.value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and signal masks as on Linux")
def test_a_signal_during_a_submit_waits_for_it_and_workers_die_with_their_parent() -> None:
    import multiprocessing

    from resume_contract.system.interrupts import signals_deferred, stoppable_pool

    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        # A signal that lands while a pool forks would run its handler inside an at-fork hook, which swallows
        # the exception the handler raises: within the block it waits, and is handled when the block ends.
        with signals_deferred():
            # At the main thread, whose mask defers it (the command's own threads start within the block and
            # inherit the mask; the test runner's worker may hold a thread of its own, which never blocked it).
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGTERM)
            assert received == [] and signal.SIGTERM in signal.sigpending()
        assert received == [signal.SIGTERM]
        with stoppable_pool(1, multiprocessing.get_context("fork")) as pool:
            blocked, death = pool.submit(_worker_state).result()
        assert not blocked & {signal.SIGINT, signal.SIGTERM}  # the worker took none of the deferral with it
        assert death == signal.SIGKILL  # killed by the kernel if its parent dies, even by SIGKILL
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_pool_left_by_an_interrupt_has_no_thread_left_to_race_the_exit() -> None:
    # Python 3.11's pool thread closes its wake-up pipe once it sees the killed workers, while the interpreter's
    # exit may be writing to it: a traceback ("Bad file descriptor") after a clean Ctrl-C, seen once in CI. The
    # clean-up waits for that thread, so by the time the interrupt leaves the block there is nothing to race.
    from resume_contract.system.interrupts import stoppable_pool

    threads = []
    with pytest.raises(KeyboardInterrupt), stoppable_pool(2) as pool:
        for _ in range(4):
            pool.submit(time.sleep, 5)
        threads.append(pool._executor_manager_thread)
        time.sleep(0.2)  # the workers are busy
        raise KeyboardInterrupt
    assert threads[0] is not None and not threads[0].is_alive()


def test_a_pool_left_by_an_error_leaves_ctrl_c_working() -> None:
    # A part refused as corrupt leaves the parts' pool by an exception, and the ledger is then planned whole:
    # that must stay interruptible. Only stopping (a signal, in the process the command line owns) makes later
    # signals be ignored.
    from resume_contract.system import interrupts

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        with interrupts.stop_on_signals(for_good=True):
            with pytest.raises(ValueError), interrupts.stoppable_pool(1) as pool:
                pool.submit(abs, -1).result()
                raise ValueError("a part was refused")
            assert signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, before[0])  # still raises on Ctrl-C
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
        with pytest.raises(KeyboardInterrupt), interrupts.stop_on_signals(for_good=True):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        assert signal.getsignal(signal.SIGINT) == signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


def test_a_library_caller_keeps_its_own_ctrl_c() -> None:
    # Not owning the process (the API, a test calling main() with its own streams), stopping changes no handler.
    from resume_contract.system import interrupts

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with pytest.raises(interrupts.Terminated), interrupts.stop_on_signals(for_good=False):
        assert signal.getsignal(signal.SIGINT) == before[0]
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1)
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
