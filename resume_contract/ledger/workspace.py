"""Read one run of a workspace as the reference store does: the JSONL ledger merged with its partial snapshots.

Layout of a run: `<workspace>/sessions/<S>/runs/<R>/runtime-events.jsonl`, and beside it, for streams still
open when the store last wrote, `runtime-partials/<key>.partial`. The reference store keeps some partial
streaming events out of the JSONL: a partial text or thinking chunk without status, actions, attachments or
signature whose `refs` is exactly `{providerEventId}`, and a content-less partial event whose `refs` is
exactly `{toolCallId}`. Their snapshot file holds a first line
`{"version":1,"event":{...},"afterEventId":"<id>"}` (no afterEventId when the JSONL was empty) and then
the streamed text, which replaces the event's `content.text`. A non-partial text/thinking row with that
`refs.providerEventId` (or a function_response with that `refs.toolCallId`) and the same session,
invocation, run, turn, branch, role and author completes the stream.

Merged order, as the reference reads it: snapshots without afterEventId first, then each JSONL row followed
by the snapshots anchored after it, each group ordered by ts then id; snapshots whose anchor is missing go
last. A snapshot whose stream a JSONL row completes is left out. Files not ending in `.partial` (and
anything that is not a regular file), and snapshots that cannot be read (no newline, bad JSON, a version
other than 1, an event that is not partial) are ignored, as the reference ignores them. A snapshot that is
read but whose event breaks the wire format, repeats a key, or belongs to another run is corruption.
Merged snapshots are events: they are in `runtimeEvents` and count in the high-water.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from ..contract import Contract, active, build_resume_plan
from ..core.plan import ResumePlan
from ..core.wire import encode_json, python_json
from ..errors import DUPLICATE_EVENT_ID, FOREIGN_ROW, LedgerCorruption, LedgerMissing, RowRefused
from .bytes import StrPath, read_all
from .containment import check_contained, open_directory, open_in, split_below
from .file_plan import plan_ledger
from .reader import CommittedLedger
from .store import LEDGER_NAME, ledger_path, read_ledger

PARTIALS_DIR = "runtime-partials"
SNAPSHOT_SUFFIX = ".partial"
_PROVIDER_STREAMS = ("text", "thinking")
_UNSNAPSHOTTED_KEYS = ("status", "actions")


@dataclass(frozen=True)
class _Snapshot:
    path: Path
    event: Any
    row: msgspec.Raw
    after: str | None
    stream: tuple[Any, ...] | None

    @property
    def order(self) -> tuple[Any, str, str]:
        # ts, then id as JavaScript's localeCompare orders them; approximated without ICU: letters compared
        # ignoring case first, lower case first on a tie (code point order agrees for ids of one case).
        return (self.event.ts, self.event.id.casefold(), self.event.id.swapcase())


def run_directory(workspace: StrPath, session_id: str, run_id: str) -> Path:
    """The run's directory, after checking that the workspace, the session and the run all exist."""
    path = ledger_path(Path(workspace), session_id, run_id)
    run_dir = path.parent
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise LedgerMissing(f"{workspace}: no such workspace directory")
    if not (workspace / "sessions" / session_id).is_dir():
        raise LedgerMissing(f"{workspace}: no session {session_id!r} (no directory sessions/{session_id})")
    if not run_dir.is_dir():
        raise LedgerMissing(f"{workspace}: session {session_id!r} has no run {run_id!r} (no directory {run_dir})")
    check_contained(workspace, run_dir)  # sessions/, sessions/<S>, runs/, runs/<R>: none may be a symlink
    return run_dir


def read_run(
    workspace: StrPath, session_id: str, run_id: str, *, refuse_live: bool = False, contract: Contract | None = None
) -> CommittedLedger:
    """One run's committed events as the reference store reads them (JSONL and partial snapshots merged)."""
    contract = contract or active()
    run_dir = run_directory(workspace, session_id, run_id)
    path = run_dir / LEDGER_NAME
    if not os.path.lexists(path):
        raise LedgerMissing(f"{path}: the run has no {LEDGER_NAME}")
    ledger = read_ledger(path, refuse_live=refuse_live, run=(session_id, run_id), workspace=Path(workspace), contract=contract)
    snapshots = _snapshots(Path(workspace), run_dir / PARTIALS_DIR, (session_id, run_id), contract)
    if not snapshots:
        return ledger
    completed = {_completion(event) for event in ledger.events} - {None}
    open_snapshots = [snapshot for snapshot in snapshots if snapshot.stream is None or snapshot.stream not in completed]
    return _merge(ledger, open_snapshots)


