"""Plan hand-written rows with a gallery step's contract (tests of the language on frozen inputs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def plan(project: Path, rows: list[dict[str, Any]], tmp_path: Path) -> dict[str, Any]:
    """`resume-contract --root PROJECT plan LEDGER --json` of `rows`, written as a ledger file; its plan as JSON."""
    ledger = tmp_path / "runtime-events.jsonl"
    ledger.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(project), "plan", str(ledger), "--json"], capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]
