"""A continuation check's `when` or `skip_if` written as an expression (docs/expressions.md), type-checked and
compiled here; `function_of` makes the compiled source a function for the situations the generator runs before it
writes code (the generated module holds the same source, as a `def`).

The names an expression of a check may read, each typed from what the spec declares:
`input` (the declared inputs), `source` (the first event, null for an empty ledger), `events` (the committed
prefix), `replay` (the events of the Phase 0 replay, in order), `fact` (the ledger facts), `phase0` (the Phase 0
plan's disposition, rejectionReasons, requiresVerification, sourceRuntimeEventHighWater) and `raised` (the
reasons raised so far, Phase 0's first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from resume_contract.core import expressions as runtime

from ..errors import SpecError
from ..expr import Environment, compile_at
from ..expr.types import BOOL, INT, JSON, STRING, Type, list_of, object_type
from .continuation_model import FactDecl, InputDecl
from .loader import LoadedFile, SpecPath
from .model import WireFormat

# The parameters of every compiled check, in this order: what the interpreter hands it.
PARAMETERS = ("input", "source", "events", "replay", "fact", "phase0", "raised")

_INPUT_TYPES = {"boolean": BOOL, "string": STRING, "integer": INT, "string_list": list_of(STRING)}


def _input_type(decl: InputDecl) -> Type:
    if decl.type == "object":
        return object_type(f"input.{decl.name}", {field.name: (_input_type(field), field.optional) for field in decl.fields})
    return _INPUT_TYPES[decl.type]


def environment(inputs: Iterable[InputDecl], facts: Iterable[FactDecl], wire: WireFormat, semantics: str) -> Environment:
    event = object_type("event", {field.name: (JSON, True) for field in wire.fields})
    fact_types: dict[str, tuple[Type, bool]] = {}
    for fact in facts:
        if fact.kind == "lifecycle":
            item = object_type(f"fact.{fact.name}[]", {"eventId": (STRING, False), "key": (STRING.or_null(), False)})
            fact_types[fact.name] = (list_of(item), False)
        elif fact.kind == "operation_field":
            fact_types[fact.name] = (list_of(JSON), False)
        else:  # an event, or null
            fact_types[fact.name] = (event.or_null(), False)
    phase0 = object_type(
        "phase0",
        {"disposition": (STRING, False), "rejectionReasons": (list_of(STRING), False), "requiresVerification": (BOOL, False), "sourceRuntimeEventHighWater": (INT, False)},
    )
    names = {
        "input": object_type("input", {decl.name: (_input_type(decl), decl.optional) for decl in inputs}),
        "source": event.or_null(),
        "events": list_of(event),
        "replay": list_of(event),
        "fact": object_type("fact", fact_types),
        "phase0": phase0,
        "raised": list_of(STRING),
    }
    return Environment(names, semantics)


def compiled_check(
    file: LoadedFile,
    path: SpecPath,
    inputs: Iterable[InputDecl],
    facts: Iterable[FactDecl],
    wire: WireFormat,
    gates: bool,
    errors: list[SpecError],
) -> tuple[str, str] | None:
    """A check's `when` or `skip_if` written as an expression: (its text, its compiled Python); None when it is
    wrong, with the error added to `errors`."""
    if gates:
        errors.append(SpecError(file.mark(path), "a planner gate's tests are a list of tests (an expression cannot read `planner.NAME` yet)"))
        return None
    text = file.data
    for step in path:
        text = text[step]
    env = environment(inputs, facts, wire, file.data.get("semantics", "strict"))
    compiled = compile_at(text, env, file.origin(path), condition=True)
    if isinstance(compiled, SpecError):
        errors.append(compiled)
        return None
    return text, compiled.source


def function_of(source: str) -> Callable[..., bool]:
    """The compiled source as a function of PARAMETERS. The source is the expression compiler's own output (it
    calls nothing but the `_x` helpers and `any`/`all`), never a spec's text."""
    namespace: dict[str, Any] = {"_x": runtime, "__builtins__": {"any": any, "all": all}}
    exec(f"def check({', '.join(PARAMETERS)}):\n    return {source}\n", namespace)  # the compiler's output, never spec text
    return namespace["check"]
