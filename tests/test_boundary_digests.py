"""maka's boundary digests, written in the expression language and held to the digests maka itself recorded (issue 56).

Every continuation ../shared/conformance-sqlite-phase1 records (tests/phase1_archive.py) carries a boundary cursor:
one segment per run of the lineage, each with its prefix digest (sha256 over a tag, the run's identity and, per
event, its sequence number and canonical JSON, each framed), and the cursor's manifest digest. Here both are
computed by compiled expressions of the library (`sha256_frames`, `json_stable`, `range`) over the segment's run as
the store holds it (payload_json in event_seq order, up to the segment's last sequence number): every one must be
the reference's. Nothing expected is computed by the code under test.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import phase1_archive
import pytest
from resume_contract_generator.expr import Environment, declared
from resume_contract_generator.expr.compile import compile_text

from resume_contract.core import expressions as runtime

PREFIX_DIGEST = 'sha256_frames(["maka.runtime-prefix.v1", json_stable(identity), range(size(events)).map(i, [i + 1, json_stable(events[i])])])'
MANIFEST_DIGEST = 'sha256_frames(["maka.runtime-boundary-manifest.v1", json_stable({"protocol": "runtime_boundary_cursor_v1", "segments": segments})])'
CONTINUED = {name: case["expect"]["continuation"] for name, case in phase1_archive.expected().items() if "continuation" in case["expect"]}


def _evaluate(text: str, **values: Any) -> Any:
    compiled = compile_text(text, Environment({name: declared(name, "json") for name in values}, "javascript"))
    function = eval(f"lambda {', '.join(values)}: {compiled.source}", {"_x": runtime})  # the compiled source, as generated/ holds it
    return function(**values)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return phase1_archive.write(tmp_path_factory.mktemp("phase1"))


def test_the_reference_recorded_enough_to_hold_the_digests() -> None:
    segments = [segment for continuation in CONTINUED.values() for segment in continuation["boundary"]["segments"]]
    assert len(CONTINUED) >= 8 and len(segments) >= 15 and any(len(c["boundary"]["segments"]) >= 4 for c in CONTINUED.values())


@pytest.mark.parametrize("name", sorted(CONTINUED))
def test_each_segments_prefix_digest_and_the_manifest_digest_are_the_references(name: str, cases: Path) -> None:
    boundary = CONTINUED[name]["boundary"]
    database = cases / name / "ws" / "runtime.sqlite"
    with sqlite3.connect(f"file:{database}?mode=ro&immutable=1", uri=True) as connection:
        for segment in boundary["segments"]:
            identity, last = segment["identity"], segment["position"]["lastEventSeq"]
            rows = connection.execute(
                "SELECT payload_json FROM runtime_events WHERE session_id = ? AND run_id = ? AND event_seq <= ? ORDER BY event_seq",
                (identity["sessionId"], identity["runId"], last),
            ).fetchall()
            events = [json.loads(payload) for (payload,) in rows]
            assert len(events) == segment["position"]["eventCount"] and events[-1]["id"] == segment["position"]["lastEventId"]
            assert _evaluate(PREFIX_DIGEST, identity=identity, events=events) == segment["prefixDigest"]
    assert _evaluate(MANIFEST_DIGEST, segments=boundary["segments"]) == boundary["manifestDigest"]


def test_a_digest_moves_with_one_byte_of_one_event(cases: Path) -> None:
    segment = CONTINUED["continue_plain"]["boundary"]["segments"][0]
    database = cases / "continue_plain" / "ws" / "runtime.sqlite"
    with sqlite3.connect(f"file:{database}?mode=ro&immutable=1", uri=True) as connection:
        events = [json.loads(payload) for (payload,) in connection.execute("SELECT payload_json FROM runtime_events WHERE run_id = 'run-1' ORDER BY event_seq")]
    events[0]["ts"] += 1
    assert _evaluate(PREFIX_DIGEST, identity=segment["identity"], events=events) != segment["prefixDigest"]


@pytest.mark.parametrize(
    ("text", "value", "error"),
    [("sha256_frames([x])", -1, "integers from 0"), ("sha256_frames([x])", 1.5, "integers from 0"), ("sha256_frames([x])", True, "bool"),
     ("sha256_frames([x])", 2**53, "integers from 0"), ("sha256_frames([x])", None, "null"), ("sha256_frames([x])", {"a": 1}, "map"),
     ("sha256_frames(x)", "a", "string"), ("range(x)", -1, "an integer from 0"), ("range(x)", 1_000_001, "an integer from 0"), ("range(x)", 1.5, "an integer from 0")],
)
def test_what_maka_would_refuse_to_frame_is_no_value(text: str, value: Any, error: str) -> None:
    with pytest.raises(runtime.ExpressionFailed, match=error):
        _evaluate(text, x=value)


@pytest.mark.parametrize(
    ("text", "error"),
    [("sha256_frames([true])", "not a list of bool"), ("sha256_frames([[1.5]])", "not a list of double"), ('sha256_frames([{"a": 1}])', "not a list of map"),
     ("range(-1)", "an integer from 0 to 1000000, not -1"), ("range(1.5)", "not 1.5"), ("range(1000001)", "not 1000001")],
)
def test_a_literal_that_can_never_be_framed_or_ranged_is_refused_when_the_contract_is_compiled(text: str, error: str) -> None:
    from resume_contract_generator.expr.parse import ExpressionSyntaxError

    with pytest.raises((ExpressionSyntaxError, ValueError), match=error):
        compile_text(text, Environment({}, "javascript"))
