"""Ledgers on disk: the bytes, the strict reader and its proofs, the store and its locks, containment in a
workspace, repair, a run with its snapshots, file planning and the workspace audit.

May import the core, the bound contract and `system`; never the crash harness, the proofs, the generator or
the command line. The multi-process parts planner is fenced in `parallel/` and loaded only when asked for.
"""

from ..system.platform import require_posix

require_posix()
