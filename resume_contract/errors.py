"""Every error resume-contract raises, under one root: `except ResumeContractError` catches them all.

The bottom of the package: it imports nothing of resume-contract, so any layer (the pure core, the ledger, the
generator) raises these without depending on anything above it. The command line maps each to its exit code
(`resume_contract.cli.errors`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

# The kinds of storage corruption (spec/decisions.yaml, storage_corruption): how the reader names what it found.
TORN_ROW = "torn_row"
INVALID_UTF8 = "invalid_utf8"
INVALID_JSON = "invalid_json"
INVALID_EVENT = "invalid_event"
DUPLICATE_EVENT_ID = "duplicate_event_id"
DUPLICATE_KEY = "duplicate_key"
FOREIGN_ROW = "foreign_row"
CORRUPTION_KINDS = (TORN_ROW, INVALID_UTF8, INVALID_JSON, INVALID_EVENT, DUPLICATE_EVENT_ID, DUPLICATE_KEY, FOREIGN_ROW)


class ResumeContractError(Exception):
    """The root of every error resume-contract raises on purpose."""


class UnsupportedPlatform(ResumeContractError):
    """resume-contract runs on POSIX systems (Linux, macOS) only: the reader needs positioned reads and flock."""


class LedgerCorruption(ResumeContractError):
    """A ledger that is not a legal committed prefix; no plan may be made from it."""

    def __init__(self, path: str | os.PathLike[str], line: int, offset: int, kind: str, detail: str) -> None:
        from pathlib import Path  # here, not at the top: a plan of a sound ledger never imports pathlib

        self.path: Path = Path(path)
        self.line = line
        self.offset = offset
        self.kind = kind
        self.detail = detail
        super().__init__(f"{path}:{line}: byte offset {offset}: {kind}: {detail}")

    def __reduce__(self) -> tuple[type, tuple[Path, int, int, str, str]]:
        # Raised in a worker process, it crosses to the parent pickled: by its fields, not its message.
        return (type(self), (self.path, self.line, self.offset, self.kind, self.detail))


class RowRefused(ResumeContractError):
    """A row that is not a legal RuntimeEvent; `kind` is one of the corruption kinds above."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}")


class LedgerChanged(ResumeContractError, OSError):
    """The ledger a plan was made from changed afterwards: its rows can no longer be copied from it."""


class StoreError(ResumeContractError):
    """Base class of the store's refusals."""


class InvalidLedgerId(StoreError, ValueError):
    """A session or run id that could leave the workspace or is not a plain name."""


class LedgerLocked(StoreError):
    """Another live writer (or repair) holds this ledger."""


class LedgerInUse(StoreError):
    """A live writer holds the ledger: it is a running run, not a crashed one, and may end mid-row."""


class TornTail(StoreError):
    """The ledger ends mid-row; appends are refused until `repair` quarantines the torn bytes."""


class DuplicateEventId(StoreError):
    """A different event with an id already in the ledger."""


class EventRefused(StoreError, ValueError):
    """An event `append` cannot write as exactly one row the reader reads back as that event; nothing was written."""


class LedgerMissing(StoreError, FileNotFoundError):
    """An explicit ledger path that does not exist: a typo must never read as an empty, safe prefix."""


class NotALedger(StoreError, OSError):
    """A ledger path that is not a regular file (a directory, a FIFO, a device)."""


class StoreUnreadable(StoreError):
    """A workspace's runtime.sqlite this tool does not read: not a SQLite database, another schema version
    (`user_version`), a missing table or column, a symlink. Nothing is planned from it."""


class StoreDamaged(StoreUnreadable):
    """A workspace's runtime.sqlite whose own copies of a fact disagree (an index and its table, a row's columns and its
    payload): a damaged file, never read as a plan, which could read safer than the file that was written."""

    def __init__(self, path: object, what: str) -> None:
        super().__init__(
            f"{path}: damaged: {what}; no plan is made from it (a damaged page can hide rows or change them). Keep the "
            f"file as evidence and check a copy: `sqlite3 COPY 'PRAGMA integrity_check'`; plan a backup, or the store "
            "the runtime rebuilt"
        )


class StoreBusy(StoreError):
    """A workspace's runtime.sqlite stayed locked past the wait, or kept changing while it was read."""


class EscapesWorkspace(ResumeContractError):
    """A step below the workspace that is a symlink, or a ledger that is also reachable by another name."""


class FailpointConfigError(ResumeContractError, ValueError):
    """RESUME_FAILPOINTS names an unknown failpoint or action."""


class VectorsUnreadable(ResumeContractError):
    """--vectors is not a directory of resume-contract vectors."""


class VectorError(ResumeContractError):
    """The spec names something no vector can be made for (e.g. a corruption kind with no recipe)."""


class FactsRefused(ResumeContractError, ValueError):
    """A continuation's facts are not what the spec declares (an undeclared key, a missing one, a wrong type)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = tuple(problems)


class ExpressionFailed(ResumeContractError, ValueError):
    """A contract's expression met a value its semantics gives no meaning to (docs/expressions.md): a decision
    made from it would be a guess, so none is made."""


class NoContinuationDecision(ResumeContractError):
    """The contract declares no continuation decision (spec/continuation.yaml): a Phase 0 contract."""


class RunHeaderUnreadable(StoreError):
    """A run header (`run.json`) that is not a readable JSON object: too large, not JSON, not an object, a link."""


class RunHeaderMissing(RunHeaderUnreadable, FileNotFoundError):
    """A run with no header (or no run directory)."""


class RunHeaderExists(StoreError):
    """A header `create` (a continuation's claim) found the run already has one; nothing was written."""


class RunHeaderRefused(StoreError, ValueError):
    """A header `write` cannot write as a JSON object that reads back the same; nothing was written."""


class ContinuationRejected(ResumeContractError):
    """Executing a continuation was refused before anything was written: `code` is the reference's stable code
    (`source_high_water_changed`, `continuation_claim_conflict`, `target_run_conflict`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class RecoveryRefused(ResumeContractError):
    """Startup recovery cannot take a run to a final state (a state the lifecycle does not know, two terminal
    events, a recovery step with no implementation); that run was left as it was."""
