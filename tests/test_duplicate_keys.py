"""The reader's proof that no row repeats a key is exact: random rows, with and without one repeated key.

The reader proves most rows free of repeated keys at C speed (re-encoded lengths, re-encoded free JSON) and
reads the rest key by key. Whatever the row — floats written long or short, escapes, nesting, a repeat at
any depth, in a ledger of many rows — its verdict must be the standard library's.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from resume_contract.errors import LedgerCorruption
from resume_contract.ledger.reader import decode_rows

PATH = Path("ledger.jsonl")
NUMBERS = ["1", "-0", "1e15", "1E+2", "0.5", "1.50", "18446744073709552000", "5e-324", "1e+21"]

scalars = st.one_of(
    st.sampled_from(NUMBERS),
    # Strings holding colons and escaped quote-colons: the count proofs must send such rows to the slow one.
    st.sampled_from(['"a"', '"caf\\u00e9"', '"\\/"', '"x\\"y"', "true", "null", '"\\ud83d"', '"a:b"', '"\\":"', '"\\u0022:"']),
)
keys = st.sampled_from(["a", "b", "c", "kind", "id"])


def _object(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(st.tuples(keys, children), max_size=4, unique_by=lambda pair: pair[0]).map(
        lambda pairs: "{" + ",".join(f'"{key}":{value}' for key, value in pairs) + "}"
    )


free_json = st.recursive(scalars, lambda children: st.one_of(_object(children), st.lists(children, max_size=3).map(lambda items: "[" + ",".join(items) + "]")), max_leaves=12)


@st.composite
def rows(draw) -> str:
    ts = draw(st.sampled_from(["1", "1e15", "1732924800000.25", "2.0"]))
    args = draw(free_json)
    extra = draw(st.sampled_from(["", ',"refs":{"toolCallId":"t","n":1}', ',"actions":{"endInvocation":false,"x":[1,2]}', ',"branch":"b:\\":c"']))
    return (
        f'{{"id":"ID","sessionId":"s","invocationId":"i","runId":"r","turnId":"t","ts":{ts},"partial":false,'
        f'"author":"agent","role":"model","content":{{"kind":"function_call","id":"c","name":"n","args":{args}}}{extra}}}'
    )


def _repeat_a_key(row: str, position: int) -> str | None:
    """The row with one `"key":value` pair of some object repeated right after itself, or None if it has none."""
    decoder = json.JSONDecoder()
    pairs = []
    for index, char in enumerate(row):
        if char == '"' and index and row[index - 1] in "{,":
            _, key_end = decoder.raw_decode(row, index)
            if row[key_end] == ":":
                _, value_end = decoder.raw_decode(row, key_end + 1)
                pairs.append((index, value_end))
    if not pairs:
        return None
    start, end = pairs[position % len(pairs)]
    return row[:end] + "," + row[start:end] + row[end:]


def _verdict(data: bytes) -> str:
    try:
        decode_rows(PATH, data)[0]
    except LedgerCorruption as corruption:
        return corruption.kind
    return "ok"


@given(st.lists(rows(), min_size=1, max_size=6), st.integers(min_value=0), st.integers(min_value=0))
def test_a_repeated_key_anywhere_is_found_and_only_then(ledger: list[str], which: int, position: int) -> None:
    ledger = [row.replace("ID", f"e{index}") for index, row in enumerate(ledger)]
    data = "".join(row + "\n" for row in ledger).encode()
    assert _verdict(data) == "ok"
    index = which % len(ledger)
    repeated = _repeat_a_key(ledger[index], position)
    if repeated is None:
        return
    ledger[index] = repeated
    corrupt = "".join(row + "\n" for row in ledger).encode()
    assert _verdict(corrupt) == "duplicate_key", repeated
