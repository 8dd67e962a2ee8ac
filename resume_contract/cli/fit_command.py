"""`fit`: the contract's row model held to sample ledgers the runtime really wrote, before a crash is (the library:
resume_contract/ledger/fit.py)."""

from __future__ import annotations

import json
from typing import Any, TextIO

from .common import add_format_arguments, selected_contract
from .errors import EXIT_FAIL, EXIT_OK, EXIT_USAGE, UsageError

SHOWN = 20  # findings printed as text (--format json lists every one)


def cmd_fit(args: Any, out: TextIO, err: TextIO) -> int:
    from ..ledger.fit import fit

    contract = selected_contract(args, language=True)
    if not args.samples or any(not sample for sample in args.samples):
        raise UsageError("give sample ledgers: JSONL files, or directories holding them (an empty path: an unset variable?)")
    report = fit(args.samples, contract)
    code = EXIT_USAGE if report.unreadable else EXIT_FAIL if report.mismatches else EXIT_OK
    if args.format == "json":
        out.write(json.dumps(report.as_json(), ensure_ascii=False) + "\n")
        return code
    for path, why in report.unreadable:
        print(f"resume-contract: cannot read {path}: {why}", file=err)
    for finding in report.findings[:SHOWN]:
        where = f"{finding.file}:{finding.line}"
        said = f"{finding.path}: " if finding.path else ""
        out.write(f"{finding.kind:<9} {where}  {said}{finding.message}\n")
    if len(report.findings) > SHOWN:
        out.write(f"... and {len(report.findings) - SHOWN} more (--format json lists them)\n")
    mismatches = report.mismatches
    corrupt = len(report.findings) - len(mismatches)
    out.write(f"{len(report.files)} file(s), {report.rows} rows: {len(mismatches)} the contract's row model refuses, {corrupt} corrupt\n")
    if mismatches:
        first = mismatches[0]
        out.write(f"next: the contract does not read what the runtime writes (first at {first.file}:{first.line}"
                  f"{', ' + first.path if first.path else ''}): correct `rows` in spec/contract.yaml to what the runtime writes "
                  "(the field and what the contract declares are named above), `resume-contract generate`, then fit again\n")
    elif report.files and not report.unreadable:
        out.write("next: every row is one the contract reads" + (" (the corrupt rows are damaged files, not the contract's mistake)" if corrupt else "") + "\n")
    return code


def register(commands: Any) -> None:
    import argparse

    fit = commands.add_parser(
        "fit",
        help="check the contract's row model against sample ledgers the runtime wrote (before a crash does)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read every row of sample ledgers with the contract's row model and name each row it refuses: a\n"
        "contract/runtime mismatch (the file, the line, the field's path and what the contract declares there),\n"
        "apart from corruption (a torn tail, bytes that are no JSON object: a damaged file, not the contract's\n"
        "mistake). Run it on your runtime's own ledgers before relying on `plan`: a contract whose rows are not\n"
        "the runtime's would call every healthy ledger corrupt.\n\n"
        "  resume-contract fit ledgers/                 # every run the layout names (else every *.jsonl)\n"
        "  resume-contract fit run-1.jsonl run-2.jsonl --format json\n\n"
        "Reads only; decides nothing.",
        epilog="exit: 0 every row fits (corrupt rows are reported, not counted against the contract), 1 a row the\n"
        "row model refuses, 2 usage or a sample that cannot be read.",
    )
    fit.add_argument("samples", nargs="*", metavar="LEDGER", help="a JSONL ledger, or a directory holding them")
    add_format_arguments(fit, "every finding: file, line, field, message; and the counts")
    fit.set_defaults(handler=cmd_fit)
