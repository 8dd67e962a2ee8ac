"""Recompute the review corpus' expected reports; show what would change; write only with --accept.

    .venv/bin/python tests/review_cases/refresh.py                  # show the diff of every case that changed
    .venv/bin/python tests/review_cases/refresh.py --accept         # ... and write those expected.txt files
    .venv/bin/python tests/review_cases/refresh.py CASE [CASE ...]  # only these cases

Run it after a deliberate change to the review rules or the report, then read the diff: each expected file
is a claim about how a change is classified. Cases overlay tests/frozen_spec/ (not the live spec/), so a
contract edit never needs a refresh; a case's current/review-waivers.yaml, if any, is applied, each waiver
honoured only if previous/review-waivers.yaml waives its finding too (else it is WAIVER_ADDED). A case is
named for the rule it shows (RULE, or RULE--variant for a second case of one rule); a refresh that would make a
case stop showing its rule is refused for that case (fix the case's overlays instead). Exit 0 when nothing
is left to accept, 1 when a case changed and was not accepted or could not be refreshed.
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from resume_contract_generator.errors import SpecInvalid
from resume_contract_generator.review.collector import review
from resume_contract_generator.review.report import as_text
from resume_contract_generator.review.rules import RULES
from resume_contract_generator.review.waivers import apply_waivers, on_base, parse_waivers
from resume_contract_generator.spec.validate import load_spec

CORPUS = Path(__file__).resolve().parent
FROZEN_SPEC = CORPUS.parent / "frozen_spec" / "spec"
DEPTH = 2  # as tests/test_review_cases.py


def rule_of(case: str) -> str:
    """The rule a case exists to show: its directory's name, before any `--variant`."""
    return case.partition("--")[0]


def report_for(case: str) -> str:
    """The text review of a case: its overlays on the frozen spec, with current/'s review-waivers.yaml if any (as
    `diff` applies the head's: approved when previous/'s waives the same finding)."""
    with tempfile.TemporaryDirectory() as scratch:
        sides = []
        for side in ("previous", "current"):
            root = Path(scratch) / side
            shutil.copytree(FROZEN_SPEC, root / "spec")
            for overlay in sorted((CORPUS / case / side).glob("*.yaml")):
                shutil.copyfile(overlay, root / "spec" / overlay.name)
            for overlay in sorted((CORPUS / case / side).glob("*.schema.json")):
                shutil.copyfile(overlay, root / "spec" / "schema" / overlay.name)
            sides.append(load_spec(root))
        waivers_file, base_file = (CORPUS / case / side / "review-waivers.yaml" for side in ("current", "previous"))
        approved = frozenset(waiver.finding for waiver in parse_waivers(base_file)) if base_file.exists() else frozenset()
        waivers = on_base(parse_waivers(waivers_file), approved) if waivers_file.exists() else ()
        return as_text(apply_waivers(review(sides[0], sides[1], depth=DEPTH), waivers), "previous", "current")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", metavar="CASE", help="cases to refresh (default: every case)")
    parser.add_argument("--accept", action="store_true", help="write the changed expected.txt files")
    args = parser.parse_args(argv)
    every = sorted(path.name for path in CORPUS.iterdir() if path.is_dir())
    unknown = sorted(set(args.cases) - set(every))
    if unknown:
        parser.error(f"no such case: {', '.join(unknown)}")
    pending = failed = 0
    for case in args.cases or every:
        expected_path = CORPUS / case / "expected.txt"
        try:
            report = report_for(case)
        except SpecInvalid as error:
            print(f"{case}: a side of this case is not a valid spec; fix its overlays:\n{error}", file=sys.stderr)
            failed += 1
            continue
        except Exception:  # noqa: BLE001 - name the case, then show the traceback
            print(f"{case}: refreshing it raised:\n{traceback.format_exc()}", file=sys.stderr)
            failed += 1
            continue
        if rule_of(case) in RULES and f" {rule_of(case)}: " not in report:
            print(f"{case}: the new report no longer shows {rule_of(case)}, the rule this case exists for; refused "
                  "(fix the case's overlays so it shows its rule again)", file=sys.stderr)
            failed += 1
            continue
        old = expected_path.read_text(encoding="utf-8") if expected_path.exists() else ""
        if report == old:
            continue
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(keepends=True), report.splitlines(keepends=True), f"a/{case}/expected.txt", f"b/{case}/expected.txt"))
        if args.accept:
            expected_path.write_text(report, encoding="utf-8")
            print(f"{case}: accepted")
        else:
            pending += 1
    if pending:
        print(f"{pending} case(s) changed; read the diff above, then rerun with --accept to write them")
    return 1 if pending or failed else 0


if __name__ == "__main__":
    sys.exit(main())
