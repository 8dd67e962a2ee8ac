"""A contract meets its runtime's real ledgers before a crash does (`resume-contract fit`): every row of sample
ledgers read with the contract's row model, and each row the model refuses reported as a contract/runtime
mismatch (the row, the field's path, what the contract declares there) — apart from corruption (a torn tail,
bytes that are no JSON object, a key twice in one object), which says the file is damaged, not that the contract
is wrong. Read only; nothing is decided.

Samples: a JSONL file, or a directory (under a contract in the contract language that declares `rows.layout`,
the runs it holds by that layout; else every `*.jsonl` file under it, in name order, no symlink followed), or a
workspace holding maka's runtime.sqlite (each run read as `plan` reads it).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from ..core.wire import json_value
from ..errors import INVALID_UTF8, TORN_ROW, RowRefused

MISMATCH = "mismatch"
CORRUPT = "corrupt"


@dataclass(frozen=True)
class Finding:
    """One row that does not fit: a mismatch (the contract's row model refuses it) or corruption."""

    kind: str  # MISMATCH or CORRUPT
    file: str
    line: int
    path: str  # the field's path ($.payload.type), "" for a row as a whole
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "file": self.file, "line": self.line, "field": self.path, "message": self.message}


@dataclass
class Report:
    files: list[str] = field(default_factory=list)
    rows: int = 0
    findings: list[Finding] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, why)

    @property
    def mismatches(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.kind == MISMATCH]

    def as_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "rows": self.rows,
            "mismatches": len(self.mismatches),
            "corrupt": len(self.findings) - len(self.mismatches),
            "findings": [finding.as_json() for finding in self.findings],
            "unreadable": [{"path": path, "why": why} for path, why in self.unreadable],
        }


def fit(samples: list[str], contract: Any) -> Report:
    """Every row of the sample ledgers read with `contract`'s row model."""
    from .sqlite_layout import holds_store

    report = Report()
    for sample in samples:
        if os.path.isdir(sample) and holds_store(sample):
            _fit_store(sample, contract, report)
            continue
        for path in _files(sample, contract, report):
            report.files.append(path)
            _fit_file(path, _reader(contract), report)
    return report


def _fit_store(workspace: str, contract: Any, report: Report) -> None:
    """A workspace's runtime.sqlite (maka's store): each run read as `plan` reads it; its first row the model
    refuses, or its first corruption, named."""
    from ..errors import LedgerCorruption, StoreError
    from .sqlite_layout import store_path
    from .sqlite_store import SqliteStore

    path = str(store_path(workspace))
    if getattr(contract, "module", None) is not None:
        report.unreadable.append((path, "a SQLite store: the contract language declares no SQLite layout yet"))
        return
    report.files.append(path)
    try:
        with SqliteStore(workspace, contract=contract) as store:
            for session, run in store.runs():
                try:
                    report.rows += len(store.read_run(session, run).events)
                except LedgerCorruption as corruption:
                    kind = MISMATCH if corruption.kind == "invalid_event" else CORRUPT
                    report.findings.append(Finding(kind, f"{path} (session {session!r}, run {run!r})", corruption.line, "", f"{corruption.kind}: {corruption.detail}"))
    except StoreError as error:
        report.unreadable.append((path, str(error)))


def _files(sample: str, contract: Any, report: Report) -> list[str]:
    try:
        mode = os.stat(sample).st_mode
    except OSError as error:
        report.unreadable.append((sample, error.strerror or str(error)))
        return []
    if stat.S_ISREG(mode):
        return [sample]
    if not stat.S_ISDIR(mode):
        report.unreadable.append((sample, "not a file or a directory"))
        return []
    module = getattr(contract, "module", None)
    if module is not None and module.LAYOUT is not None:
        from .language_reader import discover

        return [path for _, path in discover(sample, module)]
    found = []
    for directory, subdirectories, files in os.walk(sample):  # (os.walk follows no symlinked directory)
        subdirectories.sort()
        found += [os.path.join(directory, name) for name in sorted(files) if name.endswith(".jsonl") and not os.path.islink(os.path.join(directory, name))]
    return found


def _reader(contract: Any) -> Any:
    """A function reading one row's bytes: None when it fits, else (kind, path, message)."""
    module = getattr(contract, "module", None)
    if module is None:  # a contract of the catalogue's files: its decoding model
        def catalogue(line: bytes) -> tuple[str, str, str] | None:
            try:
                contract.model.decode_row(line)
            except RowRefused as refused:
                kind = MISMATCH if refused.kind == "invalid_event" else CORRUPT
                return kind, "", f"{refused.kind}: {refused.detail}"
            return None

        return catalogue
    from ..core.language_rows import RowMismatch, read_row

    def language(line: bytes) -> tuple[str, str, str] | None:
        try:
            value = json_value(line)
        except RowRefused as refused:
            return CORRUPT, "", f"{refused.kind}: {refused.detail}"
        if not isinstance(value, dict):
            return MISMATCH, "$", f"a row is a JSON object, not {type(value).__name__}"
        try:
            read_row(module, value)
        except RowMismatch as mismatch:
            return MISMATCH, mismatch.path, mismatch.message
        return None

    return language


def _fit_file(path: str, read: Any, report: Report) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as error:
        report.unreadable.append((path, error.strerror or str(error)))
        return
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            report.unreadable.append((path, "not a regular file"))
            return
        data = file.read()
    lines = data.split(b"\n")
    tail = lines.pop()
    for number, line in enumerate(lines, 1):
        report.rows += 1
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            report.findings.append(Finding(CORRUPT, path, number, "", f"{INVALID_UTF8}: {error}"))
            continue
        found = read(line)
        if found is not None:
            report.findings.append(Finding(found[0], path, number, found[1], found[2]))
    if tail:
        report.findings.append(Finding(CORRUPT, path, len(lines) + 1, "", f"{TORN_ROW}: the file does not end in a newline (a row cut off mid-write, or a writer still writing)"))
