"""The rows that exercise a contract's expressions (generator/expr/probes.py), read off frozen expressions: what
the explorers (`diff`'s evidence, `verify`) add to an alphabet read off the wire format."""

from __future__ import annotations

from typing import Any

import pytest
from resume_contract_generator.expr.probes import probe_rows

DISPATCH = ("has(row.actions.toolDispatch) && !has(row.content)", "row.actions.toolDispatch.providerToolCallId")


def test_an_action_event_is_spelt_with_its_tests_paths_present_and_its_key_naming_call_a() -> None:
    assert probe_rows({"dispatch": DISPATCH}, {}, []) == [
        ('dispatch(a) {"actions":{"toolDispatch":{"providerToolCallId":"a"}}}', {"actions": {"toolDispatch": {"providerToolCallId": "a"}}}, False)
    ]


def test_two_tests_of_an_action_are_two_rows_of_two_names() -> None:
    # A review reads each side's rows on both sides: a narrower test must be another letter, not the same name.
    narrower = ("has(row.actions.toolDispatch.protocol) && !has(row.content)", DISPATCH[1])
    (wide, _, _), (narrow, fields, _) = probe_rows({"dispatch": DISPATCH}, {}, [])[0], probe_rows({"dispatch": narrower}, {}, [])[0]
    assert wide != narrow and fields == {"actions": {"toolDispatch": {"protocol": {}, "providerToolCallId": "a"}}}


def test_a_fact_compared_with_a_literal_is_spelt_on_the_first_rows_path_with_it_and_with_another_value() -> None:
    rows = probe_rows({}, {"mode": "first.header.mode"}, ['fact.mode == "strict"', 'fact.mode in ["lax", "strict"]'])
    assert rows == [
        ('header.mode "strict"', {"header": {"mode": "strict"}}, True),
        ('header.mode "lax"', {"header": {"mode": "lax"}}, True),
        ("header.mode other", {"header": {"mode": "explore-other"}}, True),
    ]


def test_a_row_test_is_spelt_with_each_value_and_a_bare_has_with_an_empty_object() -> None:
    rows = probe_rows({}, {}, ["row.level != 3 && has(row.audit)", "has(row.tags.pinned)"])
    assert rows == [
        ("level 3", {"level": 3}, False),
        ("level other", {"level": "explore-other"}, False),
        ("audit present", {"audit": {}}, False),
        ("tags.pinned present", {"tags": {"pinned": {}}}, False),
    ]


def test_a_string_method_spells_its_literal_and_a_path_spells_at_most_four_values() -> None:
    assert probe_rows({}, {}, ['string(row.mode).startsWith("t1_")'])[0] == ('mode "t1_"', {"mode": "t1_"}, False)
    many = probe_rows({}, {}, ['row.mode in ["a", "b", "c", "d", "e", "f"]'])
    assert [name for name, _, _ in many] == ['mode "a"', 'mode "b"', 'mode "c"', 'mode "d"', "mode other"]


def test_a_negated_has_and_a_comparison_of_two_paths_spell_nothing() -> None:
    assert probe_rows({}, {}, ["!has(row.content)", "row.id != first.id"]) == []


def test_an_ordering_comparison_spells_its_literal_and_the_number_after_it() -> None:
    # `ts < 1000000` holds at neither: a row at the literal, and one just past it, read each side of the boundary.
    rows = probe_rows({}, {}, ["row.ts < 1000000", "3 >= row.depth", 'row.name > "m"'])
    assert rows == [
        ("ts 1000000", {"ts": 1000000}, False),
        ("ts 1000001", {"ts": 1000001}, False),
        ("ts other", {"ts": "explore-other"}, False),
        ("depth 3", {"depth": 3}, False),
        ("depth 4", {"depth": 4}, False),
        ("depth other", {"depth": "explore-other"}, False),
        ('name "m"', {"name": "m"}, False),
        ("name other", {"name": "explore-other"}, False),
    ]


