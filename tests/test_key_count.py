"""`core.key_count`: the key counter counts the keys a row wrote outside its free JSON, and gathers the same free
JSON, whatever its fields' names. Tool tests: the model is this file's own, not the spec's.

The expected count is the standard library's: every key of the row (`json.loads` with a hook that counts
pairs) less every key inside the row's free-JSON values, each counted the same way.
"""

from __future__ import annotations

import json
import types
from typing import Any, Literal, Union

import msgspec
import msgspec.inspect as mi
import pytest
from msgspec import UNSET, Raw, UnsetType

from resume_contract.core import key_count
from resume_contract.core.key_count import _counting_of, _generic


class Note(msgspec.Struct, tag_field="kind", tag="note", forbid_unknown_fields=True):
    text: str
    files: Union[list[Raw], UnsetType] = UNSET


class Call(msgspec.Struct, tag_field="kind", tag="call", forbid_unknown_fields=True):
    id: str
    args: Raw
    retry: Union[bool, UnsetType] = UNSET


class Failure(msgspec.Struct, tag_field="kind", tag="failure", forbid_unknown_fields=True):
    message: str
    code: Union[str, UnsetType] = UNSET
    details: Union[Raw, UnsetType] = UNSET


class Event(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    ts: Union[int, float]
    role: Literal["user", "model"]
    status: Union[str, UnsetType] = UNSET
    content: Union[Note, Call, Failure, UnsetType] = UNSET
    meta: Union[dict[str, Raw], UnsetType] = UNSET
    tags: Union[dict[str, str], UnsetType] = UNSET


ROWS = [
    '{"id":"e0","ts":1,"role":"user"}',
    '{"id":"e1","ts":2.5,"role":"model","status":"done","content":{"kind":"note","text":"a: b"}}',
    '{"id":"e2","ts":3,"role":"model","content":{"kind":"note","text":"x","files":[{"a":1,"b":{"c":2}},[],"s"]}}',
    '{"id":"e3","ts":4,"role":"model","content":{"kind":"call","id":"c","args":{"path":"p","mode":{"w":true}}}}',
    '{"id":"e4","ts":5,"role":"model","content":{"kind":"call","id":"c","args":[],"retry":false}}',
    '{"id":"e5","ts":6,"role":"model","content":{"kind":"failure","message":"m","code":"E","details":{"k":{"k":1}}}}',
    '{"id":"e6","ts":7,"role":"user","meta":{"a":{"x":1},"b":2,"c":{}},"tags":{"t":"u","v":"w"}}',
    '{"id":"e7","ts":8,"role":"user","meta":{},"tags":{},"content":{"kind":"failure","message":"m"}}',
    '{"id":"e8","ts":9,"role":"user","content":{"kind":"note","text":"y","files":[]}}',
]


def _pairs(counted: list[int]) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        counted[0] += len(pairs)
        return dict(pairs)

    return hook


def _keys_in(text: str | bytes) -> int:
    counted = [0]
    json.loads(text, object_pairs_hook=_pairs(counted))
    return counted[0]


def _free_of(event: Event) -> list[bytes]:
    """The event's free JSON, read field by field (the model is this file's own, so its fields are known)."""
    free = [bytes(raw) for raw in (event.meta or {}).values()]
    content = event.content
    if isinstance(content, Note):
        free += map(bytes, content.files or [])
    elif isinstance(content, Call):
        free.append(bytes(content.args))
    elif isinstance(content, Failure) and content.details:
        free.append(bytes(content.details))
    return free


def _written() -> key_count.KeyCounter:
    """The counter as the generator writes it into a decoding model (generator/spec/key_counter.py), run in a
    module holding this file's model as a generated one holds the spec's."""
    from resume_contract_generator.spec.key_counter import counter_source

    module = types.ModuleType("key_count_model")
    module.__dict__.update(RuntimeEvent=Event, Note=Note, Call=Call, Failure=Failure, UNSET=UNSET, Any=Any)
    source = counter_source(module)
    assert source.startswith("def count_keys(")
    exec(compile(source, "generated/runtime_event.py", "exec"), module.__dict__)  # the generator's output, as generated/ holds it
    return module.count_keys  # type: ignore[no-any-return]


def _counters() -> list[key_count.KeyCounter]:
    """The counter, as `key_counter` makes it, as its parts are, and as the generator writes it."""
    counting = _counting_of(mi.type_info(Event))  # type: ignore[arg-type]
    made = key_count.key_counter(mi.type_info(Event))  # type: ignore[arg-type]
    assert made is not None
    return [_generic(counting), made, _written()]


FORMS = ["generic", "made", "written"]


EVENTS = [msgspec.json.decode(row, type=Event) for row in ROWS]
EXPECTED_FREE = [raw for event in EVENTS for raw in _free_of(event)]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("index", range(len(ROWS)))
def test_each_row_counts_the_keys_it_wrote_outside_its_free_json(form: str, index: int) -> None:
    count = _counters()[FORMS.index(form)]
    free: list[Raw] = []
    expected = _keys_in(ROWS[index]) - sum(map(_keys_in, _free_of(EVENTS[index])))
    assert count([EVENTS[index]], free) == expected
    assert sorted(map(bytes, free)) == sorted(_free_of(EVENTS[index]))


@pytest.mark.parametrize("form", FORMS)
def test_a_list_of_mixed_rows_counts_their_sum_and_gathers_all_their_free_json(form: str) -> None:
    count = _counters()[FORMS.index(form)]
    free: list[Raw] = []
    assert count(EVENTS * 3, free) == 3 * sum(_keys_in(row) for row in ROWS) - 3 * sum(map(_keys_in, EXPECTED_FREE))
    assert sorted(map(bytes, free)) == sorted(EXPECTED_FREE * 3)


def test_a_row_that_repeats_a_key_decodes_to_one_key_fewer_than_it_wrote() -> None:
    # What the reader's proof rests on (ledger.proofs.keys_proven): the counter sees the key msgspec kept.
    for written in ('"status":"a","status":"b"', '"tags":{"t":"u","t":"v"}'):
        row = '{"id":"e","ts":1,"role":"user",%s}' % written
        event = msgspec.json.decode(row, type=Event)
        for count in _counters():
            assert count([event], []) == _keys_in(row) - 1


@pytest.mark.parametrize("name", ["class", "ﬁeld", "naïve"])
def test_a_field_whose_name_is_no_plain_identifier_is_counted(name: str) -> None:
    odd = msgspec.defstruct("Odd", [("id", str), (name, Union[str, UnsetType], UNSET)])
    counting = _counting_of(mi.type_info(odd))  # type: ignore[arg-type]
    values = [odd("a"), odd("b", "x")]
    assert _generic(counting)(values, []) == 3
    # The generator writes no loop for such a model: the reader counts it by columns.
    from resume_contract_generator.spec.key_counter import counter_source

    assert counter_source(types.SimpleNamespace(RuntimeEvent=odd)) == ""  # type: ignore[arg-type]
