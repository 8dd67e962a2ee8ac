"""The commands of a contract written in the contract language (spec/contract.yaml): `plan LEDGER` (exit 0 the
contract's `proceed` word, 1 its `stop` word, 3 corruption, 2 usage) and `crash` (its scenarios, SIGKILLed)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, TextIO

from .errors import EXIT_FAIL, EXIT_OK, UsageError


def plan_language(args: argparse.Namespace, contract: Any, out: TextIO, err: TextIO) -> int:
    """One ledger (a file, or a workspace's run by the contract's layout), or every run of a workspace."""
    if args.expected_high_water is not None and contract.module.OFFSET_MISMATCH is None:
        raise UsageError("--expected-high-water: this contract declares no offset check (decision.offset_mismatch in spec/contract.yaml)")
    if args.expected_high_water is not None and args.expected_high_water < 0:
        raise UsageError("--expected-high-water must be 0 or more")
    if args.session:
        raise UsageError(f"--session: this contract's runs are named by {', '.join(contract.module.RUN)} alone: --workspace DIR --run VALUE")
    run = None
    if args.ledger is not None:
        if args.workspace or args.run:
            raise UsageError("give either LEDGER or --workspace/--run, not both")
        path = args.ledger
    elif args.workspace is None:
        raise UsageError("give a LEDGER file, or --workspace DIR (with --run VALUE for one run)")
    else:
        if contract.module.LAYOUT is None:
            raise UsageError("--workspace: the contract declares no layout (rows.layout in spec/contract.yaml: where a run's rows live)")
        if not os.path.isdir(args.workspace):
            raise UsageError(f"--workspace {args.workspace}: no such directory")
        if args.run is None:
            if args.expected_high_water is not None:
                raise UsageError("--expected-high-water is one run's: give --run VALUE with it")
            return _audit(args, contract, out, err)
        if not args.run:
            raise UsageError("--run is empty (an unset variable?): give the run, or leave --run out to audit every run")
        run = tuple(args.run.split("/")) if len(contract.module.RUN) > 1 else (args.run,)
        path = _run_path(args.workspace, contract.module, run)
    decision = _decide(path, contract.module, run, args.expected_high_water)
    if args.json:
        import msgspec

        from ..core.wire import encode_plan_value

        body = msgspec.to_builtins(decision)
        body["contract"] = contract.identity.as_json()
        out.write(encode_plan_value(body).decode() + "\n")  # (an id holding a lone surrogate is written escaped)
    else:
        from ..output.language_text import decision_text

        out.write(decision_text(path, decision, dict(contract.module.REASONS)))
        out.write(f"contract:      {contract.identity}; {contract.origin}\n")
    return EXIT_OK if decision.proceeds else EXIT_FAIL


def _run_path(workspace: str, module: Any, run: tuple[str, ...]) -> str:
    from ..ledger.language_reader import run_path

    if len(run) != len(module.RUN):
        raise UsageError(f"--run names a run by {'/'.join(module.RUN)}: {len(module.RUN)} value(s) joined by '/'")
    try:
        return run_path(workspace, module, run)
    except ValueError as error:
        raise UsageError(f"--run: {error}") from None


def _decide(path: str, module: Any, run: tuple[str, ...] | None, expected_high_water: int | None) -> Any:
    """The decision over one ledger; a missing or unreadable file is a usage error (exit 2)."""
    from ..ledger.language_reader import plan_file

    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{path}: not a file")
    try:
        return plan_file(path, module, run, no_link=run is not None, expected_high_water=expected_high_water)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such ledger") from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {_why(error)}") from None


def _why(error: OSError) -> str:
    import errno

    return "a symlink where a run's rows belong: refused, never followed" if error.errno == errno.ELOOP else str(error.strerror or error)


def _audit(args: argparse.Namespace, contract: Any, out: TextIO, err: TextIO) -> int:
    """Every run the workspace holds by the contract's layout: a line each (JSON with --json), then the counts;
    exit 3 if any is corrupt, 2 if any is unreadable, 1 if any stops, else 0."""
    import msgspec

    from ..core.wire import encode_plan_value
    from ..errors import ExpressionFailed, LedgerCorruption
    from ..ledger.language_reader import discover, plan_file
    from ..output.terminal import escape

    module = contract.module
    # (fixed keys: the contract's own words may be anything, even "corrupt"; each line says its word as `decision`)
    counts = {"proceed": 0, "stop": 0, "corrupt": 0, "unreadable": 0, "undecided": 0}
    for run, path in discover(args.workspace, module):
        line: dict[str, Any] = {"run": "/".join(run)}
        try:
            decision = plan_file(path, module, run, no_link=True)
        except LedgerCorruption as corruption:
            line |= {"outcome": "corrupt", "kind": corruption.kind, "line": corruption.line, "message": str(corruption)}
        except OSError as error:
            line |= {"outcome": "unreadable", "message": f"{path}: {_why(error)}"}
        except ExpressionFailed as failed:  # (that run is not decided; the others are)
            line |= {"outcome": "undecided", "message": f"{path}: an expression cannot judge a row: {failed}"}
        else:
            line |= {"outcome": "proceed" if decision.proceeds else "stop", "decision": decision.decision, "reasons": decision.reasons}
        counts[line["outcome"]] += 1
        if args.json:
            out.write(encode_plan_value(line).decode() + "\n")
        elif line["outcome"] != "proceed":
            detail = ", ".join(line.get("reasons", ())) or line.get("message", "")
            out.write(escape(f"{line.get('decision', line['outcome']):<10} {line['run']}: {detail}") + "\n")
    if args.json:
        words = {"proceed": module.PROCEED, "stop": module.STOP}
        out.write(msgspec.json.encode({"summary": counts, "words": words, "contract": contract.identity.as_json()}).decode() + "\n")
    else:
        shown = {module.PROCEED: counts["proceed"], module.STOP: counts["stop"]} if module.PROCEED != module.STOP else {}
        named = [f"{count} {word}" for word, count in shown.items()] + [f"{counts[kind]} {kind}" for kind in ("corrupt", "unreadable", "undecided") if counts[kind] or kind != "undecided"]
        out.write(f"{sum(counts.values())} runs: " + ", ".join(named) + "\n")
    return 3 if counts["corrupt"] else 2 if counts["unreadable"] or counts["undecided"] else EXIT_FAIL if counts["stop"] else EXIT_OK


def crash_language(contract: Any, out: TextIO, *, torn: bool = True) -> int:
    """Every scenario's prefix after a SIGKILL once committed, and (with `torn`) in the middle of the next row."""
    from ..crash.language_crash import agrees, run_language_crash
    from ..output.terminal import escape

    scenarios = contract.module.SCENARIOS
    if not scenarios:
        raise UsageError("the contract declares no scenarios to crash (spec/contract.yaml `scenarios`): add one, then generate")
    out.write(f"contract: {contract.identity}; {contract.origin}\n")
    failures = 0
    for name, start, steps in scenarios:
        rows = [row for row, _ in steps]
        for committed, expected in enumerate([start, *(then for _, then in steps)]):
            cases = [("SIGKILL", run_language_crash(contract.module, rows, committed))]
            if torn and committed < len(rows):
                cases.append(("torn next row", run_language_crash(contract.module, rows, committed, torn=True)))
            for how, observed in cases:
                ok = observed.killed and not observed.twice_differ and agrees(observed.outcome, expected)
                ok = ok and (how == "SIGKILL" or observed.torn_refused == "torn_row")
                failures += not ok
                shown = observed.outcome.get("decision") or f"corrupt ({observed.outcome.get('corrupt')})"
                reasons = ", ".join(observed.outcome.get("reasons") or ())
                shown = f"{shown}{f' [{reasons}]' if reasons else ''}"
                if how != "SIGKILL":
                    shown = f"refused ({observed.torn_refused}); after repair: {shown}"
                out.write(escape(f"  {'ok  ' if ok else 'FAIL'} {name} after {committed} row(s), {how}: {shown}") + "\n")
                if not ok:
                    out.write(escape(f"       expected {expected}; killed {observed.killed}, twice alike {not observed.twice_differ}, torn refused {observed.torn_refused}") + "\n")
    out.write(f"{'all cases hold' if not failures else f'{failures} case(s) FAILED'}\n")
    return EXIT_FAIL if failures else EXIT_OK


