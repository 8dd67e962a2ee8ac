"""Recompute every case's expected.txt from its overlays: `.venv/bin/python tests/review_cases/refresh.py`.

Run it after a deliberate change to the rules, the report or the base spec (line numbers move), then read
the diff of the expected files: each one is a claim about how a change is classified.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from resume_contract_generator.review import review
from resume_contract_generator.review_report import as_text
from resume_contract_generator.validate import load_spec

CORPUS = Path(__file__).resolve().parent
REPO = CORPUS.parent.parent
DEPTH = 2  # as tests/test_review_cases.py


def main() -> int:
    for case in sorted(path.name for path in CORPUS.iterdir() if path.is_dir()):
        with tempfile.TemporaryDirectory() as scratch:
            sides = []
            for side in ("previous", "current"):
                root = Path(scratch) / side
                shutil.copytree(REPO / "spec", root / "spec")
                for overlay in sorted((CORPUS / case / side).glob("*.yaml")):
                    shutil.copyfile(overlay, root / "spec" / overlay.name)
                for overlay in sorted((CORPUS / case / side).glob("*.schema.json")):
                    shutil.copyfile(overlay, root / "spec" / "schema" / overlay.name)
                sides.append(load_spec(root))
            report = as_text(review(sides[0], sides[1], depth=DEPTH), "previous", "current")
            (CORPUS / case / "expected.txt").write_text(report, encoding="utf-8")
            print(f"{case}: {report.splitlines()[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
