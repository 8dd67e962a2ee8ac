"""A run's partial streaming snapshots, read exactly as the reference store reads them.

Beside a run's JSONL, for streams still open when the store last wrote: `runtime-partials/<key>.partial`. The
reference store keeps some partial streaming events out of the JSONL: a partial text or thinking chunk without
status, actions, attachments or signature whose `refs` holds only `providerEventId`, and a content-less partial
event whose `refs` holds only `toolCallId` (each key truthy). The file holds a first line
`{"version":1,"event":{...},"afterEventId":"<id>"}` (no afterEventId when the JSONL was empty), then the
streamed text, which replaces a text or thinking event's `content.text` when read. The stream is keyed by
`${kind}:provider:${refs.providerEventId}` or `tool:call:${refs.toolCallId}` (JavaScript's String of the value)
with the event's session, invocation, run, turn, branch, role and author; a final (non-partial) text or
thinking row with a truthy `refs.providerEventId` (a function_response with a truthy `refs.toolCallId`) keys
the stream it completes the same way, and a snapshot whose stream a JSONL row completes is left out.

Read as the reference reads them: regular files ending in `.partial`, in name order; the whole file as UTF-8
with invalid sequences replaced (a crash mid-character loses nothing else); the first line by the rules of
`JSON.parse` (NaN and Infinity refused, integers of any length read); a file without a newline, whose first
line `JSON.parse` refuses, whose `version` is not 1 or whose event's `partial` is not truthy is ignored, as
the reference ignores it. Every other snapshot counts, so it must be a row this tool can hold exactly: one whose
first line repeats a key, nests deeper than rows may, holds a number no double holds, or whose event (its text
replaced) breaks the wire format (a `partial` of `1` or `"yes"` included) or belongs to another run is
corruption, never dropped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from ..contract import Contract
from ..core.collation import locale_compare_key
from ..core.javascript import is_truthy, json_parse, to_number, to_string
from ..core.wire import MAX_NESTING, encode_json, python_json, too_deep
from ..errors import FOREIGN_ROW, INVALID_JSON, LedgerChanged, LedgerCorruption, RowRefused
from .bytes import read_all

PARTIALS_DIR = "runtime-partials"
SNAPSHOT_SUFFIX = ".partial"
PROVIDER_STREAMS = ("text", "thinking")
_REFS = attrgetter("refs")

# A stream as the reference keys it: (`text:provider:<id>` or ..., session, invocation, run, turn, branch, role,
# author). Two are the same stream exactly when the JSON arrays the reference hashes are equal.
Stream = tuple[Any, ...]
# Where a snapshot goes: None (before the JSONL's rows), an event id (after the row with that id), or a key
# no event id equals (a number, `true`, an array or object: the reference's Map never finds it: after the rows).
Anchor = str | tuple[str, Any] | None


@dataclass(frozen=True)
class Snapshot:
    """What the merge needs of one snapshot; its row is read again from its file when written (`read_row`)."""

    name: str
    path: Path
    identity: tuple[int, int, int, int]  # (device, inode, size, mtime) as read: a file changed since is refused
    event_id: str
    ts: float
    anchor: Anchor
    stream: Stream | None  # the stream a final JSONL row would complete; None: never completed


def read_snapshots(partials_fd: int, directory: Path, run: tuple[str, str], contract: Contract) -> list[Snapshot]:
    """Every snapshot the reference would read, in file-name order (readdir's, as Node's libuv sorts it)."""
    found = []
    for name in sorted(os.listdir(partials_fd)):
        if not name.endswith(SNAPSHOT_SUFFIX):
            continue
        opened = _open_snapshot(partials_fd, name)
        if opened is None:
            continue
        identity, data = opened
        read = _read(directory / name, data, run, contract)
        if read is not None:
            found.append(_snapshot(name, directory / name, identity, *read))
    return found


def read_row(partials_fd: int, directory: Path, snapshot: Snapshot, run: tuple[str, str], contract: Contract) -> tuple[Any, msgspec.Raw]:
    """A snapshot's event and row, read again from its file: the same as when it was first read, or LedgerChanged."""
    opened = _open_snapshot(partials_fd, snapshot.name)
    if opened is None or opened[0] != snapshot.identity:
        raise LedgerChanged(f"{snapshot.path}: the snapshot changed after the run was planned; plan it again")
    read = _read(snapshot.path, opened[1], run, contract)
    if read is None:
        raise LedgerChanged(f"{snapshot.path}: the snapshot changed after the run was planned; plan it again")
    return read[0], read[1]


def _open_snapshot(partials_fd: int, name: str) -> tuple[tuple[int, int, int, int], bytes] | None:
    # Opened relative to the directory, never through a link, and without blocking: a name swapped for a
    # symlink or a FIFO after the listing is not followed (the reference reads regular files only).
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW, dir_fd=partials_fd)
    except OSError:
        return None  # a symlink (not followed) or a file gone since the listing: not a snapshot
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return None
        return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns), read_all(fd)
    finally:
        os.close(fd)


