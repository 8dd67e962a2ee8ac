"""Recompute every case's expected_stderr.txt: `.venv/bin/python tests/bad_specs/refresh.py`.

Run it after a deliberate change to the spec or to a message, then read the diff: each file is the exact
report a person gets for that mistake.
"""

from __future__ import annotations

import io
import shutil
import sys
import tempfile
from pathlib import Path

from resume_contract.cli import main as resume_contract

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parent.parent


def main() -> int:
    for case in sorted(path.name for path in CORPUS.iterdir() if path.is_dir()):
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            shutil.copytree(REPO / "spec", root / "spec")
            for overlay in sorted((CORPUS / case / "spec").iterdir()):
                shutil.copyfile(overlay, root / "spec" / overlay.name)
            err = io.StringIO()
            code = resume_contract(["--root", str(root), "generate"], out=io.StringIO(), err=err)
            (CORPUS / case / "expected_stderr.txt").write_text(err.getvalue(), encoding="utf-8")
            print(f"{case}: exit {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