def plan_run(
    workspace: StrPath,
    session_id: str,
    run_id: str,
    expected_high_water: int | None = None,
    *,
    refuse_live: bool = False,
    processes: int = 1,
    contract: Contract | None = None,
) -> ResumePlan:
    """One run's plan (`read_run`'s events). A run without partial snapshots, the usual case, is planned from
    its JSONL in bounded memory; one with snapshots is read whole, since they are merged between its rows."""
    contract = contract or active()
    run_dir = run_directory(workspace, session_id, run_id)
    path = run_dir / LEDGER_NAME
    if not os.path.lexists(path):
        raise LedgerMissing(f"{path}: the run has no {LEDGER_NAME}")
    try:
        has_snapshots = bool(_snapshots(Path(workspace), run_dir / PARTIALS_DIR, (session_id, run_id), contract))
    except LedgerCorruption:
        has_snapshots = True  # read_run reports it, after the JSONL (a corrupt JSONL is reported first)
    if has_snapshots:
        ledger = read_run(workspace, session_id, run_id, refuse_live=refuse_live, contract=contract)
        return build_resume_plan(ledger.events, expected_high_water, rows=ledger.rows, contract=contract)
    return plan_ledger(
        path,
        expected_high_water,
        run=(session_id, run_id),
        refuse_live=refuse_live,
        workspace=Path(workspace),
        processes=processes,
        contract=contract,
    )


def _merge(ledger: CommittedLedger, snapshots: list[_Snapshot]) -> CommittedLedger:
    ids = {event.id for event in ledger.events}
    first = sorted((s for s in snapshots if s.after is None), key=lambda s: s.order)
    anchored: dict[str, list[_Snapshot]] = {}
    for snapshot in snapshots:
        if snapshot.after is not None and snapshot.after in ids:
            anchored.setdefault(snapshot.after, []).append(snapshot)
    # Snapshots whose anchor is missing go last, each anchor's group together (groups in file-name order).
    orphan_groups: dict[str, list[_Snapshot]] = {}
    for snapshot in snapshots:
        if snapshot.after is not None and snapshot.after not in ids:
            orphan_groups.setdefault(snapshot.after, []).append(snapshot)
    orphans = [s for group in orphan_groups.values() for s in sorted(group, key=lambda s: s.order)]
    events: list[Any] = [s.event for s in first]
    rows: list[msgspec.Raw] = [s.row for s in first]
    for event, row in zip(ledger.events, ledger.rows):
        events.append(event)
        rows.append(row)
        for snapshot in sorted(anchored.get(event.id, ()), key=lambda s: s.order):
            events.append(snapshot.event)
            rows.append(snapshot.row)
    events += [s.event for s in orphans]
    rows += [s.row for s in orphans]
    seen: dict[str, Path] = {}
    for snapshot in snapshots:
        if snapshot.event.id in ids or snapshot.event.id in seen:
            other = ledger.path if snapshot.event.id in ids else seen[snapshot.event.id]
            raise LedgerCorruption(snapshot.path, 1, 0, DUPLICATE_EVENT_ID, f"event id {snapshot.event.id!r} is already in {other}")
        seen[snapshot.event.id] = snapshot.path
    return CommittedLedger(ledger.path, tuple(events), tuple(rows))


