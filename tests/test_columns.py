"""`core.columns` and the walk's reader of a content struct read what `operator.attrgetter` reads, whatever the
attribute's name; and no module of the runtime runs source it builds from strings (issue 40: code specialised
for a contract is the generator's, in generated/, or not at all). Tool tests."""

from __future__ import annotations

import ast
from operator import attrgetter
from pathlib import Path
from types import SimpleNamespace

import msgspec
import pytest

from resume_contract.core.columns import column

RUNTIME = Path(__file__).resolve().parent.parent / "resume_contract"


class Row(msgspec.Struct):
    id: str
    partial: bool


def test_a_column_reads_what_attrgetter_reads() -> None:
    rows = [Row(f"evt-{n}", n % 3 == 0) for n in range(3000)]
    for _ in range(3):
        assert column("partial")(rows) == list(map(attrgetter("partial"), rows))
    assert column("id")(rows[:5]) == ["evt-0", "evt-1", "evt-2", "evt-3", "evt-4"]


@pytest.mark.parametrize("name", ["class", "ﬁeld", "a; import os", "x\n"])
def test_any_name_is_read_as_attrgetter_reads_it(name: str) -> None:
    item = SimpleNamespace()
    setattr(item, name, 7)
    assert column(name)([item] * 2100) == [7] * 2100


def test_no_module_of_the_runtime_runs_source_it_builds() -> None:
    """exec, eval and compile are not called anywhere under resume_contract/ (re.compile is a regex, not code)."""
    found = []
    for path in sorted(RUNTIME.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval", "compile"):
                found.append(f"{path.relative_to(RUNTIME.parent)}:{node.lineno}: {node.func.id}")
    assert found == []


class Call(msgspec.Struct, tag_field="kind", tag="call"):
    KIND = "call"
    id: str
    name: str
    args: msgspec.Raw
    failed: bool | None = None


@pytest.mark.parametrize("names", [("id", "name", "failed", "args"), ("id", None, None, None), ("id", "name", "failed", "a.b")])
def test_the_walk_reads_a_content_struct_as_its_attrgetters_do(names: tuple[str, str | None, str | None, str | None]) -> None:
    from resume_contract.core.table import ToolContentRead
    from resume_contract.core.walk_reads import _values_of

    call_id, tool_name, error_flag, arguments = names
    read = ToolContentRead(opens=True, call_id=call_id, tool_name=tool_name, error_flag=error_flag, arguments=arguments)
    for content in (Call("c1", "write", msgspec.Raw(b"{}"), True), Call("c2", "read", msgspec.Raw(b"[]"), None)):
        expected = (
            content.id,
            content.name if tool_name else None,
            error_flag is not None and content.failed is True,
            content.args if arguments == "args" else None,
        )
        if arguments == "a.b":
            with pytest.raises(AttributeError):  # read by attrgetter, which follows the dot (and finds no `a`)
                _values_of(read)(content)
        else:
            assert _values_of(read)(content) == expected
