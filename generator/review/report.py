"""A Review as text (terminal), Markdown (a pull-request comment), GitHub annotations or JSON (scripts).

A review quotes the specs it compares (keys, values, reasons of waivers), and the head's spec is the pull
request's: every line of text, every Markdown cell and every annotation's message shows a control character
(a newline included) as a visible escape (`resume_contract.output.terminal.escape`), so nothing quoted can
start a line of its own: no forged `::error` workflow command, verdict or table row. In Markdown each quoted
string is also a table cell that cannot leave its cell or place a link, code or HTML (`md_cell`). JSON is
exact (its strings are escaped by JSON itself).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from resume_contract.core.visible import escape

from ..literals import md_cell, md_code
from .collector import Review
from .evidence import describe
from .rules import CLASSES, RULES
from .waivers import WAIVERS_FILE

EXAMPLES_SHOWN = 5


def _summary(review: Review) -> str:
    counts = review.counts
    total = len(review.changes)
    parts = ", ".join(f"{counts[name]} {name}" for name in CLASSES)
    waived = f"; {len(review.waived)} waived" if review.waived else ""
    return f"{total} change{'s' if total != 1 else ''}: {parts}{waived}"


def _stale_lines(review: Review) -> list[str]:
    return [f"stale waiver {waiver.mark}: {waiver.finding} matches no finding of this change; remove it (a stale waiver fails --fail-on)" for waiver in review.stale_waivers]


WAIVE_HINT = f"to accept a finding, list it in {WAIVERS_FILE} under `waivers:` as `- {{finding: RULE:FINGERPRINT, reason: why, and who reviewed it}}`"


def _evidence_heading(review: Review) -> str:
    canonical = sum(1 for item in review.evidence if item.label.startswith("canonical"))
    among = "" if review.language else f"{canonical} canonical; "
    return (
        f"{len(review.evidence)} of {review.ledgers_explored} ledgers decide differently "
        f"({among}every ledger up to {review.depth} events explored), smallest first"
    )


def _explored_line(review: Review) -> str:
    return (
        f"explored: {'' if review.language else 'the canonical ledgers and '}every ledger up to {review.depth} events over both sides' alphabets, "
        f"{review.alphabet.describe()} (--format json lists them), {review.ledgers_explored} ledgers in all"
    )


def _moved(item: Any, review: Review) -> tuple[str, str]:
    noun = "items" if review.language else "operations"
    return describe(item.base, item.base_refused, noun), describe(item.head, item.head_refused, noun)


def as_text(review: Review, base_label: str, head_label: str) -> str:
    lines = [f"resume-contract diff {base_label} -> {head_label}", _summary(review)]
    for index, change in enumerate(review.changes):
        lines.append(f"  {change.change_class:<15} {change.rule}: {change.message}")
        lines.append(f"  {'':<15} finding {change.finding}")
        where = [f"base {change.base}" if change.base else "", f"head {change.head}" if change.head else ""]
        if any(where):
            lines.append(f"  {'':<15} {'  '.join(part for part in where if part)}")
        if change.why:
            lines.append(f"  {'':<15} why: {change.why}")
        waiver = review.waiver_of(index)
        if waiver is not None:
            lines.append(f"  {'':<15} waived ({waiver.mark}): {waiver.reason}")
    if review.evidence:
        lines.append(_evidence_heading(review) + ":")
        for item in review.evidence[:EXAMPLES_SHOWN]:
            base, head = _moved(item, review)
            lines.append(f"  {item.effect:<15} {item.label}: {base} -> {head}")
        if len(review.evidence) > EXAMPLES_SHOWN:
            lines.append(f"  ... and {len(review.evidence) - EXAMPLES_SHOWN} more (--format json lists them)")
    lines.append(_explored_line(review))
    lines += _stale_lines(review)
    if len(review.waived) < len(review.changes):
        lines.append(WAIVE_HINT)
    return "\n".join(escape(line) for line in lines) + "\n"


def _cell(text: object) -> str:
    """A quoted string as one Markdown table cell: its controls shown as escapes, nothing in it markup."""
    return md_cell(escape(text))


@dataclass(frozen=True)
class Links:
    """Where each side's files are browsed: `{repository}/blob/{commit}/{file}#L{line}` (GitHub, Gitea and
    Forgejo all use this form); a side without a commit (a directory, the working tree) is not linked."""

    repository: str
    base_commit: str | None
    head_commit: str | None

    def to(self, mark: Any, commit: str | None) -> str:
        text = _cell(mark or "")
        if mark is None or commit is None:
            return text
        return f"[{text}]({self.repository}/blob/{commit}/{quote(mark.file)}#L{mark.line})"


def as_markdown(review: Review, base_label: str, head_label: str, links: Links | None = None) -> str:
    """A pull-request comment: the verdict, one table row per finding (its locations linked when `links` is
    given), the ledger evidence folded in <details>, and any stale waivers."""
    place = links.to if links is not None else (lambda mark, _commit: _cell(mark or ""))
    base_commit, head_commit = (links.base_commit, links.head_commit) if links is not None else (None, None)
    verdict = review.verdict
    lines = [
        f"### Contract review: **{verdict}**",
        "",
        f"{md_code(escape(base_label))} -> {md_code(escape(head_label))}: {_summary(review)}.",
        "",
    ]
    if review.changes:
        lines += ["| Class | Finding | Change | Why | Base | Head |", "|---|---|---|---|---|---|"]
        for index, change in enumerate(review.changes):
            waiver = review.waiver_of(index)
            waived = f" _(waived: {_cell(waiver.reason)})_" if waiver is not None else ""
            lines.append(
                f"| {change.change_class} | {md_code(change.finding)} | {_cell(change.message)}{waived} | {_cell(change.why)} | "
                f"{place(change.base, base_commit)} | {place(change.head, head_commit)} |"
            )
        lines.append("")
    if review.evidence:
        # Folded: the findings above are what a reviewer reads first; the ledgers are the proof, one click away.
        lines += ["<details>", f"<summary>{_cell(_evidence_heading(review))}</summary>", ""]
        lines += ["| Effect | Ledger | Base | Head |", "|---|---|---|---|"]
        for item in review.evidence[:EXAMPLES_SHOWN]:
            base, head = _moved(item, review)
            lines.append(f"| {item.effect} | {_cell(item.label)} | {_cell(base)} | {_cell(head)} |")
        if len(review.evidence) > EXAMPLES_SHOWN:
            lines.append(f"\n_{len(review.evidence) - EXAMPLES_SHOWN} more ledgers decide differently._")
        lines += ["", "</details>"]
    if review.stale_waivers:
        lines += ["", "#### Stale waivers", ""] + [f"- {_cell(line)}" for line in _stale_lines(review)]
    if len(review.waived) < len(review.changes):
        lines += ["", _cell(WAIVE_HINT)]
    return "\n".join(lines).rstrip() + "\n"


# Ledgers `--format json` lists with their events; the rest are counted (a rename can move tens of thousands).
JSON_LEDGERS = 200


def as_json(review: Review, base_label: str, head_label: str, ledgers: int = JSON_LEDGERS) -> str:
    """The review for scripts; the first `ledgers` ledgers that decide differently are listed (0: all)."""
    document: dict[str, Any] = {
        "base": base_label,
        "head": head_label,
        "verdict": review.verdict,
        "summary": {**review.counts, "total": len(review.changes)},
        "changes": [
            {
                "rule": change.rule,
                "finding": change.finding,
                "class": change.change_class,
                "about": RULES[change.rule].meaning,
                "message": change.message,
                "why": change.why,
                "base": str(change.base) if change.base else None,
                "head": str(change.head) if change.head else None,
                "waived": None if review.waiver_of(index) is None else review.waiver_of(index).reason,
            }
            for index, change in enumerate(review.changes)
        ],
        "staleWaivers": [{"finding": w.finding, "at": str(w.mark)} for w in review.stale_waivers],
        "evidence": {
            "ledgersExplored": review.ledgers_explored,
            "depth": review.depth,
            "alphabet": [{"letter": name, "standsFor": others} for name, others in review.alphabet.listing()],
            "ledgersDecidingDifferently": len(review.evidence),
            "ledgers": [
                {
                    "label": item.label,
                    "effect": item.effect,
                    "why": item.why,
                    "base": _decided_json(item.base, item.base_refused),
                    "head": _decided_json(item.head, item.head_refused),
                    "events": [json.loads(row) for row in item.rows],
                    **({} if item.base_rows is None else {"baseEvents": [json.loads(row) for row in item.base_rows]}),
                }
                for item in (review.evidence[:ledgers] if ledgers else review.evidence)
            ],
        },
    }
    return json.dumps(document, indent=2) + "\n"


def _decided_json(decided: Any, refused: Any) -> dict[str, Any]:
    """One side's decision of a moved ledger (core.moves.Outcome): `refused` says why none was made."""
    return {
        "refusedRows": [{"row": position, "corruption": kind} for position, kind in refused],
        **({"refused": decided.refused} if decided.refused else {}),
        "disposition": decided.word,
        "proceeds": decided.proceeds,
        "rejectionReasons": list(decided.reasons),
        "diagnostics": list(decided.diagnostics),
        "operationStatuses": list(decided.statuses),
        "toVerify": list(decided.to_verify),
        "replay": list(decided.replay),
    }


