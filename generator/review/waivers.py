"""Accepted review findings, kept in the repository (`spec/review-waivers.yaml`) and reviewed like code.

    waivers:
      - rule: DIRECTIVE_CHANGED                 # the finding's rule
        location: spec/projector.yaml:92        # optional: file, file:line or file:line:col (head side, else base)
        reason: Reworded for clarity; the operator's instruction is unchanged (reviewed in #123)

A waived finding is still listed, marked with its waiver's reason, but `diff --fail-on` does not count it. A
waiver that matches no finding is stale and is listed too, so accepted risk never outlives its finding
unnoticed. The file is read from the head side of the diff (the change under review carries its waivers).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import Mark, SpecError, SpecInvalid
from ..spec.loader import load_spec_file
from .rules import RULES
from .source import side_file

if TYPE_CHECKING:  # `check` validates the waivers file without loading the review
    from .collector import Change, Review

WAIVERS_FILE = "spec/review-waivers.yaml"
_KEYS = ("rule", "location", "reason")


@dataclasses.dataclass(frozen=True)
class Waiver:
    rule: str
    location: str | None
    reason: str
    mark: Mark

    def matches(self, change: Change) -> bool:
        if change.rule != self.rule:
            return False
        if self.location is None:
            return True
        return any(mark is not None and _at(mark, self.location) for mark in (change.head, change.base))


def _at(mark: Mark, location: str) -> bool:
    file, *place = location.split(":")
    return mark.file == file and place == [str(mark.line), str(mark.column)][: len(place)]


# A location as the report prints it: a path from the repository root, then :line or :line:col if wanted.
_LOCATION = re.compile(r"spec/[\w./-]+\.(?:yaml|json)(?::[1-9]\d*(?::[1-9]\d*)?)?")


def read_waivers(root: Path, head_source: str) -> tuple[Waiver, ...]:
    """The head side's waivers (none when it has no waivers file); raises SpecInvalid for a malformed one."""
    data = side_file(root, head_source, WAIVERS_FILE)
    if data is None:
        return ()
    with tempfile.TemporaryDirectory(prefix="resume-contract-waivers-") as scratch:
        path = Path(scratch) / "review-waivers.yaml"
        path.write_bytes(data)
        return parse_waivers(path)


def parse_waivers(path: Path) -> tuple[Waiver, ...]:
    loaded, errors = load_spec_file(path, WAIVERS_FILE)
    if loaded is None or errors:
        raise SpecInvalid(errors)
    data = loaded.data
    if not isinstance(data, dict) or set(data) != {"waivers"} or not isinstance(data["waivers"], list):
        raise SpecInvalid([SpecError(Mark(WAIVERS_FILE, 1, 1), "expected one key, 'waivers', holding a list of {rule, location, reason}")])
    waivers, problems = [], []
    for index, item in enumerate(data["waivers"]):
        mark = loaded.mark(("waivers", index))
        if not isinstance(item, dict):
            problems.append(SpecError(mark, "a waiver is a mapping with rule, reason and (optionally) location"))
            continue
        problems += [SpecError(loaded.key_mark(("waivers", index, key)), f"unknown key '{key}'; a waiver has [{', '.join(_KEYS)}]") for key in item if key not in _KEYS]
        rule, reason, location = item.get("rule"), item.get("reason"), item.get("location")
        if rule not in RULES:
            close = difflib.get_close_matches(str(rule), list(RULES), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(SpecError(loaded.mark(("waivers", index, "rule")), f"unknown rule {rule!r}{hint}"))
        if not isinstance(reason, str) or not reason.strip():
            problems.append(SpecError(loaded.mark(("waivers", index)), "a waiver needs a reason: why the finding is accepted, and who reviewed it"))
        if location is not None and not (isinstance(location, str) and _LOCATION.fullmatch(location)):
            hint = f" (did you mean 'spec/{location}'?)" if isinstance(location, str) and _LOCATION.fullmatch(f"spec/{location}") else ""
            problems.append(
                SpecError(
                    loaded.mark(("waivers", index, "location")),
                    f"location {location!r} is not a spec file's path from the repository root, optionally with :line or "
                    f":line:col as the report prints it (e.g. spec/projector.yaml:92){hint}",
                )
            )
        waivers.append(Waiver(str(rule), location if isinstance(location, str) else None, str(reason), mark))
    if problems:
        raise SpecInvalid(problems)
    return tuple(waivers)


def apply_waivers(review: Review, waivers: tuple[Waiver, ...]) -> Review:
    """The review with each change's first matching waiver, and the waivers that matched nothing."""
    waived: dict[int, Waiver] = {}
    used: set[int] = set()
    for index, change in enumerate(review.changes):
        for number, waiver in enumerate(waivers):
            if waiver.matches(change):
                waived[index] = waiver
                used.add(number)
                break
    stale = tuple(waiver for number, waiver in enumerate(waivers) if number not in used)
    return dataclasses.replace(review, waived=tuple(sorted(waived.items())), stale_waivers=stale)
