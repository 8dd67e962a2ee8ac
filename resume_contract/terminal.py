"""Text a person reads in a terminal: ledger strings (tool names, ids, messages) are evidence, never markup.

A model chooses tool names and ids; printed raw, an escape sequence could clear the screen and draw a fake
`disposition: safe_replay` over a blocked plan, and a lone surrogate (valid in a JSON string) cannot be
written as UTF-8 at all. `escape` shows every such character as a visible escape instead.
"""

from __future__ import annotations

import re

# C0 and C1 controls (DEL included), bidi embeddings, overrides and isolates, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escape(text: object) -> str:
    """`text` with every control, bidi and surrogate character written as a visible escape."""
    return _UNSAFE.sub(_visible, str(text))
