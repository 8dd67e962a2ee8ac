"""Text for a terminal: whatever a ledger holds, no control, bidi or surrogate character reaches the screen."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from resume_contract.output.terminal import escape

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


# Any code point, lone surrogates included (st.characters leaves them out), with the dangerous ones often.
code_points = st.one_of(st.integers(0, 0x10FFFF), st.sampled_from([0x1B, 0x7F, 0x85, 0x9B, 0x202E, 0x2066, 0xD83D, 0xDFFF]))
any_text = st.lists(code_points, max_size=40).map(lambda points: "".join(map(chr, points)))


@given(any_text)
def test_no_unsafe_character_survives_and_the_result_is_utf8(text: str) -> None:
    shown = escape(text)
    assert UNSAFE.search(shown) is None
    shown.encode("utf-8")
    if UNSAFE.search(text) is None:
        assert shown == text


def test_escapes_are_visible_and_say_which_character_it_was() -> None:
    assert escape("a\x1b[2Jb\u202ec\ud83d\x85") == "a\\x1b[2Jb\\u202ec\\ud83d\\x85"
    assert escape("plain café ✓") == "plain café ✓"


def test_every_human_readable_output_is_escaped_and_json_stays_exact(tmp_path, run_cli) -> None:
    # A file name and a row value chosen by an attacker reach the error message; neither repaints the screen.
    ledger = tmp_path / "evil\x1b[2J\u202e.jsonl"
    ledger.write_bytes(
        b'{"id":"x","sessionId":"s","invocationId":"i","runId":"r","turnId":"t","ts":1,"partial":false,'
        b'"author":"agent","role":"\\u001b[2Jsafe_replay","content":{"kind":"text","text":"hi"}}\n'
    )
    code, out, err = run_cli("plan", str(ledger))
    assert code == 3 and "invalid_event" in err
    assert "\x1b" not in err and "\u202e" not in err and "evil\\x1b[2J\\u202e.jsonl" in err
    code, out, err = run_cli("plan", "--json", str(tmp_path / "missing\x1b.jsonl"))
    assert code == 2 and "\x1b" not in err
    code, out, _ = run_cli("diff", "--help")
    assert code == 0


def test_argparse_messages_are_escaped_too(run_cli, capsys) -> None:
    code, _, _ = run_cli("plan", "a", "b\x1b[2J\u202e")
    err = capsys.readouterr().err
    assert code == 2 and "unrecognized arguments" in err and "\x1b" not in err and "\\x1b[2J\\u202e" in err


def test_a_terminal_that_cannot_show_a_character_gets_its_escape(tmp_path) -> None:
    import json as json_module
    import os
    import subprocess
    import sys

    row = {"id": "c", "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": 1, "partial": False,
           "author": "agent", "role": "model", "content": {"kind": "function_call", "id": "t1", "name": "工具", "args": {}}}
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text(json_module.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    environment = {**os.environ, "PYTHONIOENCODING": "ascii"}
    text = subprocess.run([sys.executable, "-m", "resume_contract", "plan", str(ledger)], capture_output=True, env=environment)
    assert text.returncode == 1 and b"\\u5de5\\u5177" in text.stdout and b"Traceback" not in text.stderr
    plan = subprocess.run([sys.executable, "-m", "resume_contract", "plan", "--json", str(ledger)], capture_output=True, env=environment)
    assert plan.returncode == 1 and json_module.loads(plan.stdout.decode("utf-8"))["operations"][0]["toolName"] == "工具"