_LEVELS = {"weakens-safety": "error", "breaking": "warning", "tightens": "notice", "neutral": "notice"}


def as_github(review: Review, base_label: str, head_label: str) -> str:
    """GitHub Actions annotations, one per change at its head location (its base one when it was removed):
    weakens-safety as errors, breaking as warnings, the rest (and waived findings) as notices; then the summary.
    Each message shows its controls as visible escapes, then is escaped by GitHub's rules (`annotation`)."""
    from ..annotations import annotation

    lines = []
    for index, change in enumerate(review.changes):
        waiver = review.waiver_of(index)
        message = change.message if waiver is None else f"{change.message} (waived: {waiver.reason})"
        # GitHub shows annotations on the head's files: a removed item's base line would point at another line.
        head, base = change.head, change.base
        if head is None and base is not None:
            message += f" (it was at {base} on the base side)"
        lines.append(
            annotation(
                "notice" if waiver is not None else _LEVELS.get(change.change_class, "notice"),
                escape(message),
                file=head.file if head else base.file if base else None,
                line=head.line if head else None,
                col=head.column if head else None,
                title=f"{change.change_class}: {change.finding}",
            )
        )
    lines += [
        annotation("warning", escape(line), file=waiver.mark.file, line=waiver.mark.line, title="stale review waiver")
        for waiver, line in zip(review.stale_waivers, _stale_lines(review))
    ]
    lines.append(escape(f"resume-contract diff {base_label} -> {head_label}: {_summary(review)}"))
    return "\n".join(lines) + "\n"
