"""Advisory locks on a ledger: one writer holds an exclusive lock for as long as it is open; readers only probe.

A reader probing for a live writer holds a shared lock for a moment, so a writer opening at that moment
waits for it (a bounded time) instead of failing: reading a workspace never stops a healthy run from
starting. A real second writer holds its lock for good, and the wait ends in LedgerLocked.
"""

from __future__ import annotations

import errno
import fcntl
import time

# How long a writer waits for a lock held by someone else before it gives up. A reader's probe holds the
# lock for microseconds; a live writer holds it until it dies.
WRITER_WAIT_SECONDS = 1.0
_POLL_SECONDS = 0.002


def try_lock(fd: int, exclusive: bool) -> bool:
    """Take the lock without blocking; False when someone else holds it."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        return True
    except OSError as error:
        if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise


def unlock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)


def lock_for_writing(fd: int, wait_seconds: float = WRITER_WAIT_SECONDS) -> bool:
    """Take the exclusive lock, waiting up to `wait_seconds` for probes to let go; False if it stays held."""
    deadline = time.monotonic() + wait_seconds
    while not try_lock(fd, exclusive=True):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)
    return True


def has_live_writer(fd: int) -> bool:
    """Whether a writer holds the ledger open: probe with a shared lock and let go at once."""
    if not try_lock(fd, exclusive=False):
        return True
    unlock(fd)
    return False
