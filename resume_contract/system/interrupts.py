"""Stopping on Ctrl-C or SIGTERM: pending work is cancelled and every worker process ends with its parent.

A ProcessPoolExecutor left to itself waits for all submitted work on Ctrl-C (minutes for `verify`), and
SIGTERM kills only the parent, leaving workers computing and then blocked on their pipes for good. Here the
workers ignore SIGINT (the parent decides), SIGTERM becomes an exception in the parent, and a pool that is
left by an exception cancels what is pending and kills its workers.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a pool is made: multiprocessing costs every command a tenth of `check`
    import signal
    from concurrent.futures import ProcessPoolExecutor
else:  # the same functions, without the enums signal.py makes of them on import (3 M instructions, every command)
    import _signal as signal

_JOIN_SECONDS = 2.0


class Terminated(KeyboardInterrupt):
    """SIGTERM reached the parent."""


@contextmanager
def stop_on_signals(*, for_good: bool) -> Iterator[None]:
    """Within the block (main thread only), SIGTERM raises Terminated instead of killing the process.

    With `for_good` (the caller owns the process: the command line), the first SIGINT or SIGTERM also makes
    every later one ignored, from the moment it arrives: once stopping, a second Ctrl-C must not cut the
    clean-up short (workers killed, temporary files removed) and leave workers behind. A library caller
    keeps its own handlers: only SIGTERM is turned into an exception, and restored after the block.
    """

    stop = _Stopping(for_good)
    try:
        terminate = signal.signal(signal.SIGTERM, stop)  # (None: a handler not set from Python)
    except ValueError:  # only the main thread may set handlers: elsewhere, none
        refused = True
    else:
        refused = False
    if refused:
        yield
        return
    previous = terminate, signal.signal(signal.SIGINT, stop) if for_good else None
    try:
        yield
    finally:
        still_held = stop.let_go() if stop.held is not None else None  # the block ended before it could be raised
        # Once stopping with `for_good`, the handlers ignore every signal: those stay, for the rest of the exit.
        # (A handler set outside Python, None, cannot be set again: the default is.)
        if signal.getsignal(signal.SIGTERM) is stop:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous[0] is None else previous[0])
        if previous[1] is not None and signal.getsignal(signal.SIGINT) is stop:
            signal.signal(signal.SIGINT, previous[1])
        if still_held is not None:
            stop.raise_for(still_held)


class _Stopping:
    """The handler `stop_on_signals` sets: SIGINT or SIGTERM becomes KeyboardInterrupt or Terminated, raised where
    that is safe (see `_resume_frame`)."""

    def __init__(self, for_good: bool) -> None:
        self.for_good = for_good
        self.held: tuple[int, float] | None = None  # a signal held back while it may not be raised, and since when
        self._resume: Any = None  # the frame it is raised in, once the call it made returns to it

    def __call__(self, signum: int, frame: Any) -> None:
        if self.held is not None:
            if time.monotonic() - self.held[1] < _HOLD_SECONDS:
                return  # the one held is raised (a later one is the same request)
            self.raise_for(self.let_go())  # asked again, and held too long: at once, wherever it finds the command
        resume = _resume_frame(frame)
        if resume is not None and sys.gettrace() in (None, _no_tracing):
            # Raised at the resume frame's next line or return: only its own code is traced (not a timer, not
            # another signal: one sent to this process now would be handled at once, inside this handler).
            self.held, self._resume = (signum, time.monotonic()), resume
            resume.f_trace = self._in_resume_frame
            sys.settrace(_no_tracing)
            return
        self.raise_for(signum)

    def _in_resume_frame(self, frame: Any, event: str, arg: Any) -> Any:
        if self.held is None or frame is not self._resume:
            return None  # (let go already: trace no more)
        if event in ("line", "return"):
            self.raise_for(self.let_go())
        return self._in_resume_frame

    def let_go(self) -> int:
        """The signal held back (there is one), no longer held, and no frame traced for it."""
        assert self.held is not None
        if sys.gettrace() is _no_tracing:
            sys.settrace(None)
        if self._resume is not None:
            self._resume.f_trace = None
        signum, self.held, self._resume = self.held[0], None, None
        return signum

    def raise_for(self, signum: int) -> None:
        if self.for_good:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _no_tracing(frame: Any, event: str, arg: Any) -> None:
    return None  # a new frame is not traced: only the one a held signal is raised in


# Where an exception raised by a signal's handler breaks what it interrupts: while a module is imported (Python
# 3.11 turns one raised in a class's __set_name__ into a RuntimeError, a traceback), and while msgspec's C code
# has called back into Python to read a type (msgspec 0.23 loses it there and crashes: exit -11, one early
# SIGTERM in ten). A signal that arrives there is held back and raised in the frame that made the outermost such
# call, at its next line or return, once that call is done (or when the block ends). A second signal after
# _HOLD_SECONDS is raised at once, wherever it finds the command. With a debugger's trace hook, at once, as before.
_UNSAFE_MODULES = frozenset({"importlib._bootstrap", "importlib._bootstrap_external", "typing"})
_HOLD_SECONDS = 2.0


def _resume_frame(frame: Any) -> Any:
    """The frame below the outermost frame of an import, typing or msgspec on the stack from `frame`, or None when
    there is none (the signal may be raised where it is)."""
    outermost = None
    while frame is not None:
        module = frame.f_globals.get("__name__")
        if isinstance(module, str) and (module in _UNSAFE_MODULES or module == "msgspec" or module.startswith("msgspec.")):
            outermost = frame
        frame = frame.f_back
    return None if outermost is None else outermost.f_back


def _on_main_thread() -> bool:
    # Threads are started through `threading`, so while it is not imported this is the main thread (and a command
    # that starts none does not pay for its import).
    threading = sys.modules.get("threading")
    return threading is None or threading.current_thread() is threading.main_thread()


def _worker_ignores_interrupts(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)  # forked while the parent deferred them
    _die_with(parent)


def _die_with(parent: int) -> None:
    """On Linux, have the kernel kill this worker when its parent dies, even by SIGKILL or the OOM killer,
    which leave no chance to clean up: else the worker waits on its pipe for good."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # prctl's option number (linux/prctl.h)
