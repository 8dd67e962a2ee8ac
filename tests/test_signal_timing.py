"""A signal that arrives where an exception would break what it interrupts — a module being imported, msgspec's
C code reading a type through Python — is raised just after, never there (an early SIGTERM to `plan` crashed
msgspec 0.23 in its Decoder, exit -11); a second one, two seconds on, is raised wherever it is;
SIGALRM is left as it was. Tool tests: each runs a script of its own in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

PROLOGUE = """
import os, signal, sys, time, traceback
from resume_contract.system.interrupts import Terminated, stop_on_signals
sys.path.insert(0, sys.argv[1])
try:
    with stop_on_signals(for_good=True):
"""

EPILOGUE = """
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # the signal is raised in here, once it may be
            pass
        print("never terminated")
except Terminated as stopped:
    where = [frame.filename for frame in traceback.extract_tb(stopped.__traceback__) if not frame.filename.endswith("interrupts.py")]
    print("terminated in", os.path.basename(where[-1]))  # the code the signal interrupted, below the handler
print("SIGALRM:", int(signal.getsignal(signal.SIGALRM)))
"""


def _run(tmp_path: Path, body: str, modules: dict[str, str]) -> tuple[list[str], float]:
    for name, text in modules.items():
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    script = tmp_path / "script.py"
    script.write_text(PROLOGUE + body + EPILOGUE, encoding="utf-8")
    started = time.monotonic()
    result = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return result.stdout.splitlines(), time.monotonic() - started


SIGNALLED_WHILE_IMPORTED = """
import os, signal, sys
os.kill(os.getpid(), signal.SIGTERM)
TABLE = {index: str(index) for index in range(10_000)}  # more of the module, after the signal
sys.stdout.write("imported whole\\n")
"""


def test_a_signal_during_an_import_is_raised_once_the_import_is_done(tmp_path: Path) -> None:
    lines, _ = _run(tmp_path, "        import signalled\n", {"signalled": SIGNALLED_WHILE_IMPORTED})
    assert lines == ["imported whole", "terminated in script.py", "SIGALRM: 0"]


READ_BY_MSGSPEC = """
from __future__ import annotations
import os, signal
import msgspec

def field_type():
    os.kill(os.getpid(), signal.SIGTERM)  # while msgspec reads the struct's annotations, inside typing's eval
    return str

class Event(msgspec.Struct):
    id: field_type()
"""


def test_a_signal_while_msgspec_reads_a_type_is_raised_once_it_is_done(tmp_path: Path) -> None:
    body = (
        "        import read_by_msgspec, msgspec\n"
        "        decoder = msgspec.json.Decoder(read_by_msgspec.Event)\n"
    )
    lines, _ = _run(tmp_path, body, {"read_by_msgspec": READ_BY_MSGSPEC})
    assert lines == ["terminated in script.py", "SIGALRM: 0"]


STUCK_IN_AN_IMPORT = """
import os, signal, time
os.kill(os.getpid(), signal.SIGTERM)
started = time.monotonic()
while time.monotonic() < started + 30:  # an import that runs on for 30 s; asked again after 2.5 s
    if time.monotonic() > started + 2.5:
        os.kill(os.getpid(), signal.SIGTERM)
"""


def test_a_signal_asked_again_after_two_seconds_is_raised_wherever_it_is(tmp_path: Path) -> None:
    lines, elapsed = _run(tmp_path, "        import stuck\n", {"stuck": STUCK_IN_AN_IMPORT})
    assert lines == ["terminated in stuck.py", "SIGALRM: 0"]  # raised where it was, in the end
    assert elapsed < 15  # 2.5 s, and an interpreter's start; the import alone would take 30


SIGNALLED_WHILE_THE_ARGUMENTS_ARE_READ = """
import io, os, signal, sys
import resume_contract.cli as cli
read = cli._parsed
def parsed(arguments):
    os.kill(os.getpid(), signal.SIGTERM)  # while argparse is imported and the command line read
    return read(arguments)
