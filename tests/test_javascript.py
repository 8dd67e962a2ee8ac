"""JavaScript's rules as the reference store applies them, held to node itself.

Every answer expected here is node's: from `tests/node_fixtures/javascript.json` (what node answered, frozen by
`tests/node_fixtures/refresh.py`: runs everywhere) and, where node is installed, from node asked afresh about
random inputs (Hypothesis). Nothing is computed by the code under test.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_contract.core.collation import locale_compare_key
from resume_contract.core.javascript import canonical_json, is_truthy, json_parse, number_to_string, to_string

HERE = Path(__file__).parent / "node_fixtures"
FIXTURE = json.loads((HERE / "javascript.json").read_text(encoding="utf-8"))
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _double(hex_bits: str) -> float:
    return float(struct.unpack(">d", bytes.fromhex(hex_bits))[0])


def _sign(a: str, b: str) -> int:
    key_a, key_b = locale_compare_key(a), locale_compare_key(b)
    return (key_a > key_b) - (key_a < key_b)


def _parses(text: str) -> bool:
    try:
        json_parse(text)
    except ValueError:
        return False
    return True


def test_number_to_string_is_javascripts_on_the_frozen_doubles() -> None:
    wrong = [(bits, theirs, number_to_string(_double(bits))) for bits, theirs in FIXTURE["numbers"] if number_to_string(_double(bits)) != theirs]
    assert not wrong and len(FIXTURE["numbers"]) > 2000


def test_string_and_truthiness_of_json_values_are_javascripts() -> None:
    for text, (string, truthy) in FIXTURE["values"]:
        value = json.loads(text)
        assert (to_string(value), is_truthy(value)) == (string, truthy), text


def test_json_parse_accepts_what_javascript_accepts_and_nothing_else() -> None:
    for text, accepted in FIXTURE["parse"]:
        assert _parses(text) is accepted, text[:40]


def test_canonical_json_is_javascripts_stringify_with_sorted_keys_on_the_frozen_values() -> None:
    for text, theirs in FIXTURE["canonical"]:
        assert canonical_json(json.loads(text)) == theirs, text


def test_the_recovery_oracle_hashes_a_calls_arguments_as_maka_writes_them() -> None:
    """maka's dispatch carries the sha256 of {"args", "toolName"} as its canonicalizeMainlineV1 writes it: the oracle
    (written apart from the expression library) must accept the hash node gives, for each frozen call."""
    from resume_contract.core.oracle_recovery import _of_its_call, _Story

    for text, (_, digest) in FIXTURE["mainline"]:
        call = json.loads(text)
        story = _Story(0, call["toolName"], True, call["args"])
        dispatch = {"toolName": call["toolName"], "canonicalArgsHash": digest}
        assert _of_its_call(story, dispatch), text[:60]
        assert not _of_its_call(story, {**dispatch, "toolName": "Write"})


_ASCII = st.text(st.characters(max_codepoint=127), max_size=6)  # (canonical_json's short way: tests below)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6) | _ASCII,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4) | _ASCII, inner, max_size=4),
    max_leaves=12,
)


def test_canonical_jsons_short_way_is_taken_for_plain_values_and_gives_the_long_ways_text() -> None:
    """The short way (msgspec's sorted text) is taken only where it writes what JSON.stringify does; the long way,
    value by value, is held to node above: on every frozen value, and on values made to reach each side of it."""
    from resume_contract.core import javascript

    plain = [{"b": [1, -2, 10**15 - 1, None, True], "a": "x\"y\\z\n\u0001\u007f", "10": {}, "9": []}, "", [], 0]
    other = [{"a": 1.0}, {"a": 1e-7}, [10**15 * 10], {"é": 1, "e": 2}, ["\ud800"], {"\U0001f600": 1, "\uffff": 2}, 2**70]
    for value in plain + other:
        assert canonical_json(value) == javascript._canonical(value), value
    taken = []
    real = javascript._canonical
    javascript._canonical = lambda value: taken.append(value) or real(value)  # type: ignore[assignment]
    try:
        for value in plain + other:
            canonical_json(value)
    finally:
        javascript._canonical = real  # type: ignore[assignment]
    # (the long way recurses through itself: the values inside `other`'s are recorded too)
    assert all(any(seen is value for seen in taken) for value in other)
    assert not [value for value in plain if any(seen is value for seen in taken)]
    for text, _ in FIXTURE["canonical"]:
        value = json.loads(text)
        assert canonical_json(value) == javascript._canonical(value), text


@needs_node
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_JSON, min_size=1, max_size=50))
def test_canonical_json_agrees_with_node_on_random_values(values: list[object]) -> None:
    texts = [json.dumps(value) for value in values]
    assert [canonical_json(value) for value in values] == _ask_node({"canonical": texts})["canonical"]


def test_a_tool_call_is_written_and_hashed_as_makas_canonicalize_mainline_v1_on_the_frozen_calls() -> None:
    # (through the expression library, as a contract calls them: sha256(json_mainline_v1(x)))
    from resume_contract.core.expressions import json_mainline_v1, sha256

    wrong = [text for text, (body, digest) in FIXTURE["mainline"] if (json_mainline_v1(json.loads(text)), sha256(json_mainline_v1(json.loads(text)))) != (body, digest)]
    assert not wrong and len(FIXTURE["mainline"]) > 300
    # where the two differ: an array-index key, an array under `required`, a `__proto__` key
    differing = [text for text, (body, _) in FIXTURE["mainline"] if canonical_json(json.loads(text)) != body]
    assert len(differing) > 50


_MAINLINE_KEYS = st.sampled_from(["a", "B", "_", "0", "1", "10", "09", "required", "enum", "__proto__", "é"]) | st.text(max_size=3)
_MAINLINE_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_MAINLINE_KEYS, inner, max_size=4),
    max_leaves=14,
)


@needs_node
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_MAINLINE_JSON, min_size=1, max_size=40))
def test_canonicalize_mainline_v1_agrees_with_node_on_random_calls(values: list[object]) -> None:
    from resume_contract.core.expressions import json_mainline_v1, sha256

    texts = [json.dumps({"toolName": "t", "args": value}) for value in values]
    ours = [[json_mainline_v1(json.loads(text)), sha256(json_mainline_v1(json.loads(text)))] for text in texts]
    assert ours == _ask_node({"mainline": texts})["mainline"]


def test_json_stable_is_makas_stable_json_stringify_on_the_frozen_values() -> None:
    # (through the expression library: maka's boundary digests hash this text)
    from resume_contract.core.expressions import json_stable

    wrong = [text for text, answer in FIXTURE["stable"] if json_stable(json.loads(text)) != answer]
    assert not wrong and len(FIXTURE["stable"]) > 200
    # where an object holds an array-index key, maka's text lists it first: the plain sorted text differs
    assert sum(canonical_json(json.loads(text)) != answer for text, answer in FIXTURE["stable"]) > 20


def test_sha256_frames_frames_as_makas_boundary_digests_on_the_frozen_lists() -> None:
    from resume_contract.core.expressions import sha256_frames

    wrong = [text for text, answer in FIXTURE["frames"] if sha256_frames(json.loads(text)) != answer]
    assert not wrong and len(FIXTURE["frames"]) > 200


_FRAME = st.recursive(
    st.integers(0, 2**53 - 1) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=12,
)


@needs_node
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_MAINLINE_JSON, min_size=1, max_size=30), st.lists(st.lists(_FRAME, max_size=5), min_size=1, max_size=30))
def test_json_stable_and_sha256_frames_agree_with_node_on_random_values(values: list[object], frames: list[list[object]]) -> None:
    from resume_contract.core.expressions import json_stable, sha256_frames

    texts, framed = [json.dumps(value) for value in values], [json.dumps(frame) for frame in frames]
    answer = _ask_node({"stable": texts, "frames": framed})
    assert [json_stable(json.loads(text)) for text in texts] == answer["stable"]
    assert [sha256_frames(json.loads(text)) for text in framed] == answer["frames"]

def test_locale_compare_orders_the_frozen_ids_as_node() -> None:
    wrong = [(a, b, theirs) for (a, b), theirs in FIXTURE["pairs"] if _sign(a, b) != theirs]
    assert not wrong and len(FIXTURE["pairs"]) > 2000


def test_the_pairs_the_case_folding_approximation_got_wrong() -> None:
    assert _sign("chunk_1", "chunk-1") == -1 and _sign("rt_event_88", "rt_event97") == -1


def _ask_node(request: dict) -> dict:
    import subprocess

    done = subprocess.run(["node", str(HERE / "javascript.js")], input=json.dumps(request), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@needs_node
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=300))
def test_number_to_string_agrees_with_node_on_random_doubles(values: list[float]) -> None:
    hexes = [struct.pack(">d", value).hex() for value in values]
    assert [number_to_string(value) for value in values] == _ask_node({"numbers": hexes})["numbers"]


_ID_CHARACTERS = st.characters(min_codepoint=0x20, max_codepoint=0x24F, exclude_categories=("Cs", "Cn"))  # ASCII and Latin


@needs_node
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.text(_ID_CHARACTERS, max_size=12), st.text(_ID_CHARACTERS, max_size=12)), min_size=1, max_size=300))
def test_locale_compare_agrees_with_node_on_random_ids(pairs: list[tuple[str, str]]) -> None:
    # Ids sharing a prefix are where ties are broken: half of the pairs are made to.
    pairs = [(a, a[: len(b)] + b) if index % 2 else (a, b) for index, (a, b) in enumerate(pairs)]
    assert [_sign(a, b) for a, b in pairs] == _ask_node({"pairs": [list(pair) for pair in pairs]})["pairs"]
