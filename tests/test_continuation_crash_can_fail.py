"""The continuation crash cases can fail: an executor that commits the continuation-start event before its
claim (bypassing the lifecycle) must fail the case of the boundary that sees it, after_run_created, by name,
and only that one; the reference executor passes them all. Expectations come from spec/lifecycle.yaml through
the generated catalog; nothing here is computed by the harness under test."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import REPO

from resume_contract.crash import run_in_parallel
from resume_contract.crash.continuation_harness import (
    PACKAGED_CONTINUATION_LOOP,
    continuation_mismatches,
    expected_from_catalog,
    run_continuation_case,
)

BOUNDARIES = [boundary["id"] for boundary in yaml.safe_load((REPO / "spec" / "lifecycle.yaml").read_text())["boundaries"]]

_START_FIRST = '''
from resume_contract.core.continuation_lifecycle import claim_header, start_event
from resume_contract.ledger.continuation_exec import now_iso


class StartFirst(ContinuationExecution):
    """Broken on purpose: commits the continuation-start event before the claim."""

    def claim(self):
        self._append(start_event(claim_header(self.prepared.continuation, self.prepared.source_header, now_iso()), now_ms()))
        super().claim()

    def start(self):
        self.lifecycle.send("start")

'''


def _broken_loop(tmp_path: Path) -> Path:
    source = PACKAGED_CONTINUATION_LOOP.read_text(encoding="utf-8")
    anchor = '\nRUN_TEXT = '
    use = "with ContinuationExecution(workspace, prepared, host) as execution:"
    assert anchor in source and use in source
    broken = source.replace(anchor, _START_FIRST + anchor, 1).replace(use, use.replace("ContinuationExecution", "StartFirst"))
    path = tmp_path / "start_first_loop.py"
    path.write_text(broken, encoding="utf-8")
    return path


def _failing(run_loop: Path | None) -> dict[str, list[str]]:
    jobs = [lambda boundary=boundary: run_continuation_case(boundary, run_loop=run_loop) for boundary in BOUNDARIES]
    observed = run_in_parallel(jobs)
    judged = {boundary: continuation_mismatches(o, expected_from_catalog(boundary)) for boundary, o in zip(BOUNDARIES, observed)}
    return {boundary: problems for boundary, problems in judged.items() if problems}


@pytest.mark.slow
def test_an_executor_that_starts_before_its_claim_fails_the_after_run_created_case(tmp_path: Path) -> None:
    assert _failing(None) == {}
    failing = _failing(_broken_loop(tmp_path))
    assert list(failing) == ["after_run_created"]
    assert any("expected state claimed" in problem and "got started" in problem for problem in failing["after_run_created"])
