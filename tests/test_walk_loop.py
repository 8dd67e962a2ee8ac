"""The walk's loop the generator writes for a contract (generated projector_table.walk_loop, core/walk_loop.py)
leaves a walk exactly as the generic loop does, on random ledgers fed whole or in pieces, with and without an
operation store; and a contract it cannot be written for keeps the generic loop. Tool tests: the contract is the
frozen spec's (tests/frozen_spec/), not spec/.

The expected walk is the generic loop's (`Walk._walk`), which the conformance tests hold to the reference."""

from __future__ import annotations

import json
import sys
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from resume_contract_generator.render.walk_loop import walk_loop_source
from test_properties import wire_ledgers

from resume_contract.contract import Contract, load_generated
from resume_contract.core.operation_store import OperationStore
from resume_contract.core.table import ProjectorTable, RowCheck
from resume_contract.core.walk import Walk


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory, _frozen_outputs: dict[str, str]) -> Contract:
    root = tmp_path_factory.mktemp("frozen")
    for relative, text in _frozen_outputs.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return load_generated(root)


def _events(contract: Contract, rows: list[dict[str, Any]]) -> list[Any]:
    return [contract.model.decoder.decode(json.dumps(row)) for row in rows]


def _state(walk: Walk) -> tuple[Any, ...]:
    """Everything a walk holds once fed, as plain values."""
    store = None if walk.store is None else [_stored(walk.store, index) for index in range(walk._next_index)]
    return (
        [(call_id, msgspec.structs.asdict(operation)) for call_id, operation in walk.operations.items()],
        list(walk.not_replayed), walk.diagnostics, walk._next_index, walk._settled, list(walk._opened), walk._unopened,
        walk.terminal_event_id, walk.terminal_index, store,
    )


def _stored(store: OperationStore, index: int) -> bytes | None:
    try:
        return store.record(index)
    except (AssertionError, IndexError):  # not stored: still open in the walk
        return None


def _walked(table: ProjectorTable, events: list[Any], piece: int, with_store: bool, chunks_kept: bool) -> tuple[Any, ...]:
    walk = Walk(table, store=OperationStore() if with_store else None, chunks_kept=chunks_kept)
    for start in range(0, len(events), piece):
        walk.feed(events[start : start + piece], start)
    return _state(walk)


def _generic(contract: Contract) -> ProjectorTable:
    return msgspec.structs.replace(contract.table, loop=None)


# What a row may hold besides its content: nothing, a status (terminal or not), or actions that end the invocation
# (the terminal flag) or do not.
_EXTRAS = st.sampled_from([{}, {}, {}, {"status": "streaming"}, {"status": "completed"}, {"actions": {"endInvocation": True}},
                           {"actions": {"endInvocation": False}}, {"actions": {}}, {"actions": {"other": 1}}])


def test_the_frozen_contract_has_a_generated_loop(contract: Contract) -> None:
    assert contract.table.loop is not None and contract.table.loop.__name__ == "walk_loop"


@settings(deadline=None)  # (as many examples as the profile gives: 150 in CI, HYPOTHESIS_PROFILE=long for more)
@given(wire_ledgers(max_size=60), st.lists(_EXTRAS, min_size=60, max_size=60), st.sampled_from([1, 7, 1000]), st.booleans(), st.booleans())
def test_the_generated_loop_walks_as_the_generic_loop(
    contract: Contract, rows: list[dict[str, Any]], extras: list[dict[str, Any]], piece: int, with_store: bool, chunks_kept: bool
) -> None:
    events = _events(contract, [{**row, **extra} for row, extra in zip(rows, extras)])
    assert _walked(contract.table, events, piece, with_store, chunks_kept) == _walked(_generic(contract), events, piece, with_store, chunks_kept)


