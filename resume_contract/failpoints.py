"""Named failpoint hooks, switched on from the environment in the style of gofail and fail-rs.

    RESUME_FAILPOINTS="P3=kill"            # die by SIGKILL when the run reaches P3
    RESUME_FAILPOINTS="P5=pause,P9=kill"   # print "paused at P5" and wait to be killed; ...

Hook names are the failpoint ids of the spec's catalog (`resume_contract_generated.catalog`); naming an id
the catalog does not have, or an unknown action, is an error at start-up, not a silently dead hook.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Mapping

from resume_contract_generated.catalog import FAILPOINTS_BY_ID

ENVIRONMENT_VARIABLE = "RESUME_FAILPOINTS"
ACTIONS = ("kill", "pause", "off")


class FailpointConfigError(ValueError):
    """RESUME_FAILPOINTS names an unknown failpoint or action."""


def parse(text: str) -> dict[str, str]:
    """`"P3=kill,P5=pause"` -> {"P3": "kill", "P5": "pause"}; raises FailpointConfigError."""
    active: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, action = item.partition("=")
        if name not in FAILPOINTS_BY_ID:
            raise FailpointConfigError(f"{ENVIRONMENT_VARIABLE}: unknown failpoint {name!r}; the failpoints are {', '.join(FAILPOINTS_BY_ID)}")
        if action not in ACTIONS:
            raise FailpointConfigError(f"{ENVIRONMENT_VARIABLE}: unknown action {action!r} for {name}; the actions are {', '.join(ACTIONS)}")
        active[name] = action
    return active


class Failpoints:
    """The hooks of one process: `hit(name)` does what the environment asked for at that boundary."""

    def __init__(self, environment: Mapping[str, str] | None = None) -> None:
        self.active = parse((os.environ if environment is None else environment).get(ENVIRONMENT_VARIABLE, ""))
        self.passed: list[str] = []

    def hit(self, name: str) -> None:
        if name not in FAILPOINTS_BY_ID:
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
    if sys.platform == "win32":  # pragma: no cover - no SIGKILL there; TerminateProcess is the equivalent
        os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGKILL)
