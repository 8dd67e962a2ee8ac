"""The facts a continuation decision needs that are not properties of the spec's own constructs: named functions.

spec/continuation.yaml names a function (`normalise: normalised_cwd`); `check` refuses a name that is not in
FUNCTIONS, and the interpreter (`continuation.py`) calls it from here. This is the only hand-written code a
continuation decision runs that is not read off the spec.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType

_DRIVE_LETTER = re.compile(r"^[A-Za-z]:(?:/|$)")


def normalised_cwd(path: str) -> str:
    """A working directory as the reference compares them: `\\` becomes `/`, trailing `/` are stripped, and a
    drive-letter path (`C:/...`) is lower-cased."""
    slashed = path.replace("\\", "/").rstrip("/")
    return slashed.lower() if _DRIVE_LETTER.match(slashed) else slashed


# Name (as the spec writes it) -> the function: each takes one string value and returns the string compared.
FUNCTIONS: Mapping[str, Callable[[str], str]] = MappingProxyType({"normalised_cwd": normalised_cwd})
