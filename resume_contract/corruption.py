"""The one error a ledger reader raises, in a module of its own so the CLI can catch it without loading the reader."""

from __future__ import annotations

from pathlib import Path


class LedgerCorruption(Exception):
    """A ledger that is not a legal committed prefix; no plan may be made from it."""

    def __init__(self, path: Path, line: int, offset: int, kind: str, detail: str) -> None:
        self.path = path
        self.line = line
        self.offset = offset
        self.kind = kind
        self.detail = detail
        super().__init__(f"{path}:{line}: byte offset {offset}: {kind}: {detail}")

    def __reduce__(self) -> tuple[type, tuple[Path, int, int, str, str]]:
        # Raised in a worker process, it crosses to the parent pickled: by its fields, not its message.
        return (type(self), (self.path, self.line, self.offset, self.kind, self.detail))
