"""What `append` may write: one row that the strict reader reads back as exactly the event it was given.

An event built in Python is not checked when it is made (msgspec structs take any value), and free JSON is
held as `msgspec.Raw`, copied byte for byte: its bytes may come from a model that was prompt-injected. Left
unchecked, a Raw holding a newline and a second JSON object writes a second row (a forged tool response),
and a NaN `ts` (written as null), a role outside the format or invalid JSON write a row the reader refuses,
leaving the ledger unplannable. So the row is encoded, read back through the reader's own checks, and
written only when the event read back equals the one given and encodes to the same bytes. The check costs
about 10 us for a small row and 5 ms a MiB (measured against appends of 50 us and 3.5 ms).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..core.wire import WireModel
from ..errors import EventRefused, LedgerCorruption, RowRefused
from .bytes import StrPath, check_utf8


def checked_row(path: StrPath, event: Any, model: WireModel) -> bytes:
    """The row `append` writes for `event` (without its newline); raises EventRefused, having written nothing."""
    name = _name(event)
    try:
        row = model.encode(event)
    except RowRefused as refused:
        raise EventRefused(f"{path}: event {name} cannot be written: {refused.kind}: {refused.detail}; nothing was written") from None
    except (TypeError, ValueError, OverflowError, RecursionError) as error:
        raise EventRefused(f"{path}: event {name} cannot be written as JSON ({error}); nothing was written") from None
    if b"\n" in row:
        raise EventRefused(
            f"{path}: event {name} holds a newline in its free JSON (a msgspec.Raw value), which would end its row "
            f"early; a row is one line: pass compact JSON. Nothing was written"
        )
    try:
        # The reader's verdict on a row: its bytes are UTF-8, then `decode_row` (its chunk path is proven to
        # agree with it, and falls back to it to name a refused row).
        check_utf8(path, row, 0, 0)
        read_back = model.decode_row(row)
    except (LedgerCorruption, RowRefused) as refused:
        raise EventRefused(
            f"{path}: event {name} would be a row the reader refuses ({refused.kind}: {refused.detail}); nothing was written"
        ) from None
    if read_back != event or model.encode(read_back) != row:
        where = _difference(event, read_back, "event") or "its row re-encodes differently"
        raise EventRefused(f"{path}: event {name} would be read back as another event ({where}); nothing was written")
    return row


def _name(event: Any) -> str:
    event_id = getattr(event, "id", None)
    return repr(event_id) if isinstance(event_id, str) else "(an id that is not a string)"


def _difference(given: Any, read: Any, at: str) -> str | None:
    """Where an event read back first differs from the one given, for the message."""
    if type(given) is not type(read):
        return f"{at}: a {type(given).__name__} given, a {type(read).__name__} read back"
    if isinstance(given, msgspec.Struct):
        for field in msgspec.structs.fields(given):
            found = _difference(getattr(given, field.name), getattr(read, field.name), f"{at}.{field.encode_name}")
            if found is not None:
                return found
        return None
    if isinstance(given, dict) and given.keys() == read.keys():
        return next((d for key in given if (d := _difference(given[key], read[key], f"{at}.{key}")) is not None), None)
    if isinstance(given, list) and len(given) == len(read):
        return next((d for i, pair in enumerate(zip(given, read)) if (d := _difference(*pair, f"{at}[{i}]")) is not None), None)
    if isinstance(given, msgspec.Raw):
        given, read = bytes(given), bytes(read)
    return None if given == read else f"{at}: {_short(given)} given, {_short(read)} read back"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
