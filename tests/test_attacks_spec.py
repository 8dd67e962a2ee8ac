"""Attacks through the spec (issue 10, items 8, 11, 12): each is a `file:line:col` error, exit 2, nothing
written, never a traceback; and CONTRACT.md cannot be made to hide the review.

Each test edits one value of a copy of the live spec, found by its text, so it follows the spec as it evolves.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest


def _edit(project: Path, file: str, old: str, new: str) -> None:
    path = project / "spec" / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} not in {file}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _refused(project: Path, run_cli, snapshot, *expected: str) -> str:
    before = snapshot(project)
    for command in ("generate", "check"):
        code, out, err = run_cli("--root", str(project), command)
        assert (code, out) == (2, ""), (command, err)
        assert "Traceback" not in err
        for text in expected:
            assert re.search(text, err), (text, err)
    assert snapshot(project) == before
    return err


@pytest.mark.parametrize(
    ("character", "shown"),
    [("\\0", "U\\+0000"), ("\\e[2J", "U\\+001B"), ("\\u202e", "U\\+202E"), ("\\x85", "U\\+0085")],
)
def test_text_a_reviewer_cannot_see_is_refused_where_it_stands(project: Path, run_cli, snapshot, character: str, shown: str) -> None:
    _edit(project, "failpoints.yaml", "    note: Phase 0 reasons only", f'    note: "Phase 0{character} reasons only')
    _edit(project, "failpoints.yaml", "the post-terminal prefix is P9's.\n", "the post-terminal prefix is P9's.\"\n")
    _refused(project, run_cli, snapshot, rf"spec/failpoints\.yaml:\d+:11: a value holds the invisible or control character {shown}")


def test_a_name_with_a_trailing_newline_is_refused(project: Path, run_cli, snapshot) -> None:
    _edit(project, "projector.yaml", "  failed:\n    description:", '  "failed\\n":\n    description:')
    _refused(project, run_cli, snapshot, r"spec/projector\.yaml:\d+:\d+: .*'failed\\n'")


def test_yaml_nested_too_deep_is_an_error_not_a_recursion_error(project: Path, run_cli, snapshot) -> None:
    (project / "spec" / "scope.yaml").write_text("phase: " + "[" * 2000 + "]" * 2000 + "\n", encoding="utf-8")
    _refused(project, run_cli, snapshot, r"spec/scope\.yaml:1:1: the YAML is nested too deeply to be a spec")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"type": "object",\n  "properties": nope}\n', r"spec/schema/scope\.schema\.json:2:17: the schema is not JSON: Expecting value"),
        ('{"type": 5}\n', r"spec/schema/scope\.schema\.json:1:1: not a valid JSON Schema at type: 5 is not valid"),
    ],
    ids=["not-json", "not-a-schema"],
)
def test_a_broken_schema_is_an_error_at_its_place(project: Path, run_cli, snapshot, content: str, expected: str) -> None:
    (project / "spec" / "schema" / "scope.schema.json").write_text(content, encoding="utf-8")
    _refused(project, run_cli, snapshot, expected)


def test_diff_with_a_broken_schema_is_exit_2_not_a_finding(project: Path, run_cli) -> None:
    base = project.parent / "base"
    import shutil

    shutil.copytree(project / "spec", base / "spec")
    (project / "spec" / "schema" / "scope.schema.json").write_text("nope", encoding="utf-8")
    code, out, err = run_cli("--root", str(project), "diff", str(base / "spec"), str(project / "spec"), "--fail-on", "weakens-safety")
    assert (code, out) == (2, "") and "the schema is not JSON" in err and "Traceback" not in err


def test_a_state_named_like_a_generated_method_is_refused(project: Path, run_cli, snapshot) -> None:
    _edit(project, "projector.yaml", "  failed:\n    description:", "  raise_duplicate_tool_result:\n    description:")
    for file in ("projector.yaml", "decisions.yaml"):
        path = project / "spec" / file
        path.write_text(re.sub(r"\bfailed\b(?=[,\]}\n])", "raise_duplicate_tool_result", path.read_text()) if file == "projector.yaml" else path.read_text())
    _refused(project, run_cli, snapshot, r"'raise_duplicate_tool_result' is reserved in the generated state machine")


def test_a_non_finite_number_is_refused(project: Path, run_cli, snapshot) -> None:
    _edit(project, "ledger.yaml", "      ts: 1767225600000\n", "      ts: .nan\n")
    _refused(project, run_cli, snapshot, r"spec/ledger\.yaml:\d+:11: a value is nan: the spec takes finite numbers only")


def test_a_summary_cannot_swallow_the_contract_document(project: Path, run_cli) -> None:
    _edit(project, "scope.yaml", "summary: >-\n  Phase 0 defines", "summary: >-\n  ~~~ Phase 0 defines")
    _edit(project, "scope.yaml", "harness_scope: >-\n  The crash harness", "harness_scope: >-\n  # The crash harness")
    code, _, err = run_cli("--root", str(project), "generate")
    assert code == 0, err
    contract = (project / "generated" / "CONTRACT.md").read_text(encoding="utf-8")
    assert "\n\\~~~ Phase 0 defines" in contract and "\n\\# The crash harness" in contract
    fences = re.findall(r"^(?:~~~|```)", contract, re.MULTILINE)
    assert "~~~" not in fences and len(fences) % 2 == 0  # every fence the template opens, it closes
    assert "\n## Stable failpoints\n" in contract and "\n## Phase boundary\n" in contract


def test_a_name_that_only_normalises_to_ascii_is_refused(project: Path, run_cli, snapshot) -> None:
    # U+FF46 FULLWIDTH f is "f" after NFKC: as a Python identifier it would collide with the state `failed`.
    _edit(project, "projector.yaml", "  failed:\n    description:", "  \uff46ailed:\n    description:")
    _refused(project, run_cli, snapshot, r"spec/projector\.yaml:\d+:\d+: ")


def test_an_html_entity_cannot_bring_a_refused_character_back_into_contract_md(project: Path, run_cli) -> None:
    _edit(project, "failpoints.yaml", "boundary: Before tool preparation (T1)", "boundary: Before tool &#x202E;preparation (T1)")
    assert run_cli("--root", str(project), "generate")[0] == 0
    contract = (project / "generated" / "CONTRACT.md").read_text(encoding="utf-8")
    assert "&amp;#x202E;preparation" in contract and "&#x202E;" not in contract.replace("&amp;#x202E;", "")


def test_an_integer_of_thousands_of_digits_is_an_error_not_a_traceback(project: Path, run_cli, snapshot) -> None:
    _edit(project, "ledger.yaml", "      ts: 1767225600000\n", "      ts: " + "9" * 5000 + "\n")
    _refused(project, run_cli, snapshot, r"spec/ledger\.yaml:\d+:11: a value this spec cannot hold")


def test_a_fifo_or_a_leftover_link_beside_generated_is_an_error_not_a_hang(project: Path, run_cli) -> None:
    os.mkfifo(project / "generated" / "notes.md")
    code, _, err = run_cli("--root", str(project), "check")
    assert code == 2 and "notes.md is not a regular file" in err
    (project / "generated" / "notes.md").unlink()
    (project / "generated.resume-contract-old").symlink_to(project.parent)
    code, _, err = run_cli("--root", str(project), "generate")
    assert code == 2 and "generated.resume-contract-old is not a directory an interrupted generate left" in err


@pytest.mark.parametrize("case", ["yaml_value_not_json", "yaml_1_1_number", "schema_recursive_ref"])
def test_a_value_json_cannot_hold_is_exit_2_from_every_command_that_reads_the_spec(project: Path, run_cli, case: str) -> None:
    # The bad-spec corpus holds generate and check to the exact messages; vectors and diff read the same spec.
    import shutil

    base = project.parent / "base"
    shutil.copytree(project / "spec", base / "spec")
    shutil.copytree(Path(__file__).parent / "bad_specs" / case / "spec", project / "spec", dirs_exist_ok=True)
    for command in (["vectors", "--out", str(project.parent / "vectors")], ["diff", str(base / "spec"), str(project / "spec")]):
        code, out, err = run_cli("--root", str(project), *command)
        assert (code, out) == (2, "") and "Traceback" not in err and "spec/" in err, (command, err)
    assert not (project.parent / "vectors").exists()
