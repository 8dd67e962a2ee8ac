"""What the projection's walk keeps while it walks: how it reads each content kind, and each open call id.

Both are plain lookups and slots, built for the walk's hot loop (`walk.Walk.feed`), which runs once per
committed event.
"""

from __future__ import annotations

from operator import attrgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import msgspec

from .wire import kept_json

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from .table import ProjectorTable, ToolContentRead

# (opens, its values, event kind when not failed, event kind when failed); the values of a content struct are
# (call id, tool name or None, whether its error flag holds true, arguments or None)
KindRead = tuple[bool, "Callable[[Any], tuple[Any, Any, bool, Any]]", str, "str | None"]


class KindReads:
    """How the walk reads each content struct class (None: the kind takes no part in tool state), and the
    table's steps, in plain dicts: the interpreter's specialised subscript of a dict costs a fifth of a lookup
    in a dict subclass or a mappingproxy (about 100 instructions against 500, once or twice an event).

    A class is looked up in the table the first time it is seen (`learn`); after that, in `known`.
    """

    __slots__ = ("known", "loop_steps", "step", "table")

    def __init__(self, table: ProjectorTable) -> None:
        self.table = table
        self.known: dict[type, KindRead | None] = {}
        # A table's own steps are copied; any other mapping (the reference's, which asks its state machine each
        # step, `proof.reference.MachineSteps`) is asked as it is, for the steps a walk takes and no others.
        steps = table.step
        self.step: Mapping[tuple[str, str, bool], tuple[str, str | None]] = dict(steps) if type(steps) in (dict, MappingProxyType) else steps
        self.loop_steps: dict[tuple[str, ...], Any] = {}  # the generated loop's steps (walk_loop.loop_steps)

    def learn(self, content_class: type) -> KindRead | None:
        read = self.known[content_class] = kind_read(self.table, content_class)
        return read


# The last few tables' reads, by the table's identity (a table is not hashable): `verify` walks millions of
# small ledgers of one table, each of which would otherwise look its content classes up afresh.
_READS: dict[int, tuple[ProjectorTable, KindReads]] = {}
_TABLES_KEPT = 8


def reads_of(table: ProjectorTable) -> KindReads:
    """The KindReads of `table`, shared by every walk of it."""
    kept = _READS.get(id(table))
    if kept is None or kept[0] is not table:
        if len(_READS) >= _TABLES_KEPT:
            _READS.pop(next(iter(_READS)))
        kept = _READS[id(table)] = (table, KindReads(table))
    return kept[1]


def kind_read(table: ProjectorTable, content_class: type) -> KindRead | None:
    """How the walk reads one content kind's struct, or None when the kind takes no part in tool state."""
    kind = getattr(content_class, "KIND", None)
    if kind is None:
        return None
    read = table.tool_contents.get(kind)
    if read is None:
        return None

    return (read.opens, _values_of(read), table.event_kinds[(kind, False)], table.event_kinds.get((kind, True)))


def _values_of(read: ToolContentRead) -> Callable[[Any], tuple[Any, Any, bool, Any]]:
    """A content struct's (call id, tool name, error flag is true, arguments), read by attrgetters."""
    call_id_of, name_of, error_of, arguments_of = (attrgetter(name) if name is not None else None for name in (read.call_id, read.tool_name, read.error_flag, read.arguments))

    def values(content: Any) -> tuple[Any, Any, bool, Any]:
        return (
            call_id_of(content),  # type: ignore[misc]
            name_of(content) if name_of is not None else None,
            error_of is not None and error_of(content) is True,
            arguments_of(content) if arguments_of is not None else None,
        )

    return values


class OpenOperation(msgspec.Struct, gc=False):
    """Mutable bookkeeping for one call id during the walk. (A struct: made in C, once per call. Not tracked by
    the collector: nothing it holds, strings, numbers and the call's arguments, can refer back to it, so it is
    never part of a cycle.)"""

    state: str
    tool_name: str
    args: Any
    call_index: int
    call_event_id: str
    index: int = -1  # its place in the plan's operations (with an OperationStore; else -1)
    response_index: int = -1
    response_event_id: str | None = None
    # the result itself, where an `against_call` check may read it (ProjectorTable.keeps_results): the event, or the
    # JSON text of what the checks read of it once the walk lets go of its chunk (walk_actions.let_go_of_results)
    response_event: Any = None
    response_is_error: bool | None = None
    call_hidden: bool = False  # its call is a hidden row (spec/projector.yaml `replay.hidden`): never replayed
    response_hidden: bool = False  # so is the result that settled it
    # the indexes of later calls and results of its id that an anomaly let stand (a rule moving the state):
    # replayed, as the call is, only once the operation has its response
    standing: list[int] | None = None


TRUE = msgspec.Raw(b"true")  # a flag that holds JSON true, as the row wrote it
# What the walk keeps of a result holding none of the fields a check reads of it (`OpenOperation.response_event`)
NO_FIELDS_READ = msgspec.Raw(b"{}")


def reading(table: ProjectorTable, event: Any) -> tuple[Any, ...]:
    """Everything the walk reads of one event (`walk.Walk`): two events with one reading are walked alike, so
    the explorer explores one of them for both. A partial event is read no further; otherwise whether it is
    terminal, and for a tool event whether it opens, its event kind, call id and tool name; for a call, where an
    action event is checked against its call (`against_call`), its arguments as JSON; and for a result, where a
    check of a later action event reads it (`ProjectorTable.result_fields`), the JSON of what it reads."""
    if getattr(event, table.partial_attribute):
        return ("partial",)
    flags = getattr(event, table.terminal_flag[0])
    terminal = event.status in table.terminal_statuses or bool(flags and flags.get(table.terminal_flag[1]) == TRUE)
    content = event.content
    read = kind_read(table, type(content))
    if read is None:
        return (terminal,)
    opens, values_of, kind_ok, kind_error = read
    call_id, tool_name, failed, arguments = values_of(content)
    if not opens and table.keeps_results:
        return (terminal, opens, kind_error if failed else kind_ok, call_id, tool_name, bytes(kept_json(event, table.result_fields)))
    if opens and arguments is not None and any(action.against_call for action in table.action_kinds):
        return (terminal, opens, kind_ok, call_id, tool_name, msgspec.json.encode(arguments))
    return (terminal, opens, kind_error if failed else kind_ok, call_id, tool_name)
