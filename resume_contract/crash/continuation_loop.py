"""The reference continuation executor, as a run loop with a failpoint hook at each crash boundary of
spec/lifecycle.yaml: it plans the source, re-validates, claims, commits the continuation-start event, runs a
scripted provider step, commits the terminal event and writes the terminal header, all through the real stores
(`ledger.continuation_exec`), and calls `failpoints.hit("<boundary id>")` once each step's writes returned.

    RESUME_FAILPOINTS=after_run_created=kill python resume_contract/crash/continuation_loop.py WS S R HOST.json IDS [MARKER]

IDS is `INVOCATION,RUN,TURN`, the continuation's fresh ids. It prints `completed <hooks passed>` and exits 0,
or `park <reasons>` (exit 1), or `rejected <code>` (exit 1), having written nothing. MARKER, when given, is
written by its `finally`: a SIGKILL never lets it run. The crash harness kills it at each boundary.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Absolute imports: the harness runs this file as a script, as it runs a project's own run loop.
from resume_contract.contract import active
from resume_contract.crash.failpoints import Failpoints
from resume_contract.errors import ContinuationRejected, FailpointConfigError
from resume_contract.ledger.continuation_exec import (
    ContinuationExecution,
    PreparedContinuation,
    now_ms,
    prepare_continuation,
)

RUN_TEXT = "Picking up from the committed boundary."
FINAL_TEXT = "Continued to the end."


def scripted_run(execution: ContinuationExecution) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The provider's answer to runtimeContext: one model text event, then the terminal one (wire form)."""
    identity = execution.identity()
    step = {**identity, "id": f"{identity['runId']}-model-text", "ts": now_ms(), "partial": False, "role": "model", "author": "agent", "content": {"kind": "text", "text": RUN_TEXT}}
    final = {
        **identity,
        "id": f"{identity['runId']}-terminal",
        "ts": now_ms(),
        "partial": False,
        "role": "model",
        "author": "agent",
        "status": "completed",
        "content": {"kind": "text", "text": FINAL_TEXT},
        "actions": {"endInvocation": True},
    }
    return [step], final


def execute(workspace: Path, prepared: PreparedContinuation, host: dict[str, object], failpoints: Failpoints) -> list[str]:
    """Execute the continuation to its end (unless a failpoint stops it); return the hooks passed, in order."""
    with ContinuationExecution(workspace, prepared, host) as execution:
        execution.revalidate()
        execution.claim()
        failpoints.hit("after_run_created")  # the claim (the new header) is written; no event
        execution.start()
        failpoints.hit("after_continuation_start_committed")  # the start event is committed; the provider is next
        run_events, final = scripted_run(execution)
        execution.run(run_events)
        execution.end(final)
        failpoints.hit("after_terminal_event_committed")  # the terminal event is committed; the header is not terminal
        execution.seal()
        failpoints.hit("after_terminal_header_committed")  # everything is committed
    return failpoints.passed


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (5, 6):
        print("usage: python continuation_loop.py WORKSPACE SESSION SOURCE_RUN HOST.json INVOCATION,RUN,TURN [MARKER]", file=sys.stderr)
        return 2
    workspace, session, source, host_file, ids_text = args[:5]
    marker = Path(args[5]) if len(args) == 6 else None
    try:
        try:
            failpoints = Failpoints()
        except FailpointConfigError as error:
            print(error, file=sys.stderr)
            return 2
        host = json.loads(Path(host_file).read_text(encoding="utf-8"))
        ids = dict(zip(("invocationId", "runId", "turnId"), ids_text.split(",")))
        prepared = prepare_continuation(workspace, session, source, host, ids, contract=active())
        if not isinstance(prepared, PreparedContinuation):
            print("park " + " ".join(prepared.rejection_reasons), flush=True)
            return 1
        try:
            passed = execute(Path(workspace), prepared, host, failpoints)
        except ContinuationRejected as error:
            print(f"rejected {error.code}", flush=True)
            return 1
        print("completed " + " ".join(passed), flush=True)
        return 0
    finally:
        if marker is not None:
            marker.write_text("cleanup ran\n")


if __name__ == "__main__":
    raise SystemExit(main())
