"""Accepted review findings, kept in the repository (`spec/review-waivers.yaml`) and reviewed like code.

    waivers:
      - finding: DIRECTIVE_CHANGED:3f0c6a1d2b9e8f47   # as `diff` prints it for the finding
        reason: Reworded for clarity; the operator's instruction is unchanged (reviewed in #123)

A waiver accepts exactly one finding: its rule, what changed where, and the whole base and head values
(`Change.fingerprint`). Any further change of the same place is another finding, which the waiver does not
cover. A waived finding is still listed, marked with its waiver's reason, but `diff --fail-on` does not count
it. A waiver that matches no finding is stale: it is listed, and it fails `--fail-on` (as an unused `noqa`
fails ruff), so accepted risk never outlives the change it was written for. The file is read from the head
side of the diff.

A waiver waives only once a reviewer has approved it on the base branch: one the compared change itself adds
(its finding is not waived on the base side) would let a pull request pass `--fail-on` by accepting its own
finding. Such a waiver waives nothing; it is reported as a finding of its own, `WAIVER_ADDED` (weakens-safety),
at its line in the head's waivers file, so the gate still fails until the waiver is on the base branch.
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
from .rules import RULES, WAIVER_ADDED
from .source import side_file

if TYPE_CHECKING:  # `check` validates the waivers file without loading the review
    from .collector import Change, Review

WAIVERS_FILE = "spec/review-waivers.yaml"
_KEYS = ("finding", "reason")
_FINDING = re.compile(r"([A-Z][A-Z_]*):([0-9a-f]{16})")
_EXAMPLE = "DIRECTIVE_CHANGED:3f0c6a1d2b9e8f47"


@dataclasses.dataclass(frozen=True)
class Waiver:
    finding: str  # RULE:fingerprint
    reason: str
    mark: Mark
    # Whether the base side of the diff waives the same finding (a reviewer approved it there); a waiver the
    # compared change adds is False, waives nothing and is a WAIVER_ADDED finding (see `apply_waivers`).
    on_base: bool = True

    @property
    def rule(self) -> str:
        return self.finding.partition(":")[0]

    def matches(self, change: Change) -> bool:
        return change.finding == self.finding


def read_waivers(root: Path, head_source: str, base_source: str | None = None) -> tuple[Waiver, ...]:
    """The head side's waivers (none when it has no waivers file), each marked with whether the base side
    (`base_source`) waives the same finding; raises SpecInvalid for a malformed one. Without `base_source`,
    every waiver is taken as the base's (as before WAIVER_ADDED): a review of a change passes its base."""
    waivers = _side_waivers(root, head_source)
    if base_source is None:
        return waivers
    return on_base(waivers, base_findings(root, base_source))


def _side_waivers(root: Path, source: str) -> tuple[Waiver, ...]:
    data = side_file(root, source, WAIVERS_FILE)
    if data is None:
        return ()
    with tempfile.TemporaryDirectory(prefix="resume-contract-waivers-") as scratch:
        path = Path(scratch) / "review-waivers.yaml"
        path.write_bytes(data)
        return parse_waivers(path)


def base_findings(root: Path, base_source: str) -> frozenset[str]:
    """The findings the base side's waivers file waives. A base whose file is malformed (or in an older form)
    approves nothing: every head waiver then counts as added, which fails closed."""
    try:
        return frozenset(waiver.finding for waiver in _side_waivers(root, base_source))
    except SpecInvalid:
        return frozenset()


def on_base(waivers: tuple[Waiver, ...], approved: frozenset[str]) -> tuple[Waiver, ...]:
    """`waivers` (the head's), each marked with whether its finding is among `approved` (the base's)."""
    return tuple(dataclasses.replace(waiver, on_base=waiver.finding in approved) for waiver in waivers)


