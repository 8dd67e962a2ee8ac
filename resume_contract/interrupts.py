"""Stopping on Ctrl-C or SIGTERM: pending work is cancelled and every worker process ends with its parent.

A ProcessPoolExecutor left to itself waits for all submitted work on Ctrl-C (minutes for `verify`), and
SIGTERM kills only the parent, leaving workers computing and then blocked on their pipes for good. Here the
workers ignore SIGINT (the parent decides), SIGTERM becomes an exception in the parent, and a pool that is
left by an exception cancels what is pending and kills its workers.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a pool is made: multiprocessing costs every command a tenth of `check`
    from concurrent.futures import ProcessPoolExecutor

_JOIN_SECONDS = 2.0


class Terminated(KeyboardInterrupt):
    """SIGTERM reached the parent."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block (main thread only), SIGTERM raises Terminated instead of killing the process."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    except KeyboardInterrupt:
        ignore_further_interrupts()  # stopping: the next signal must not kill the clean-up halfway
        raise
    else:
        signal.signal(signal.SIGTERM, previous)


# Set by the command line when it owns the process: only then may stopping change the process's handlers.
OWNS_PROCESS = False


def ignore_further_interrupts() -> None:
    """Once stopping, stop for good: later SIGINTs and SIGTERMs are ignored (the CLI's own process only)."""
    if OWNS_PROCESS and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _worker_ignores_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def stoppable_pool(max_workers: int, mp_context: Any = None) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers end with the parent: on any exception, pending work is cancelled and
    the workers are killed (not waited for). `mp_context`: how workers start (default: the platform's)."""
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=max_workers, mp_context=mp_context, initializer=_worker_ignores_interrupts)
    try:
        yield pool
    except BaseException:
        ignore_further_interrupts()  # a second Ctrl-C must not cut the clean-up short and orphan the workers
        workers = list(getattr(pool, "_processes", {}).values())  # the executor keeps no public handle on them
        pool.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            process.kill()
        for process in workers:
            process.join(_JOIN_SECONDS)
        raise
    pool.shutdown(wait=True)