def verify_language_contract(contract: Any, depth: int, out: TextIO, counterexample: Path) -> int:
    """Every ledger up to `depth` rows, decided by the contract and by the project's oracle."""
    import msgspec

    from ..output.terminal import escape
    from ..proof.language_verify import NoOracle, verify_language

    def start(letters: list[str], ledgers: int) -> None:
        out.write(f"contract: {contract.identity}; {contract.origin}\n")
        out.write(escape(f"letters ({len(letters)}): {', '.join(letters)}") + "\n")
        out.write(f"exploring {ledgers:,} ledgers up to {depth} rows (about {ledgers / 25_000:,.0f} s; --depth sets how deep)\n")
        out.flush()

    try:
        result = verify_language(contract.root, contract.module, depth, on_start=start)
    except NoOracle as error:
        raise UsageError(str(error)) from None
    out.write(f"explored {result.explored:,} ledgers up to {depth} rows in {result.seconds:.1f} s\n")
    if not result.failed:
        out.write("the contract and its oracle decide every one alike\n")
        return EXIT_OK
    out.write(f"FAILED: {result.disagreements:,} ledger(s) decided apart, {result.unjudged:,} the oracle did not judge; the smallest:\n")
    assert result.first is not None
    for row in result.first.rows:
        out.write(escape(f"  {msgspec.json.encode(row).decode()}") + "\n")
    out.write(escape(f"  the contract: {result.first.contract}") + "\n")
    out.write(escape(f"  the oracle:   {result.first.oracle}") + "\n")
    counterexample.write_bytes(b"".join(msgspec.json.encode(row) + b"\n" for row in result.first.rows))
    out.write(escape(f"wrote it to {counterexample}; plan it with: resume-contract plan {counterexample}") + "\n")
    out.write("fix whichever is wrong: the contract (spec/contract.yaml) or its oracle\n")
    return EXIT_FAIL
