"""Spec strings never become code: hostile values are emitted as inert literals and escaped Markdown."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

HOSTILE = "x'); import os; os._exit(7) #\"\"\" | <b>`\\n"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hostile_strings_round_trip_as_data(project: Path, run_cli) -> None:
    failpoints = project / "spec" / "failpoints.yaml"
    escaped = HOSTILE.replace("\\", "\\\\").replace('"', '\\"')
    failpoints.write_text(failpoints.read_text().replace("boundary: Tool implementation in progress", f'boundary: "{escaped}"'))
    projector = project / "spec" / "projector.yaml"
    projector.write_text(
        projector.read_text().replace(
            "message: function_call has no matching committed function_response", f'message: "{escaped}"'
        )
    )
    code, _, err = run_cli("--root", str(project), "generate")
    assert code == 0, err

    package = project / "generated" / "resume_contract_generated"
    catalog = _load(package / "catalog.py", "hostile_catalog")
    assert catalog.FAILPOINTS_BY_ID["P3"].boundary == HOSTILE
    table_source = (package / "projector_table.py").read_text()
    assert "import os" not in table_source.replace(repr(HOSTILE), "")

    contract = (project / "generated" / "CONTRACT.md").read_text()
    p3_row = next(line for line in contract.splitlines() if line.startswith("| `P3` |"))
    # Still one row of four cells: the pipe was escaped.
    assert len(re.split(r"(?<!\\)\|", p3_row)) == 6
    assert "<b>" not in contract


def test_a_hostile_name_is_refused_before_any_code_is_rendered(project: Path, run_cli) -> None:
    projector = project / "spec" / "projector.yaml"
    projector.write_text(projector.read_text().replace("  absent:\n", "  \"absent = os.system('x')\":\n", 1))
    code, _, err = run_cli("--root", str(project), "generate")
    assert code == 2
    assert "invalid name \"absent = os.system('x')\": must match ^[a-z][a-z0-9_]{0,63}$" in err
