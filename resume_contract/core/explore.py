"""Every small ledger: all event sequences up to a length, over an alphabet that reaches every spec rule.

The alphabet has two tool call ids, calls, successful and failed responses, responses naming another tool,
a partial event, plain text and a terminal event: enough to reach every entry of the transition table that
a ledger can reach. Sequences are produced shortest first, then in alphabet
order, so the first sequence found with a property is a shortest one.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .wire import WireModel

SESSION_ID = "explore-session"
RUN_ID = "explore-run"

Wire = dict[str, Any]


@dataclass(frozen=True)
class Symbol:
    """One letter of the alphabet: a readable name and how to write its row (as JSON values) at a position."""

    name: str
    wire: Callable[[str], Wire]


def _event(event_id: str, author: str, role: str, content: Wire, *, partial: bool = False, status: str | None = None) -> Wire:
    wire: Wire = {
        "id": event_id,
        "ts": 0,
        "partial": partial,
        "author": author,
        "role": role,
        "sessionId": SESSION_ID,
        "invocationId": "explore-invocation",
        "runId": RUN_ID,
        "turnId": "explore-turn",
        "content": content,
    }
    if status is not None:
        wire["status"] = status
    return wire


def _call(call_id: str, tool: str, partial: bool = False) -> Callable[[str], Wire]:
    content = {"kind": "function_call", "id": call_id, "name": tool, "args": {"path": "x"}}
    return lambda event_id: _event(event_id, "agent", "model", content, partial=partial)


def _response(call_id: str, tool: str, is_error: bool | None) -> Callable[[str], Wire]:
    content: Wire = {"kind": "function_response", "id": call_id, "name": tool, "result": {"ok": not is_error}}
    if is_error is not None:
        content["isError"] = is_error
    return lambda event_id: _event(event_id, "tool", "tool", content)


ALPHABET: tuple[Symbol, ...] = (
    Symbol("text", lambda event_id: _event(event_id, "user", "user", {"kind": "text", "text": "go on"})),
    Symbol("call(a)", _call("a", "write")),
    Symbol("call(b)", _call("b", "write")),
    Symbol("ok(a)", _response("a", "write", None)),
    Symbol("error(a)", _response("a", "write", True)),
    Symbol("ok(a, other tool)", _response("a", "delete", None)),
    Symbol("error(a, other tool)", _response("a", "delete", True)),
    Symbol("ok(b)", _response("b", "write", None)),
    Symbol("partial call(a)", _call("a", "write", partial=True)),
    Symbol(
        "terminal",
        lambda event_id: _event(event_id, "agent", "model", {"kind": "text", "text": "done"}, status="completed"),
    ),
)


def build(word: tuple[int, ...], model: WireModel) -> list[Any]:
    """The ledger spelled by `word` (indexes into ALPHABET) as events of `model`; ids are e1, e2, ... by position."""
    return [model.event_from_wire(value) for value in wires(word)]


def wires(word: tuple[int, ...]) -> list[Wire]:
    """The same ledger as plain JSON values."""
    return [ALPHABET[letter].wire(f"e{position}") for position, letter in enumerate(word, 1)]


def spell(word: tuple[int, ...]) -> str:
    return ", ".join(ALPHABET[letter].name for letter in word) or "(empty ledger)"


def words(max_length: int) -> Iterator[tuple[int, ...]]:
    """Every word of length 0..max_length, shortest first."""
    for length in range(max_length + 1):
        yield from itertools.product(range(len(ALPHABET)), repeat=length)


def count_words(max_length: int) -> int:
    return sum(len(ALPHABET) ** length for length in range(max_length + 1))
