"""generated/CONTRACT.md carries the whole contract, and a one-value spec change is a one-line diff."""

from __future__ import annotations

import difflib
from pathlib import Path

from resume_contract_generator.render.headers import split_header
from resume_contract_generator.render.tree import render_all
from resume_contract_generator.spec.validate import load_spec

REPO = Path(__file__).resolve().parent.parent


def _contract_body(root: Path) -> str:
    return split_header(render_all(load_spec(root))["generated/CONTRACT.md"])[1]


def test_the_document_carries_every_table_row_of_the_contract() -> None:
    spec = load_spec(REPO)
    text = (REPO / "generated" / "CONTRACT.md").read_text()
    for fp in spec.failpoints:
        assert f"| `{fp.id}` | {fp.boundary} | `{fp.committed_prefix}` |" in text
    for decision in spec.decisions:
        assert f"| `{decision.prefix}` | {' '.join(decision.summary.split())} | `{decision.disposition}` |" in text
    for diagnostic in spec.projector.diagnostics:
        assert f"| `{diagnostic.code}` | `{diagnostic.reason}` | {diagnostic.message} |" in text
    assert f"> {' '.join(spec.projector.directive.split())}" in text
    for item in spec.scope.out_of_scope:
        assert f"- {item}\n" in text
    assert "```mermaid\nstateDiagram-v2\n    [*] --> absent\n" in text
    assert "An expected RuntimeEvent high-water that differs from the reopened prefix is always rejected." in text


def test_a_one_value_change_is_a_one_line_diff(project: Path) -> None:
    before = _contract_body(project)
    failpoints = project / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text().replace("Tool implementation in progress", "The tool is running"))
    after = _contract_body(project)
    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0) if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == [
        "-| `P3` | Tool implementation in progress | `after_function_call` |  |",
        "+| `P3` | The tool is running | `after_function_call` |  |",
    ]
