"""spec/continuation.yaml `planner.lineage`: facts about other runs, checked and compiled.

A run's header names the run it continued (its `edge` field, an object); the planner walks those edges from the
source to its root (`resume_contract.core.continuation_lineage`), reading each continued run's header and its first
`high_water` committed events, and parks with the first failure: a run met twice (`cycle`), more runs than `depth`
(`too_deep`), a continued run that cannot be read or holds fewer events than its edge's high-water (`missing`), or
the first `each_edge` check that fires. Checked here: each diagnostic is declared, `after` names a gate, each check
compiles (names: `edge`, `child`, `ancestor`; docs/expressions.md).
"""

from __future__ import annotations

from typing import Any

from ..expr import Environment
from ..expr.types import JSON, STRING, list_of, object_type
from .compiled import compiled
from .continuation_expressions import event_type
from .continuation_model import LINEAGE_FAILURES as FAILURES
from .continuation_model import LineageDecl, canonical

# What an `each_edge` check's compiled function takes, in this order; an `each_run` check's.
EDGE_PARAMETERS = ("edge", "child", "ancestor")
RUN_PARAMETERS = ("edge", "run")


def check_lineage(builder: Any, planner: dict[str, Any]) -> LineageDecl | None:
    """The planner's lineage, checked (errors added to `builder`, the ContinuationBuilder at work); None without one."""
    lineage = planner.get("lineage")
    if lineage is None:
        return None
    path: tuple[str | int, ...] = ("planner", "lineage")
    gates = [gate["name"] for gate in planner["gates"]]
    if lineage["after"] not in gates:
        builder.error(path + ("after",), f"'{lineage['after']}' names no gate; the lineage is walked after one of [{', '.join(gates)}]")
    declared = builder.diagnostic_codes
    for name in FAILURES:
        if lineage[name] not in declared:
            builder.error(path + (name,), f"undeclared diagnostic '{lineage[name]}'; declared are [{', '.join(declared)}]")
    run = object_type("run", {"runId": (STRING, False), "header": (JSON, False), "events": (list_of(event_type(builder.wire)), False)})
    edge_checks = _checks(builder, path + ("each_edge",), lineage.get("each_edge", ()), Environment({"edge": JSON, "child": run, "ancestor": run}, builder.semantics))
    run_checks = _checks(builder, path + ("each_run",), lineage.get("each_run", ()), Environment({"edge": JSON, "run": run}, builder.semantics))
    definition = {key: value for key, value in lineage.items() if key not in ("each_edge", "each_run")}
    return LineageDecl(canonical(definition), edge_checks, run_checks)


def _checks(builder: Any, path: tuple[str | int, ...], items: Any, env: Environment) -> tuple[tuple[str, str, str, str], ...]:
    """Each check of a list (`each_edge`, `each_run`): (name, diagnostic, text, compiled source)."""
    checks = []
    for index, check in enumerate(items):
        where = path + (index,)
        if check["diagnostic"] not in builder.diagnostic_codes:
            builder.error(where + ("diagnostic",), f"undeclared diagnostic '{check['diagnostic']}'; declared are [{', '.join(builder.diagnostic_codes)}]")
        test = compiled(builder.file, where + ("when",), env, builder.errors, condition=True)
        if test is not None:
            checks.append((check["name"], check["diagnostic"], test[0], test[1]))
    names = [check["name"] for check in items]
    for name in sorted({name for name in names if names.count(name) > 1}):
        builder.error(path, f"duplicate check name '{name}'")
    return tuple(checks)
