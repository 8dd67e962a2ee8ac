"""The shortcuts that make `check` fast each give the same verdict as the slow, canonical way they replace.

Tool tests: they read the frozen spec (tests/frozen_spec/) and their own inputs, never the live spec/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from resume_contract_generator.spec import loader as loader_module
from resume_contract_generator.spec.loader import load_spec_file
from resume_contract_generator.spec.projector_check import STATEMACHINE_NAMES
from resume_contract_generator.spec.schema_check import check_schema
from statemachine import StateMachine

FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"


def test_the_written_out_statemachine_names_are_the_installed_librarys() -> None:
    assert STATEMACHINE_NAMES == {name for name in dir(StateMachine) if not name.startswith("_")}


# Schemas jsonschema's own meta-validation refuses, each for another reason, and some it accepts.
BROKEN_SCHEMAS = [
    {"type": "strnig"},
    {"type": ["string", 3]},
    {"required": "id"},
    {"required": ["id", "id"]},
    {"minLength": -1},
    {"minLength": 1.5},
    {"pattern": "("},
    {"properties": []},
    {"properties": {"a": {"type": "nope"}}},
    {"items": {"enum": "x"}},
    {"$defs": {"a": {"minItems": "2"}}},
    {"allOf": []},
    {"anyOf": [{"type": "string"}, 3]},
    {"additionalProperties": {"maxLength": "x"}},
    {"dependentRequired": {"a": "b"}},
    {"not": {"format": 3}},
    {"prefixItems": [{"const": 1}, {"uniqueItems": "yes"}]},
    {"if": {"type": 1}},
    {"unevaluatedProperties": {"type": {}}},
    {"contentSchema": {"type": "strnig"}},
    {"definitions": {"a": {"type": "x"}}},
    {"dependencies": {"a": {"type": "x"}}},
    3,
]
VALID_SCHEMAS = [True, {}, {"type": "string", "pattern": "^[a-z]+$"}, {"$defs": {"a": {"type": "object"}}, "$ref": "#/$defs/a"}]


@pytest.mark.parametrize("schema", BROKEN_SCHEMAS, ids=lambda schema: json.dumps(schema)[:40])
def test_the_fast_meta_check_refuses_what_jsonschema_refuses_with_its_message(schema: object) -> None:
    with pytest.raises(SchemaError) as canonical:
        Draft202012Validator.check_schema(schema)
    with pytest.raises(SchemaError) as fast:
        check_schema(schema)
    assert fast.value.message == canonical.value.message


@pytest.mark.parametrize("path", sorted((FROZEN_SPEC / "schema").glob("*.json")), ids=lambda path: path.name)
def test_the_fast_meta_check_accepts_the_spec_schemas(path: Path) -> None:
    schema = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    check_schema(schema)


@pytest.mark.parametrize("schema", VALID_SCHEMAS, ids=str)
def test_the_fast_meta_check_accepts_valid_schemas(schema: object) -> None:
    check_schema(schema)


@pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False), reason="PyYAML was built without libyaml")
@pytest.mark.parametrize("path", sorted(FROZEN_SPEC.glob("*.yaml")), ids=lambda path: path.name)
def test_the_libyaml_loader_reads_every_value_and_mark_as_the_python_loader(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, fast_errors = load_spec_file(path, path.name)
    monkeypatch.setattr(loader_module, "_FastContractYamlLoader", loader_module._ContractYamlLoader)
    slow, slow_errors = load_spec_file(path, path.name)
    assert (fast.data, fast.value_marks, fast.key_marks, fast_errors) == (slow.data, slow.value_marks, slow.key_marks, slow_errors)


YAML_TEXTS = [
    "a: on\nb: yes\nc: true\n",
    "a: [1, 2\n",
    "a: b: c\n",
    "a: &x 1\nb: *x\n",
    "a: 1\na: 2\n",
    "\tkey: value\n",
    "key: 'unterminated\n",
    "- a\nb: c\n",
    "a: \"\\u202e\"\n",
    "k: 0x1F\nf: 1e400\nd: 2026-11-30\n",
    "<<: {a: 1}\n",
    "a: !!python/object:os.system echo\n",
    "é: ü\n   ñ: 1\n",
]


@pytest.mark.parametrize("text", YAML_TEXTS, ids=repr)
def test_the_libyaml_loader_gives_the_python_loaders_verdict_and_message(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "file.yaml"
    path.write_text(text, encoding="utf-8")
    fast, fast_errors = load_spec_file(path, "file.yaml")
    monkeypatch.setattr(loader_module, "_FastContractYamlLoader", loader_module._ContractYamlLoader)
    slow, slow_errors = load_spec_file(path, "file.yaml")
    assert [str(error) for error in fast_errors] == [str(error) for error in slow_errors]
    assert (fast is None) == (slow is None)
    if fast is not None:
        assert (fast.data, fast.value_marks, fast.key_marks) == (slow.data, slow.value_marks, slow.key_marks)