def _read(path: Path, raw: bytes, run: tuple[str, str], contract: Contract) -> tuple[Any, msgspec.Raw, Any, Stream | None] | None:
    """(event, row, afterEventId as JavaScript reads it, stream) of a snapshot the reference reads; None for
    one it ignores. UTF-8 never holds a newline inside a character, so the bytes are cut at the first one."""
    newline = raw.find(b"\n")
    if newline < 0:
        return None
    first_line = raw[:newline].decode("utf-8", errors="replace")
    if too_deep(raw[:newline]):
        # JSON.parse reads any depth; Python cannot, so a snapshot this deep is refused rather than ignored.
        raise LedgerCorruption(path, 1, 0, INVALID_JSON, f"nested deeper than {MAX_NESTING} levels of arrays and objects")
    try:
        header = json_parse(first_line)
    except ValueError:
        return None  # unreadable by the reference too, which ignores it
    if not isinstance(header, dict) or header.get("version") != 1 or type(header.get("version")) is not float:
        return None  # (`version !== 1`, with numbers as doubles: 1.0 is 1; `true` is not)
    if not isinstance(header.get("event"), dict) or not is_truthy(header["event"].get("partial")):
        return None  # `!snapshot.event?.partial`
    try:  # read by the reference, so it counts: it must be a row held exactly (no repeated key, no lost number)
        wire = python_json(first_line.encode("utf-8"))["event"]
        content = wire.get("content")
        if isinstance(content, dict) and content.get("kind") in PROVIDER_STREAMS:
            wire = {**wire, "content": {**content, "text": raw[newline + 1 :].decode("utf-8", errors="replace")}}
        event = contract.model.from_python(wire)
        row = msgspec.Raw(encode_json(wire))
    except RowRefused as refused:
        raise LedgerCorruption(path, 1, 0, refused.kind, refused.detail) from None
    if (event.session_id, event.run_id) != run:
        raise LedgerCorruption(
            path, 1, 0, FOREIGN_ROW, f"the snapshot's event belongs to session {event.session_id!r}, run {event.run_id!r}, not {run[0]!r}, {run[1]!r}"
        )
    return event, row, header.get("afterEventId"), stream_of(wire, event)


def _snapshot(name: str, path: Path, identity: tuple[int, int, int, int], event: Any, row: msgspec.Raw, after: Any, stream: Stream | None) -> Snapshot:
    anchor: Anchor
    if not is_truthy(after):
        anchor = None  # `!afterEventId`: an empty or null anchor is no anchor
    elif isinstance(after, str):
        anchor = after
    elif isinstance(after, (list, dict)):
        anchor = ("object", name)  # a Map key by identity: a group of its own
    else:
        anchor = ("true", True) if after is True else ("number", after)
    return Snapshot(name, path, identity, event.id, to_number(event.ts), anchor, stream)


def _identity(event: Any, stream: str) -> Stream:
    branch = event.branch if isinstance(event.branch, str) else None  # `event.branch ?? null`
    return (stream, event.session_id, event.invocation_id, event.run_id, event.turn_id, branch, event.role, event.author)


def stream_of(wire: dict[str, Any], event: Any) -> Stream | None:
    """The stream the reference keys a snapshotted partial event by (its `partialRuntimeStream`), if any."""
    refs, content = wire.get("refs"), wire.get("content")
    if "status" in wire or is_truthy(wire.get("actions")) or not isinstance(refs, dict):
        return None
    kind = content.get("kind") if isinstance(content, dict) else None
    if (kind == "text" and "attachments" not in content) or (kind == "thinking" and "signature" not in content):  # type: ignore[operator]
        key = refs.get("providerEventId")
        if is_truthy(key) and set(refs) <= {"providerEventId"}:
            return _identity(event, f"{kind}:provider:{to_string(key)}")
    elif not is_truthy(content) and is_truthy(refs.get("toolCallId")) and set(refs) <= {"toolCallId"}:
        return _identity(event, f"tool:call:{to_string(refs['toolCallId'])}")
    return None


def completed_streams(events: list[Any], streams: set[Stream]) -> Iterator[Stream]:
    """Those of `streams` that final events among `events` complete (the reference's
    `completedPartialRuntimeStreamKey`: a truthy key, its String, and no other condition on `refs`)."""
    if not any(map(_REFS, events)):
        return  # the common case, seen at C speed
    for event in events:
        refs = event.refs
        if not refs or event.partial:
            continue
        kind = getattr(event.content, "KIND", None)
        if kind in PROVIDER_STREAMS:
            key, prefix = refs.get("providerEventId"), f"{kind}:provider:"
        elif kind == "function_response":
            key, prefix = refs.get("toolCallId"), "tool:call:"
        else:
            continue
        value = _raw_string(key) if key is not None else None
        if value is not None:
            stream = _identity(event, prefix + value)
            if stream in streams:
                yield stream


def _raw_string(raw: msgspec.Raw) -> str | None:
    """String(x) of a free-JSON value kept as written, or None when it is falsy."""
    data = bytes(raw)
    if data[:1] == b'"' and b"\\" not in data:
        return data[1:-1].decode("utf-8") or None  # a plain string, the usual key
    value = json_parse(data.decode("utf-8"))
    return to_string(value) if is_truthy(value) else None


def in_order(snapshots: list[Snapshot]) -> list[Snapshot]:
    """A group of snapshots as the reference sorts it: by ts, then by id with `localeCompare` (a stable sort)."""
    if len({snapshot.ts for snapshot in snapshots}) == len(snapshots):
        return sorted(snapshots, key=attrgetter("ts"))  # no tie: the collation is not even loaded
    return sorted(snapshots, key=lambda snapshot: (snapshot.ts, locale_compare_key(snapshot.event_id)))
