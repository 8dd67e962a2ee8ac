"""The expression layer (generator/expr, docs/expressions.md) on frozen expressions: what it refuses, and where;
what its compiled Python gives, held to cel-python (`semantics: strict`) and to node (`semantics: javascript`).

No expected value here is computed by the code under test: cel-python evaluates each strict case itself, node's
answers are frozen in tests/node_fixtures/expressions.json (and asked afresh where node is installed), and the
errors are written out by hand. These are tests of the tool: none reads spec/.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import celpy
import pytest
from celpy import celtypes
from resume_contract_generator.errors import SpecError
from resume_contract_generator.expr import Environment, Origin, compile_at, declared
from resume_contract_generator.expr.compile import compile_condition, compile_text
from resume_contract_generator.expr.page import page
from resume_contract_generator.expr.parse import ExpressionSyntaxError
from resume_contract_generator.spec.loader import load_spec_file

from resume_contract.core import expressions as runtime

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = Path(__file__).parent / "node_fixtures" / "expressions.json"
ACTIVATION: dict[str, Any] = {
    "n": 7,
    "d": 2.5,
    "s": "héllo",
    "astral": "\U0001f600",
    "bmp": "\uff61",
    "items": [3, 1, 2],
    "words": ["b", "a", "c"],
    "m": {"a": 1, "b": None, "c": {"d": [1, 2]}},
    "empty": "",
    "zero": 0,
    "yes": True,
}
JSON_ENV = {name: declared(name, "json") for name in ACTIVATION}


def _ours(text: str, semantics: str) -> Any:
    compiled = compile_text(text, Environment(JSON_ENV, semantics))
    function = eval(f"lambda {', '.join(ACTIVATION)}: {compiled.source}", {"_x": runtime})  # the compiled source, as generated/ would hold it
    try:
        return function(**ACTIVATION)
    except runtime.ExpressionFailed:
        return "error"


def _plain(value: Any) -> Any:
    """cel-python's value as JSON (its BoolType is an int)."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.ListType):
        return [_plain(item) for item in value]
    if isinstance(value, celtypes.MapType):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (celtypes.IntType, celtypes.UintType)):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    return value


def _cel(text: str) -> Any:
    limit = sys.getrecursionlimit()
    environment = celpy.Environment()
    sys.setrecursionlimit(limit)  # (cel-python raises the process's limit to 2500: the tests after it ran on it)
    program = environment.program(environment.compile(text))
    activation = {name: celpy.json_to_cel(value) for name, value in ACTIVATION.items()}
    try:
        return _plain(program.evaluate(activation))
    except celpy.CELEvalError:
        return "error"


# Where CEL gives a value, the language gives the same one (`semantics: strict`).
STRICT_CASES = [
    "n + 2 * 3", "n / 2", "-n / 2", "n % 3", "-n % 3", "n / -2", "d * 2.0", "d - 0.5", "-d",
    "s + '!'", "size(s)", "size(astral)", "size(items)", "size(m)", "items + [4]",
    "s < 'i'", "'b' > 'a'", "astral < bmp", "bmp < astral", "n <= 7", "d >= 2.5", "n > 8",
    "n == 7", "s != 'x'", "items == [3, 1, 2]", "m.c == {'d': [1, 2]}", "m.b == null", "m == null",
    "2 in items", "'a' in m", "'z' in m", "'a' in words",
    "m.a", "m.c.d", "m['a']", "items[0]", "m.c.d[1]",
    "has(m.a)", "has(m.b)", "has(m.z)", "has(m.c.d)",
    "items.exists(x, x > 2)", "items.all(x, x > 0)", "items.all(x, x > 1)", "items.filter(x, x != 1)",
    "items.map(x, x * 10)", "m.exists(k, k == 'c')", "words.map(w, w + w).filter(w, w < 'c')",
    "items.exists(x, items.exists(y, x + y == 5))",
    "yes && n > 1", "!yes || n == 7", "yes ? 'y' : 'n'", "n > 10 ? 1 : 2", "!(n == 7)",
    "string(n)", "string(s)",
    "s.startsWith('hé')", "s.endsWith('lo')", "s.contains('ll')",
    "[1, 'a', null]", "{'k': [true]}", "'\\u00e9\\x41\\t'",
    "s ? 1 : 2", "!n", "n < s", "s + n", "n / 0", "n % 0",
]


