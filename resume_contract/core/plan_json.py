"""A ResumePlan as the reference prints it: JSON with camelCase keys, its committed rows copied verbatim."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import msgspec

from .plan import ResumePlan
from .wire import encode_plan_value


def plan_json(plan: ResumePlan) -> bytes:
    """The plan as JSON, rows copied verbatim (camelCase keys, as the reference prints a ResumePlan)."""
    return b"".join(plan_json_pieces(plan))


_ROWS_TAIL = b'"runtimeEvents":[],"replayRuntimeEvents":[]}'
_NO_OPERATIONS = b',"operations":[],'
_OPERATIONS_AT_ONCE = 4096


def plan_json_pieces(plan: ResumePlan) -> Iterator[bytes]:
    """The plan as JSON, in pieces: operations a few thousand at a time and rows (the last two fields) a
    chunk at a time, so a plan over a ledger of any length is written without its JSON ever held whole."""
    head = encode_plan_value(msgspec.structs.replace(plan, operations=(), runtime_events=(), replay_runtime_events=()))
    # `disposition` comes first and holds one of two words, so the first `"operations":[]` is the field.
    split = head.find(_NO_OPERATIONS)
    if split < 0 or not head.endswith(_ROWS_TAIL):
        raise AssertionError("a ResumePlan's fields are no longer in the order this writer expects")
    yield head[: split + len(_NO_OPERATIONS) - 2]
    operations = plan.operations
    stored = getattr(operations, "json_pieces", None)
    if stored is not None:  # a planned file's operations, copied as they were stored
        for index, members in enumerate(stored()):
            yield members if index == 0 else b"," + members
    else:
        for start in range(0, len(operations), _OPERATIONS_AT_ONCE):
            batch = encode_plan_value(operations[start : start + _OPERATIONS_AT_ONCE])
            yield batch[1:-1] if start == 0 else b"," + batch[1:-1]
    yield head[split + len(_NO_OPERATIONS) - 2 : -len(_ROWS_TAIL)] + b'"runtimeEvents":'
    yield from _rows_json(plan.runtime_events)
    yield b',"replayRuntimeEvents":'
    yield from _rows_json(plan.replay_runtime_events)
    yield b"}"


def _rows_json(rows: Sequence[msgspec.Raw]) -> Iterator[bytes]:
    json_pieces = getattr(rows, "json_pieces", None)
    if json_pieces is not None:
        yield from json_pieces()
    else:
        yield b"[" + b",".join(rows) + b"]"


def with_last_member(pieces: Iterator[bytes], member: bytes) -> Iterator[bytes]:
    """A JSON object's pieces with `member` (`"name":value`) added as its last member."""
    last = b""
    for piece in pieces:
        if last:
            yield last
        last = piece
    if last != b"}":
        raise AssertionError("a plan's JSON no longer ends with its own closing brace")
    yield b"," + member + b"}"
