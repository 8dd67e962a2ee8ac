"""The ids a workspace path is built from (a session's, a run's): checked before any path is built, so an id
can never name a place outside its directory."""

from __future__ import annotations

import re

from ..errors import InvalidLedgerId

_ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")


def is_ledger_id(value: object) -> bool:
    return isinstance(value, str) and _ID_PATTERN.fullmatch(value) is not None


def check_ledger_id(kind: str, value: str) -> str:
    """Refuse anything but `^[A-Za-z0-9_-]{1,128}$`, before any path is built from it."""
    if not is_ledger_id(value):
        raise InvalidLedgerId(f"invalid {kind} id {value!r}: must match ^[A-Za-z0-9_-]{{1,128}}$")
    return value