@pytest.mark.parametrize("text", STRICT_CASES)
def test_strict_semantics_agree_with_cel_python(text: str) -> None:
    theirs, ours = _cel(text), _ours(text, "strict")
    assert ours == theirs and type(ours) is type(theirs), (text, ours, theirs)


# Where the language deliberately gives a meaning CEL does not (docs/expressions.md says each): written out.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("n + d", 9.5), ("n == 7.0", True), ("2.0 in items", True), ("items[9]", None), ("m.z", None),
        ("m.z.y", None), ("m.a.b", None), ("first(items)", 3), ("last(words)", "c"), ("first([])", None),
        ("yes && s", "error"),  # a condition that is a string: CEL's error; cel-python 0.5 gives "héllo"
        ("string(yes)", "true"),
        ("[10, 9, 1, 100].sort()", [1, 9, 10, 100]), ("[astral, bmp].sort()", ["\uff61", "\U0001f600"]), ("[1, 'a'].sort()", "error"),
        ("[2, 1, 2.0, [1], [1]].distinct()", [2, 1, [1]]),  # the CEL spec's string(true); cel-python 0.5 writes "True"
        ("truthy(empty)", False), ("truthy(m)", True), ("normalise_path('C:\\\\Work\\\\')", "c:/work"), ("d / 0.0", "error"),
    ],
)
def test_strict_semantics_where_cel_gives_no_value(text: str, expected: Any) -> None:
    assert _ours(text, "strict") == expected


# `semantics: javascript`: each case with the JavaScript expression node evaluates for it, `v` being the activation.
JAVASCRIPT_CASES = [
    ("!empty", "!v.empty"), ("!zero", "!v.zero"), ("!m.b", "!v.m.b"), ("!m.z", "!v.m?.z"), ("!items", "!v.items"),
    ("empty || s", "Boolean(v.empty || v.s)"), ("zero && yes", "Boolean(v.zero && v.yes)"),
    ("m.b == null", "v.m.b === null"), ("m.z == null", "(v.m?.z ?? null) === null"), ("n == 7.0", "v.n === 7.0"),
    ("n == '7'", "v.n === '7'"), ("items == items", "v.items === v.items"), ("items == [3, 1, 2]", "v.items === [3, 1, 2]"),
    ("astral < bmp", "v.astral < v.bmp"), ("bmp < astral", "v.bmp < v.astral"), ("size(astral)", "v.astral.length"),
    ("n / 2", "v.n / 2"), ("-n % 3", "-v.n % 3"), ("n < s", "typeof v.n === typeof v.s && v.n < v.s"),
    ("s + n", "v.s + v.n"), ("s + d", "v.s + v.d"), ("string(d)", "String(v.d)"), ("string(m.b)", "String(v.m.b)"),
    ("string(items)", "String(v.items)"), ("empty ? 1 : 2", "v.empty ? 1 : 2"), ("m.c ? 1 : 2", "v.m.c ? 1 : 2"),
    ("items.filter(x, x - 1)", "v.items.filter(x => x - 1)"), ("words.exists(w, w == 'c')", "v.words.some(w => w === 'c')"),
    ("2.0 in items", "v.items.some(x => x === 2.0)"),
    ("words.sort()", "[...v.words].sort()"), ("[10, 9, 1, 100].sort()", "[10, 9, 1, 100].sort()"),
    ("[astral, bmp, 'a', null].sort()", "[v.astral, v.bmp, 'a', null].sort()"), ("[2, 1, 2.0, 1].distinct()", "[...new Set([2, 1, 2.0, 1])]"),
    ("items.filter(x, x > 1).distinct().sort()", "[...new Set(v.items.filter(x => x > 1))].sort()"),
    ("n / 1", "v.n / 1"), ("n % 4", "v.n % 4"), ("d * 2", "v.d * 2"), ("n - 0.5", "v.n - 0.5"),
    ("9007199254740993 == 9007199254740992", "9007199254740993 === 9007199254740992"),
    ("9007199254740992 + 1 > 9007199254740992", "9007199254740992 + 1 > 9007199254740992"),
]


