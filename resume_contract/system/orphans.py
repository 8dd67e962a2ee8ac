"""Processes that leave their parent's process group and session (a double fork, `setsid`) to outlive it.

Killing a command's process group does not reach them, and once their parent exits they are reparented to init:
nothing can find them. On Linux a process can make itself a *child subreaper*, so that an orphan among its
descendants is reparented to it instead, still its child: `Orphanage` does that, and `end_orphans` kills and
reaps every child it adopted that way. Elsewhere both do nothing.

Only children in another session than this process's, and not named by the caller as its own (a command it
runs and waits for), are ended: a caller's own children, in its session, are left alone.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Collection

_PR_SET_CHILD_SUBREAPER = 36  # prctl's options (linux/prctl.h)
_PR_GET_CHILD_SUBREAPER = 37


class Orphanage:
    """While open, this process adopts its descendants' orphans (Linux); `end_orphans` ends them."""

    def __init__(self) -> None:
        self._previous: int | None = None
        self._prctl: Callable[..., int] | None = None
        self._before: frozenset[int] = frozenset()

    def __enter__(self) -> Orphanage:
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                prctl = ctypes.CDLL(None, use_errno=True).prctl
                previous = ctypes.c_int(0)
                if prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(previous)) == 0 and prctl(_PR_SET_CHILD_SUBREAPER, 1) == 0:
                    self._prctl, self._previous = prctl, previous.value
            except (OSError, AttributeError):
                pass
        self._before = frozenset(_children())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._prctl is not None and self._previous is not None:
            self._prctl(_PR_SET_CHILD_SUBREAPER, self._previous)

    def end_orphans(self, own: Collection[int] = ()) -> int:
        """Kill and reap every adopted orphan (a child that is not in `own`, was not a child before, and is in
        another session); return how many there were."""
        if self._prctl is None:
            return 0
        session = os.getsid(0)
        ended = 0
        for pid in _children():
            if pid in own or pid in self._before:
                continue
            try:
                if os.getsid(pid) == session:
                    continue
                os.kill(pid, signal.SIGKILL)  # a child not yet reaped: its id cannot be anyone else's
                os.waitpid(pid, 0)
                ended += 1
            except (ProcessLookupError, ChildProcessError, PermissionError):
                continue
        return ended


def _children() -> list[int]:
    """This process's children, from /proc (Linux): every task's list."""
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children") as children:
                found += [int(pid) for pid in children.read().split()]
        except OSError:
            continue
    return found
