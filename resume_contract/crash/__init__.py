"""The SIGKILL crash harness (`harness`), its child (`child`), the reference run loop and its failpoint hooks
(`runloop`, `failpoints`), and `resume-contract crash` (`catalog_run`, judged by `verdict`, laid out by `report`).

The names below keep the import path generated contract tests use (`from resume_contract.crash import ...`).
"""

from .harness import run_boundary_case, run_crash_case, run_in_parallel, run_torn_write_case
from .sqlite_harness import run_sqlite_case

__all__ = ["run_boundary_case", "run_crash_case", "run_in_parallel", "run_sqlite_case", "run_torn_write_case"]
