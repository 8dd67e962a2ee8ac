"""Text shown to a person or a CI log: every character that could act instead of being read, made visible.

A spec, a ledger or an adapter's output is evidence, never markup: a newline in it would start a line of its
own (in CI, a forged `::error` workflow command), an escape sequence could clear a terminal and draw a fake
verdict, a bidi override could reorder what a reviewer reads, and a lone surrogate (valid in a JSON string)
cannot be written as UTF-8 at all. `escape` shows each such character as a visible `\\xNN` / `\\uNNNN` escape.
The one definition for the runtime's terminal output (`resume_contract.output.terminal`) and the generator's
reports (spec errors, the review), which may not import the runtime's output layer.
"""

from __future__ import annotations

import re

# C0 and C1 controls (DEL and the newline included), bidi embeddings, overrides and isolates, and lone
# surrogates. Compiled by `re` when first used (and cached there): a command writing only JSON never pays for it.
UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape(text: object) -> str:
    """`text` as one line, with every control (a newline too), bidi and surrogate character a visible escape."""
    return re.sub(UNSAFE, _visible, str(text))
