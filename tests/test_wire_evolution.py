"""Adding an event kind is a spec edit: YAML only, no Python, and the new rows are decoded, projected, replayed.

On a copy of the project, spec/runtime_event.yaml gains a content-less `tool_not_dispatched` marker naming a
call id, and spec/projector.yaml an event and a settled state for it; `generate` writes the new model, and a
fresh interpreter run with `--root` (the copy's own contract) plans a ledger holding the marker.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

WIRE_KIND = """\
    tool_not_dispatched:
      description: The runtime decided not to run a call it had committed.
      fields:
        id: {type: string, required: true, description: The tool call id it settles.}
      tool_call: {role: result, call_id: id}
"""

PROJECTOR_EVENT = """\
  tool_not_dispatched:
    description: A committed marker that the call was never dispatched.
    content_kind: tool_not_dispatched
"""

PROJECTOR_STATE = """\
  not_dispatched:
    description: The call is committed and the runtime recorded that it never ran it.
    status: not_dispatched
    final: true
"""

PROJECTOR_RULES = """\
  - {from: absent, on: tool_not_dispatched, anomaly: unmatched_tool_result}
  - {from: indeterminate, on: tool_not_dispatched, to: not_dispatched}
  - {from: succeeded, on: tool_not_dispatched, anomaly: duplicate_tool_result}
  - {from: failed, on: tool_not_dispatched, anomaly: duplicate_tool_result}
  - {from: not_dispatched, on: function_call, anomaly: duplicate_tool_call}
  - {from: not_dispatched, on: function_response, anomaly: duplicate_tool_result}
  - {from: not_dispatched, on: function_response_error, anomaly: duplicate_tool_result}
  - {from: not_dispatched, on: tool_not_dispatched, anomaly: duplicate_tool_result}
"""


def _insert(path: Path, before: str, text: str) -> None:
    source = path.read_text(encoding="utf-8")
    assert source.count(before) == 1, f"{before!r} not found once in {path}"
    path.write_text(source.replace(before, text + before), encoding="utf-8")


def _add_the_marker(project: Path) -> None:
    _insert(project / "spec" / "runtime_event.yaml", "    error:\n", WIRE_KIND)
    projector = project / "spec" / "projector.yaml"
    _insert(projector, "\nrules:\n", PROJECTOR_EVENT)
    _insert(projector, "\nevents:\n", PROJECTOR_STATE)
    _insert(projector, "\n# Raised by the ledger as a whole", PROJECTOR_RULES)


def _row(event_id: str, content: dict, author: str = "agent", role: str = "model") -> str:
    return json.dumps(
        {"id": event_id, "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": 1, "partial": False,
         "author": author, "role": role, "content": content},
        separators=(",", ":"),
    )


def test_a_new_event_kind_is_a_yaml_edit(project: Path, run_cli, tmp_path: Path) -> None:
    python_before = {path: path.read_bytes() for path in (project / "generated").rglob("*.py")}
    _add_the_marker(project)
    code, out, err = run_cli("--root", str(project), "generate")
    assert code == 0, err
    model = (project / "generated" / "resume_contract_generated" / "runtime_event.py").read_text()
    assert "class ToolNotDispatchedContent(" in model
    schema = json.loads((project / "generated" / "runtime-event.schema.json").read_text())
    assert schema["$defs"]["content_tool_not_dispatched"]["required"] == ["kind", "id"]
    assert run_cli("--root", str(project), "check")[0] == 0
    assert any(python_before[path] != path.read_bytes() for path in python_before)  # only the generator wrote Python

    rows = [
        _row("u", {"kind": "text", "text": "deploy"}, "user", "user"),
        _row("c", {"kind": "function_call", "id": "t1", "name": "Bash", "args": {"command": "deploy"}}),
        _row("n", {"kind": "tool_not_dispatched", "id": "t1"}, "system", "system"),
    ]
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text("".join(row + "\n" for row in rows), encoding="utf-8")
    # Planned with the copy's own contract (its generated/, loaded from its files), in a fresh interpreter.
    result = subprocess.run(
        [sys.executable, "-m", "resume_contract", "--root", str(project), "plan", "--json", str(ledger)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["disposition"] == "safe_replay"
    assert [(op["toolCallId"], op["status"], op["responseRuntimeEventId"]) for op in plan["operations"]] == [("t1", "not_dispatched", "n")]
    assert [json.dumps(row, separators=(",", ":")) for row in plan["runtimeEvents"]] == rows
    assert [json.dumps(row, separators=(",", ":")) for row in plan["replayRuntimeEvents"]] == rows

    # The live project's model does not know the marker: the same ledger is a schema violation there.
    code, _, err = run_cli("plan", str(ledger))
    assert code == 3 and "invalid_event" in err


def test_a_projector_event_must_name_a_declared_tool_content_kind(project: Path, run_cli) -> None:
    projector = project / "spec" / "projector.yaml"
    source = projector.read_text(encoding="utf-8")
    projector.write_text(source.replace("    content_kind: function_call\n", "    content_kind: function_cal\n", 1), encoding="utf-8")
    code, _, err = run_cli("--root", str(project), "check")
    assert code == 2
    assert "spec/projector.yaml:" in err and "unknown content kind 'function_cal'; spec/runtime_event.yaml declares [" in err
    projector.write_text(source.replace("    content_kind: function_call\n", "    content_kind: thinking\n", 1), encoding="utf-8")
    code, _, err = run_cli("--root", str(project), "check")
    assert code == 2 and "content kind 'thinking' takes no part in tool state" in err


def test_tool_call_must_name_fields_of_its_own_kind(project: Path, run_cli) -> None:
    wire = project / "spec" / "runtime_event.yaml"
    source = wire.read_text(encoding="utf-8")
    wire.write_text(source.replace("tool_call: {role: call, call_id: id,", "tool_call: {role: call, call_id: callId,", 1), encoding="utf-8")
    code, _, err = run_cli("--root", str(project), "generate")
    assert code == 2
    assert "spec/runtime_event.yaml:" in err and "tool_call.call_id names 'callId', which this kind does not declare" in err
