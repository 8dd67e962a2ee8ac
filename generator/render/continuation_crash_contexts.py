"""Template contexts of Phase 1's crash contract (spec/lifecycle.yaml): its catalog, its
python-statemachine lifecycle, its CONTRACT.md section and its generated crash tests. Values are literals."""

from __future__ import annotations

from typing import Any

from ..literals import md_cell, md_code, py, py_call
from ..spec.model import Spec


def _identifier(name: str) -> str:
    if not name.isidentifier():
        raise ValueError(f"{name!r} is not an identifier")
    return name


def catalog_context(spec: Spec) -> dict[str, Any]:
    crash = spec.continuation_crash
    assert crash is not None
    return {
        "run_loop": py(crash.run_loop),
        "initial": py(crash.initial),
        "states": [
            py_call("LifecycleState", [("name", s.name), ("header", s.header), ("events", s.events), ("final", s.final)], indent=4)
            for s in crash.states
        ],
        "transitions": [
            py_call("LifecycleTransition", [("name", t.name), ("by", t.by), ("sources", t.sources), ("target", t.target)], indent=4)
            for t in crash.transitions
        ],
        "boundaries": [
            py_call(
                "Boundary",
                [
                    ("id", b.id),
                    ("boundary", b.boundary),
                    ("after", b.after),
                    ("state", b.state),
                    ("replan_disposition", b.replan_disposition),
                    ("replan_reasons", b.replan_reasons),
                    ("recovery_takes", b.recovery_takes),
                    ("terminal_event", b.terminal_event),
                    ("header", b.header),
                    ("failure_class", b.failure_class),
                ],
                indent=4,
            )
            for b in crash.boundaries
        ],
    }


def lifecycle_context(spec: Spec) -> dict[str, Any]:
    crash = spec.continuation_crash
    assert crash is not None
    states = [
        f"{_identifier(s.name)} = State({py(s.name)}, value={py(s.name)}"
        + (", initial=True" if s.name == crash.initial else "")
        + (", final=True" if s.final else "")
        + ")"
        for s in crash.states
    ]
    events = [
        (_identifier(t.name), [f"{_identifier(source)}.to({_identifier(t.target)})" for source in t.sources])
        for t in crash.transitions
    ]
    return {"states": states, "events": events}


def contract_context(spec: Spec) -> dict[str, Any] | None:
    crash = spec.continuation_crash
    if crash is None:
        return None
    mermaid = [f"[*] --> {crash.initial}"]
    for t in crash.transitions:
        mermaid += [f"{source} --> {t.target} : {t.name} ({t.by})" for source in t.sources]
    mermaid += [f"{s.name} --> [*]" for s in crash.states if s.final]
    return {
        "run_loop": md_code(crash.run_loop) if crash.run_loop else "none declared",
        "state_rows": [
            [md_code(s.name) + (" (initial)" if s.name == crash.initial else ""), md_code(s.header), md_code(s.events), "yes" if s.final else "no", md_cell(s.description)]
            for s in crash.states
        ],
        "transition_rows": [
            [md_code(t.name), t.by, ", ".join(md_code(source) for source in t.sources), md_code(t.target), md_cell(t.description)]
            for t in crash.transitions
        ],
        "boundary_rows": [
            [
                md_code(b.id),
                md_cell(b.boundary),
                f"after {md_code(b.after)}: {md_code(b.state)}",
                f"{md_code(b.replan_disposition)} [{', '.join(md_code(r) for r in b.replan_reasons)}]",
                (", ".join(md_code(t) for t in b.recovery_takes) or "nothing to repair")
                + f"; terminal event {md_code(b.terminal_event)}, header {md_code(b.header)}"
                + (f" ({md_code('failureClass: ' + b.failure_class)})" if b.failure_class else ""),
            ]
            for b in crash.boundaries
        ],
        "mermaid": mermaid,
    }


def tests_context(spec: Spec) -> dict[str, Any]:
    crash = spec.continuation_crash
    assert crash is not None
    cases = []
    for b in crash.boundaries:
        state = crash.state(b.state)
        expected = {
            "state": b.state,
            "header": state.header,
            "events": state.events,
            "replan": {"disposition": b.replan_disposition, "rejection_reasons": b.replan_reasons},
            "recovered": {"terminal_event": b.terminal_event, "header": b.header, "failure_class": b.failure_class},
        }
        cases.append({"id": py(b.id), "expected": py(expected, 4)})
    return {"cases": cases}
