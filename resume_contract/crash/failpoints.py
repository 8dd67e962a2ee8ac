"""Named failpoint hooks, switched on from the environment in the style of gofail and fail-rs.

    RESUME_FAILPOINTS="P3=kill"            # die by SIGKILL when the run reaches P3
    RESUME_FAILPOINTS="P5=pause,P9=kill"   # print "paused at P5" and wait to be killed; ...

Hook names are the failpoint ids of the contract's catalog (`resume_contract_generated.catalog`) and the crash
boundaries of a continuation (`continuation_boundaries`, spec/lifecycle.yaml), e.g.
`RESUME_FAILPOINTS=after_run_created=kill`; naming an id neither has, or an unknown action, is an error at
start-up, not a silently dead hook.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Mapping

from ..contract import Contract, active
from ..errors import FailpointConfigError

ENVIRONMENT_VARIABLE = "RESUME_FAILPOINTS"
ACTIONS = ("kill", "pause", "off")


def known_failpoints(contract: Contract) -> dict[str, object]:
    """Every hook name of `contract`: its Phase 0 failpoints, its SQLite store's, then its continuation's crash boundaries."""
    boundaries = contract.continuation_boundaries
    sqlite = getattr(contract.catalog, "SQLITE_FAILPOINTS_BY_ID", {})  # (a catalog generated before the SQLite store has none)
    return {**contract.catalog.FAILPOINTS_BY_ID, **sqlite, **(boundaries.BOUNDARIES_BY_ID if boundaries is not None else {})}


def parse(text: str, known: Mapping[str, object] | None = None) -> dict[str, str]:
    """`"P3=kill,P5=pause"` -> {"P3": "kill", "P5": "pause"}; raises FailpointConfigError. `known`: the
    failpoints by id (default: the bound contract's catalog)."""
    failpoints = known_failpoints(active()) if known is None else known
    chosen: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, action = item.partition("=")
        if name not in failpoints:
            raise FailpointConfigError(f"{ENVIRONMENT_VARIABLE}: unknown failpoint {name!r}; the failpoints are {', '.join(failpoints)}")
        if action not in ACTIONS:
            raise FailpointConfigError(f"{ENVIRONMENT_VARIABLE}: unknown action {action!r} for {name}; the actions are {', '.join(ACTIONS)}")
        chosen[name] = action
    return chosen


class Failpoints:
    """The hooks of one process: `hit(name)` does what the environment asked for at that boundary."""

    def __init__(self, environment: Mapping[str, str] | None = None, contract: Contract | None = None) -> None:
        self.known = known_failpoints(contract or active())
        self.active = parse((os.environ if environment is None else environment).get(ENVIRONMENT_VARIABLE, ""), self.known)
        self.passed: list[str] = []

    def hit(self, name: str) -> None:
        if name not in self.known:
            raise FailpointConfigError(f"hook {name!r} is not a failpoint of the spec's catalog")
        self.passed.append(name)
        action = self.active.get(name, "off")
        if action == "kill":
            sys.stdout.flush()
            _kill_self()
        elif action == "pause":
            print(f"paused at {name}", flush=True)
            while True:
                time.sleep(3600)


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
