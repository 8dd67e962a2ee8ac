"""How the review words a change of text: only the words that changed, with a little context."""

from __future__ import annotations

import dataclasses
from typing import Any


def scope_changes(old: Any, new: Any) -> str:
    """Each scope field that changed: a list's items removed and added, a text's changed words."""
    parts = []
    for field in dataclasses.fields(old):
        before, after = getattr(old, field.name), getattr(new, field.name)
        if before == after:
            continue
        if isinstance(before, tuple):
            moved = [f"removed '{item}'" for item in before if item not in after] + [f"added '{item}'" for item in after if item not in before]
            parts.append(f"{field.name}: {', '.join(moved) or 'reordered'}")
        else:
            parts.append(f"{field.name}: {reworded(str(before), str(after))}")
    return "; ".join(parts)


def reworded(old: str, new: str, context: int = 3) -> str:
    """`'…a few words before, the old words, a few after…' -> '…the same, with the new words…'`: only what changed,
    with `context` words either side, so a one-word edit of a long text reads as one."""
    before, after = old.split(), new.split()
    start = 0
    while start < min(len(before), len(after)) and before[start] == after[start]:
        start += 1
    end = 0
    while end < min(len(before), len(after)) - start and before[-1 - end] == after[-1 - end]:
        end += 1

    def excerpt(words: list[str]) -> str:
        first, last = max(start - context, 0), len(words) - max(end - context, 0)
        return ("…" if first > 0 else "") + " ".join(words[first:last]) + ("…" if last < len(words) else "")

    return f"'{excerpt(before)}' -> '{excerpt(after)}'"
