"""The review held to a judge that is not the review (issue 53): tools/review_judge.py mutates the packaged contract
(maka's catalogue) and examples/other-runtime (the contract language), one edit each, and decides seeded ledgers
drawn from rows the runtimes really wrote under base and head with each contract's own decision, apart from the
review's explorer. `diff`'s class must be the judge's, and never below weakens-safety where a ledger moves toward
proceeding.

The slow test judges every third mutant of both contracts on fewer ledgers than the tool's default; by hand,
`.venv/bin/python tools/review_judge.py` judges them all (about 5 minutes on 2 cores).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import review_judge  # noqa: E402


@pytest.mark.slow
def test_every_third_mutant_is_classed_as_the_judge_classes_it(capsys: pytest.CaptureFixture[str]) -> None:
    code = review_judge.main(["--every", "3", "--ledgers", "800", "--json"])
    report = json.loads(capsys.readouterr().out)
    verdicts = report["verdicts"]
    wrong = [v for v in verdicts if v["review"] != "refused" and v["review"] != v["judge"]]
    assert wrong == [] and report["disagreements"] == 0 and report["weakenings_classed_below"] == 0 and code == 0, wrong
    judged = [v for v in verdicts if v["review"] != "refused"]
    # The sample is not empty or one-sided: both contracts, weakenings and other classes among them.
    assert {v["contract"] for v in judged} == {"packaged", "other-runtime"}, verdicts
    assert "weakens-safety" in {v["judge"] for v in judged} and len({v["judge"] for v in judged}) >= 2, verdicts


def test_a_mutant_the_review_misclasses_is_a_disagreement() -> None:
    # The judge's own verdict: a weakening the review calls neutral disagrees, and is counted below weakens-safety.
    misclassed = review_judge.Verdict("packaged", "m", "neutral", "weakens-safety", "a ledger", 1)
    refused = review_judge.Verdict("packaged", "r", "refused", "refused", "does not build", 0)
    agreed = review_judge.Verdict("packaged", "a", "tightens", "tightens", "a ledger", 1)
    assert (misclassed.agrees, refused.agrees, agreed.agrees) == (False, True, True)
