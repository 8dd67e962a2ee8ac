"""The projection's walk: the committed events, fed a piece at a time, in order, followed through the table.

One walk over the events, dictionary lookups only, because python-statemachine costs ~1000x a lookup per
transition. `project.project` feeds it a whole prefix held in memory; `ledger.file_plan.plan_ledger` feeds it
a file chunk by chunk (`feed_chunks`), with an OperationStore for the operations it settles.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import count
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
from msgspec import UNSET

from .columns import column
from .hashes import repeated_hashes
from .indexes import extend_shifted, sorted_unique
from .plan import ACTUAL_HIGH_WATER, EXPECTED_HIGH_WATER, Diagnostic, Disposition, ResumePlan, ToolOperation, Verdict
from .run_facts import RunView, for_run
from .table import ProjectorTable
from .walk_actions import anomaly_at as anomaly_at_
from .walk_actions import answered, flag, flagged_row, let_go_of_results, rows_hidden, rows_tested, walk_row
from .walk_actions import diagnostic as _diagnostic
from .walk_reads import TRUE, OpenOperation, reads_of

if TYPE_CHECKING:  # a walk without a store (a small ledger) never loads it
    from .operation_store import OperationStore

Trace = list[tuple[str, str, bool]]  # (state, event kind, names match) of every step taken, when asked for


class Chunk(Protocol):
    """Consecutive committed rows as a reader hands them on (`ledger.chunk.Chunk`)."""

    first_index: int
    offset: int
    data: bytes
    events: list[Any]


class Walk:
    """The projection as a walk that can be fed the committed events a piece at a time, in order.

    `project` feeds it a whole prefix at once; a ledger file is fed chunk by chunk, so a plan over a ledger of
    any length holds its operations and the indexes of rows it leaves out, never the rows."""

    def __init__(
        self, table: ProjectorTable, trace: Trace | None = None, store: OperationStore | None = None,
        keep: frozenset[int] = frozenset(), chunks_kept: bool = False, first: Any = None,
    ) -> None:
        self.table = table
        # What the contract's expressions read of the run (`run_facts`): from `first`, or the first event fed.
        self.run: RunView | None = None
        # A call's arguments are copied out of the chunk they came from (let go), unless the caller keeps the chunks.
        self.copy_arguments = not chunks_kept
        self.trace = trace
        # Per content kind, everything the walk needs, looked up once per event by the struct's class (and kept
        # with the table, so a million small walks of one table look each kind up once).
        self.reads = reads_of(table)
        # Open operations by call id. With a `store`, an operation settled for good (nothing at the end of the
        # prefix can be said of it) is handed to the store at the end of each piece fed, so memory is bounded by
        # the operations still open, not by the ledger; but one whose call id hashes into `keep` stays here.
        # That is exact only if no later event names a stored operation's call id: `suspects()` says when a
        # walk cannot promise it, and the file is then walked again keeping those (ledger.file_plan.plan_ledger).
        self.operations: dict[str, OpenOperation] = {}
        self.store = store
        self.keep = keep
        self._settled: list[str] = []
        self._answered: list[OpenOperation] = []  # those answered this piece, not settled, whose result is kept (`_store_settled`)
        self._opened = array("q")  # the hash of every call id an operation was opened for (with a store)
        self.call_id_hash = hash  # that hash, as this module names it: the generated loop records the same
        self._opened_before: list[array] = []  # the same, of the walks joined before this one's (see `join`)
        self._unopened: list[int] = []  # the hashes of call ids a result named while no operation was open
        self._next_index = 0  # the next new operation's place in the plan's operations
        self._storable = table.settled_states - table.verification_states - frozenset(table.at_end) if store is not None else frozenset()
        self.diagnostics: list[Diagnostic] = []
        # Replayed results whose call is hidden (`ProjectorTable.hidden`): diagnosed after everything else
        self.replay_diagnostics: list[Diagnostic] = []
        # Indexes of events the provider must not see again; every other event is replayed as it stands. Eight
        # bytes a row: a ledger of partial rows, never replayed, costs little more than a plain one.
        self.not_replayed = array("q")
        # Rows the contract diagnoses rather than refuses (spec/projector.yaml ledger_anomalies duplicate_id and
        # foreign_row): index -> diagnostic; such a row takes no part in tool state (walk_actions.flagged_row)
        self.flagged: dict[int, str] = {}
        self.terminal_event_id: str | None = None
        self.terminal_index = sys.maxsize  # the terminal event's index in the prefix, once found
        if first is not None and table.reads_runs:
            self._read_run(first)

    def _read_run(self, first: Any) -> None:
        self.run = for_run(self.table, first)
        self.table = self.run.table
        self.reads = reads_of(self.table)

    def feed(self, events: Sequence[Any], first_index: int) -> None:
        """Walk the next committed events; the first is the prefix's event `first_index` (0-based)."""
        if self.run is None and self.table.reads_runs and events:
            self._read_run(events[0])
        loop = self.table.loop
        flagged = self.flagged and any(first_index <= index < first_index + len(events) for index in self.flagged)
        if loop is not None and self.trace is None and type(self.reads.step) is dict and not flagged:
            loop(self, events, first_index)  # (which finds the terminal event as it comes to it)
        else:
            if self.terminal_event_id is None:
                self._find_terminal(events, first_index)
            self._walk(events, first_index)
        if self.store is not None:
            self._store_settled()

    def feed_chunks(self, chunks: Iterable[Chunk]) -> tuple[list[tuple[int, int, int]], int]:
        """Feed every chunk, in order: (where each chunk lies, as (first row, byte offset, byte length); rows)."""
        where: list[tuple[int, int, int]] = []
        rows = 0
        for chunk in chunks:
            if getattr(chunk, "flagged", None):
                flag(self, chunk.flagged)  # type: ignore[attr-defined]
            self.feed(chunk.events, chunk.first_index)
            where.append((chunk.first_index, chunk.offset, len(chunk.data)))
            rows += len(chunk.events)
        return where, rows

    def _walk(self, events: Sequence[Any], first_index: int) -> None:
        """Every event, any table."""
        table = self.table
        trace = self.trace
        reads = self.reads
        known, step = reads.known, reads.step
        partials = column(table.partial_attribute)(events)
        initial = table.initial_state
        operations = self.operations
        find_operation = operations.get
        storable = self._storable
        settled = self._settled
        not_replayed = self.not_replayed
        next_index = self._next_index
        opened = self._opened.append if self.store is not None else None  # (without a store, nothing is suspect)
        terminal_index = self.terminal_index
        copy_arguments = self.copy_arguments
        tested = rows_tested(table.tested_fields, events, first_index)  # the rows a test of the contract may judge
        hidden_rows = rows_hidden(self, events, first_index, partials)
        flagged = self.flagged

        for index, event, partial in zip(count(first_index), events, partials):
            if flagged and index in flagged:
                flagged_row(self, event, index)
                continue
            if partial:
                not_replayed.append(index)
                continue
            if (index > terminal_index or index in tested) and walk_row(self, event, index):
                continue
            hidden = index in hidden_rows
            content = event.content
            try:
                read = known[type(content)]
            except KeyError:
                read = reads.learn(type(content))
            if read is None:
                continue
            opens, values_of, kind_ok, kind_error = read
            call_id, tool_name, is_error, args = values_of(content)
            kind = kind_error if is_error else kind_ok
            operation = find_operation(call_id)
            if operation is None:
                state = initial
                names_match = True
            else:
                state = operation.state
                # Only a result is compared with its call (the spec's `when` applies to results alone).
                names_match = opens or tool_name is None or operation.tool_name == tool_name
            if trace is not None:
                trace.append((state, kind, names_match))  # type: ignore[arg-type]
            target, anomaly = step[(state, kind, names_match)]  # type: ignore[index]  # (a kind_error is there when a flag is)
            if anomaly is not None:
                anomaly_at_(self, index, anomaly, event.id, call_id, tool_name, operation, names_match, target)
            elif operation is None:
                # The spec's checks guarantee only a call leaves a status-less state.
                if copy_arguments and type(args) is msgspec.Raw:
                    args = args.copy()  # not a view into the chunk it was decoded from
                operations[call_id] = OpenOperation(target, tool_name or "", args, index, event.id, next_index, call_hidden=hidden)
                next_index += 1
                if opened is not None:
                    opened(hash(call_id))
            else:
                operation.state = target
                if target in storable:
                    settled.append(call_id)
                if not opens:
                    answered(self, operation, call_id, index, event, is_error, hidden)
        self._next_index = next_index

    def _find_terminal(self, events: Sequence[Any], first_index: int) -> None:
        """Note the first committed (not partial) terminal event among `events`, if there is one."""
        table = self.table
        statuses = column("status")(events)
        flags = column(table.terminal_flag[0])(events)
        # The common case, seen at C speed; most often both fields are absent everywhere (counted by identity).
        if (statuses.count(UNSET) == len(statuses) or table.terminal_statuses.isdisjoint(statuses)) and (flags.count(UNSET) == len(flags) or not any(flags)):
            return
        is_partial = attrgetter(table.partial_attribute)
        flag_key = table.terminal_flag[1]
        for index, event in enumerate(events):
            if is_partial(event):
                continue
            if statuses[index] in table.terminal_statuses or (flags[index] and flags[index].get(flag_key) == TRUE):
                self.terminal_event_id = event.id
                self.terminal_index = first_index + index
                return

    def suspects(self) -> frozenset[int]:
        """Hashes of call ids named again after their operation may have been stored: a call id opened twice, or
        named by a result while no operation of it was open (a stored one looks like none). Empty: every event
        found its operation where the walk keeps it, so the plan is exact (always, without a store). (Call once,
        after the last piece: it uses up the walk's record of opened call ids.)"""
        opened = [*self._opened_before, self._opened]
        named = set(self._unopened)
        named_again = {value for values in opened for value in values if value in named} if named else set()
        return frozenset(named_again | repeated_hashes(opened))

    def __getstate__(self) -> dict[str, Any]:
        # A walk crosses processes only as a part to `join`: without its table, which the joining walk has.
        return {**vars(self), "table": None, "reads": None, "trace": None, "run": None}

    def join(self, later: Walk, rows: int) -> bool:
        """Go on as if `later`'s events had been fed to this walk after its `rows` events (`later` walked them
        afresh, with a store of its own, and is used up). False, and nothing changed, when this walk found a
        terminal event: every later event was after it. Otherwise the joined walk is exact only when no call
        id is named in two parts, and that shows as `suspects()`, to be asked once after the last join: a call
        id named in two parts is opened in both, or opened in one and named with nothing open in the other."""
        if self.terminal_event_id is not None:
            return False
        for operation in later.operations.values():
            operation.index += self._next_index
            operation.call_index += rows
            if operation.standing:
                operation.standing = [index + rows for index in operation.standing]
            if operation.response_index >= 0:
                operation.response_index += rows
        self.operations.update(later.operations)
        if self.store is not None and later.store is not None:
            self.store.extend(later.store, self._next_index)
        self._next_index += later._next_index
        self._opened_before.extend([self._opened, *later._opened_before])  # no copies: see `suspects`
        self._opened = later._opened
        self._unopened += later._unopened
        self.diagnostics += later.diagnostics
        self.replay_diagnostics += later.replay_diagnostics
        extend_shifted(self.not_replayed, later.not_replayed, rows)
        if later.terminal_event_id is not None:
            self.terminal_event_id, self.terminal_index = later.terminal_event_id, later.terminal_index + rows
        return True

    def _store_settled(self) -> None:
        """Hand the store every operation this piece settled for good; a result kept for a later action event's check
        (`OpenOperation.response_event`) by one it keeps is kept as JSON text (`let_go_of_results`), not to hold on to
        the piece's chunk."""
        operations, storable = self.operations, self._storable
        call_ids, settled = [], []
        keep = self.keep
        for call_id in dict.fromkeys(self._settled):
            operation = operations.get(call_id)
            if operation is not None and operation.state in storable and operation.response_index >= 0 and (not keep or hash(call_id) not in keep):
                call_ids.append(call_id)
                settled.append(operation)
                del operations[call_id]
            elif operation is not None and operation.response_event is not None:  # kept: its result's chunk let go of
                self._answered.append(operation)
        self._settled.clear()
        let_go_of_results(self.table, self._answered)
        if settled:
            from .operation_store import encode_records

            tool_operations = list(map(self._tool_operation, call_ids, settled))
            records = encode_records(tool_operations)
            self.store.put([operation.index for operation in settled], records)  # type: ignore[union-attr]

    def _tool_operation(self, call_id: str, operation: OpenOperation) -> ToolOperation:
        status: Any = self.table.state_status[operation.state]  # (the spec gives every non-initial state a status)
        return ToolOperation(call_id, operation.tool_name, operation.args, status, operation.call_event_id, operation.response_event_id, operation.response_is_error)

    def verdict(self, high_water: int, expected_high_water: int | None) -> Verdict:
        """What the plan decides once every committed event was fed (`plan` without its operations and rows).
        Only the operations still in the walk's hands count: one handed to a store was settled for good, in
        neither a verification state nor one diagnosed at the end."""
        table = self.table
        verification_states = table.verification_states
        at_end = table.at_end
        present = {operation.state for operation in self.operations.values()}  # (a few states, whatever the operations)
        requires_verification = not verification_states.isdisjoint(present)
        at_the_end = []
        if not present.isdisjoint(at_end):
            for call_id, operation in self.operations.items():
                end_code = at_end.get(operation.state)
                if end_code is not None:
                    at_the_end.append(_diagnostic(table, end_code, event_id=operation.call_event_id, tool_call_id=call_id, tool_name=operation.tool_name))
        # In the contract's order (spec/projector.yaml `diagnostic_order`)
        diagnostics = at_the_end + self.diagnostics if table.operations_first else self.diagnostics + at_the_end
        diagnostics += self.replay_diagnostics
        if table.listed_last:
            last = table.listed_last
            diagnostics = [d for d in diagnostics if d.code not in last] + [d for d in diagnostics if d.code in last]
        if expected_high_water is not None and expected_high_water != high_water:
            detail = {EXPECTED_HIGH_WATER: expected_high_water, ACTUAL_HIGH_WATER: high_water}
            diagnostics.insert(0, _diagnostic(table, table.high_water_diagnostic, detail=detail))
        raised = {table.diagnostics[diagnostic.code][0] for diagnostic in diagnostics}
        reasons = tuple(reason for reason in table.reason_order if reason in raised)
        disposition: Disposition = "safe_replay" if not reasons and not requires_verification else "blocked"
        return Verdict(disposition, tuple(diagnostics), reasons, requires_verification)

    def unsettled(self, limit: int) -> list[tuple[str, str]]:
        """(tool name, call id) of the first `limit` operations without a committed response whose effects may have
        happened (not one that provably never started: `ProjectorTable.never_ran_statuses`), in the plan's order.
        A store holds none of them: only an operation with its response is handed to it."""
        status, never_ran = self.table.state_status, self.table.never_ran_statuses
        return [(op.tool_name, call_id) for call_id, op in self.operations.items() if op.response_event_id is None and status.get(op.state) not in never_ran][:limit]

    def plan(
        self,
        high_water: int,
        expected_high_water: int | None,
        rows: Sequence[msgspec.Raw],
        rows_without: Callable[[array], Sequence[msgspec.Raw]],
    ) -> ResumePlan:
        """The plan once every committed event was fed: `rows` are all of them (`runtime_events`),
        `rows_without(skip)` the rows walked but those at the indexes in `skip`, a sorted array of unique
        int64 (`replay_runtime_events`)."""
        verdict = self.verdict(high_water, expected_high_water)
        not_replayed = array("q")  # besides self.not_replayed
        tool_operations: list[ToolOperation] = []
        for call_id, operation in self.operations.items():
            tool_operations.append(self._tool_operation(call_id, operation))
            if operation.response_index < 0:
                not_replayed.append(operation.call_index)  # calls and results are replayed only as matched pairs
            if operation.standing and (operation.response_index < 0 or operation.call_hidden or operation.response_hidden):
                not_replayed.extend(operation.standing)  # rows standing with the call: replayed with a replayed pair only
        operations: Sequence[ToolOperation] = tuple(tool_operations)
        if self.store is not None:  # a walk with a store stored every operation: they are read back from it, in order
            from .operation_store import StoredOperations, encode_records, tool_operation_of
            if tool_operations:  # the operations still open join the stored ones
                self.store.put([operation.index for operation in self.operations.values()], encode_records(tool_operations))
            operations = StoredOperations(self.store, tool_operation_of)
        replay = rows_without(sorted_unique(self.not_replayed, not_replayed))
        return ResumePlan(
            disposition=verdict.disposition,
            operations=operations,
            diagnostics=verdict.diagnostics,
            rejection_reasons=verdict.rejection_reasons,
            requires_verification=verdict.requires_verification,
            source_runtime_event_high_water=high_water,
            directive=self.table.directive if verdict.requires_verification else None,
            terminal_runtime_event_id=self.terminal_event_id,
            runtime_events=rows,
            replay_runtime_events=replay,
        )

