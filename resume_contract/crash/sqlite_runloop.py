"""The reference run loop over the SQLite store: the canonical script written to `WS/runtime.sqlite` with the
tool-boundary protocol's transactions, with a failpoint hook inside and after each (spec/failpoints.yaml
`sqlite`).

    RESUME_FAILPOINTS=inside_t1=kill python resume_contract/crash/sqlite_runloop.py WORKSPACE ok

The user text is appended on the generic lane; T1 commits the function_call (with its operation and prepared
journal rows), then the fake tool performs its side effect (`side-effects/<path>`); T2 commits the
function_response; the terminal event is appended on the generic lane. `inside_t1` and `inside_t2` are hit inside
their transaction, after its writes and before its COMMIT: a kill there must leave the state before it.
"""

from __future__ import annotations

import json
from pathlib import Path

# Absolute imports: the harness runs this file as a script, as it runs a project's own run loop.
from resume_contract.contract import active
from resume_contract.crash import runloop
from resume_contract.crash.failpoints import Failpoints
from resume_contract.ledger.sqlite_writer import SqliteRuntimeEventStore


def run(workspace: Path, outcome: str, failpoints: Failpoints) -> list[str]:
    """Run the canonical script to the end (unless a failpoint stops it); return the hooks passed, in order."""
    contract = active()
    user_text, call, response, final = (contract.model.decode_row(row.encode()) for row in contract.catalog.CANONICAL_LEDGER_ROWS[outcome])
    with SqliteRuntimeEventStore(workspace, contract=contract) as store:
        store.append(user_text)
        store.commit_tool_prepared(call, inside=lambda: failpoints.hit("inside_t1"))
        failpoints.hit("after_t1")  # the call is committed; the tool has not started
        args = json.loads(bytes(call.content.args))
        target = workspace / "side-effects" / Path(args["path"]).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(args["text"], encoding="utf-8")
        store.commit_tool_outcome(response, inside=lambda: failpoints.hit("inside_t2"))
        failpoints.hit("after_t2")  # the response is committed
        store.append(final)
    return failpoints.passed


def main(argv: list[str] | None = None) -> int:
    return runloop.main(argv, run, "sqlite_runloop.py")


if __name__ == "__main__":
    raise SystemExit(main())