_DEFERRED = {signal.SIGINT, signal.SIGTERM}  # what `signals_deferred` holds back


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Within the block (main thread only), SIGINT and SIGTERM wait, blocked, and are handled when it ends.

    A pool forks its workers in `submit`; a signal handled while it forks runs its handler inside an at-fork
    hook, which swallows the exception ("Exception ignored"), and the command then ran on as if never told
    to stop. Threads started within the block inherit the mask, so the signal reaches the main thread."""
    if not hasattr(signal, "pthread_sigmask") or not _on_main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def stoppable_pool(max_workers: int, mp_context: Any = None) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers end with the parent: on any exception, pending work is cancelled and
    the workers are killed (not waited for). `mp_context`: how workers start (default: the platform's)."""
    from concurrent.futures import ProcessPoolExecutor

    class Pool(ProcessPoolExecutor):
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            with signals_deferred():  # it may fork: see signals_deferred
                return super().submit(*args, **kwargs)

    pool = Pool(max_workers=max_workers, mp_context=mp_context, initializer=_worker_ignores_interrupts, initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        # A signal arriving now waits for the clean-up (the command line's handlers ignore every signal after
        # the first, `stop_on_signals`); after an ordinary exception the process goes on (a ledger refused in
        # parts is planned whole), and stays interruptible.
        with signals_deferred():
            workers = list(getattr(pool, "_processes", {}).values())  # the executor keeps no public handle on them
            manager = getattr(pool, "_executor_manager_thread", None)  # (shutdown forgets it)
            pool.shutdown(wait=False, cancel_futures=True)
            for process in workers:
                process.kill()
            for process in workers:
                process.join(_JOIN_SECONDS)
            # The pool's thread sees its workers die and closes its wake-up pipe, which races the wake-up the
            # interpreter's exit sends it (3.11 has no lock there; CPython gh-125451 added one): "OSError: [Errno
            # 9] Bad file descriptor" in a traceback after a clean Ctrl-C. Once the thread is done, nothing races.
            if manager is not None:
                manager.join(_JOIN_SECONDS)
        raise
    pool.shutdown(wait=True)


def map_in_threads(function: Callable[[Any], Any], items: Sequence[Any], workers: int, stop: Callable[[], None]) -> list[Any]:
    """`function` over `items` on `workers` threads, results in order. Threads only wait on child processes:
    on Ctrl-C, SIGTERM or a failure nothing pending starts, and `stop()` ends what is running, now."""
    from concurrent.futures import ThreadPoolExecutor  # when asked: a plan never needs it

    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        return list(pool.map(function, items))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        stop()
        raise
    finally:
        pool.shutdown(wait=True)


def default_workers() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