def parse_waivers(path: Path) -> tuple[Waiver, ...]:
    loaded, errors = load_spec_file(path, WAIVERS_FILE)
    if loaded is None or errors:
        raise SpecInvalid(errors)
    data = loaded.data
    if not isinstance(data, dict) or set(data) != {"waivers"} or not isinstance(data["waivers"], list):
        raise SpecInvalid([SpecError(Mark(WAIVERS_FILE, 1, 1), "expected one key, 'waivers', holding a list of {finding, reason}")])
    waivers, problems = [], []
    for index, item in enumerate(data["waivers"]):
        mark = loaded.mark(("waivers", index))
        if not isinstance(item, dict):
            problems.append(SpecError(mark, "a waiver is a mapping with finding and reason"))
            continue
        for key in item:
            if key in ("rule", "location"):
                problems.append(SpecError(loaded.key_mark(("waivers", index, key)), f"a waiver no longer names a {key}: it names the one finding it accepts, as `diff` prints it (finding: {_EXAMPLE}), so it cannot outlive that change"))
            elif key not in _KEYS:
                problems.append(SpecError(loaded.key_mark(("waivers", index, key)), f"unknown key '{key}'; a waiver has [{', '.join(_KEYS)}]"))
        finding, reason = item.get("finding"), item.get("reason")
        matched = _FINDING.fullmatch(finding) if isinstance(finding, str) else None
        if matched is None:
            where = loaded.mark(("waivers", index, "finding")) if "finding" in item else mark
            problems.append(SpecError(where, f"a waiver needs the finding it accepts, RULE:FINGERPRINT as `diff` prints it (e.g. {_EXAMPLE}); got {finding!r}"))
        elif matched.group(1) not in RULES:
            close = difflib.get_close_matches(matched.group(1), list(RULES), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(SpecError(loaded.mark(("waivers", index, "finding")), f"unknown rule {matched.group(1)!r}{hint}"))
        elif matched.group(1) == WAIVER_ADDED.id:
            problems.append(SpecError(loaded.mark(("waivers", index, "finding")), f"{WAIVER_ADDED.id} cannot be waived: the waiver it names waives once a reviewer has approved it on the base branch"))
        if not isinstance(reason, str) or not reason.strip():
            problems.append(SpecError(mark, "a waiver needs a reason: why the finding is accepted, and who reviewed it"))
        waivers.append(Waiver(str(finding), str(reason), mark))
    if problems:
        raise SpecInvalid(problems)
    return tuple(waivers)


WAIVER_ADDED_WHY = (
    "the change under review waives its own finding, so the waiver waives nothing yet: a reviewer must approve "
    "it on the base branch first (merge the waiver there, then review this change again)"
)


def waiver_added(waiver: Waiver) -> Change:
    """The WAIVER_ADDED finding for a waiver the compared change adds, at the waiver's line on the head side."""
    from .collector import Change

    return Change(
        WAIVER_ADDED.id,
        WAIVER_ADDED.change_class,
        f"the change adds a waiver of its own finding {waiver.finding} (reason: {waiver.reason})",
        None,
        waiver.mark,
        WAIVER_ADDED_WHY,
        values=(waiver.finding, waiver.reason),
    )


def apply_waivers(review: Review, waivers: tuple[Waiver, ...]) -> Review:
    """The review with each change's waiver (a waiver on the base side only), a WAIVER_ADDED finding for each
    waiver the change adds that matches one of its findings (it waives nothing), and the waivers that matched
    nothing (or a finding another waiver already accepted)."""
    from .collector import report_order

    used: set[int] = set()
    added = []
    for number, waiver in enumerate(waivers):
        if not waiver.on_base and any(waiver.matches(change) for change in review.changes):
            used.add(number)
            added.append(waiver_added(waiver))
    changes = tuple(sorted([*review.changes, *added], key=report_order)) if added else review.changes
    waived: dict[int, Waiver] = {}
    for index, change in enumerate(changes):
        for number, waiver in enumerate(waivers):
            if waiver.on_base and waiver.matches(change):
                waived[index] = waiver
                used.add(number)
                break
    stale = tuple(waiver for number, waiver in enumerate(waivers) if number not in used)
    return dataclasses.replace(review, changes=changes, waived=tuple(sorted(waived.items())), stale_waivers=stale)