# -- well-formed action rows (generator/expr/witness.py) ----------------------------------------------------------
LANE = (
    "has(row.actions.toolDispatch) && (has(row.content) || kind(row.actions.toolDispatch.operationId) != \"string\""
    " || row.refs.toolCallId != row.actions.toolDispatch.providerToolCallId)"
)
OTHER_LANE = 'has(row.actions.toolRecovery) && (row.actions.toolRecovery.version != 1 || has(row.content))'


def _no_value(node: object) -> object:
    raise AssertionError("nothing to evaluate here")


def test_a_witness_makes_the_actions_test_hold_and_its_lanes_checks_fail_and_leaves_other_lanes_alone() -> None:
    from resume_contract_generator.expr.witness import witness

    fields = witness({"actions": {"toolDispatch": {"providerToolCallId": "a"}}}, [DISPATCH[0]], [LANE, OTHER_LANE], _no_value)
    assert fields == {
        "actions": {"toolDispatch": {"providerToolCallId": "a", "operationId": "explore-operationId"}},
        "refs": {"toolCallId": "a"},
    }


def test_a_witness_gives_a_literal_an_equality_asks_for_and_keeps_a_value_already_in_a_list() -> None:
    from resume_contract_generator.expr.witness import witness

    held = witness({}, ['has(row.fact) && row.fact.kind == "decision" && row.fact.disposition != "parked"'], [], _no_value)
    assert held == {"fact": {"kind": "decision", "disposition": "explore-other"}}
    kept = witness({"fact": {"kind": "decision"}}, [], ['!(row.fact.kind in ["observation", "decision"])'], _no_value)
    assert kept == {"fact": {"kind": "decision"}}


def test_a_witness_takes_a_value_that_reads_no_row_from_the_evaluator() -> None:
    from resume_contract_generator.expr.witness import witness

    fields = witness({}, [], ['row.hash != sha256_json(call.args)', "row.tool != call.name"], lambda node: f"value at {node.at}")
    assert fields == {"hash": "value at (1, 13)", "tool": "value at (1, 13)"}


def test_the_call_a_well_formed_probe_agrees_with_is_the_explorers_first_call() -> None:
    from resume_contract_generator.spec.witnesses import EXPLORED_CALL

    from resume_contract.core.explore import CALL_IDS, TOOLS

    assert (EXPLORED_CALL["id"], EXPLORED_CALL["name"], EXPLORED_CALL["args"]) == (CALL_IDS[0], TOOLS[0], {})
    from resume_contract_generator.spec.witnesses import TELLING_CALL

    from resume_contract.core.letters import TELLING_ARGS

    assert TELLING_CALL == {**EXPLORED_CALL, "args": TELLING_ARGS}


# -- which rows a test can hold for (generator/expr/needs.py): the walk tests only those ----------------------------
def test_a_test_needs_a_field_it_asks_has_of_or_compares_with_a_value_that_is_not_null() -> None:
    from resume_contract_generator.expr.needs import needs

    assert needs('has(row.actions.toolDispatch) && !has(row.content)', "row") == ("actions.toolDispatch",)
    assert needs('row.modelVisibility == "hidden"', "row") == ("modelVisibility",)  # absent, it reads null
    assert needs('row.fact.kind in ["a", "b"]', "row") == ("fact",)
    assert needs('has(row.actions) && has(row.content) && row.content.kind == "x"', "row") == ("actions",)  # the first
    # Any row may hold for these: a null among the values, an inequality, a name that is not the row's.
    for text in ('row.a in ["x", null]', 'row.a != "x"', 'row.a == null', 'first.a == "x"', '!has(row.a)'):
        assert needs(text, "row") is None, text


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("response.refs.operationId != row.actions.toolDispatch.operationId", ("refs",)),
        ("row.actions.toolDispatch.toolName != call.name", ()),
        ('has(response.refs) && response.content.kind == "function_response"', ("content", "refs")),
        ('kind(response) == "null"', None),  # the whole result
        ("response == null", None),
        ('response["refs"] == 1', None),
    ],
)
def test_reads_names_the_top_level_fields_an_expression_reads_of_a_name(text: str, fields: Any) -> None:
    """What the walk keeps of an operation's result for an `against_call` check (core/table.ActionKind.result_fields)."""
    from resume_contract_generator.expr.needs import reads

    assert reads(text, "response") == fields