def test_a_typical_ledger_takes_the_generated_steps(contract: Contract) -> None:
    # Calls answered in order, one failed, and text: the common cases the loop takes; then an anomaly.
    rows = []
    for index in range(6):
        rows.append({"id": f"c{index}", "ts": 0, "partial": False, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t",
                     "author": "agent", "role": "model", "content": {"kind": "function_call", "id": f"k{index}", "name": "w", "args": {}}})
        result = {"kind": "function_response", "id": f"k{index}", "name": "w", "result": {}, **({"isError": True} if index == 2 else {})}
        rows.append({**rows[-1], "id": f"r{index}", "author": "tool", "role": "tool", "content": result})
        rows.append({**rows[-1], "id": f"t{index}", "author": "user", "role": "user", "content": {"kind": "text", "text": "x"}})
    rows.append({**rows[4], "id": "again"})  # k1 answered twice: the first answer is superseded
    events = _events(contract, rows)
    generic_calls = []
    original = Walk._walk

    def counting(walk: Walk, events: Any, first_index: int) -> None:
        generic_calls.append(len(events))
        original(walk, events, first_index)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Walk, "_walk", counting)
        walked = _walked(contract.table, events, 1000, False, True)
    assert generic_calls == [1]  # every event took a generated step but the anomaly, walked alone
    assert walked == _walked(_generic(contract), events, 1000, False, True)
    assert [diagnostic.code for diagnostic in walked[2]] == ["duplicate_tool_result"] and walked[1] == [18]
    assert [(call_id, operation["state"], operation["response_is_error"]) for call_id, operation in walked[0]] == [
        (f"k{index}", "failed" if index == 2 else "succeeded", index == 2) for index in range(6)
    ]


@pytest.mark.parametrize("marker", [{"actions": {"endInvocation": True}}, {"status": "completed"}], ids=["flag", "status"])
def test_a_terminal_event_met_by_the_generated_loop_ends_the_run_as_in_the_generic_loop(contract: Contract, marker: dict[str, Any]) -> None:
    head = {"ts": 0, "partial": False, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "author": "agent", "role": "model"}
    call = {"kind": "function_call", "id": "k", "name": "w", "args": {}}
    rows = [
        {**head, "id": "call", "content": call},
        {**head, "id": "not-yet", "actions": {"endInvocation": False}, "content": {"kind": "text", "text": "x"}},
        {**head, "id": "end", **marker, "content": {"kind": "text", "text": "x"}},
        {**head, "id": "result", "content": {"kind": "function_response", "id": "k", "name": "w", "result": {}}},
        {**head, "id": "late", "content": {"kind": "text", "text": "x"}},
    ]
    events = _events(contract, rows)
    for piece in (1, 2, 5):
        walked = _walked(contract.table, events, piece, False, True)
        assert walked == _walked(_generic(contract), events, piece, False, True)
        assert walked[7] == "end" and walked[8] == 2
        assert [(diagnostic.code, diagnostic.event_id) for diagnostic in walked[2]] == [
            ("event_after_terminal", "result"), ("event_after_terminal", "late")
        ]


def test_both_loops_record_the_hash_the_walk_module_gives(contract: Contract, monkeypatch: pytest.MonkeyPatch) -> None:
    # tests/test_properties.py forces every call id to collide through `walk.hash`; the generated loop must record
    # what the generic one does (it takes the walk's own `call_id_hash`), or a walk mixing the two misses suspects.
    from resume_contract.core import walk as walk_module

    monkeypatch.setattr(walk_module, "hash", lambda value: 7, raising=False)
    head = {"ts": 0, "partial": False, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "author": "agent", "role": "model"}
    rows = [{**head, "id": f"e{n}", "content": {"kind": "function_call", "id": f"k{n}", "name": "w", "args": {}}} for n in range(3)]
    events = _events(contract, rows)
    walked = _walked(contract.table, events, 1000, True, True)
    assert walked == _walked(_generic(contract), events, 1000, True, True)
    assert walked[5] == [7, 7, 7]


def test_a_contract_it_cannot_be_written_for_keeps_the_generic_loop(contract: Contract) -> None:
    table = contract.table
    assert walk_loop_source(table) is not None
    assert walk_loop_source(msgspec.structs.replace(table, partial_attribute="partial-flag")) is None  # not an identifier
    assert walk_loop_source(msgspec.structs.replace(table, partial_attribute="class")) is None  # a keyword
    hiding = RowCheck("", None, lambda row, first, fact: False)
    assert walk_loop_source(msgspec.structs.replace(table, hidden=hiding)) is None  # any row may be hidden: the generic loop's


def _hiding(contract: Contract) -> ProjectorTable:
    """The frozen contract hiding a row whose `branch` is "hidden" (as maka's `modelVisibility`), with the loop the
    generator writes for that table, run in the generated module's namespace as generated/ holds it."""
    hidden = RowCheck("unmatched_tool_result", (("branch", None),), lambda row, first, fact: row.get("branch") == "hidden")
    table = msgspec.structs.replace(contract.table, hidden=hidden)
    written = walk_loop_source(table)
    assert written is not None and "event.branch is UNSET" in written[1] and "not operation.call_hidden" in written[1]
    namespace = dict(vars(sys.modules[contract.table.loop.__module__]))
    exec(written[1], namespace)  # the generator's output
    return msgspec.structs.replace(table, loop=namespace["walk_loop"])