def _node_answers() -> dict[str, Any]:
    script = "const v = JSON.parse(process.argv[1]); const cases = JSON.parse(process.argv[2]);" \
        "console.log(JSON.stringify(Object.fromEntries(cases.map(([k, e]) => [k, eval(e)]))))"
    done = subprocess.run(["node", "-e", script, json.dumps(ACTIVATION), json.dumps(JAVASCRIPT_CASES)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_javascript_semantics_agree_with_node_as_frozen() -> None:
    answers = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert sorted(answers) == sorted(ours for ours, _ in JAVASCRIPT_CASES), "refresh: python tests/test_expressions.py"
    # compared as JSON text, as a decision prints them: 7 and 7.0 differ there
    wrong = {text: (_ours(text, "javascript"), theirs) for text, theirs in answers.items() if json.dumps(_ours(text, "javascript")) != json.dumps(theirs)}
    assert not wrong


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the frozen answers stand for it")
def test_the_frozen_node_answers_are_nodes() -> None:
    assert _node_answers() == json.loads(FIXTURE.read_text(encoding="utf-8"))


ROW = {
    "type": "object",
    "fields": {
        "id": "string",
        "content": {"type": "object", "optional": True, "fields": {"kind": "string", "id": "string", "name": "string"}},
        "actions": {"type": "json", "optional": True},
    },
}
SPEC = """\
classes:
  call: row.content.kind == "function_call"
  typo: row.content.knd == "function_call"
  quoted: 'row.id == 3'
  unknown: "size(row.id) > 1 && frob(row)"
  block: |
    row.actions.exists(a, a.x)
      && row.content.name.startsWith(3)
  syntax: row.id ==
  condition: row.id && true
  macro: row.id.exists(x, true)
  folded: >-
    row.id != ""
    && row.contnt
  escaped: "row.id == \\"\\\\u00e9\\" && row.contnt"
"""


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("call", None),
        ("typo", "spec/ledger.yaml:3:21: in `row.content.knd == \"function_call\"`: 'knd' is no field of row.content (its fields: id, kind, name)"),
        ("quoted", "spec/ledger.yaml:4:19: in `row.id == 3`: compares string with int: never equal"),
        ("unknown", "spec/ledger.yaml:5:33: in `size(row.id) > 1 && frob(row)`: unknown function 'frob' (the functions: first, has, json_mainline_v1, json_stable, kind, last, normalise_path, range, sha256, sha256_frames, sha256_json, size, string, truthy)"),
        ("block", "spec/ledger.yaml:8:38: in `row.actions.exists(a, a.x) && row.content.name.startsWith(3)`: s.startsWith(t) is about strings, and this is int"),
        ("syntax", "spec/ledger.yaml:9:20: in `row.id ==`: the expression ends too early"),
        ("condition", "spec/ledger.yaml:10:14: in `row.id && true`: a condition must be true or false, and this is string: compare it (`!= null`, `size(x) > 0`) or write truthy(x)"),
        ("macro", "spec/ledger.yaml:11:10: in `row.id.exists(x, true)`: list.exists(v, p) ranges over a list or a map, not string"),
        # folded or escaped: the expression's characters are not the file's one for one, so the value's start
        ("folded", "spec/ledger.yaml:12:11: in `row.id != \"\" && row.contnt`: 'contnt' is no field of row (its fields: actions, content, id)"),
        ("escaped", "spec/ledger.yaml:15:13: in `row.id == \"\\u00e9\" && row.contnt`: 'contnt' is no field of row (its fields: actions, content, id)"),
    ],
)
def test_an_error_names_the_spec_file_line_and_column(tmp_path: Path, key: str, expected: str | None) -> None:
    (tmp_path / "ledger.yaml").write_text(SPEC, encoding="utf-8")
    loaded, errors = load_spec_file(tmp_path / "ledger.yaml", "spec/ledger.yaml")
    assert loaded is not None and not errors
    env = Environment({"row": declared("row", ROW)}, "strict")
    result = compile_at(loaded.data["classes"][key], env, loaded.origin(("classes", key)), condition=True)
    assert (None if hasattr(result, "source") else str(result)) == expected


def test_the_grammar_page_is_generated_from_the_definition() -> None:
    assert (ROOT / "docs" / "expressions.md").read_text(encoding="utf-8") == page(), (
        "docs/expressions.md differs: python -m resume_contract_generator.expr.page > docs/expressions.md"
    )


def test_the_pages_example_error_is_the_tools() -> None:
    env = Environment({"row": declared("row", ROW)})
    result = compile_at('row.content.knd == "function_call"', env, Origin("spec/ledger.yaml", 14, 11), condition=True)
    assert str(result) in page()


