"""The reader's proofs over a decoded chunk: no row repeats a key, and (over the whole ledger) no event id repeats.

Both are proven at C speed where they can be: keys by counting them (`keys_proven`), ids by a 64-bit hash of
each (`first_repeated_id`). What the fast proof cannot settle is checked again slowly, never accepted on a guess.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any

import msgspec

from ..core.hashes import repeated_hashes
from ..core.key_count import RAW, RAW_DICT
from ..core.wire import FreeFields, WireModel, python_json
from ..errors import LedgerCorruption, RowRefused
from .bytes import StrPath
from .chunk import Chunk

_UNTYPED = msgspec.json.Decoder()
_ENCODE = msgspec.json.Encoder().encode
_CONTENT = operator.attrgetter("content")
_KEY_MARK = b'":'  # how every key ends when nothing stands between it and its colon
_SPACED_COLONS = (b" :", b"\t:", b"\r:")


def typed_keys(events: list[Any], model: WireModel) -> tuple[int | None, list[msgspec.Raw]]:
    """(how many typed keys the structs hold, or None when the model cannot count them; every free-JSON value)."""
    if model.count_keys is None:
        return None, _free_values(events, model)
    free: list[msgspec.Raw] = []
    return model.count_keys(events, free), free


def keys_proven(data: bytes, events: list[Any], model: WireModel, counted: tuple[int | None, list[msgspec.Raw]] | None = None) -> bool:
    """Whether no row of the chunk repeats a key in one object, at any depth, proven at C speed by counting.

    msgspec keeps the last of two equal keys, so a row that repeats one decodes to a struct holding a key
    fewer than the row wrote. JSON writes a colon after every key and nowhere else but inside strings, so
    when the rows hold exactly as many colons as the structs hold keys, no key was dropped. Texts often hold
    colons (a URL, a time of day); then the marks `":` are counted instead, which end every key when no
    space stands before its colon and occur elsewhere only escaped inside a string (`\\":`). Free JSON
    (kept as Raw) is proven apart: its colons and marks are subtracted, and msgspec writing it back byte
    for byte proves it holds no repeated key. A chunk not proven here is read again more slowly
    (`check_duplicate_keys`); it is never accepted on a guess. `counted` is `typed_keys(events, model)` when
    the caller has it already.
    """
    held, free = counted if counted is not None else typed_keys(events, model)
    if held is None:
        return False
    joined = b"[" + b",".join(free) + b"]"
    if data.count(b":") - joined.count(b":") != held:
        if any(spaced in data for spaced in _SPACED_COLONS) or data.count(_KEY_MARK) - joined.count(_KEY_MARK) != held:
            return False
    return not free or _ENCODE(_decode_untyped(joined)) == joined


def _free_values(events: list[Any], model: WireModel) -> list[msgspec.Raw]:
    values = list(_free_json(events, model.free_fields))
    contents = list(map(_CONTENT, events))
    classes = set(map(type, contents))
    for cls, fields in model.content_free_fields.items():
        if fields and cls in classes:
            values += _free_json(list(filter(cls.__instancecheck__, contents)), fields)
    return values


def check_duplicate_keys(path: StrPath, chunk: Chunk, model: WireModel) -> None:
    """Refuse a row that repeats a key in one object, at any depth, when `keys_proven` could not prove it.

    Two proofs cover most rows; the rest are read again key by key by the standard library:
    - in the event and its content, re-encoding never makes a token longer (strings and integers are written
      minimally; only a float can grow, so rows holding one are read again), so a re-encoded event exactly as
      long as its row dropped no key;
    - free JSON (kept as Raw) that msgspec writes back byte for byte holds no repeated key.
    """
    events, lines = chunk.events, chunk.lines
    suspects = set(_rows_with_floats(events, model))
    # "[" + rows joined by "," + "]": one length compared for the whole chunk when no float can make up for a lost key
    if suspects or len(_ENCODE(events)) != len(chunk.data) + 1:
        suspects.update(i for i, (event, line) in enumerate(zip(events, lines)) if i not in suspects and len(_ENCODE(event)) != len(line))
    free = _free_values(events, model)
    joined = b"[" + b",".join(free) + b"]"
    if free and _ENCODE(_decode_untyped(joined)) != joined:
        suspects.update(_rows_with_suspect_free_json(events, model))
    for index in sorted(suspects):
        try:
            python_json(lines[index])
        except RowRefused as refused:
            raise LedgerCorruption(path, chunk.first_index + index + 1, chunk.row_offset(index), refused.kind, refused.detail) from None


def _rows_with_floats(events: list[Any], model: WireModel) -> list[int]:
    found = []
    for name in model.number_fields:
        values = list(map(operator.attrgetter(name), events))
        if float in set(map(type, values)):
            found += [index for index, value in enumerate(values) if type(value) is float]
    if model.content_with_numbers:
        found += [index for index, event in enumerate(events) if type(event.content) in model.content_with_numbers]
    return found


def _free_json(owners: list[Any], fields: FreeFields) -> Iterator[msgspec.Raw]:
    """Every free-JSON value the owners hold in `fields`, gathered at C speed (UNSET and empty ones are falsy)."""
    for name, shape in fields:
        present = filter(None, map(operator.attrgetter(name), owners))
        if shape == RAW:
            yield from present
        else:
            yield from chain.from_iterable(map(dict.values, present) if shape == RAW_DICT else present)


def _rows_with_suspect_free_json(events: list[Any], model: WireModel) -> list[int]:
    suspect = []
    for index, event in enumerate(events):
        values = list(_free_json([event], model.free_fields))
        values += _free_json([event.content], model.content_free_fields.get(type(event.content), ()))
        if any(_ENCODE(_decode_untyped(raw)) != bytes(raw) for raw in values):
            suspect.append(index)
    return suspect


def _decode_untyped(value: Any) -> Any:
    try:
        return _UNTYPED.decode(value)
    except (msgspec.DecodeError, RecursionError):
        return None  # not provable here: the row is read again key by key


def repeated_id_indexes(hashes: array | list[array], chunks: Callable[[], Iterable[Chunk]]) -> list[int]:
    """The index of every event whose id an earlier event holds, in order (`first_repeated_id`'s hashes and chunks)."""
    repeated = repeated_hashes(hashes)
    seen: set[str] = set()
    found: list[int] = []
    for chunk in chunks() if repeated else ():
        for index, event in enumerate(chunk.events):
            if hash(event.id) in repeated:
                if event.id in seen:
                    found.append(chunk.first_index + index)
                seen.add(event.id)
    return found


def first_repeated_id(hashes: array | list[array], chunks: Callable[[], Iterable[Chunk]]) -> tuple[Chunk, int, int] | None:
    """The first event whose id an earlier event holds, as (its chunk, its index there, the earlier event's
    line), or None. `hashes` are a 64-bit hash of every event's id; only when one repeats are the ledger's
    `chunks()` read again and the ids compared, so a collision of two different ids costs time, never a false
    refusal."""
    repeated = repeated_hashes(hashes)
    if not repeated:
        return None
    first_line: dict[str, int] = {}
    for chunk in chunks():
        for index, event in enumerate(chunk.events):
            if hash(event.id) in repeated:
                if event.id in first_line:
                    return chunk, index, first_line[event.id]
                first_line[event.id] = chunk.first_index + index + 1
    return None
