"""Facts about other runs (spec/continuation.yaml `planner.lineage`): the walk from a source run up the runs it
continued, pure. `read_run(run_id)` gives another run of the session as (its header, its committed events), or None
when it cannot be read; the ledger layer reads them (`ledger.continuation_run`), nothing here touches the disk.

The walk, as maka's RuntimeContinuationPlanner.readLineagePrefixes does it: from the source, while the run's header
holds an edge (`edge`: an object naming the continued run, `run`, and how many of its events were read,
`high_water`), park with `cycle` when the edge names a run already met, with `too_deep` when the lineage already
holds `depth` runs, with `missing` when the run cannot be read or has fewer committed events than the high-water (an
edge that is no object, or names no run or no positive high-water, is as missing); else read the run, its prefix its
first `high_water` events, and park with the first `each_edge` check that fires. The first failure decides alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import ExpressionFailed
from .continuation_json import event_rows_json
from .continuation_table import EdgeCheck

ReadRun = Callable[[str], "tuple[Mapping[str, Any] | None, Sequence[Any] | None] | None"]


def walk_lineage(
    header: Mapping[str, Any], encoded: list[Any], read_run: ReadRun, lineage: Mapping[str, Any], checks: Sequence[EdgeCheck],
    run_checks: Sequence[EdgeCheck] = (),
) -> str | None:
    """The diagnostic the walk parks with, or None when every run and edge up to a root holds; `encoded` is the
    source's events as JSON. The source is known by its header's runId (else its first event's)."""
    run_id = header.get("runId") if isinstance(header.get("runId"), str) else (encoded[0].get("runId") if encoded else None)
    child: dict[str, Any] = {"runId": run_id, "header": dict(header), "events": encoded}
    seen = {run_id}
    while True:
        edge = child["header"].get(lineage["edge"])
        fired = _first(run_checks, (edge, child), child)
        if fired is not None:
            return fired
        if edge is None:
            return None
        target = edge.get(lineage["run"]) if isinstance(edge, dict) else None
        high_water = edge.get(lineage["high_water"]) if isinstance(edge, dict) else None
        if not isinstance(target, str) or high_water.__class__ is not int or high_water < 1:
            return str(lineage["missing"])
        if target in seen:
            return str(lineage["cycle"])
        if len(seen) >= lineage["depth"]:
            return str(lineage["too_deep"])
        seen.add(target)
        found = read_run(target)
        ancestor_header, ancestor_events = found if found is not None else (None, None)
        if ancestor_header is None or ancestor_events is None or len(ancestor_events) < high_water:
            return str(lineage["missing"])
        ancestor = {"runId": target, "header": dict(ancestor_header), "events": event_rows_json(ancestor_events[:high_water])}
        fired = _first(checks, (edge, child, ancestor), child)
        if fired is not None:
            return fired
        child = ancestor


def _first(checks: Sequence[EdgeCheck], values: tuple[Any, ...], child: Mapping[str, Any]) -> str | None:
    """The diagnostic of the first check that fires on `values`, or None."""
    for check in checks:
        try:
            fired = check.when_function(*values)
        except ExpressionFailed as failed:  # no decision: say which check could not be judged
            raise ExpressionFailed(f"lineage check '{check.name}' (run {child['runId']!r}): {failed}") from None
        if fired:
            return check.diagnostic
    return None
