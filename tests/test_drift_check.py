"""`check` tells the whole truth about generated/ and writes nothing; `generate` writes all or nothing."""

from __future__ import annotations

from pathlib import Path

from resume_contract_generator.render import render_all, split_header
from resume_contract_generator.validate import load_spec

REPO = Path(__file__).resolve().parent.parent
GENERATED_FILES = len(render_all(load_spec(REPO)))
CATALOG = "generated/resume_contract_generated/catalog.py"


def test_the_repository_has_no_drift(run_cli) -> None:
    code, out, err = run_cli("--root", str(REPO), "check")
    assert (code, err) == (0, ""), out
    assert out.startswith("generated/ matches spec/")


def test_a_spec_value_change_is_drift_with_a_diff_until_regenerated(project: Path, run_cli, snapshot) -> None:
    failpoints = project / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text().replace("Tool implementation in progress", "Tool running"))
    before = snapshot(project)

    code, out, _ = run_cli("--root", str(project), "check", "--diff")

    assert code == 1
    assert f"  changed      {CATALOG}\n" in out
    assert "-    Failpoint(id='P3', boundary='Tool implementation in progress'" in out
    assert "+    Failpoint(id='P3', boundary='Tool running'" in out
    assert out.rstrip().endswith("to fix: resume-contract generate")
    assert snapshot(project) == before, "check must not write"

    assert run_cli("--root", str(project), "generate")[0] == 0
    assert run_cli("--root", str(project), "check") == (0, f"generated/ matches spec/ ({GENERATED_FILES} files)\n", "")


def test_every_spec_change_changes_every_header_but_only_affected_bodies(project: Path, run_cli) -> None:
    before = {path: split_header(text) for path, text in render_all(load_spec(project)).items()}
    scope = project / "spec" / "scope.yaml"
    scope.write_text(scope.read_text().replace("automatic continuation", "automatic continuation of a run"))
    after = {path: split_header(text) for path, text in render_all(load_spec(project)).items()}

    changed_bodies = [path for path in after if after[path][1] != before[path][1]]
    assert changed_bodies == ["generated/CONTRACT.md"]
    assert all(after[path][0]["spec-sha256"] != before[path][0]["spec-sha256"] for path in after)
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and out.count("  changed      ") == GENERATED_FILES


def test_a_hand_edit_is_reported_and_generate_refuses_to_overwrite_it(project: Path, run_cli, snapshot) -> None:
    contract = project / "generated" / "CONTRACT.md"
    contract.write_text(contract.read_text().replace("Stable failpoints", "Stable failpoints (edited)"))
    before = snapshot(project)

    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1
    assert "  hand-edited  generated/CONTRACT.md\n" in out
    assert "--force" in out

    code, out, err = run_cli("--root", str(project), "generate")
    assert (code, out) == (1, "")
    assert "hand-edited generated files would be overwritten: generated/CONTRACT.md" in err
    assert snapshot(project) == before, "a refused generate writes nothing"

    assert run_cli("--root", str(project), "generate", "--force")[0] == 0
    assert run_cli("--root", str(project), "check")[0] == 0


def test_a_one_word_edit_of_a_generated_module_is_a_hand_edit(project: Path, run_cli) -> None:
    table = project / CATALOG
    table.write_text(table.read_text().replace("'P3'", "'P3x'"))
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and f"hand-edited  {CATALOG}" in out


def test_an_added_file_is_orphaned_and_generate_will_not_delete_it(project: Path, run_cli, snapshot) -> None:
    extra = project / "generated" / "resume_contract_generated" / "extra.py"
    extra.write_text("VALUE = 1\n")
    before = snapshot(project)

    code, out, _ = run_cli("--root", str(project), "check", "--diff")
    assert code == 1
    assert "  orphaned     generated/resume_contract_generated/extra.py\n" in out
    assert "+++ /dev/null" in out

    code, _, err = run_cli("--root", str(project), "generate")
    assert code == 1 and "move them out of generated/" in err
    assert snapshot(project) == before


def test_a_missing_file_is_reported_and_regenerated(project: Path, run_cli) -> None:
    (project / "generated" / "CONTRACT.md").unlink()
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and "  missing      generated/CONTRACT.md\n" in out
    code, out, _ = run_cli("--root", str(project), "generate")
    assert (code, out) == (0, "wrote generated/CONTRACT.md\n")


def test_a_generated_file_the_spec_no_longer_produces_is_removed_by_generate(project: Path, run_cli) -> None:
    stale = project / "generated" / "OLD.md"
    stale.write_text((project / "generated" / "CONTRACT.md").read_text())  # a pristine generated file
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and "  orphaned     generated/OLD.md\n" in out
    code, out, _ = run_cli("--root", str(project), "generate")
    assert (code, out) == (0, "removed generated/OLD.md\n")
    assert not stale.exists()


def test_drift_rows_are_sorted_by_path(project: Path, run_cli) -> None:
    (project / "generated" / "CONTRACT.md").unlink()
    (project / "generated" / "tests" / "test_contract.py").write_text("# mine\n")
    (project / "generated" / "aaa.txt").write_text("x\n")
    _, out, _ = run_cli("--root", str(project), "check")
    rows = [line.split()[1] for line in out.splitlines() if line.startswith("  ")]
    assert rows == sorted(rows) and len(rows) == 3


def test_caches_are_not_drift(project: Path, run_cli) -> None:
    cache = project / "generated" / "resume_contract_generated" / "__pycache__"
    cache.mkdir()
    (cache / "catalog.cpython-311.pyc").write_bytes(b"\0")
    assert run_cli("--root", str(project), "check")[0] == 0
