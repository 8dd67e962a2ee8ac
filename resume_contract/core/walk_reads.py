"""What the projection's walk keeps while it walks: how it reads each content kind, and each open call id.

Both are plain lookups and slots, built for the walk's hot loop (`walk.Walk.feed`), which runs once per
committed event.
"""

from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .table import ProjectorTable

# (opens, call id, tool name, error flag, arguments getters, event kind when not failed, event kind when failed)
KindRead = tuple[bool, Any, Any, Any, Any, str, "str | None"]


class KindReads(dict[type, "KindRead | None"]):
    """Content struct class -> how the walk reads it (None: the kind takes no part in tool state).

    A class is looked up in the table the first time it is seen; after that, a read is one dictionary lookup.
    """

    __slots__ = ("table",)

    def __init__(self, table: ProjectorTable) -> None:
        super().__init__()
        self.table = table

    def __missing__(self, content_class: type) -> KindRead | None:
        read = self[content_class] = kind_read(self.table, content_class)
        return read


def kind_read(table: ProjectorTable, content_class: type) -> KindRead | None:
    """How the walk reads one content kind's struct, or None when the kind takes no part in tool state."""
    kind = getattr(content_class, "KIND", None)
    if kind is None:
        return None
    read = table.tool_contents.get(kind)
    if read is None:
        return None

    def getter(name: str | None) -> Any:
        return attrgetter(name) if name is not None else None

    return (
        read.opens,
        attrgetter(read.call_id),
        getter(read.tool_name),
        getter(read.error_flag),
        getter(read.arguments),
        table.event_kinds[(kind, False)],
        table.event_kinds.get((kind, True)),
    )


class OpenOperation:
    """Mutable bookkeeping for one call id during the walk."""

    __slots__ = (
        "state", "tool_name", "args", "call_index", "call_event_id", "response_index", "response_event_id", "response_is_error",
        "index",
    )

    def __init__(self, state: str, tool_name: str, args: Any, call_index: int, call_event_id: str, index: int = -1) -> None:
        self.index = index  # its place in the plan's operations (with an OperationStore; else -1)
        self.state = state
        self.tool_name = tool_name
        self.args = args
        self.call_index = call_index
        self.call_event_id = call_event_id
        self.response_index = -1
        self.response_event_id: str | None = None
        self.response_is_error: bool | None = None
