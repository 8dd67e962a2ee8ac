"""`core.columns.column` reads the same values as `operator.attrgetter`, before and after it compiles its list
comprehension, and never compiles source from a name that is not a plain ASCII identifier. Tool tests."""

from __future__ import annotations

from operator import attrgetter
from types import SimpleNamespace

import msgspec
import pytest

from resume_contract.core import columns
from resume_contract.core.columns import COMPILE_AFTER, _column


class Row(msgspec.Struct):
    id: str
    partial: bool


def test_a_column_reads_what_attrgetter_reads_before_and_after_it_is_compiled() -> None:
    rows = [Row(f"evt-{n}", n % 3 == 0) for n in range(COMPILE_AFTER // 3)]
    read = _column("partial")
    for _ in range(6):  # compiled once it has been asked for COMPILE_AFTER items
        assert read(rows) == list(map(attrgetter("partial"), rows))
    assert read.__closure__ is not None
    compiled = {cell.cell_contents for cell in read.__closure__ if callable(cell.cell_contents) and getattr(cell.cell_contents, "__name__", "") == "column"}
    assert compiled, "the comprehension was never compiled"
    assert _column("id")(rows[:5]) == ["evt-0", "evt-1", "evt-2", "evt-3", "evt-4"]


@pytest.mark.parametrize("name", ["class", "ﬁeld", "a.b", "a; import os", "x\n"])
def test_a_name_that_is_no_plain_identifier_is_read_by_attrgetter_and_never_compiled(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    monkeypatch.setattr(columns, "_compiled", lambda name: compiled.append(name))
    item = SimpleNamespace()
    setattr(item, name, 7)
    items = [item] * (COMPILE_AFTER + 1)
    read = _column(name)
    if name == "a.b":  # attrgetter follows dots: what a struct field never holds
        item.a = SimpleNamespace(b=8)
        assert read(items) == [8] * len(items)
    else:
        assert read(items) == [7] * len(items)
    assert compiled == ([] if name != "class" else ["class"])  # a keyword is tried, and refused by the compiler


def test_a_keyword_is_refused_by_the_compiler_and_read_by_attrgetter() -> None:
    assert columns._compiled("class") is None
    item = SimpleNamespace(**{"class": 3})
    assert _column("class")([item] * (COMPILE_AFTER + 1)) == [3] * (COMPILE_AFTER + 1)
