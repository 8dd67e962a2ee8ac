"""The walk asks a step mapping that is not a table's own (the reference's, which asks its state machine at each
step) for exactly the steps it takes, in order, and never lists it: copied up front, it would be asked for steps
no ledger reaches, and a non-memoised reference would no longer take each transition through the machine.
A tool test: the steps expected are the ones a traced walk of the same events records."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import msgspec

from resume_contract.contract import active
from resume_contract.core.project import project


def _row(index: int, content: str) -> bytes:
    return (
        '{"id":"e%d","ts":%d,"partial":false,"sessionId":"s","invocationId":"i","runId":"r","turnId":"t",'
        '"author":"agent","role":"model","content":%s}' % (index, index, content)
    ).encode()


def test_a_step_mapping_of_its_own_is_asked_only_for_the_steps_a_walk_takes() -> None:
    contract = active()
    table = contract.table
    asked: list[tuple[str, str, bool]] = []

    class Steps(Mapping[tuple[str, str, bool], tuple[str, str | None]]):
        def __getitem__(self, key: tuple[str, str, bool]) -> tuple[str, str | None]:
            asked.append(key)
            return table.step[key]

        def __iter__(self) -> Iterator[tuple[str, str, bool]]:
            raise AssertionError("a walk never lists the steps")

        def __len__(self) -> int:
            raise AssertionError("a walk never counts the steps")

    call = '{"kind":"function_call","id":"c%d","name":"write","args":{}}'
    result = '{"kind":"function_response","id":"c%d","name":"write","result":{}}'
    # (ten times over, each row its own event id: 40 of them repeat a call id, anomalies too)
    rows = [row for k in range(10) for row in (_row(5 * k, call % 0), _row(5 * k + 1, result % 0), _row(5 * k + 2, call % 1), _row(5 * k + 3, result % 1), _row(5 * k + 4, result % 1))]
    events = [contract.model.decoder.decode(row) for row in rows]
    traced: list[tuple[str, str, bool]] = []
    expected = project(events, table, trace=traced)
    assert project(events, msgspec.structs.replace(table, step=Steps())) == expected
    assert asked == traced and len(asked) == len(events)