_HIDING_EXTRAS = st.sampled_from([{}, {}, {"branch": "hidden"}, {"branch": "hidden"}, {"branch": "main"}, {"status": "completed"}])


@settings(deadline=None)
@given(wire_ledgers(max_size=40), st.lists(_HIDING_EXTRAS, min_size=40, max_size=40), st.sampled_from([1, 7, 1000]), st.booleans())
def test_the_loop_written_for_a_contract_that_hides_rows_walks_as_the_generic_loop(
    contract: Contract, rows: list[dict[str, Any]], extras: list[dict[str, Any]], piece: int, with_store: bool
) -> None:
    table = _hiding(contract)
    events = _events(contract, [{**row, **extra} for row, extra in zip(rows, extras)])
    generic = msgspec.structs.replace(table, loop=None)
    written, generic_walk = _walked(table, events, piece, with_store, True), _walked(generic, events, piece, with_store, True)
    # (the rows not replayed are noted in another order: the generic loop notes a chunk's hidden rows first; the
    # plan sorts them)
    assert (written[0], sorted(written[1]), *written[2:]) == (generic_walk[0], sorted(generic_walk[1]), *generic_walk[2:])


# maka's contract at step 08 of its history (examples/maka-history: frozen patches, not spec/): action events (a
# dispatch checked against its call and its result, recovery facts), lane checks, hidden rows. The generated loop
# hands an action event to `walk_row` alone (core/walk_loop.walk_one), without the generic loop's set-up.
_HEAD = {"ts": 0, "partial": False, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t"}
_BASH = "sha256:" + __import__("hashlib").sha256(b'{"args":{},"toolName":"Bash"}').hexdigest()


@pytest.fixture(scope="module")
def maka(gallery_step: Any) -> Contract:
    return load_generated(gallery_step("08-terminal-last"))


@st.composite
def _maka_rows(draw: Any) -> list[dict[str, Any]]:
    marker = draw(st.sampled_from([{"actions": {"runtimeProtocol": {"toolBoundary": "t1_after_preflight_v1"}}}, {}]))
    rows = [{**_HEAD, "id": "u", "author": "user", "role": "user", "content": {"kind": "text", "text": "go"}, **marker}]
    for number in range(draw(st.integers(0, 40))):
        call_id = draw(st.sampled_from(["a", "b", "c"]))
        kind = draw(st.sampled_from(["call", "call", "result", "result", "dispatch", "dispatch", "reconcile", "parked", "completed", "text", "end", "bare"]))
        head = {**_HEAD, "id": f"e{number}"}
        if kind == "call":
            row = {**head, "author": "agent", "role": "model", "content": {"kind": "function_call", "id": call_id, "name": "Bash", "args": {}}}
        elif kind == "result":
            row = {**head, "author": "tool", "role": "tool", "content": {"kind": "function_response", "id": call_id, "name": "Bash", "result": {}}}
            if draw(st.booleans()):
                row["refs"] = {"operationId": draw(st.sampled_from(["op-a", "op-b"])), "toolCallId": call_id}
        elif kind == "dispatch":
            fields = {"operationId": "op-a", "providerToolCallId": call_id, "toolName": draw(st.sampled_from(["Bash", "Write"])),
                      "canonicalArgsHash": draw(st.sampled_from([_BASH, "sha256:" + "0" * 64]))}
            row = {**head, "author": "system", "role": "system", "actions": {"toolDispatch": fields}, "refs": {"operationId": "op-a", "toolCallId": call_id}}
        elif kind in ("reconcile", "parked", "completed"):
            fact = {"kind": "maka.tool.reconcile_result", "version": 1, "payload": {}} if kind == "reconcile" else {
                "kind": "maka.tool.recovery_decision", "version": 1, "payload": {"disposition": kind}}
            row = {**head, "author": "system", "role": "system", "actions": {"toolRecovery": fact}, "refs": {"operationId": "op-a", "toolCallId": call_id}}
        elif kind == "text":
            row = {**head, "author": "agent", "role": "model", "content": {"kind": "text", "text": "x"}}
        elif kind == "bare":  # neither content nor actions: judged only after the terminal event
            row = {**head, "author": "system", "role": "system"}
        else:
            row = {**head, "author": "agent", "role": "model", "status": "completed", "content": {"kind": "text", "text": "done"}}
        row.update(draw(st.sampled_from([{}, {}, {}, {"modelVisibility": "hidden"}, {"partial": True}])))
        rows.append(row)
    return rows


@settings(deadline=None)
@given(_maka_rows(), st.sampled_from([1, 5, 1000]), st.booleans())
def test_the_loop_written_for_makas_contract_walks_as_the_generic_loop(maka: Contract, rows: list[dict[str, Any]], piece: int, with_store: bool) -> None:
    events = _events(maka, rows)
    written, generic = _walked(maka.table, events, piece, with_store, True), _walked(_generic(maka), events, piece, with_store, True)
    # (the generic loop notes a chunk's hidden rows first: the plan sorts them)
    assert (written[0], sorted(written[1]), *written[2:]) == (generic[0], sorted(generic[1]), *generic[2:])


def test_a_dispatch_is_walked_without_the_generic_loop(maka: Contract) -> None:
    """A run under the tool-boundary protocol: its marker (text with actions) is the generic loop's; each dispatch is
    walk_row's alone, and every call and result a generated step."""
    rows = [{**_HEAD, "id": "u", "author": "user", "role": "user", "content": {"kind": "text", "text": "go"},
             "actions": {"runtimeProtocol": {"toolBoundary": "t1_after_preflight_v1"}}}]
    for call_id in ("a", "b"):
        rows.append({**_HEAD, "id": f"c-{call_id}", "author": "agent", "role": "model", "content": {"kind": "function_call", "id": call_id, "name": "Bash", "args": {}}})
        rows.append({**_HEAD, "id": f"d-{call_id}", "author": "system", "role": "system", "refs": {"operationId": f"op-{call_id}", "toolCallId": call_id},
                     "actions": {"toolDispatch": {"operationId": f"op-{call_id}", "providerToolCallId": call_id, "toolName": "Bash", "canonicalArgsHash": _BASH}}})
        rows.append({**_HEAD, "id": f"r-{call_id}", "author": "tool", "role": "tool", "content": {"kind": "function_response", "id": call_id, "name": "Bash", "result": {}}})
    events = _events(maka, rows)
    generic_calls = []
    original = Walk._walk

    def counting(walk: Walk, events: Any, first_index: int) -> None:
        generic_calls.append([event.id for event in events])
        original(walk, events, first_index)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Walk, "_walk", counting)
        walked = _walked(maka.table, events, 1000, False, True)
    assert generic_calls == [["u"]]
    assert walked == _walked(_generic(maka), events, 1000, False, True)
    assert [(call_id, operation["state"]) for call_id, operation in walked[0]] == [("a", "succeeded"), ("b", "succeeded")] and walked[2] == []


