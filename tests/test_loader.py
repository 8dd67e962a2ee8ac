"""The YAML loader: marks, duplicate keys, and YAML 1.1 booleans kept as strings."""

from __future__ import annotations

from pathlib import Path

from resume_contract_generator.errors import Mark
from resume_contract_generator.spec.loader import load_spec_file


def _load(tmp_path: Path, text: str):
    path = tmp_path / "x.yaml"
    path.write_text(text)
    return load_spec_file(path, "spec/x.yaml")


def test_on_off_yes_no_stay_strings_and_true_false_are_booleans(tmp_path: Path) -> None:
    loaded, errors = _load(tmp_path, "a: on\nb: off\nc: yes\nd: no\ne: true\nf: false\n")
    assert errors == []
    assert loaded.data == {"a": "on", "b": "off", "c": "yes", "d": "no", "e": True, "f": False}


def test_duplicate_keys_are_errors_naming_both_places(tmp_path: Path) -> None:
    _, errors = _load(tmp_path, "a: 1\nb:\n  c: 2\n  c: 3\n")
    assert [str(error) for error in errors] == ["spec/x.yaml:4:3: duplicate key 'c' (first defined at spec/x.yaml:3:3)"]


def test_values_and_keys_keep_their_marks(tmp_path: Path) -> None:
    loaded, _ = _load(tmp_path, "items:\n  - name: x\n    value: 7\n")
    assert loaded.mark(("items", 0, "value")) == Mark("spec/x.yaml", 3, 12)
    assert loaded.key_mark(("items", 0, "value")) == Mark("spec/x.yaml", 3, 5)


def test_tags_that_build_objects_are_refused(tmp_path: Path) -> None:
    loaded, errors = _load(tmp_path, "a: !!python/object:os.system x\n")
    assert loaded is None
    assert [str(error) for error in errors] == [
        "spec/x.yaml:1:4: invalid YAML: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object:os.system'"
    ]


def test_anchors_aliases_and_merge_keys_are_standard_yaml(tmp_path: Path) -> None:
    # (issue 54: a team writes a kind block once and reuses it; an error inside it is reported where its text is)
    loaded, errors = _load(tmp_path, "base: &b {type: string, description: d}\na: *b\nc:\n  <<: *b\n  type: integer\nl: [*b, {<<: [*b], x: 1}]\n")
    assert errors == [] and loaded is not None
    assert loaded.data["a"] == {"type": "string", "description": "d"}
    assert loaded.data["c"] == {"type": "integer", "description": "d"}  # (a key written beside `<<` wins)
    assert loaded.data["l"] == [{"type": "string", "description": "d"}, {"type": "string", "description": "d", "x": 1}]
    assert loaded.mark(("a", "type")) == Mark("spec/x.yaml", 1, 17)  # the anchor's text
    assert loaded.mark(("c", "type")) == Mark("spec/x.yaml", 5, 9)  # the key written in place


def test_an_alias_of_the_collection_it_stands_in_is_refused(tmp_path: Path) -> None:
    _, errors = _load(tmp_path, "a: &x [1, *x]\n")
    assert [str(error) for error in errors] == ["spec/x.yaml:1:4: an alias of a collection it stands inside (a value that never ends)"]


def test_a_billion_laughs_is_refused_at_once(tmp_path: Path) -> None:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 12)]
    _, errors = _load(tmp_path, "\n".join(lines) + "\n")
    assert len(errors) == 1 and "the spec's aliases expand to more than 200000 values" in str(errors[0])


def test_merge_conflict_markers_in_a_spec_file_are_named_at_their_line(tmp_path) -> None:
    from resume_contract_generator.spec.loader import load_spec_file

    path = tmp_path / "failpoints.yaml"
    path.write_text("failpoints:\n<<<<<<< HEAD\n  - id: P0\n=======\n  - id: P1\n>>>>>>> other\n", encoding="utf-8")
    loaded, errors = load_spec_file(path, "spec/failpoints.yaml")
    assert loaded is None
    assert [str(error) for error in errors] == [
        "spec/failpoints.yaml:2:1: merge-conflict markers: resolve the conflict in this file (keep the contract both "
        "branches meant), then regenerate"
    ]


def test_a_misspelt_value_or_key_gets_a_did_you_mean(project, run_cli) -> None:
    decisions = project / "spec" / "decisions.yaml"
    decisions.write_text(decisions.read_text().replace("    disposition: blocked\n", "    disposition: blokced\n", 1))
    code, _, err = run_cli("--root", str(project), "check")
    assert code == 2
    assert "unknown value 'blokced' (did you mean 'blocked'?); allowed values are [safe_replay, blocked]" in err
    decisions.write_text(decisions.read_text().replace("    disposition: blokced\n", "    zzz_unrelated: blocked\n", 1))
    code, _, err = run_cli("--root", str(project), "check")
    assert "unknown key 'zzz_unrelated'; allowed keys are" in err  # no suggestion when nothing is close


def test_two_values_of_none_of_their_shapes_at_one_place_are_both_said() -> None:
    # A value of none of its shapes is said by a more telling error inside it, when there is one; two such errors
    # at one place must not hide each other (a project may write its own schema).
    from jsonschema import Draft202012Validator
    from resume_contract_generator.spec.loader import LoadedFile
    from resume_contract_generator.spec.schema_check import schema_errors

    schema = {"properties": {"x": {"allOf": [{"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"anyOf": [{"minimum": 0}, {"type": "string"}]}]}}}
    errors = schema_errors(LoadedFile("spec/x.yaml", {"x": -1.5}), Draft202012Validator(schema))
    assert len(errors) == 2, errors
    assert schema_errors(LoadedFile("spec/x.yaml", {"x": "a"}), Draft202012Validator(schema)) == []
