"""The continuation command: `continue-plan` (may a crashed run be continued from its committed boundary?)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from ..core.wire import MAX_NESTING, too_deep
from .common import add_format_arguments, selected_contract
from .errors import EXIT_FAIL, EXIT_OK, UsageError


def _refuse_repeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the key {key!r} is repeated in one object")
        seen[key] = value
    return seen


def read_facts(path: Path, what: str = "facts") -> Any:
    """The object of a FACTS.json (or, `what`="host", HOST.json) file; one that cannot be read or is not JSON that
    Python reads exactly is a UsageError naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what} file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the {what} file {path}: {getattr(error, 'strerror', None) or error}") from None
    if too_deep(text.encode("utf-8", "surrogatepass")):  # (before the decoder: a raised recursion limit lets it go deeper than the stack)
        raise UsageError(f"{path}: the {what} file nests arrays or objects too deeply to read (more than {MAX_NESTING} levels)")
    try:
        return json.loads(text, object_pairs_hook=_refuse_repeated, parse_int=_integer)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{error.lineno}:{error.colno}: the {what} file is not JSON: {error.msg}") from None
    except RecursionError:
        raise UsageError(f"{path}: the {what} file nests arrays or objects too deeply to read") from None
    except ValueError as error:
        raise UsageError(f"{path}: {error}") from None


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_DIGITS:  # Python's own limit, said in the file's terms
        raise ValueError(f"a number of {len(text.lstrip('-'))} digits; no fact is that large")
    return int(text)


_MAX_DIGITS = 4300  # sys.get_int_max_str_digits()'s default


def _where(workspace: str, session: str, run: str | None) -> Path | str:
    """The run decided on, as a person finds it: its directory, or its rows' place in the workspace's store (its
    ids escaped: a store's run id may hold any text, a newline too)."""
    from ..ledger.sqlite_layout import holds_store, store_path
    from ..output.terminal import escape

    if holds_store(workspace):
        return f"{store_path(workspace)} (session {escape(session)}" + (f", run {escape(run)})" if run else ")")
    session_dir = Path(workspace) / "sessions" / session
    return session_dir / "runs" / run if run else session_dir


def _note_what_is_not_read(workspace: Path, err: TextIO) -> None:
    """A workspace holding runtime.sqlite and `sessions/` too: the store is read, as `plan --workspace` reads it."""
    from ..ledger.sqlite_layout import holds_store, store_path

    if holds_store(workspace) and (workspace / "sessions").is_dir():
        print(f"note: {workspace / 'sessions'} is not read: this workspace keeps its runs in {store_path(workspace)}", file=err)


def _decide(args: argparse.Namespace, contract: Any) -> tuple[Path | str, Any, int | None]:
    """(what was decided on, the plan, how many events the ledger held, when a file was read) for either form."""
    from ..contract import build_continuation_plan
    from ..errors import (
        EscapesWorkspace,
        ExpressionFailed,
        FactsRefused,
        InvalidLedgerId,
        LedgerInUse,
        LedgerMissing,
        NotALedger,
        RunHeaderUnreadable,
        StoreError,
    )
    from ..ledger.continuation_run import plan_continuation, plan_latest_continuation
    from ..ledger.store import read_ledger

    try:
        if args.latest:
            host = args.given = read_facts(Path(args.host), "host")
            args.picked, plan = plan_latest_continuation(args.workspace, args.session, host, _ids(args.ids), contract=contract)
            return _where(args.workspace, args.session, args.picked), plan, None
        if args.workspace is not None:
            host = args.given = read_facts(Path(args.host), "host")
            plan = plan_continuation(args.workspace, args.session, args.run, host, _ids(args.ids), contract=contract)
            return _where(args.workspace, args.session, args.run), plan, None
        facts = args.given = read_facts(Path(args.facts))
        ledger = read_ledger(Path(args.ledger), refuse_live=True, contract=contract)
        return Path(args.ledger), build_continuation_plan(ledger.events, facts, rows=ledger.rows, contract=contract), len(ledger.events)
    except FactsRefused as refused:
        raise UsageError(*(f"{args.host or args.facts}: {problem}" for problem in refused.problems)) from None
    except ExpressionFailed as failed:
        raise UsageError(f"nothing was decided: an expression of the contract cannot judge these facts ({failed})") from None
    except (LedgerInUse, LedgerMissing, NotALedger, EscapesWorkspace, InvalidLedgerId, RunHeaderUnreadable, StoreError) as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"cannot read {args.ledger or args.workspace}: {error.strerror or error}") from None


def _plan_command(args: argparse.Namespace, table: Any) -> str:
    """The `plan` command that shows Phase 0's plan of what was decided, with the high-water step 0 expected."""
    import shlex

    from ..core.continuation import expected_high_water
    from ..output.terminal import run_options

    expected = expected_high_water(args.given, table)  # the facts (or HOST.json) the decision was made with
    if args.workspace is not None:
        run = getattr(args, "picked", None) or args.run
        command = f"resume-contract plan {run_options(args.workspace, args.session, str(run))}"
    else:
        command = f"resume-contract plan {shlex.quote(args.ledger)}"
    # (a negative expectation, which the facts may hold, is no offset `plan` takes: it plans without one)
    return command + (f" --expected-high-water {expected}" if isinstance(expected, int) and expected >= 0 else "")


