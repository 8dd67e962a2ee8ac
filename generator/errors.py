"""Spec errors that carry a `file:line:col` location, collected rather than raised one at a time."""

from __future__ import annotations

from dataclasses import dataclass

from resume_contract.errors import ResumeContractError


@dataclass(frozen=True, order=True)
class Mark:
    """A 1-based position in a spec file, given relative to the project root (`spec/x.yaml`)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True, order=True)
class SpecError:
    """One problem in the spec, at the place a person has to edit."""

    mark: Mark
    message: str

    def __str__(self) -> str:
        return f"{self.mark}: {self.message}"


class SpecInvalid(ResumeContractError):
    """The spec cannot produce code; `errors` lists every problem found, sorted by location."""

    def __init__(self, errors: list[SpecError]) -> None:
        self.errors = sorted(set(errors))
        super().__init__("\n".join(str(error) for error in self.errors))
