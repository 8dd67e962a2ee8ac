"""spec/continuation.yaml's `planner`: how the planner form fills the decision's inputs, checked against them, and
its situations built (run with the others, by `continuation_situations`)."""

from __future__ import annotations

from typing import Any

from ..expr import Environment
from ..expr.types import JSON, list_of
from .compiled import compiled
from .continuation_expressions import event_type, input_type
from .continuation_model import PlannerSituation, canonical
from .continuation_situations import situation_events


def check_planner(builder: Any, planner: dict[str, Any]) -> tuple[PlannerSituation, ...]:
    """Every input filled exactly once (from HOST.json or as `inputs` says); the situations, built. `builder` is
    the `continuation_check.ContinuationBuilder` at work (its inputs, file, wire format, `error` and `_path`)."""
    declared = builder.inputs
    host, inputs = planner["host"], planner["inputs"]
    for index, name in enumerate(host):
        if name not in declared:
            builder.error(("planner", "host", index), f"undeclared input '{name}'; declared are [{', '.join(declared)}]")
    for name, source in inputs.items():
        path: tuple[str | int, ...] = ("planner", "inputs", name)
        if name not in declared:
            builder.error(path, f"undeclared input '{name}'; declared are [{', '.join(declared)}]", key=True)
        elif name in host:
            builder.error(path, f"input '{name}' is taken from HOST.json and from here: say one", key=True)
        elif isinstance(source, str):
            builder._path(path, source, binds=frozenset({"header"}))
        elif "fresh_ids" in source and (declared[name].type != "object" or any(f.type != "string" for f in declared[name].fields)):
            builder.error(path, f"`fresh_ids` fills an object input of string ids; '{name}' is a {declared[name].type}", key=True)
        elif "expression" in source:
            builder.input_expressions.append(_input_expression(builder, path, name, declared[name]))
    for name, decl in declared.items():
        if name not in host and name not in inputs and not decl.optional:
            builder.error(("planner", "inputs"), f"the planner fills no value for the required input '{name}': take it from HOST.json or say how")
    if "candidate" in planner:
        _check_candidate(builder, planner["candidate"])
    for fact in ("header", "ledger"):  # nothing can be decided without them: a gate must park first
        if not any(gate["when"] == [{"absent": f"planner.{fact}"}] for gate in planner["gates"]):
            builder.error(
                ("planner", "gates"),
                f"no gate parks a run whose {fact} cannot be read: add one with `when: [{{absent: planner.{fact}}}]`",
            )
    return _situations(builder, planner)


def _situations(builder: Any, planner: dict[str, Any]) -> tuple[PlannerSituation, ...]:
    situations = []
    base = planner["situations"]["base"]
    for name, item in planner["situations"]["cases"].items():
        path = ("planner", "situations", "cases", name)
        events, problems = situation_events(builder.file.data["situations"]["base"]["event"], item["events"], builder.wire)
        for index, problem in problems:
            builder.error(path + ("events", index), f"planner situation '{name}': {problem}")
        header = item.get("header", {})
        if item.get("latest") and "candidate" not in planner:
            builder.error(path + ("latest",), f"planner situation '{name}' is decided as `--latest`, but the planner has no `candidate`", key=True)
        situations.append(
            PlannerSituation(
                name=name,
                summary=item["summary"],
                header_json=canonical(None if header is None else {**base["header"], **header}),
                events_json=tuple(events),
                other_runs_json=canonical(item.get("other_runs", {})),
                other_events_json=canonical(_other_events(builder, path, item)),
                host_json=canonical({**base["host"], **item.get("host", {})}),
                ids_json=canonical({**base["ids"], **item.get("ids", {})}),
                expect_json=canonical(item["expect"]),
                latest=bool(item.get("latest", False)),
                mark=builder.file.key_mark(path),
                expect_mark=builder.file.key_mark(path + ("expect",)),
            )
        )
    return tuple(situations)


def _input_expression(builder: Any, path: tuple[str | int, ...], name: str, decl: Any) -> tuple[str, str, str]:
    """(input, text, compiled source) of an input the planner fills by an expression over `header` (JSON) and
    `events` (the source's committed events); its type must be the input's (a scalar input: boolean, string, integer)."""
    env = Environment({"header": JSON, "events": list_of(event_type(builder.wire))}, builder.semantics)
    if decl.type not in ("boolean", "string", "integer"):
        builder.error(path, f"an expression fills a boolean, string or integer input; '{name}' is a {decl.type}", key=True)
        return (name, "", "None")
    wanted = input_type(decl).kind
    value = compiled(builder.file, path + ("expression",), env, builder.errors, condition=wanted == "bool")
    if value is None:
        return (name, "", "None")
    if value[2].kind not in (wanted, "json"):
        builder.error(path + ("expression",), f"input '{name}' is a {decl.type}, and this expression gives {value[2]}")
    return (name, value[0], value[1])


def _other_events(builder: Any, path: tuple[str | int, ...], item: dict[str, Any]) -> dict[str, list[str]]:
    """A situation's other runs' events as rows, each in its run's identity (its runId, and the invocationId and
    turnId its header in `other_runs` gives); each run must be one of `other_runs`."""
    base = builder.file.data["situations"]["base"]["event"]
    rows: dict[str, list[str]] = {}
    for run, events in item.get("other_events", {}).items():
        header = item.get("other_runs", {}).get(run)
        if not isinstance(header, dict):
            builder.error(path + ("other_events", run), f"run '{run}' has events but no header in `other_runs`", key=True)
            continue
        identity = {**base, "runId": run, **{key: header[key] for key in ("invocationId", "turnId") if isinstance(header.get(key), str)}}
        rows[run], problems = situation_events(identity, events, builder.wire, ids=f"{run}-event")
        for index, problem in problems:
            builder.error(path + ("other_events", run, index), f"run '{run}': {problem}")
    return rows


def _check_candidate(builder: Any, candidate: dict[str, Any]) -> None:
    """`candidate`: its tests read `candidate.FIELD` (a run's header), and its `none` is a declared diagnostic."""
    path = ("planner", "candidate")
    for group, tests in enumerate(candidate["eligible"]):
        for number, test in enumerate(tests):
            builder._test(path + ("eligible", group, number), test, frozenset({"candidate"}), set())
    if candidate["none"] not in builder.diagnostic_codes:
        declared = ", ".join(builder.diagnostic_codes)
        builder.error(path + ("none",), f"undeclared diagnostic '{candidate['none']}'; declared are [{declared}]")
    builder.planner_diagnostics.append(candidate["none"])