def _ids(text: str | None) -> dict[str, str] | None:
    if text is None:
        return None
    parts = text.split(",")
    if len(parts) != 3 or not all(parts):
        raise UsageError(f"--ids takes INVOCATION,RUN,TURN (three ids, comma-separated), got {text!r}")
    return dict(zip(("invocationId", "runId", "turnId"), parts, strict=True))


_FORMS = "give LEDGER.jsonl --facts FACTS.json, or --workspace WS --session S (--run R or --latest) --host HOST.json"


def _check_form(args: argparse.Namespace) -> None:
    planner = [args.workspace, args.session, args.host]
    if args.ledger is not None:
        if args.facts is None or args.run is not None or args.latest or any(value is not None for value in planner + [args.ids]):
            raise UsageError(_FORMS)
    elif any(value is None for value in planner) or args.facts is not None or (args.run is None) == (not args.latest):
        raise UsageError(_FORMS)


def cmd_continue_plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import msgspec

    from ..errors import NoContinuationDecision

    _check_form(args)
    contract = selected_contract(args)
    table = contract.continuation
    if table is None:
        raise UsageError(str(NoContinuationDecision(f"the contract {contract.identity} declares no continuation decision (spec/continuation.yaml)")))
    if args.workspace is not None and table.planner is None:
        raise UsageError(f"the contract {contract.identity} declares no continuation planner (spec/continuation.yaml `planner`)")
    if args.latest and (table.planner is None or "candidate" not in table.planner):
        raise UsageError(f"the contract {contract.identity} declares no way to pick a run for --latest (spec/continuation.yaml `planner.candidate`)")
    if args.workspace is not None:
        _note_what_is_not_read(Path(args.workspace), err)
    path, plan, events = _decide(args, contract)
    if args.json:
        encoded = msgspec.json.encode(plan)
        picked = b',"pickedRunId":' + msgspec.json.encode(args.picked) if args.latest else b""
        out.write_bytes(encoded[:-1] + picked + b',"contract":' + msgspec.json.encode(contract.identity.as_json()) + b"}")  # type: ignore[attr-defined]
        out.write("\n")
    else:
        from ..output.continuation_text import continuation_text

        if args.latest:
            from ..output.terminal import escape

            chosen = f"run {escape(args.picked)}" if args.picked else "no run"
            out.write(f"--latest:      {chosen} (the newest interrupted run of session {args.session})\n")
        out.write(continuation_text(path, plan, table, events, _plan_command(args, table)))
        out.write(f"contract:      {contract.identity}; {contract.origin}\n")
    return EXIT_OK if plan.disposition == table.proceed else EXIT_FAIL


def register(commands: Any) -> None:
    """Add continue-plan to the subcommand parsers."""
    parser = commands.add_parser(
        "continue-plan",
        help="decide whether a crashed run may be continued (continue) or must stop for a person (park)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read a run's committed ledger strictly (as `plan` does) and decide, from the contract's\n"
        "continuation decision (spec/continuation.yaml) and the host's facts, whether a fresh invocation, run and\n"
        "turn may continue it from its committed boundary.\n\n"
        "  resume-contract continue-plan path/to/runtime-events.jsonl --facts facts.json [--json]\n"
        "  resume-contract continue-plan --workspace WS --session S --run R --host host.json [--ids I,R,T]\n"
        "  resume-contract continue-plan --workspace WS --session S --latest --host host.json\n\n"
        "FACTS.json is one object with exactly the inputs the spec declares (the reference's field names).\n"
        "The planner form reads the run's run.json, its ledger (snapshots merged) and its session's other runs,\n"
        "or, in a workspace holding runtime.sqlite, the run's header (core_agent_runs) and rows (runtime_events),\n"
        "applies the spec's planner gates, and takes the host's inputs from HOST.json (exactly those). --latest\n"
        "picks the run as the spec's `planner.candidate` says (the newest interrupted one; none parks).\n"
        "--json prints {disposition, rejectionReasons, diagnostics, continuation?}; runtimeContext holds the\n"
        "committed rows exactly as written.\n",
        epilog="exit: 0 continue, 1 park, 2 usage or unreadable input (a missing ledger, facts or host file, keys the\n"
        "spec does not declare, a workspace, session or run that does not exist, a contract without a continuation\n"
        "decision), 3 corrupt ledger (never a decision). A run.json or ledger that cannot be read parks.",
    )
    parser.add_argument("ledger", nargs="?", metavar="LEDGER.jsonl", help="the source run's committed ledger")
    parser.add_argument("--facts", metavar="FACTS.json", help="the decision's facts, one JSON object")
    parser.add_argument("--workspace", metavar="WS", help="the planner form: the workspace holding the source run")
    parser.add_argument("--session", metavar="S", help="the source run's session")
    parser.add_argument("--run", metavar="R", help="the source run")
    parser.add_argument("--latest", action="store_true", help="instead of --run: the session's newest interrupted run")
    parser.add_argument("--host", metavar="HOST.json", help="the host's facts, one JSON object")
    parser.add_argument("--ids", metavar="INV,RUN,TURN", help="the continuation's fresh ids (default: generated)")
    add_format_arguments(parser, "the decision, in the reference's field names, then the contract")
    parser.set_defaults(handler=cmd_continue_plan)
