"""JUnit XML, the report format CI systems show per test case: one home for `conform`, `crash` and `verify`.

Written with the standard library's ElementTree (which escapes every attribute and text), in the layout the
common JUnit schema (testsuite > testcase > failure | error) and GitHub/GitLab/Jenkins reporters read. XML 1.0
cannot hold most control characters, lone surrogates or U+FFFE/U+FFFF at all, even escaped, and ElementTree
writes them as they are: each is written as a visible `\\xNN` / `\\uNNNN` escape instead, so that the file
parses whatever bytes an adapter printed.

What a case says quotes the spec and what an adapter printed, so it is shown as a terminal shows it
(`terminal.escape`): a suite's and a case's names and a failure's message are one line, every control
character (a newline included) a visible escape; a failure's text keeps its lines, each escaped. A reporter
that prints them in a CI log therefore never prints a line that a quoted string started.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from xml.etree import ElementTree

from .terminal import escape


@dataclass(frozen=True)
class JUnitCase:
    """One test case: a failure is a check that did not hold; an error is a case that could not run."""

    classname: str
    name: str
    seconds: float = 0.0
    failure: str | None = None
    error: str | None = None


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def _one_line(text: str) -> str:
    """A name or message: one line, every control, bidi and surrogate character a visible escape."""
    return _xml_text(escape(text))


def _lines(text: str) -> str:
    """A failure's text: its lines kept, each escaped as `_one_line`."""
    return "\n".join(_one_line(line) for line in text.split("\n"))


def junit_xml(suite_name: str, cases: Sequence[JUnitCase]) -> str:
    cases = [
        JUnitCase(
            _one_line(case.classname),
            _one_line(case.name),
            case.seconds,
            None if case.failure is None else _lines(case.failure),
            None if case.error is None else _lines(case.error),
        )
        for case in cases
    ]
    suite = ElementTree.Element(
        "testsuite",
        name=_one_line(suite_name),
        tests=str(len(cases)),
        failures=str(sum(case.failure is not None for case in cases)),
        errors=str(sum(case.error is not None for case in cases)),
        time=f"{sum(case.seconds for case in cases):.3f}",
    )
    for case in cases:
        element = ElementTree.SubElement(
            suite, "testcase", classname=case.classname, name=case.name, time=f"{case.seconds:.3f}"
        )
        if case.failure is not None:
            ElementTree.SubElement(
                element, "failure", message=case.failure.splitlines()[0][:500] if case.failure else ""
            ).text = case.failure
        elif case.error is not None:
            ElementTree.SubElement(
                element, "error", message=case.error.splitlines()[0][:500] if case.error else ""
            ).text = case.error
    ElementTree.indent(suite)
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
