"""The recovery command: `recover` (take every interrupted run of a workspace to a final state)."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from .common import add_format_arguments, selected_contract
from .errors import EXIT_CORRUPT, EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError


def cmd_recover(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..errors import EscapesWorkspace, InvalidLedgerId, LedgerMissing, NoContinuationDecision, RunHeaderUnreadable
    from ..ledger.recovery import recover

    contract = selected_contract(args)
    from ..ledger.sqlite_layout import holds_store

    if holds_store(args.workspace):
        return _recover_store(args, contract, out, err)
    try:
        report = recover(args.workspace, args.session, contract=contract)
    except (LedgerMissing, InvalidLedgerId, EscapesWorkspace, NoContinuationDecision, RunHeaderUnreadable) as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"cannot recover {args.workspace}: {error.strerror or error}") from None
    from ..output.advice import corruption_next_step

    live = [run for run in report.runs if run.outcome == "live"]
    refused = [run for run in report.runs if run.outcome == "refused"]
    corrupt = [run for run in report.runs if run.outcome == "corrupt"]
    claims = report.claims  # claims whose run was never created (they stand), and claims that cannot be read
    if args.format == "json":
        out.write(json.dumps({
            "checked": report.checked, "runs": [run.as_json() for run in report.runs], "claims": [claim.as_json() for claim in claims],
            "contract": contract.identity.as_json(),
        }) + "\n")
    else:
        recovered = [run for run in report.runs if run.outcome == "recovered"]
        sessions = [run for run in refused if not run.run_id]  # a session whose id no store can address: not a run
        out.write(f"recover {args.workspace}: {report.checked} run(s) with a header, {len(report.runs) - len(sessions)} interrupted; "
                  f"{len(recovered)} recovered, {len(live)} live, {len(refused) - len(sessions)} refused"
                  + (f", {len(corrupt)} corrupt" if corrupt else "")
                  + (f"; {len(sessions)} session(s) not read" if sessions else "")
                  + (f"; {len(claims)} claim(s) to look at" if claims else "") + "\n")
        for run in report.runs:
            where = f"{run.session_id}/{run.run_id}"
            if run.outcome == "recovered":
                steps = ", ".join(run.steps) or "nothing to do"
                out.write(f"  {where}: {run.state} -> {steps}" + (f"; header {run.header_status}" if run.header_status else "") + "\n")
            else:
                out.write(f"  {where}: {run.outcome}, not touched: {run.message}\n")
        for claim in claims:
            where = f"{claim.session_id}/claims/" + (f"{claim.source_run_id}@{claim.high_water}" if claim.source_run_id is not None else "")
            out.write(f"  {where}: {claim.outcome.replace('_', ' ')}, not touched: {claim.message}\n")
        if live:
            out.write("a live run is a running one, not a crashed one: rerun recover once its process has stopped\n")
    for run in corrupt:  # what to do about each, where errors go, as `plan` says it
        assert run.corruption is not None
        err.write(f"resume-contract: corrupt ledger, not recovered: {run.corruption}\n{corruption_next_step(run.corruption)}\n")
    if corrupt:
        return EXIT_CORRUPT
    if live:
        return EXIT_USAGE
    return EXIT_FAIL if refused or report.claims_refused else EXIT_OK


def _recover_store(args: argparse.Namespace, contract: Any, out: TextIO, err: TextIO) -> int:
    """`recover` of a workspace that keeps its ledgers in runtime.sqlite, whose writer is the runtime's, not this
    project's: what the reference's startup recovery would do to each run (an interrupted run, one without a
    terminal event, gets a recovered terminal event), and nothing changed."""
    from ..contract import build_resume_plan
    from ..errors import LedgerCorruption, StoreBusy, StoreUnreadable
    from ..ledger.sqlite_store import SqliteStore
    from ..output.terminal import escape, run_options

    runs: list[dict[str, Any]] = []
    try:
        with SqliteStore(args.workspace, contract=contract) as store:
            listed = store.runs()
            if args.session is not None and args.session not in {session for session, _ in listed}:
                raise UsageError(f"{store.path}: no session {args.session!r} (no row of it in runtime_events or runtime_partial_snapshots)")
            for session_id, run_id in listed:
                if args.session not in (None, session_id):
                    continue
                try:
                    ledger = store.read_run(session_id, run_id)
                except LedgerCorruption as error:
                    runs.append({"sessionId": session_id, "runId": run_id, "outcome": "corrupt", "message": str(error)})
                    continue
                terminal = build_resume_plan(ledger.events, rows=ledger.rows, contract=contract).terminal_runtime_event_id
                runs.append({"sessionId": session_id, "runId": run_id, "outcome": "terminal" if terminal else "interrupted",
                             "highWater": len(ledger.events)})
    except (StoreUnreadable, StoreBusy) as error:
        raise UsageError(str(error)) from None
    interrupted = [run for run in runs if run["outcome"] == "interrupted"]
    corrupt = [run for run in runs if run["outcome"] == "corrupt"]
    if args.format == "json":
        out.write(json.dumps({"store": str(store.path), "changed": False, "runs": runs, "contract": contract.identity.as_json()}) + "\n")
    else:
        out.write(f"recover {escape(args.workspace)}: its ledgers are rows of {escape(store.path)}, written by the runtime, not by this project: "
                  f"nothing was changed. {len(runs)} run(s), {len(interrupted)} interrupted"
                  + (f", {len(corrupt)} corrupt" if corrupt else "") + "\n")
        for run in interrupted:
            out.write(f"  {escape(run['sessionId'])}/{escape(run['runId'])}: no terminal event; the runtime's startup recovery commits a recovered "
                      "terminal event (author and role system, status failed, actions.endInvocation true) when it next opens the "
                      "workspace\n")
        for run in corrupt:
            out.write(f"  {escape(run['sessionId'])}/{escape(run['runId'])}: corrupt, not touched: {escape(run['message'])}\n")
        if interrupted:
            first = interrupted[0]
            example = escape(f"resume-contract plan {run_options(args.workspace, first['sessionId'], first['runId'])}")
            out.write(f"to decide each before the runtime recovers it: `{example}` (the first)\n")
    return EXIT_CORRUPT if corrupt else EXIT_OK


def register(commands: Any) -> None:
    """Add recover to the subcommand parsers."""
    parser = commands.add_parser(
        "recover",
        help="startup recovery: give every interrupted run of a workspace its terminal event and terminal header",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Find the runs of a workspace whose header (run.json) is not terminal and take each to a final\n"
        "state of the continuation's lifecycle (spec/lifecycle.yaml): a recovered terminal RuntimeEvent when the\n"
        "run has none (system, failed, stateDelta.failureClass app_restarted), then the header that agrees with\n"
        "its terminal event. Idempotent: a second run finds nothing to do. A live run (a writer holds its ledger)\n"
        "is refused and left untouched; the source of a continuation is never written. A symlink where a run\n"
        "directory belongs is never followed: it is refused and named. A claim whose run was never created (the\n"
        "claimer died before creating it) is reported and left standing: its source is not continued again.\n"
        "A workspace that keeps its ledgers in runtime.sqlite (the runtime's SQLite store) is not written: recover\n"
        "lists its runs with no terminal event, which the runtime's own startup recovery ends (exit 0, or 3 for a\n"
        "corrupt run).\n\n"
        "  resume-contract recover --workspace WS [--session S] [--format json]\n",
        epilog="exit: 0 every interrupted run recovered (or none; a claim without a run is reported, not an error), 1 a\n"
        "run recovery cannot take to a final state, a symlinked run directory, or a claim that cannot be read (left\n"
        "untouched), 2 usage, a workspace or session that does not exist, or a live run, 3 a corrupt ledger\n"
        "(that run left untouched; the others are recovered).",
    )
    parser.add_argument("--workspace", metavar="WS", required=True, help="the workspace whose runs to recover")
    parser.add_argument("--session", metavar="S", help="only this session's runs")
    add_format_arguments(parser, "{checked, runs: [{sessionId, runId, state, outcome (recovered, live, refused, corrupt), steps, headerStatus, message}], "
                         "claims: [{sessionId, sourceRunId, sourceRuntimeEventHighWater, runId, outcome (claim_without_run, refused), message}], contract}")
    parser.set_defaults(handler=cmd_recover)
