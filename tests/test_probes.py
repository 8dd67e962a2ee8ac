"""The rows that exercise a contract's expressions (generator/expr/probes.py), read off frozen expressions: what
the explorers (`diff`'s evidence, `verify`) add to an alphabet read off the wire format."""

from __future__ import annotations

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
