"""docs/spec-grammar.md is the spec files' grammar made from their JSON Schemas (generator/spec/grammar_page.py):
never edited by hand, never behind the schemas."""

from __future__ import annotations

from pathlib import Path

from resume_contract_generator.spec.grammar_page import page

ROOT = Path(__file__).resolve().parent.parent


def test_the_grammar_page_is_generated_from_the_schemas() -> None:
    assert (ROOT / "docs" / "spec-grammar.md").read_text(encoding="utf-8") == page(), (
        "docs/spec-grammar.md differs: python -m resume_contract_generator.spec.grammar_page > docs/spec-grammar.md"
    )


def test_the_page_draws_every_key_of_every_schema() -> None:
    import json

    text = page()
    for path in sorted((ROOT / "spec" / "schema").glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        for key in schema["properties"]:
            assert f"\n{key}:" in text or f"\n{key}!:" in text, (path.name, key)
