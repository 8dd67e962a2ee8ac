"""A small reference run loop with one failpoint hook at each stable boundary P0-P11.

It plays the canonical script: a fake provider step proposes the canonical function_call, a fake tool
performs a visible side effect (it writes `side-effects/<path>` in the workspace) and returns the
canonical response for the outcome, and every RuntimeEvent goes through the real RuntimeEventStore. The
crash harness kills it at each hook and checks that the ledger left behind is exactly the catalog's
committed prefix for that failpoint.

    RESUME_FAILPOINTS=P3=kill python resume_contract/crash/runloop.py WORKSPACE ok

It is also what `resume-contract init` gives a new project as its run loop to start from. A run loop, in any
language, must: take WORKSPACE and an OUTCOME (one of the catalog's outcomes) as its arguments; append every
RuntimeEvent of the contract's canonical script through a store that commits as this project's does; call the
hook of each failpoint where its boundary is crossed, doing what RESUME_FAILPOINTS asks (`kill`: SIGKILL itself;
`pause`: print "paused at <id>" and wait to be killed); and otherwise run to the end.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Absolute imports: the harness runs this file as a script, as it runs a project's own run loop.
from resume_contract import RuntimeEventStore
from resume_contract.contract import active
from resume_contract.crash.failpoints import Failpoints
from resume_contract.errors import FailpointConfigError

RuntimeEvent = Any  # an event of the bound contract's decoding model


class FakeProvider:
    """Answers the canonical script: first the tool call, then, once the result is delivered, the final text."""

    def __init__(self, script: list[RuntimeEvent]) -> None:
        self._call, self._final = script[1], script[3]
        self.delivered: list[RuntimeEvent] = []

    def step(self) -> RuntimeEvent:
        return self._final if self.delivered else self._call

    def deliver(self, result: RuntimeEvent) -> None:
        self.delivered.append(result)


class FakeTool:
    """Writes the call's `text` to `side-effects/<path>`, then answers with the scripted response."""

    def __init__(self, workspace: Path, response: RuntimeEvent, failpoints: Failpoints) -> None:
        self.workspace = workspace
        self.response = response
        self.failpoints = failpoints

    def run(self, call: RuntimeEvent) -> RuntimeEvent:
        assert getattr(call.content, "KIND", None) == "function_call"
        args = json.loads(bytes(call.content.args))
        self.failpoints.hit("P3")  # the implementation is running; its side effect has not happened yet
        target = self.workspace / "side-effects" / Path(args["path"]).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(args["text"], encoding="utf-8")
        self.failpoints.hit("P4")  # the side effect happened; no outcome is committed
        return self.response


def run(workspace: Path, outcome: str, failpoints: Failpoints) -> list[str]:
    """Run the canonical script to the end (unless a failpoint stops it); return the hooks passed, in order."""
    contract = active()
    script = [contract.model.decode_row(row.encode()) for row in contract.catalog.CANONICAL_LEDGER_ROWS[outcome]]
    user_text, _, response, _ = script
    provider = FakeProvider(script)
    tool = FakeTool(workspace, response, failpoints)
    with RuntimeEventStore(workspace) as store:
        run_dir = store.path(user_text.session_id, user_text.run_id).parent
        store.append(user_text)
        failpoints.hit("P0")  # before tool preparation (T1)
        call = provider.step()
        store.append(call)
        failpoints.hit("P1")  # the call is committed; Phase 0 has no prepared journal to commit
        failpoints.hit("P2")  # where the prepared journal would be committed; the tool has not started
        result = tool.run(call)
        store.append(result)
        failpoints.hit("P5")  # the response is committed; no outcome journal
        failpoints.hit("P6")  # the outcome is committed; the result is not delivered to the model
        provider.deliver(result)
        failpoints.hit("P7")  # the result is delivered; the next provider step has not started
        final = provider.step()
        failpoints.hit("P8")  # the terminal RuntimeEvent is about to be committed
        store.append(final)
        failpoints.hit("P9")  # the terminal event is committed; the run header is not
        _write_json(run_dir / "run-header.json", {"runId": final.run_id, "terminalEventId": final.id})
        failpoints.hit("P10")  # the recovery decision is about to be committed
        _write_json(run_dir / "recovery-decision.json", {"runId": final.run_id, "decision": "none"})
        failpoints.hit("P11")  # the continuation run is about to be created
        (run_dir.parent / f"{final.run_id}-continuation").mkdir(exist_ok=True)
    return failpoints.passed


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None, play: Callable[[Path, str, Failpoints], list[str]] = run, name: str = "runloop.py") -> int:
    """The command line of a run loop: WORKSPACE OUTCOME, the failpoints from RESUME_FAILPOINTS, `play` the script."""
    args = sys.argv[1:] if argv is None else argv
    outcomes = active().catalog.CANONICAL_LEDGER_ROWS
    if len(args) != 2 or args[1] not in outcomes:
        print(f"usage: python {name} WORKSPACE {{{'|'.join(outcomes)}}}", file=sys.stderr)
        return 2
    try:
        failpoints = Failpoints()
    except FailpointConfigError as error:
        print(error, file=sys.stderr)
        return 2
    passed = play(Path(args[0]), args[1], failpoints)
    print("completed " + " ".join(passed), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