@pytest.mark.parametrize("generated", [True, False], ids=["generated-loop", "generic-loop"])
def test_a_kept_result_lets_go_of_its_chunk(maka: Contract, generated: bool) -> None:
    """A result kept for a later dispatch's check (a dispatch after the result corrupts the operation, which the walk
    keeps) is held as JSON once its piece is walked, not as the event (its free JSON is a view into the chunk), and
    only the fields the checks read of it (`response.refs`)."""
    rows = [{**_HEAD, "id": "u", "author": "user", "role": "user", "content": {"kind": "text", "text": "go"}}]
    for call_id in ("a", "b"):
        rows.append({**_HEAD, "id": f"c-{call_id}", "author": "agent", "role": "model", "content": {"kind": "function_call", "id": call_id, "name": "Bash", "args": {}}})
        rows.append({**_HEAD, "id": f"r-{call_id}", "author": "tool", "role": "tool", "refs": {"operationId": "other", "toolCallId": call_id},
                     "content": {"kind": "function_response", "id": call_id, "name": "Bash", "result": {"out": "x" * 1000}}})
        rows.append({**_HEAD, "id": f"d-{call_id}", "author": "system", "role": "system", "refs": {"operationId": "op", "toolCallId": call_id},
                     "actions": {"toolDispatch": {"operationId": "op", "providerToolCallId": call_id, "toolName": "Bash", "canonicalArgsHash": _BASH}}})
    data = "\n".join(json.dumps(row) for row in rows).encode()
    events = maka.model.decoder.decode_lines(data)  # (one buffer: each event's free JSON a view into it)
    table = maka.table if generated else _generic(maka)
    walk = Walk(table, store=OperationStore())
    walk.feed(events[:4], 0)  # u, c-a, r-a, d-a: the operation is corrupt, kept, with its result
    assert walk.operations["a"].state == "corruption"
    assert msgspec.json.decode(walk.operations["a"].response_event) == {"refs": {"operationId": "other", "toolCallId": "a"}}  # what the checks read
    walk.feed(events[4:], 4)
    assert msgspec.json.decode(walk.operations["b"].response_event) == {"refs": {"operationId": "other", "toolCallId": "b"}}
    # the check at the result was judged (on the event, in its piece): bound to another operation, raised at each
    assert [(diagnostic.code, diagnostic.event_id) for diagnostic in walk.diagnostics] == [
        ("tool_ledger_corruption", "d-a"), ("tool_ledger_corruption", "r-a"), ("tool_ledger_corruption", "d-b"), ("tool_ledger_corruption", "r-b"),
    ]