def test_compiled_source_runs_nothing_but_the_runtime_helpers() -> None:
    env = Environment({"row": declared("row", ROW)}, "javascript")
    source = compile_condition("has(row.actions.x) && row.content.kind in ['a', 'b'] || size(row.id) > 2", env).source
    names = {word for word in source.replace("(", " ").replace(")", " ").replace(",", " ").split() if word.isidentifier()}
    assert names <= {"_x", "row", "and", "or", "not", "True", "False", "None", "if", "else", "for", "in"}, names



def test_an_expression_nested_past_what_python_compiles_is_refused_not_emitted() -> None:
    env = Environment({"a": declared("a", "json")})
    for text in (" || ".join(["a"] * 300), "-" * 3000 + "a", "[" * 100 + "]" * 100):
        with pytest.raises(ExpressionSyntaxError, match="nested more than 64 deep"):
            compile_text(text, env)
    compile(compile_text(" || ".join(["a"] * 60), env).source, "<compiled>", "eval")  # within the limit: Python compiles it


def test_nan_is_falsy_as_in_javascript() -> None:
    assert runtime.truthy(float("nan")) is False and runtime.truthy(-0.0) is False and runtime.truthy(0.5) is True


if __name__ == "__main__":  # refresh the frozen node answers
    FIXTURE.write_text(json.dumps(_node_answers(), indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def test_literals_past_what_the_language_holds_are_refused_where_they_stand() -> None:
    env = Environment({"a": declared("a", "json")})
    for text, message in (("a == 1e999", "a number too large for a double"), ("a == " + "9" * 5000, "an integer past 64 bits"), ("a == 9223372036854775808", "an integer past 64 bits")):
        with pytest.raises(ExpressionSyntaxError, match=message) as refused:
            compile_text(text, env)
        assert refused.value.at == (1, 6)
    assert compile_text("a == -9223372036854775808", env).source.endswith("-9223372036854775808)")


def test_macros_nest_two_deep_at_most() -> None:
    env = Environment({"a": declared("a", "json")})
    compile_text("a.exists(x, a.exists(y, x == y))", env)
    with pytest.raises(ExpressionSyntaxError, match="inside two other macros"):
        compile_text("a.exists(x, a.exists(y, a.exists(z, x == z)))", env)


def test_numbers_past_a_double_fail_closed_under_strict_and_are_infinity_under_javascript() -> None:
    huge = 10**400  # a JSON integer the ledger reader accepts
    assert runtime.arithmetic("*", huge, 1.5, True) == float("inf")
    assert runtime.add(huge, 1, True) == float("inf")
    with pytest.raises(runtime.ExpressionFailed, match="too large for a double"):
        runtime.arithmetic("*", huge, 1.5)
    assert runtime.index([1, 2], float("inf")) is None and runtime.index([1, 2], float("nan")) is None


@pytest.mark.parametrize("semantics", ["strict", "javascript"])
def test_kind_says_what_a_json_value_is_an_absent_one_being_null(semantics: str) -> None:
    # Not CEL's (it has type()): the language's own, so a test of a field's type reads as one word.
    text = '[kind(null), kind(true), kind(1), kind(1.5), kind("a"), kind([1]), kind({"a": 1}), kind({"a": 1}.b)]'
    assert _ours(text, semantics) == ["null", "bool", "number", "number", "string", "list", "map", "null"]


def test_a_single_equals_is_pointed_at_the_comparison_it_meant() -> None:
    env = Environment({"a": declared("a", "json")})
    with pytest.raises(ExpressionSyntaxError, match=r"unexpected character '=' \(equality is `==`\)") as refused:
        compile_text('a = "x"', env)
    assert refused.value.at == (1, 3)


def test_sha256_takes_a_string_and_json_mainline_v1_any_value() -> None:
    env = Environment({"row": declared("row", ROW)})
    good = compile_at('row.content.id != sha256(json_mainline_v1({"toolName": row.content.name, "args": [row.content.kind, 1]}))', env, Origin("spec/x.yaml", 1, 1), condition=True)
    assert not isinstance(good, SpecError), good
    bad = compile_at("sha256(size(row.content.id)) == ''", env, Origin("spec/x.yaml", 3, 7), condition=True)
    assert isinstance(bad, SpecError) and "sha256(s) takes a string, not int" in str(bad), bad
