"""Spec errors that carry a `file:line:col` location, collected rather than raised one at a time.

A message quotes the spec (a key, a value, a file name), and the spec may come from a pull request: as text
(`str`, what every text report prints, one line per error) each is shown with its control characters, newlines
included, as visible escapes, so that an error can never print a line of its own (a forged `::error` workflow
command in CI, a fake verdict in a terminal). `message` itself stays exact, for JSON.
"""

from __future__ import annotations

from dataclasses import dataclass

from resume_contract.core.visible import escape
from resume_contract.errors import ResumeContractError


@dataclass(frozen=True, order=True)
class Mark:
    """A 1-based position in a spec file, given relative to the project root (`spec/x.yaml`)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{escape(self.file)}:{self.line}:{self.column}"


@dataclass(frozen=True, order=True)
class SpecError:
    """One problem in the spec, at the place a person has to edit."""

    mark: Mark
    message: str

    def __str__(self) -> str:
        return f"{self.mark}: {escape(self.message)}"


class SpecInvalid(ResumeContractError):
    """The spec cannot produce code; `errors` lists every problem found, sorted by location."""

    def __init__(self, errors: list[SpecError]) -> None:
        self.errors = sorted(set(errors))
        super().__init__("\n".join(str(error) for error in self.errors))