cli._parsed = parsed
err = io.StringIO()
code = cli.main(["plan", "--workspace", sys.argv[1], "--jobs", "1"], io.StringIO(), err)
sys.stderr.write(err.getvalue())
sys.exit(code)
"""


def test_a_signal_while_the_command_line_is_read_stops_the_command_as_one(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SIGNALLED_WHILE_THE_ARGUMENTS_ARE_READ, encoding="utf-8")
    result = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 143 and "terminated (SIGTERM)" in result.stderr and "Traceback" not in result.stderr, result


ENDED_RIGHT_AFTER = """
import os, signal, sys
from resume_contract.system.interrupts import Terminated, stop_on_signals
sys.path.insert(0, sys.argv[1])
for number in (1, 2):  # a library caller's block, twice: the second signal is held back as the first was
    try:
        with stop_on_signals(for_good=False):
            __import__(f"signalled_{number}")  # the last thing the block does
        print("the block ended without it")
    except Terminated:
        print("terminated")
print("after:", signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, sys.getprofile())
"""


def test_a_signal_held_back_when_the_block_ends_is_raised_as_it_ends(tmp_path: Path) -> None:
    for number in (1, 2):
        (tmp_path / f"signalled_{number}.py").write_text(SIGNALLED_WHILE_IMPORTED, encoding="utf-8")
    script = tmp_path / "script.py"
    script.write_text(ENDED_RIGHT_AFTER, encoding="utf-8")
    result = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert result.stdout.splitlines() == ["imported whole", "terminated", "imported whole", "terminated", "after: True None"], result.stderr


SIGNALLED_TWICE = """
import os, signal
os.kill(os.getpid(), signal.SIGTERM)
os.kill(os.getpid(), signal.SIGINT)
"""


def test_the_first_of_two_signals_is_the_one_raised(tmp_path: Path) -> None:
    lines, _ = _run(tmp_path, "        import twice\n", {"twice": SIGNALLED_TWICE})
    assert lines == ["terminated in script.py", "SIGALRM: 0"]  # SIGTERM's Terminated, not SIGINT's KeyboardInterrupt


def test_a_frame_whose_module_name_is_not_a_string_is_read_as_no_module() -> None:
    from resume_contract.system.interrupts import _resume_frame

    namespace = {"__name__": None, "here": lambda: sys._getframe(1)}
    exec("frame = here()", namespace)
    assert _resume_frame(namespace["frame"]) is None


FINALISED_AFTER = """
import sys
class Resource:
    def __del__(self):  # called from C, which would swallow an exception raised here
        sys.stderr.write("finalised\\n")
"""


def test_a_held_signal_is_raised_in_the_frame_that_made_the_call_not_in_a_finaliser(tmp_path: Path) -> None:
    body = "        import signalled, finalised\n        resource = finalised.Resource(); del resource\n        print('after the finaliser')\n"
    lines, _ = _run(tmp_path, body, {"signalled": SIGNALLED_WHILE_IMPORTED, "finalised": FINALISED_AFTER})
    assert lines[0] == "imported whole" and lines[-2:] == ["terminated in script.py", "SIGALRM: 0"]


READ_BY_MSGSPEC_WITH_AN_ENUM = """
from __future__ import annotations
import enum, os, signal
import msgspec

class Colour(enum.Enum):
    RED = "red"

def field_type():
    os.kill(os.getpid(), signal.SIGTERM)
    return Colour  # msgspec then reads the enum through Python (enum's __getattr__), and drops what it raises

class Paint(msgspec.Struct):
    colour: field_type()
"""


def test_a_held_signal_is_not_raised_in_python_that_msgspec_calls(tmp_path: Path) -> None:
    body = "        import read_enum, msgspec\n        decoder = msgspec.json.Decoder(read_enum.Paint)\n"
    lines, _ = _run(tmp_path, body, {"read_enum": READ_BY_MSGSPEC_WITH_AN_ENUM})
    assert lines == ["terminated in script.py", "SIGALRM: 0"]
