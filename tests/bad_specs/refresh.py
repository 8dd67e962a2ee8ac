"""Recompute the bad-spec corpus' expected messages; show what would change; write only with --accept.

    .venv/bin/python tests/bad_specs/refresh.py                  # show the diff of every case that changed
    .venv/bin/python tests/bad_specs/refresh.py --accept         # ... and write those expected_stderr.txt files
    .venv/bin/python tests/bad_specs/refresh.py CASE [CASE ...]  # only these cases

Run it after a deliberate change to a message, then read the diff: each file is the exact report a person
gets for that mistake. Cases overlay tests/frozen_spec/ (not the live spec/), so a contract edit never needs
a refresh. A case whose spec the generator now accepts (exit 0) is refused: it no longer shows a mistake.
Exit 0 when nothing is left to accept, 1 when a case changed and was not accepted or could not be refreshed.
"""

from __future__ import annotations

import argparse
import difflib
import io
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

from resume_contract.cli import main as resume_contract

CORPUS = Path(__file__).resolve().parent
FROZEN_SPEC = CORPUS.parent / "frozen_spec" / "spec"


def messages_for(case: str) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        shutil.copytree(FROZEN_SPEC, root / "spec")
        shutil.copytree(CORPUS / case / "spec", root / "spec", dirs_exist_ok=True)
        err = io.StringIO()
        code = resume_contract(["--root", str(root), "generate"], out=io.StringIO(), err=err)
        return code, err.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cases", nargs="*", metavar="CASE", help="cases to refresh (default: every case)")
    parser.add_argument("--accept", action="store_true", help="write the changed expected_stderr.txt files")
    args = parser.parse_args(argv)
    every = sorted(path.name for path in CORPUS.iterdir() if path.is_dir())
    unknown = sorted(set(args.cases) - set(every))
    if unknown:
        parser.error(f"no such case: {', '.join(unknown)}")
    pending = failed = 0
    for case in args.cases or every:
        expected_path = CORPUS / case / "expected_stderr.txt"
        try:
            code, messages = messages_for(case)
        except Exception:  # noqa: BLE001 - name the case, then show the traceback
            print(f"{case}: refreshing it raised:\n{traceback.format_exc()}", file=sys.stderr)
            failed += 1
            continue
        if code != 2:
            print(f"{case}: generate exited {code}, not 2: the case no longer shows a bad spec; refused", file=sys.stderr)
            failed += 1
            continue
        old = expected_path.read_text(encoding="utf-8") if expected_path.exists() else ""
        if messages == old:
            continue
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(keepends=True), messages.splitlines(keepends=True), f"a/{case}/expected_stderr.txt", f"b/{case}/expected_stderr.txt"))
        if args.accept:
            expected_path.write_text(messages, encoding="utf-8")
            print(f"{case}: accepted")
        else:
            pending += 1
    if pending:
        print(f"{pending} case(s) changed; read the diff above, then rerun with --accept to write them")
    return 1 if pending or failed else 0


if __name__ == "__main__":
    sys.exit(main())
