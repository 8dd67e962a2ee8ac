"""Attacks on `conform` by the implementation it runs (issue 23, item 8): an adapter that leaves a process
holding its stdout still answers within its timeout and leaves nothing running in its group; Ctrl-C and SIGTERM
stop the running adapters and exit 130 / 143 at once; an adapter that floods its output fails its own case, not
the run; the JUnit file parses whatever bytes an adapter printed.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFORM = [sys.executable, "-m", "resume_contract", "--root", str(REPO), "conform"]

# Answers as this project's CLI does, then leaves a `sleep` holding its stdout and stderr (in its own process
# group, or in a session of its own when asked), and records the sleep's pid.
LEAVES_A_PROCESS = """
import subprocess, sys
pids, detach = sys.argv[1], sys.argv[2] == "detach"
answer = subprocess.run([sys.executable, "-m", "resume_contract", "plan", "--json", *sys.argv[3:]], capture_output=True)
sys.stdout.buffer.write(answer.stdout)
sys.stdout.flush()
left = subprocess.Popen(["sleep", "120"], start_new_session=detach)
with open(pids, "a") as file:
    file.write(f"{left.pid}\\n")
raise SystemExit(answer.returncode)
"""

# Records its pid, then waits for good.
HANGS = """
import os, sys, time
with open(sys.argv[1], "a") as file:
    file.write(f"{os.getpid()}\\n")
time.sleep(120)
"""

# Floods stdout on the first vector; answers the other as this project's CLI does.
FLOODS = """
import subprocess, sys
if sys.argv[2].endswith(sys.argv[1]):
    chunk = b"x" * 65536
    while True:
        sys.stdout.buffer.write(chunk)
answer = subprocess.run([sys.executable, "-m", "resume_contract", "plan", "--json", *sys.argv[2:]], capture_output=True)
sys.stdout.buffer.write(answer.stdout)
raise SystemExit(answer.returncode)
"""

EVERY_BYTE = bytes(range(256)) + b"\xed\xa0\x80\xef\xbf\xbe"  # every byte, a UTF-8-encoded surrogate and U+FFFE
# A last line (what is reported of stderr) of every control character that does not end a line, and U+FFFE.
CONTROL_LINE = bytes(c for c in range(32) if c not in b"\t\n\x0b\x0c\r\x1c\x1d\x1e") + b"\x7f\xef\xbf\xbe"


@pytest.fixture(scope="module")
def two_vectors(tmp_path_factory) -> Path:
    """Two vectors of the live contract (a test of how conform runs an adapter, not of what it compares)."""
    made = tmp_path_factory.mktemp("vectors") / "v"
    result = subprocess.run([*CONFORM[:-1], "vectors", "--out", str(made), "--depth", "0"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((made / "manifest.json").read_text())
    manifest["cases"] = manifest["cases"][:2]
    (made / "manifest.json").write_text(json.dumps(manifest))
    return made


def _first_ledger(vectors: Path) -> str:
    return json.loads((vectors / "manifest.json").read_text())["cases"][0]["ledger"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("detach", ["group", "detach"])
def test_an_adapter_that_leaves_a_process_holding_its_stdout_answers_in_time(two_vectors: Path, tmp_path: Path, detach: str) -> None:
    pids = tmp_path / "pids"
    started = time.monotonic()
    command = [*CONFORM, "--vectors", str(two_vectors), "--timeout", "15", "--", sys.executable, "-c", LEAVES_A_PROCESS, str(pids), detach]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    left = [int(line) for line in pids.read_text().split()]
    try:
        assert result.returncode == 0 and "2 vectors: 2 agree" in result.stdout, result.stdout + result.stderr
        assert took < 12, f"conform waited {took:.1f} s for the process its adapter left"
        # One that stays in the adapter's group ends with it; one that left its session is adopted and ended.
        if detach == "group" or sys.platform.startswith("linux"):
            assert not any(_alive(pid) for pid in left)
    finally:
        for pid in left:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as a terminal gives it (a shell's background job ignores it)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["sigint", "sigterm"])
def test_ctrl_c_and_sigterm_stop_the_running_adapters_and_exit_at_once(two_vectors: Path, tmp_path: Path, signum: int, code: int) -> None:
    started = tmp_path / "started"
    command = [*CONFORM, "--vectors", str(two_vectors), "--jobs", "2", "--timeout", "60", "--", sys.executable, "-c", HANGS, str(started)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_default_sigint)
    try:
        deadline = time.monotonic() + 30
        while not (started.is_file() and len(started.read_text().split()) == 2):
            assert time.monotonic() < deadline and process.poll() is None, "the adapters never started"
            time.sleep(0.05)
        adapters = [int(pid) for pid in started.read_text().split()]
        sent = time.monotonic()
        process.send_signal(signum)
        assert process.wait(timeout=10) == code
        assert time.monotonic() - sent < 5
        assert not any(_alive(pid) for pid in adapters), "an adapter outlived conform"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a flood read whole dies here; a bounded read does not


def test_an_adapter_that_floods_its_output_fails_its_own_case_only(two_vectors: Path) -> None:
    command = [*CONFORM, "--vectors", str(two_vectors), "--timeout", "60", "--json", "--", sys.executable, "-c", FLOODS, _first_ledger(two_vectors)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory)
    assert result.returncode == 1, result.stderr
    verdicts = [(entry["verdict"], entry["problems"][:1]) for entry in json.loads(result.stdout)["results"]]
    assert verdicts == [("crashed", [f"stdout: more than {16 * 1024 * 1024} bytes; cut off there (its process group was killed)"]), ("agrees", [])]


def test_the_junit_file_is_well_formed_whatever_bytes_an_adapter_prints(two_vectors: Path, tmp_path: Path) -> None:
    printer = tmp_path / "printer.py"
    stderr = EVERY_BYTE + b"\n" + CONTROL_LINE
    printer.write_text(f"import sys\nsys.stdout.buffer.write({EVERY_BYTE!r})\nsys.stderr.buffer.write({stderr!r})\nraise SystemExit(5)\n")
    junit = tmp_path / "conform.xml"
    command = [*CONFORM, "--vectors", str(two_vectors), "--junit", str(junit), "--", sys.executable, str(printer)]
    assert subprocess.run(command, capture_output=True, timeout=60).returncode == 1
    suite = ElementTree.fromstring(junit.read_bytes())
    errors = [case.find("error") for case in suite.iter("testcase")]
    assert len(errors) == 2 and all(error is not None and "\\x00" in (error.text or "") for error in errors)
