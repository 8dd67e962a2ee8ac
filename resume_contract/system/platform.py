"""The platforms resume-contract runs on: POSIX (Linux, macOS). Windows is not supported.

The reader plans a ledger with positioned reads (`os.pread`), the store locks it with `flock` and opens every
step below a workspace with `O_NOFOLLOW` relative to its directory (`openat`), and the crash harness kills
with SIGKILL: none of these exist on Windows, so rather than fail halfway, resume-contract refuses to start.
"""

from __future__ import annotations

import os

from ..errors import UnsupportedPlatform

SUPPORTED = "POSIX systems (Linux, macOS)"


def require_posix() -> None:
    """Raise UnsupportedPlatform anywhere but on a POSIX system."""
    if os.name != "posix":
        raise UnsupportedPlatform(f"resume-contract runs on {SUPPORTED} only, not on {os.name!r} (Windows is not supported)")
