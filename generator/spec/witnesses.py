"""Well-formed action events for the explorers: an action probe that its own `when` takes, that no lane check
(`ledger_anomalies.rows` with `skip`) refuses, and that agrees with its operation's call (`against_call`), and one
that disagrees: without them the explorers never reach what a valid dispatch or recovery fact does to an
operation (generator/expr/witness.py fills the rows in; each is then checked here with the compiled tests).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from resume_contract.core.letters import TELLING_ARGS

from ..expr import Environment
from ..expr import nodes as n
from ..expr.compile import compile_node
from ..expr.parse import parse
from ..expr.probes import CALL_ID, _path, _put
from ..expr.witness import witness
from .compiled import function_of
from .model import Projector
from .projector_expressions import CALL, ROW_PARAMETERS

# The explorers' first call (resume_contract.core.explore: CALL_IDS[0], TOOLS[0], its arguments' plain value):
# the call an action probe's operation holds. tests/test_probes.py holds the two equal.
EXPLORED_CALL = {"id": CALL_ID, "name": "write", "args": {}}
# Its second call, where a contract checks actions against their call (resume_contract.core.letters.TELLING_ARGS):
# arguments every canonical encoding writes otherwise.
TELLING_CALL = {**EXPLORED_CALL, "args": TELLING_ARGS}


def well_formed_probes(projector: Projector) -> list[tuple[str, dict[str, Any], bool]]:
    """(name, the row's fields, False) of each action event's well-formed probe, and, for one checked against its
    call, of the probe agreeing with the explorers' call (the other one then disagrees) and of one failing each
    check alone."""
    lane_checks = [check for check in projector.row_checks if check.skip]
    probes: list[tuple[str, dict[str, Any], bool]] = []
    for kind, when, key in projector.action_events:
        key_path = _path(parse(key[0]), {}, roots=("row",))
        if key_path is None:
            continue
        base: dict[str, Any] = {}
        _put(base, key_path, CALL_ID)
        rows = [witness(copy.deepcopy(base), [when[0]], [check.when[0] for check in lane_checks], _evaluate(projector))]
        if kind.against_call:
            checks = [check.when[0] for check in kind.against_call]
            rows.append(witness(copy.deepcopy(rows[0]), [], checks, _evaluate(projector)))
            # Each check alone failing the call (the others agreeing): a change of that one check shows only there.
            rows += [witness(copy.deepcopy(rows[1]), [check], [other for other in checks if other != check], _evaluate(projector)) for check in checks]
            # And one agreeing with the second call, whose arguments tell the canonical encodings apart.
            rows.append(witness(copy.deepcopy(rows[0]), [], checks, _evaluate(projector, TELLING_CALL)))
        for fields in rows:
            name = f"{kind.name}({CALL_ID}) {json.dumps(fields, separators=(',', ':'), sort_keys=True)}"
            if all(name != probe[0] for probe in probes) and _takes(projector, kind, when[1], key[1], lane_checks, fields):
                probes.append((name, fields, False))
    return probes


def _evaluate(projector: Projector, call: dict[str, Any] = EXPLORED_CALL) -> Any:
    environment = Environment({"call": CALL}, projector.semantics)

    def evaluate(node: n.Node) -> Any:
        return function_of(compile_node(node, environment).source, ("call",))(call)

    return evaluate


def _takes(projector: Projector, kind: Any, when: str, key: str, lane_checks: list[Any], fields: dict[str, Any]) -> bool:
    """Whether the row is the action event, names call `a`, and no lane check refuses it (read as a run's first row
    too, with no facts: a test reading either is not one a probe can be sure of)."""
    try:
        if not function_of(when, ROW_PARAMETERS)(fields, fields, {}) or function_of(key, ROW_PARAMETERS)(fields, fields, {}) != CALL_ID:
            return False
        return not any(function_of(check.when[1], ROW_PARAMETERS)(fields, fields, {}) for check in lane_checks)
    except Exception:  # noqa: BLE001 - a test this row cannot be judged by (a fact it reads): no probe
        return False