@pytest.mark.parametrize(("bound_to", "at_result"), [("op", False), ("other", True)])
@pytest.mark.parametrize("generated", [True, False], ids=["generated-loop", "generic-loop"])
def test_a_result_let_go_of_is_judged_as_json_by_a_later_dispatch(maka: Contract, generated: bool, bound_to: str, at_result: bool) -> None:
    """The result's piece is walked (and let go of) before the dispatch comes: the check reads the JSON kept."""
    rows = [
        {**_HEAD, "id": "u", "author": "user", "role": "user", "content": {"kind": "text", "text": "go"}},
        {**_HEAD, "id": "c", "author": "agent", "role": "model", "content": {"kind": "function_call", "id": "a", "name": "Bash", "args": {}}},
        {**_HEAD, "id": "r", "author": "tool", "role": "tool", "refs": {"operationId": bound_to, "toolCallId": "a"},
         "content": {"kind": "function_response", "id": "a", "name": "Bash", "result": {}}},
        {**_HEAD, "id": "d", "author": "system", "role": "system", "refs": {"operationId": "op", "toolCallId": "a"},
         "actions": {"toolDispatch": {"operationId": "op", "providerToolCallId": "a", "toolName": "Bash", "canonicalArgsHash": _BASH}}},
    ]
    events = maka.model.decoder.decode_lines("\n".join(json.dumps(row) for row in rows).encode())
    walk = Walk(maka.table if generated else _generic(maka), store=OperationStore(), keep=frozenset({hash("a")}))  # (kept, not stored)
    walk.feed(events[:3], 0)
    assert walk.operations["a"].response_event.__class__ is msgspec.Raw
    walk.feed(events[3:], 3)
    assert [(d.code, d.event_id) for d in walk.diagnostics] == [("tool_ledger_corruption", "d")] + ([("tool_ledger_corruption", "r")] if at_result else [])


@pytest.mark.parametrize("generated", [True, False], ids=["generated-loop", "generic-loop"])
def test_a_result_holding_nothing_a_check_reads_is_not_kept(maka: Contract, generated: bool) -> None:
    """A result without `refs` (all the step's check reads of it) keeps no reference to its event (nor its chunk):
    the walk holds a constant empty object for it, which the check reads as it would read the row."""
    from resume_contract.core.walk_reads import NO_FIELDS_READ

    rows = [
        {**_HEAD, "id": "c", "author": "agent", "role": "model", "content": {"kind": "function_call", "id": "a", "name": "Bash", "args": {}}},
        {**_HEAD, "id": "r", "author": "tool", "role": "tool", "content": {"kind": "function_response", "id": "a", "name": "Bash", "result": {}}},
        {**_HEAD, "id": "d", "author": "system", "role": "system", "refs": {"operationId": "op", "toolCallId": "a"},
         "actions": {"toolDispatch": {"operationId": "op", "providerToolCallId": "a", "toolName": "Bash", "canonicalArgsHash": _BASH}}},
    ]
    events = _events(maka, rows)
    walk = Walk(maka.table if generated else _generic(maka))
    walk.feed(events[:2], 0)
    assert walk.operations["a"].response_event is NO_FIELDS_READ
    walk.feed(events[2:], 2)
    assert [(d.code, d.event_id) for d in walk.diagnostics] == [("tool_ledger_corruption", "d"), ("tool_ledger_corruption", "r")]