def _snapshots(workspace: Path, directory: Path, run: tuple[str, str], contract: Contract) -> list[_Snapshot]:
    # The directory and each file in it are opened relative to the one before, never through a link, and
    # files without blocking: a name swapped for a symlink or a FIFO after the listing is not followed.
    directories, name = split_below(workspace, directory)
    try:
        run_fd = open_directory(workspace, directories)
    except FileNotFoundError:
        return []
    try:
        try:
            partials_fd = open_in(run_fd, name, os.O_RDONLY | os.O_DIRECTORY, directory)
        except FileNotFoundError:
            return []
    finally:
        os.close(run_fd)
    try:
        found = []
        for entry in sorted(os.listdir(partials_fd)):
            if not entry.endswith(SNAPSHOT_SUFFIX):
                continue
            try:
                fd = os.open(entry, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=partials_fd)
            except OSError:
                continue  # a symlink (not followed) or a file gone since the listing: not a snapshot
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                data = read_all(fd)
            finally:
                os.close(fd)
            snapshot = _read_snapshot(directory / entry, data, run, contract)
            if snapshot is not None:
                found.append(snapshot)
        return found
    finally:
        os.close(partials_fd)


def _read_snapshot(path: Path, raw: bytes, run: tuple[str, str], contract: Contract) -> _Snapshot | None:
    # Read as the reference reads it: the whole file as UTF-8 text, an invalid sequence (a crash mid-character)
    # becoming U+FFFD rather than losing the event.
    data = raw.decode("utf-8", errors="replace")
    newline = data.find("\n")
    if newline < 0:
        return None
    text = data[newline + 1 :]
    try:
        json.loads(data[:newline])
    except (ValueError, RecursionError):
        return None  # unreadable by the reference too, which ignores it
    try:  # readable, so it counts: and then it must be a legal row (no repeated key, no number out of range)
        header = python_json(data[:newline].encode("utf-8", errors="surrogatepass"))
    except RowRefused as refused:
        raise LedgerCorruption(path, 1, 0, refused.kind, refused.detail) from None
    version = header.get("version") if isinstance(header, dict) else None
    if type(version) not in (int, float) or version != 1:  # JavaScript: 1.0 === 1
        return None
    wire = header.get("event")
    if not isinstance(wire, dict) or wire.get("partial") is not True:
        return None
    after = header.get("afterEventId")
    content = wire.get("content")
    if isinstance(content, dict) and "text" in content:
        wire = {**wire, "content": {**content, "text": text}}
    try:
        event = contract.model.from_python(wire)
        row = msgspec.Raw(encode_json(wire))
    except RowRefused as refused:
        raise LedgerCorruption(path, 1, 0, refused.kind, refused.detail) from None
    if (event.session_id, event.run_id) != run:
        raise LedgerCorruption(
            path, 1, 0, FOREIGN_ROW, f"the snapshot's event belongs to session {event.session_id!r}, run {event.run_id!r}, not {run[0]!r}, {run[1]!r}"
        )
    # JavaScript's `!afterEventId`: an empty anchor is no anchor.
    return _Snapshot(path, event, row, after if isinstance(after, str) and after else None, _stream(wire, event))


def _identity(event: Any, stream: str) -> tuple[Any, ...]:
    branch = event.branch if isinstance(event.branch, str) else None
    return (stream, event.session_id, event.invocation_id, event.run_id, event.turn_id, branch, event.role, event.author)


def _stream(wire: dict[str, Any], event: Any) -> tuple[Any, ...] | None:
    """The stream a snapshotted partial event belongs to, as the reference store keys it."""
    refs = wire.get("refs")
    content = wire.get("content")
    if not isinstance(refs, dict):
        return None
    if content is None and set(refs) == {"toolCallId"}:
        return _identity(event, f"tool:call:{refs['toolCallId']}")
    if (
        isinstance(content, dict)
        and not any(key in wire for key in _UNSNAPSHOTTED_KEYS)
        and content.get("kind") in _PROVIDER_STREAMS
        and "attachments" not in content
        and "signature" not in content
        and set(refs) == {"providerEventId"}
    ):
        return _identity(event, f"{content['kind']}:provider:{refs['providerEventId']}")
    return None


def _completion(event: Any) -> tuple[Any, ...] | None:
    """The stream a committed, non-partial JSONL event completes, if any."""
    if event.partial or not event.refs:
        return None
    kind = getattr(event.content, "KIND", None)
    if kind in _PROVIDER_STREAMS:
        key, stream = "providerEventId", f"{kind}:provider:"
    elif kind == "function_response":
        key, stream = "toolCallId", "tool:call:"
    else:
        return None
    raw = event.refs.get(key)
    if raw is None:
        return None
    return _identity(event, f"{stream}{python_json(raw)}")
