"""GitHub Actions workflow commands (`::error file=...,line=...,col=...::message`): findings shown on the
pull request's diff, at the spec line they are about.

Escaping follows GitHub's toolkit (`@actions/core` `issueCommand`): `%`, CR and LF in the message, and also
`:` and `,` in property values, are percent-encoded, so a spec string can never end the command early or
start another one.
"""

from __future__ import annotations


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, *, file: str | None = None, line: int | None = None, col: int | None = None, title: str | None = None) -> str:
    """One workflow command line; `level` is error, warning or notice."""
    properties = [
        f"{key}={_property(str(value))}"
        for key, value in (("file", file), ("line", line), ("col", col), ("title", title))
        if value is not None
    ]
    return f"::{level}{' ' + ','.join(properties) if properties else ''}::{_data(message)}"
