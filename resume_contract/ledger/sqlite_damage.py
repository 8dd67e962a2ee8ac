"""A damaged store never reads safer: where runtime.sqlite holds a fact twice, both copies are read and compared.

SQLite keeps no checksum of its pages, so one flipped bit can change what a read returns without any error: an
index entry whose key changed hides its row from the run it belongs to (a blocked run then plans `safe_replay`), a
payload whose action key changed turns a dispatch into another event (a call to verify then reads as never run).
The reference reads such a file as it finds it; this tool refuses it (`StoreDamaged`, exit 2, naming the file and
`PRAGMA integrity_check`) wherever the store's own copies disagree:

- a run's rows: read through the index on (session, run), and counted again through the unique index on
  (invocation, sequence) for each invocation they hold; where the counts differ, the run's rows of that invocation
  are read through the second index, by their own columns, and must be the same rows;
- each row's `event_kind` column is what the reference's writer derives from its payload (`runtimeEventKind`:
  the content's kind, else the status, else `workspace_fact`, `tool_dispatch`, `invocation_end` by the action that
  is there, else `runtime_fact`);
- the store's rows, counted through both indexes, before an audit lists its runs (an index can hide a whole run);
- a partial snapshot whose stream key is its own payload's (the writer derived it from the payload) but whose
  identity columns differ from that payload (sqlite_partials.py): the writer writes both from one event.

Cost: one indexed count a run (an invocation a run, as the reference writes them) and one comparison a row; two
index scans an audit. What stays unseen: a run's whole second invocation hidden by the first index, and a flip
inside a string that leaves a well-formed row of the same kind (a call id, a text): no copy of it is kept.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

from ..core.expressions import truthy
from ..errors import StoreDamaged

# (A value read back as text that is not UTF-8 holds surrogates, and is bound as its bytes: `bound`, `CAST(? AS TEXT)`.)
_COUNT = "SELECT count(*) FROM runtime_events WHERE invocation_id = CAST(? AS TEXT)"
# The unary `+` keeps the run's index out of it: the rows of the invocation found through its own index, each kept
# when its own columns say it is the run's.
_OF_INVOCATION = "SELECT event_id FROM runtime_events WHERE invocation_id = CAST(? AS TEXT) AND +session_id = ? AND +run_id = ?"
_BY_RUN = "SELECT count(run_id IS NULL) FROM runtime_events INDEXED BY runtime_events_by_run"  # (not count(*): SQLite counts that by its smallest index)
_INDEXES = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runtime_events'"
# The content-less events the reference's writer names by an action (runtimeEventKind), in its order.
_ACTION_KINDS = (("workspaceFact", "workspace_fact"), ("toolDispatch", "tool_dispatch"))


def check_invocations(path: Path, connection: sqlite3.Connection, run: tuple[str, str], rows: list[tuple[Any, ...]]) -> None:
    """Raise StoreDamaged unless the run's rows of each invocation (`rows`: event_id, invocation_id first) are the
    run's rows the invocation's own index finds."""
    found = Counter(row[1] for row in rows)
    for invocation, count in found.items():
        (indexed,) = connection.execute(_COUNT, (bound(invocation),)).fetchone()
        if indexed == count:
            continue
        theirs = sorted(event_id for (event_id,) in connection.execute(_OF_INVOCATION, (bound(invocation), *run)))
        ours = sorted(row[0] for row in rows if row[1] == invocation)
        if theirs != ours:
            hidden = sorted(set(theirs) - set(ours)) or sorted(set(ours) - set(theirs))
            raise StoreDamaged(path, f"session {run[0]!r}, run {run[1]!r}: its index on (session, run) gives {len(ours)} rows of "
                               f"invocation {invocation!r}, the invocation's own index {len(theirs)} (e.g. event_id {hidden[0]!r})")


def check_kinds(path: Path, run: tuple[str, str], rows: list[tuple[Any, ...]], events: list[Any], kind_at: int) -> None:
    """Raise StoreDamaged unless each row's `event_kind` column (at `kind_at`) is its decoded payload's."""
    stored = [row[kind_at] for row in rows]
    tags = _TAGS  # (the common row holds content: its kind is its struct's tag, found by its type)
    derived = [tags.get(type(getattr(event, "content", None))) or stored_kind(event) for event in events]
    if stored == derived:
        return
    for index, (row, want, got) in enumerate(zip(rows, stored, derived), 1):
        if want != got:
            shown = want.decode("utf-8", "replace") if isinstance(want, bytes) else want
            raise StoreDamaged(path, f"session {run[0]!r}, run {run[1]!r}, event {index} (event_id {row[0]!r}): its event_kind "
                               f"column says {shown!r} but its payload is a {got!r} event")


def stored_kind(event: Any) -> str:
    """The reference writer's `runtimeEventKind` of an event (the value of its row's `event_kind` column)."""
    content = getattr(event, "content", msgspec.UNSET)
    if content is not msgspec.UNSET:
        return _tag(type(content))
    status = getattr(event, "status", msgspec.UNSET)
    if status is not msgspec.UNSET:
        return str(status)
    actions = getattr(event, "actions", msgspec.UNSET)
    if actions is msgspec.UNSET:
        return "runtime_fact"
    for key, kind in _ACTION_KINDS:
        if key in actions and _truthy(actions[key]):
            return kind
    return "invocation_end" if "endInvocation" in actions and _truthy(actions["endInvocation"]) else "runtime_fact"


_TAGS: dict[type, str] = {}


def _tag(content_type: type) -> str:
    """A content struct's kind (its msgspec tag), looked up once a type."""
    tag = _TAGS.get(content_type)
    if tag is None:
        tag = _TAGS[content_type] = str(content_type.__struct_config__.tag)  # type: ignore[attr-defined]
    return tag


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness of a free-JSON value: an object or array always, else as its value decoded."""
    if isinstance(value, msgspec.Raw):
        text = bytes(value).lstrip()
        if text[:1] in (b"{", b"["):
            return True
        value = msgspec.json.decode(text)
    return bool(truthy(value))


def check_totals(path: Path, connection: sqlite3.Connection) -> None:
    """Raise StoreDamaged unless the index the runs are listed through holds as many rows as the unique index on
    (invocation, sequence): an index can hide a whole run from the audit's listing. (A store without those indexes
    is listed by reading its table, which nothing hides.)"""
    indexes = {}
    for (name,) in connection.execute(_INDEXES).fetchall():
        quoted = '"' + str(name).replace('"', '""') + '"'
        indexes[name] = ([column for _, _, column in connection.execute(f"PRAGMA index_info({quoted})").fetchall()], quoted)
    if "runtime_events_by_run" not in indexes:
        return
    (by_run,) = connection.execute(_BY_RUN).fetchone()
    for name, (columns, quoted) in indexes.items():
        if columns == ["invocation_id", "event_seq"]:
            (count,) = connection.execute(f"SELECT count(event_seq IS NULL) FROM runtime_events INDEXED BY {quoted}").fetchone()  # noqa: S608 - a name the store lists
            if count != by_run:
                raise StoreDamaged(path, f"runtime_events holds {count} rows by its index {name!r} but {by_run} by the index its runs are listed through")


_OPERATIONS = (
    "SELECT operation_id, provider_tool_call_id, tool_name, canonical_args_hash, recovery_mode, call_event_id, dispatch_event_id, "
    "result_event_id FROM tool_operations WHERE invocation_id = CAST(? AS TEXT)"
)


def bound(value: Any) -> Any:
    """A column's value as a query parameter: text that holds surrogates (read from bytes that are not UTF-8) as those
    bytes, for `CAST(? AS TEXT)` to compare as the column's own."""
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) and not value.isascii() and _has_surrogates(value) else value


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_operations(connection: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """The `tool_operations` rows of the invocations `rows` hold (invocation_id second), in the run's read transaction
    ([] for a store without the table: it keeps no second copy of these facts)."""
    operations: list[tuple[Any, ...]] = []
    try:
        for invocation in dict.fromkeys(row[1] for row in rows):
            operations += connection.execute(_OPERATIONS, (bound(invocation),)).fetchall()
    except sqlite3.OperationalError as error:
        if "no such table" not in str(error):
            raise
    return operations


def check_tool_facts(path: Path, run: tuple[str, str], operations: list[tuple[Any, ...]], events: list[Any]) -> None:
    """Raise StoreDamaged unless each call, dispatch and result a `tool_operations` row names (the reference's tool
    transactions write the row and the events together) says what the row says of its operation."""
    if not operations:
        return
    by_id = {event.id: (index, event) for index, event in enumerate(events, 1)}
    for operation in operations:
        operation_id, call_id, tool, args_hash, mode = operation[:5]
        named = (msgspec.Raw(msgspec.json.encode(operation_id)), msgspec.Raw(msgspec.json.encode(call_id)))
        for role, event_id in zip(_ROLES, operation[5:]):
            found = by_id.get(event_id) if event_id is not None else None
            if found is None:
                continue  # (an event of another run, or none: what names it is read where it is)
            index, event = found
            said = _refs_disagree(event.refs, named, (operation_id, call_id)) or (
                _dispatch_disagrees(event, (operation_id, call_id, tool, args_hash, mode)) if role == "dispatch"
                else _content_disagrees(event, "function_call" if role == "call" else "function_response", call_id, tool)
            )
            if said:
                raise StoreDamaged(path, f"session {run[0]!r}, run {run[1]!r}, event {index} (event_id {event.id!r}): tool_operations "
                                   f"row {operation_id!r} names it as its {role}, but {said}")


_ROLES = ("call", "dispatch", "result")
_REFS = ("operationId", "toolCallId")


def _refs_disagree(refs: Any, named: tuple[msgspec.Raw, msgspec.Raw], wanted: tuple[Any, Any]) -> str:
    """The reference's tool transactions write each event of an operation with refs {operationId, toolCallId}: refs
    there must name both (an event without refs at all is a writer's that keeps none: one flip cannot remove them)."""
    if refs is msgspec.UNSET:
        return ""
    for key, raw, value in zip(_REFS, named, wanted):
        held = refs.get(key)
        if held != raw and (held is None or _plain(held) != value):
            return f"its payload's refs.{key} is {'absent' if held is None else repr(_plain(held))} where the row says {value!r}"
    return ""


class _Dispatch(msgspec.Struct, rename="camel"):
    """What a dispatch's `actions.toolDispatch` says of its operation (what its tool_operations row says too)."""

    operation_id: Any = None
    provider_tool_call_id: Any = None
    tool_name: Any = None
    canonical_args_hash: Any = None
    recovery_mode: Any = None


_DISPATCH = msgspec.json.Decoder(_Dispatch)
_DISPATCH_KEYS = tuple(f"toolDispatch.{key}" for key in ("operationId", "providerToolCallId", "toolName", "canonicalArgsHash", "recoveryMode"))


def _dispatch_disagrees(event: Any, wanted: tuple[Any, ...]) -> str:
    actions = event.actions
    raw = actions.get("toolDispatch") if actions is not msgspec.UNSET else None
    try:
        dispatch = _DISPATCH.decode(raw) if isinstance(raw, msgspec.Raw) else None
    except msgspec.DecodeError:
        dispatch = None
    if dispatch is None:
        return "its payload holds no toolDispatch object"
    said = (dispatch.operation_id, dispatch.provider_tool_call_id, dispatch.tool_name, dispatch.canonical_args_hash, dispatch.recovery_mode)
    return "" if said == wanted else _first_difference(_DISPATCH_KEYS, said, wanted)


def _content_disagrees(event: Any, kind: str, call_id: Any, tool: Any) -> str:
    content = event.content
    if content is msgspec.UNSET or _tag(type(content)) != kind:
        return f"its payload is not a {kind}"
    said = (content.id, content.name)
    return "" if said == (call_id, tool) else _first_difference(("content.id", "content.name"), said, (call_id, tool))


def _first_difference(names: tuple[str, ...], said: tuple[Any, ...], wanted: tuple[Any, ...]) -> str:
    name, payload, column = next(item for item in zip(names, said, wanted) if item[1] != item[2])
    return f"its payload's {name} is {payload!r} where the row says {column!r}"


def _plain(value: Any) -> Any:
    return msgspec.json.decode(value) if isinstance(value, msgspec.Raw) else value
