"""`core.columns`: a column reads the same values as `operator.attrgetter`, before and after it compiles its
list comprehension; nothing is compiled from a name that is not a plain ASCII identifier; the walk's compiled
reader of a content struct reads what its attrgetters read. Tool tests."""

from __future__ import annotations

from operator import attrgetter
from types import SimpleNamespace

import msgspec
import pytest

from resume_contract.core import columns
from resume_contract.core.columns import COMPILE_AFTER, _column, compiled_function


class Row(msgspec.Struct):
    id: str
    partial: bool


def test_a_column_reads_what_attrgetter_reads_before_and_after_it_is_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    monkeypatch.setattr(columns, "compiled_function", lambda *given: compiled.append(given[1]) or compiled_function(*given))
    rows = [Row(f"evt-{n}", n % 3 == 0) for n in range(COMPILE_AFTER // 3)]
    read = _column("partial")
    for _ in range(6):  # compiled once it has been asked for COMPILE_AFTER items
        assert read(rows) == list(map(attrgetter("partial"), rows))
    assert compiled == ["[item.partial for item in items]"]
    assert _column("id")(rows[:5]) == ["evt-0", "evt-1", "evt-2", "evt-3", "evt-4"]


@pytest.mark.parametrize("name", ["class", "ﬁeld", "a.b", "a; import os", "x\n"])
def test_a_name_that_is_no_plain_identifier_is_read_by_attrgetter_and_never_compiled(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    executed: list[str] = []
    monkeypatch.setattr(columns, "exec", lambda source, namespace: executed.append(source) or exec(source, namespace), raising=False)
    item = SimpleNamespace()
    setattr(item, name, 7)
    items = [item] * (COMPILE_AFTER + 1)
    if name == "a.b":  # attrgetter follows dots: what a struct field never holds
        item.a = SimpleNamespace(b=8)
    assert _column(name)(items) == [8 if name == "a.b" else 7] * len(items)
    assert executed == ([] if name != "class" else ["def function(items):\n    return [item.class for item in items]\n"])  # a keyword: refused by the compiler


def test_a_keyword_is_refused_by_the_compiler() -> None:
    assert compiled_function("items", "[item.class for item in items]", ["class"]) is None
    assert compiled_function("content", "(content.id, None)", ["id"])(SimpleNamespace(id="c1")) == ("c1", None)


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
