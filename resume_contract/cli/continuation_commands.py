"""The continuation command: `continue-plan` (may a crashed run be continued from its committed boundary?)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, TextIO

from .common import selected_contract
from .errors import EXIT_FAIL, EXIT_OK, UsageError


def _refuse_repeated(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the key {key!r} is repeated in one object")
        seen[key] = value
    return seen


def read_facts(path: Path) -> Any:
    """The facts object of a FACTS.json file; an unreadable file or one that is not JSON is a UsageError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such facts file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read the facts file {path}: {getattr(error, 'strerror', None) or error}") from None
    try:
        return json.loads(text, object_pairs_hook=_refuse_repeated)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{error.lineno}:{error.colno}: the facts file is not JSON: {error.msg}") from None
    except ValueError as error:
        raise UsageError(f"{path}: {error}") from None


def cmd_continue_plan(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import msgspec

    from ..contract import build_continuation_plan
    from ..errors import EscapesWorkspace, FactsRefused, LedgerInUse, LedgerMissing, NoContinuationDecision, NotALedger
    from ..ledger.store import read_ledger

    contract = selected_contract(args)
    table = contract.continuation
    if table is None:
        raise UsageError(str(NoContinuationDecision(f"the contract {contract.identity} declares no continuation decision (spec/continuation.yaml)")))
    facts = read_facts(Path(args.facts))
    path = Path(args.ledger)
    try:
        ledger = read_ledger(path, refuse_live=True, contract=contract)
    except (LedgerInUse, LedgerMissing, NotALedger, EscapesWorkspace) as error:
        raise UsageError(str(error)) from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        plan = build_continuation_plan(ledger.events, facts, rows=ledger.rows, contract=contract)
    except FactsRefused as refused:
        raise UsageError(*(f"{args.facts}: {problem}" for problem in refused.problems)) from None
    if args.json:
        encoded = msgspec.json.encode(plan)
        out.write_bytes(encoded[:-1] + b',"contract":' + msgspec.json.encode(contract.identity.as_json()) + b"}")  # type: ignore[attr-defined]
        out.write("\n")
    else:
        from ..output.continuation_text import continuation_text

        out.write(continuation_text(path, plan, table, len(ledger.events)))
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
        "  resume-contract continue-plan path/to/runtime-events.jsonl --facts facts.json [--json]\n\n"
        "FACTS.json is one object with exactly the inputs the spec declares (the reference's field names).\n"
        "--json prints {disposition, rejectionReasons, diagnostics, continuation?}; runtimeContext holds the\n"
        "committed rows exactly as written.\n",
        epilog="exit: 0 continue, 1 park, 2 usage or unreadable input (a missing ledger or facts file, facts the spec\n"
        "does not declare, a contract without a continuation decision), 3 corrupt ledger (never a decision).",
    )
    parser.add_argument("ledger", metavar="LEDGER.jsonl", help="the source run's committed ledger")
    parser.add_argument("--facts", required=True, metavar="FACTS.json", help="the host's facts, one JSON object")
    parser.add_argument("--json", action="store_true", help="print the decision as JSON")
    parser.set_defaults(handler=cmd_continue_plan)
