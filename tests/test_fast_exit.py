"""The command (`cli.run`, what the installed script and `python -m resume_contract` call) ends the process at once
after its output when nothing is left to run at exit, and exits as Python does otherwise: its output is whole
either way, and an atexit callback or a running thread is never cut short. Tool tests: a ledger of their own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# Written to stderr by an object's finaliser when the interpreter is torn down (module globals are cleared then).
TORN_DOWN = "witness: torn down"

PROLOGUE = f"""
import sys
class Witness:
    def __del__(self):
        sys.stderr.write({TORN_DOWN!r} + "\\n")
witness = Witness()
"""

CALL = {"id": "e1", "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": 1, "partial": False,
        "author": "agent", "role": "model", "content": {"kind": "function_call", "id": "c", "name": "write_file", "args": {}}}


@pytest.fixture
def dangling(tmp_path: Path) -> Path:
    ledger = tmp_path / "runtime-events.jsonl"
    ledger.write_text(json.dumps(CALL) + "\n", encoding="utf-8")
    return ledger


def _run(tmp_path: Path, body: str, *argv: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "command.py"
    script.write_text(PROLOGUE + body + f"\nsys.argv = ['resume-contract', *{list(argv)!r}]\nfrom resume_contract.cli import run\nrun()\n", encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)


def _blocked_plan(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 1, result.stderr
    plan = json.loads(result.stdout)  # whole: flushed before the process ended
    assert plan["disposition"] == "blocked" and plan["rejectionReasons"] == ["dangling_tool_state"]


def test_a_plan_ends_without_tearing_the_interpreter_down(tmp_path: Path, dangling: Path) -> None:
    result = _run(tmp_path, "", "plan", "--json", str(dangling))
    _blocked_plan(result)
    assert TORN_DOWN not in result.stderr


def test_its_human_output_and_an_error_are_whole_too(tmp_path: Path, dangling: Path) -> None:
    text = _run(tmp_path, "", "plan", str(dangling))
    assert text.returncode == 1 and "blocked" in text.stdout and "dangling_tool_state" in text.stdout
    missing = _run(tmp_path, "", "plan", str(tmp_path / "absent.jsonl"))
    assert missing.returncode == 2 and "no such ledger" in missing.stderr and missing.stdout == ""
    assert TORN_DOWN not in text.stderr + missing.stderr


def test_an_atexit_callback_still_runs(tmp_path: Path, dangling: Path) -> None:
    body = "import atexit\natexit.register(lambda: sys.stderr.write('atexit: ran\\n'))"
    result = _run(tmp_path, body, "plan", "--json", str(dangling))
    _blocked_plan(result)
    assert "atexit: ran" in result.stderr and TORN_DOWN in result.stderr


def test_a_running_thread_is_waited_for(tmp_path: Path, dangling: Path) -> None:
    body = "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.3), sys.stderr.write('thread: done\\n'))).start()"
    result = _run(tmp_path, body, "plan", "--json", str(dangling))
    _blocked_plan(result)
    assert "thread: done" in result.stderr


def test_python_dash_m_is_the_command(tmp_path: Path, dangling: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "resume_contract", "plan", "--json", str(dangling)], capture_output=True, text=True, timeout=120)
    _blocked_plan(result)


def test_a_profiler_or_a_debugger_sees_the_command_return(tmp_path: Path, dangling: Path) -> None:
    for hook in ("sys.setprofile(lambda *_: None)", "sys.settrace(lambda *_: None)"):
        script = tmp_path / "hooked.py"
        script.write_text(
            f"import sys\n{hook}\nsys.argv = ['resume-contract', 'plan', '--json', {str(dangling)!r}]\n"
            "from resume_contract.cli import run\n"
            "try:\n    run()\nexcept SystemExit as exit_:\n    sys.stderr.write(f'returned {exit_.code}\\n')\n",
            encoding="utf-8",
        )
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert json.loads(result.stdout)["disposition"] == "blocked" and "returned 1" in result.stderr, hook
    profiled = subprocess.run([sys.executable, "-m", "cProfile", "-m", "resume_contract", "plan", "--json", str(dangling)], capture_output=True, text=True, timeout=120)
    assert "function calls" in profiled.stdout  # cProfile's report, printed once the command returned


def test_a_program_that_runs_the_module_goes_on_after_it(tmp_path: Path, dangling: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(
        "import runpy, sys\n"
        f"sys.argv = ['resume-contract', 'plan', '--json', {str(dangling)!r}]\n"
        "try:\n"
        "    runpy.run_module('resume_contract', run_name='__main__')\n"
        "except SystemExit as exit_:\n"
        "    sys.stderr.write(f'host: the command exited {exit_.code}\\n')\n",
        encoding="utf-8",
    )
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert json.loads(result.stdout)["disposition"] == "blocked"
    assert "host: the command exited 1" in result.stderr and result.returncode == 0
