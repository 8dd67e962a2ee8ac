"""A ledger path is named, and opened, as a Path would name it, though a bare file's plan keeps it a str (no
pathlib on its path): `x/`, `./x` and `a//b` are the files they were. Tool tests: the ledgers are their own."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resume_contract.ledger.committed_file import path_text

HEAD = '"sessionId":"s","invocationId":"i","runId":"r","turnId":"t","partial":false'
ROWS = (
    f'{{"id":"e0","ts":0,{HEAD},"author":"agent","role":"model","content":{{"kind":"function_call","id":"c","name":"read","args":{{}}}}}}\n'
    f'{{"id":"e1","ts":1,{HEAD},"author":"tool","role":"tool","content":{{"kind":"function_response","id":"c","name":"read","result":{{}}}}}}\n'
)


def small_ledger(path: Path) -> Path:
    path.write_text(ROWS, encoding="utf-8")
    return path


@given(st.lists(st.sampled_from(["", ".", "..", "a", "b c", "é"]), max_size=6).map("/".join), st.sampled_from(["", "/", "//", "///"]))
def test_a_path_is_written_as_pathlib_writes_it(rest: str, root: str) -> None:
    assert path_text(root + rest) == str(PurePosixPath(root + rest))


@pytest.mark.parametrize("written", ["{name}/", "{name}/.", "./{name}", ".//{name}//"])
@pytest.mark.parametrize("form", [["plan"], ["plan", "--json"]], ids=" ".join)
def test_a_ledger_named_with_extra_slashes_or_dots_is_planned_and_named_plainly(
    written: str, form: list[str], tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    small_ledger(tmp_path / "runtime-events.jsonl")
    code, out, err = run_cli(*form, written.format(name="runtime-events.jsonl"))
    assert (code, err) == (0, ""), err
    if form == ["plan"]:
        assert out.splitlines()[0].split() == ["ledger:", "runtime-events.jsonl"]


def test_a_corrupt_ledger_is_named_as_its_next_step_names_it(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ledger = small_ledger(tmp_path / "torn.jsonl")
    ledger.write_bytes(ledger.read_bytes() + b'{"id":')
    code, _, err = run_cli("plan", "./torn.jsonl")
    assert code == 3
    assert "./torn.jsonl" not in err and "torn.jsonl:3:" in err and "repair torn.jsonl" in err, err
