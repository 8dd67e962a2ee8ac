"""A run's partial snapshots in the SQLite store, read and merged as the reference's `readRuntimeEvents` merges them.

A snapshot row (`runtime_partial_snapshots`) holds an open stream's partial event; a text or thinking event's text
is the row's `text_content` followed by its `runtime_partial_segments` in `segment_seq` order. A snapshot that does
not decode, is not partial, or whose identity columns or stream key (the SHA-256 of `JSON.stringify` of the stream's
identity) differ from its payload is skipped without a word, as the reference skips it: partials are presentation
state. The rest are merged among the run's rows and count in its high-water; they are never replayed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import msgspec

from ..core.collation import locale_compare_key
from ..core.javascript import to_number
from ..core.wire import encode_json, python_json
from ..errors import RowRefused, StoreDamaged
from .snapshots import PROVIDER_STREAMS, stream_of


def text_of(value: Any) -> str:
    """A TEXT column read as bytes (the store's connection reads every column so) as a str."""
    return value.decode("utf-8", errors="surrogateescape") if isinstance(value, bytes) else str(value)


def read_partial(snapshot: tuple[Any, ...], model: Any, path: Any = "runtime.sqlite") -> Partial | None:
    """A snapshot as the reference reads it, or None for one it skips (it does not decode, or its columns or its
    stream key differ from its payload). StoreDamaged for a row whose identity columns differ from a payload its
    stream key authenticates: the writer derives the key from the payload and writes the columns from it too, so
    such a row was damaged (sqlite_damage.py), and skipping it could read the run safer."""
    stream_key, session, invocation, run, turn, after, payload, text, _updated_at, segments = snapshot
    try:
        wire = python_json(payload)
        if not isinstance(wire, dict):
            return None
        content = wire.get("content")
        if isinstance(content, dict) and content.get("kind") in PROVIDER_STREAMS:
            wire = {**wire, "content": {**content, "text": text_of(text) + "".join(map(text_of, segments))}}
        event = model.from_python(wire)
        row = encode_json(wire)
    except (RowRefused, ValueError, TypeError, UnicodeDecodeError):  # (TypeError: a NULL payload or text)
        return None
    columns = (text_of(session), text_of(invocation), text_of(run), text_of(turn))
    identity = (event.session_id, event.invocation_id, event.run_id, event.turn_id)
    stream = stream_of(wire, event) if event.partial else None
    keyed = stream is not None and _stream_key(stream) == text_of(stream_key)
    if identity != columns and keyed:
        column, written, said = next(item for item in zip(("session_id", "invocation_id", "run_id", "turn_id"), columns, identity) if item[1] != item[2])
        raise StoreDamaged(path, f"partial snapshot {text_of(stream_key)!r}: its {column} column says {written!r} but its payload, "
                           f"which its stream key authenticates, says {said!r}")
    if identity != columns or not keyed:
        return None
    anchor = text_of(after) if after is not None and after != b"" else None
    return Partial(event, msgspec.Raw(row), anchor, to_number(event.ts))


def _stream_key(stream: tuple[Any, ...]) -> str:
    """The reference's stream key: the SHA-256 of `JSON.stringify` of the stream's identity array."""
    return hashlib.sha256(json.dumps(list(stream), separators=(",", ":"), ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Partial:
    event: Any
    row: msgspec.Raw
    anchor: str | None
    ts: float


def _in_order(partials: list[Partial]) -> list[Partial]:
    return sorted(partials, key=lambda partial: (partial.ts, locale_compare_key(partial.event.id)))


def merged_partials(events: list[Any], rows: list[msgspec.Raw], partials: list[Partial]) -> tuple[list[Any], list[msgspec.Raw]]:
    """The run's rows with its snapshots merged as the reference merges them: those without an anchor first, each
    other right after its anchor event (several after one: by ts, then id), those whose anchor is not in the run
    last (a group per anchor, in the order first seen)."""
    first: dict[str, int] = {}
    for index, event in enumerate(events):
        first.setdefault(event.id, index)
    leading = _in_order([partial for partial in partials if partial.anchor is None])
    after: dict[int, list[Partial]] = {}
    trailing: dict[str, list[Partial]] = {}
    for partial in partials:
        if partial.anchor is None:
            continue
        if partial.anchor in first:
            after.setdefault(first[partial.anchor], []).append(partial)
        else:
            trailing.setdefault(partial.anchor, []).append(partial)
    merged_events = [partial.event for partial in leading]
    merged_rows = [partial.row for partial in leading]
    for index, (event, row) in enumerate(zip(events, rows)):
        merged_events.append(event)
        merged_rows.append(row)
        for partial in _in_order(after.get(index, [])):
            merged_events.append(partial.event)
            merged_rows.append(partial.row)
    for group in trailing.values():
        for partial in _in_order(group):
            merged_events.append(partial.event)
            merged_rows.append(partial.row)
    return merged_events, merged_rows
