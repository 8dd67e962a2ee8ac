"""The planner form of the continuation decision, pure: a source run's header, its committed events and the
session's other runs' headers -> its gates (the first that fires decides), then the decision with the inputs
filled as the spec's `planner` says. `ledger.continuation_run` reads the files; nothing here touches the disk."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from ..errors import ExpressionFailed, FactsRefused
from .continuation import ABSENT, ContinuationPlan, DecisionContext, decide_continuation
from .continuation_json import event_rows_json
from .continuation_lineage import ReadRun, walk_lineage
from .continuation_table import ContinuationTable
from .plan import Diagnostic
from .table import ProjectorTable
from .walk_reads import TRUE


def decide_from_run(
    header: Mapping[str, Any] | None,
    events: Sequence[Any] | None,
    other_headers: Mapping[str, Any],
    host: Any,
    ids: Mapping[str, str],
    projector: ProjectorTable,
    table: ContinuationTable,
    rows: Sequence[msgspec.Raw] | None = None,
    read_run: ReadRun | None = None,
) -> ContinuationPlan:
    """Decide a run: `header` None when its run.json is not a readable JSON object, `events` None when its ledger
    cannot be read. `host` must hold exactly the spec's host inputs (FactsRefused otherwise). `read_run(run_id)`
    reads another run of the session for the lineage walk, when the spec has one (`continuation_lineage.py`);
    without it, every run the source continued is missing."""
    planner = table.planner
    assert planner is not None, "the contract has no planner form"
    _check_host(host, planner["host"])
    if header is not None and not _has_what_is_read(header, planner["inputs"], table.inputs):
        header = None  # a header without a field the planner reads is as unreadable as no header (fail closed)
    # The inputs, as far as they can be had: a gate may read them (one that cannot be read is absent to it, and a
    # gate before it parks a run whose header or ledger cannot be read).
    facts = {name: host[name] for name in planner["host"] if name in host}
    # The source's events as JSON, made once for what reads them so (inputs by expression, the lineage walk).
    encoded = event_rows_json(events) if events is not None and (table.input_functions or table.lineage is not None) else []
    if header is not None and events is not None:
        for name, source in planner["inputs"].items():
            expressed = isinstance(source, Mapping) and "expression" in source
            value = _expressed(table, name, header, encoded) if expressed else _input(source, header, events, ids, projector)
            if value is not ABSENT:
                facts[name] = value
    context = DecisionContext(events or (), facts, table)
    context.planner = {
        # A field written as null records nothing: as absent to the gates as a missing one (fail closed).
        "header": {key: value for key, value in header.items() if value is not None} if header is not None else ABSENT,
        "ledger": {"events": len(events)} if events is not None else ABSENT,
        "existing_continuation": _existing(header, events, other_headers, planner["existing_continuation"]),
    }
    for gate in table.gates:
        try:
            fired = context.bindings(gate, ())
            diagnostic = context.diagnostic(gate, fired[0]) if fired else None
        except ExpressionFailed as failed:  # no decision: say which gate could not be judged
            raise ExpressionFailed(f"gate '{gate.name}': {failed}") from None
        if diagnostic is None and table.lineage is not None and gate.name == table.lineage["after"]:
            assert header is not None and events is not None, "the gates before the lineage park an unreadable header or ledger"
            code = walk_lineage(header, encoded, read_run or (lambda run: None), table.lineage, table.lineage_checks, table.lineage_run_checks)
            diagnostic = None if code is None else Diagnostic(code=code, message=table.diagnostics[code][1])
        if diagnostic is not None:
            reason = table.diagnostics[diagnostic.code][0]
            return ContinuationPlan(disposition=table.stop, rejection_reasons=(reason,) if reason else (), diagnostics=(diagnostic,))
    assert header is not None and events is not None, "the spec's gates refuse an unreadable header and ledger"
    return decide_continuation(events, facts, projector, table, rows=rows)


def decide_latest(
    headers: Mapping[str, Any],
    read_events: Callable[[str], tuple[Sequence[Any] | None, Sequence[msgspec.Raw] | None]],
    host: Any,
    ids: Mapping[str, str],
    projector: ProjectorTable,
    table: ContinuationTable,
    read_run: ReadRun | None = None,
) -> tuple[str | None, ContinuationPlan]:
    """`--latest`: (the run picked among the session's `headers`, or None; the decision). `read_events(run)` gives
    the picked run's committed events and rows, (None, None) when its ledger cannot be read; `read_run` as for
    `decide_from_run`."""
    assert table.planner is not None, "the contract has no planner form"
    _check_host(host, table.planner["host"])
    picked = pick_candidate(headers, table)
    if picked is None:
        return None, no_candidate(table)
    events, rows = read_events(picked)
    others = {run_id: header for run_id, header in headers.items() if run_id != picked and header is not None}
    return picked, decide_from_run(headers[picked], events, others, host, ids, projector, table, rows=rows, read_run=read_run)


def pick_candidate(headers: Mapping[str, Any], table: ContinuationTable) -> str | None:
    """The run `--latest` continues among `headers` ({run id: its header, or None when unreadable}): the newest by
    the spec's `candidate.newest_by` fields (compared as text, descending; the directory names the run's `runId`)
    whose header passes every test of one of `candidate.eligible`; None when no run does."""
    planner = table.planner
    assert planner is not None and "candidate" in planner, "the contract's planner has no candidate rule"
    rule = planner["candidate"]
    context = DecisionContext((), {}, table)
    eligible = []
    for run_id, header in headers.items():
        if not isinstance(header, Mapping):
            continue  # an unreadable header is no candidate (fail closed: it is not known to be interrupted)
        bound = {"candidate": {**{key: value for key, value in header.items() if value is not None}, "runId": run_id}}
        if any(all(context.holds(test, bound, ()) for test in group) for group in rule["eligible"]):
            eligible.append((tuple(_as_text(bound["candidate"].get(field)) for field in rule["newest_by"]), run_id))
    return max(eligible)[1] if eligible else None


def no_candidate(table: ContinuationTable) -> ContinuationPlan:
    """The park when `--latest` finds no run to continue (the spec's `candidate.none`)."""
    assert table.planner is not None
    code = table.planner["candidate"]["none"]
    reason, message = table.diagnostics[code]
    return ContinuationPlan(disposition=table.stop, rejection_reasons=(reason,) if reason else (), diagnostics=(Diagnostic(code, message),))


def _as_text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _has_what_is_read(header: Mapping[str, Any], inputs: Mapping[str, Any], declared: Mapping[str, Mapping[str, Any]]) -> bool:
    """Every required input read from the header (`header.FIELD`) is there, a string where a string is declared."""
    for name, source in inputs.items():
        if isinstance(source, str) and not declared[name]["optional"]:
            value = header.get(source.partition(".")[2])
            if value is None or (declared[name]["type"] == "string" and not isinstance(value, str)):
                return False
    return True


def _check_host(host: Any, names: Sequence[str]) -> None:
    if not isinstance(host, dict):
        raise FactsRefused(["host: expected an object"])
    undeclared = [key for key in host if key not in names]
    if undeclared:
        raise FactsRefused([f"host: undeclared key {key!r}; the host's keys are [{', '.join(names)}]" for key in undeclared])


def _input(source: Any, header: Mapping[str, Any], events: Sequence[Any], ids: Mapping[str, str], projector: ProjectorTable) -> Any:
    if isinstance(source, str):  # header.FIELD
        return header.get(source.partition(".")[2], ABSENT)
    if "literal" in source:
        return source["literal"]
    if "fresh_ids" in source:
        return dict(ids)
    return terminal_repair_succeeded(header, events, projector, source["terminal_repair"])


def _expressed(table: ContinuationTable, name: str, header: Mapping[str, Any], events_json: list[Any]) -> Any:
    """An input the spec fills by an expression over the header and the committed events (as JSON)."""
    try:
        value = table.input_functions[name](dict(header), events_json)
    except ExpressionFailed as failed:  # no decision: say which input could not be made
        raise ExpressionFailed(f"planner input '{name}': {failed}") from None
    return ABSENT if value is None else value


def terminal_repair_succeeded(header: Mapping[str, Any], events: Sequence[Any], projector: ProjectorTable, rule: Mapping[str, Any]) -> bool:
    """The header's status is terminal, exactly one committed non-partial event is terminal, and its status agrees
    with the header's (equal, or one `rule["agrees"]` lists for it); with `rule["last"]`, no committed non-partial
    event follows it."""
    status = header.get("status")
    if status not in rule["header_statuses"]:
        return False
    terminal = committed_terminal_events(events, projector)
    if len(terminal) != 1:
        return False
    if rule.get("last") and _last_committed(events, projector) is not terminal[0]:
        return False
    return terminal[0].status == status or terminal[0].status in rule["agrees"].get(status, ())


def committed_terminal_events(events: Sequence[Any], projector: ProjectorTable) -> list[Any]:
    """The non-partial events that are terminal (a terminal status, or the terminal flag), in ledger order."""
    field, key = projector.terminal_flag
    return [
        event
        for event in events
        if getattr(event, projector.partial_attribute) is not True
        and (event.status in projector.terminal_statuses or _flag_true(getattr(event, field), key))
    ]


def _last_committed(events: Sequence[Any], projector: ProjectorTable) -> Any:
    """The last non-partial event, or None."""
    return next((event for event in reversed(events) if getattr(event, projector.partial_attribute) is not True), None)


def _flag_true(holder: Any, key: str) -> bool:
    # As the walk tells a terminal event (`walk_reads.reading`): the flag holds JSON true, exactly as written.
    return isinstance(holder, dict) and holder.get(key) == TRUE


def _existing(header: Mapping[str, Any] | None, events: Sequence[Any] | None, others: Mapping[str, Any], rule: Mapping[str, str]) -> Any:
    """The header of the first other run (by run id) whose `rule["field"]` names this run at this high-water."""
    if header is None or events is None:
        return ABSENT
    for run_id in sorted(others):
        source = others[run_id].get(rule["field"]) if isinstance(others[run_id], dict) else None
        if isinstance(source, dict) and source.get(rule["run"]) == header.get("runId") and source.get(rule["high_water"]) == len(events):
            return {**others[run_id], "runId": run_id}  # the directory names the run
    return ABSENT
