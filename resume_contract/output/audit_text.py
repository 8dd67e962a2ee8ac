"""The workspace audit as a person reads it: one line per run that needs attention, then what to do per group."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import TORN_ROW
from .advice import NOT_REPAIRABLE
from .terminal import run_options

REFUSED = "refused"  # the group of unreadable runs refused for a symlink (`RunSummary.refusal`)


def run_line(summary: Any) -> str:
    """A run that is not safe_replay: its status, its reasons and diagnostics (two blocked runs read apart), the
    calls to verify, or the error that kept it from a plan."""
    where = f"{summary.session_id}/{summary.run_id}"
    if summary.error is not None and getattr(summary, "refusal", None):
        return f"{summary.status:<10} {where}: refused ({summary.refusal}): {summary.error}"
    if summary.error is not None:
        return f"{summary.status:<10} {where}: {summary.error}"
    text = f"{summary.status:<10} {where}: {', '.join(summary.rejection_reasons)}"
    if summary.diagnostics:
        text += f" ({', '.join(summary.diagnostics)})"
    if summary.to_verify:
        text += f"; verify {', '.join(summary.to_verify)}"
    return text


def summary_text(counts: Mapping[str, int], refused: int, skipped: int) -> str:
    """The audit's count line; the unreadable runs refused (a symlink where a run's files belong) are counted among
    them, and said when there are any."""
    unreadable = f"{counts['unreadable']} unreadable" + (f" ({refused} refused: symlinks)" if refused else "")
    return (
        f"{sum(counts.values())} runs: {counts['safe_replay']} safe_replay, {counts['blocked']} blocked, "
        f"{counts['corrupt']} corrupt, {counts['live']} live, {unreadable}, {skipped} skipped"
    )


def next_steps(workspace: Path, counts: Mapping[str, int], summaries: Iterable[Any], *, store: bool = False) -> list[str]:
    """What to do for each group of runs that needs attention, with the commands to run; `store`: the workspace's
    runs are rows of its runtime.sqlite (nothing there is torn, and repair changes nothing)."""
    runs: dict[str, list[Any]] = {}
    for summary in summaries:
        group = TORN_ROW if summary.corruption == TORN_ROW else REFUSED if getattr(summary, "refusal", None) else summary.status
        runs.setdefault(group, []).append(summary)
    def example(summary: Any, command: str) -> str:
        return f"`resume-contract {command} {run_options(str(workspace), summary.session_id, summary.run_id)}`"

    lines = []
    if runs.get("blocked"):
        lines.append(
            f"blocked ({counts['blocked']}): do not replay; for each, {example(runs['blocked'][0], 'plan')} says why, and lists "
            "each call to verify"
        )
    if runs.get(TORN_ROW):
        lines.append(
            f"torn ({len(runs[TORN_ROW])}): once nothing writes them, {example(runs[TORN_ROW][0], 'repair')} (each), then plan again"
        )
    if runs.get("corrupt") and store:
        lines.append(f"corrupt ({len(runs['corrupt'])}): no plan, and repair does not change a store; keep runtime.sqlite (with any "
                     "-wal and -shm beside it) as evidence, do not replay these runs")
    elif runs.get("corrupt"):
        lines.append(f"corrupt ({len(runs['corrupt'])}): {NOT_REPAIRABLE}")
    if runs.get("live"):
        lines.append(f"live ({counts['live']}): still running; plan them again once their process has stopped")
    if runs.get(REFUSED):
        lines.append(
            f"refused ({len(runs[REFUSED])}): a symlink stands where a run's directory or ledger belongs; it is never followed. "
            "Find who made it; put the run's own directory (or ledger) in its place, or remove the link, then plan again"
        )
    if runs.get("unreadable"):
        lines.append(f"unreadable ({len(runs['unreadable'])}): see each error above")
    return ["what to do:"] + [f"  {line}" for line in lines] if lines else []
