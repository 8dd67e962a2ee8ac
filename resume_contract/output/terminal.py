"""Text a person reads in a terminal: ledger strings (tool names, ids, messages) are evidence, never markup.

A model chooses tool names and ids; printed raw, an escape sequence could clear the screen and draw a fake
`disposition: safe_replay` over a blocked plan, and a lone surrogate (valid in a JSON string) cannot be
written as UTF-8 at all. `escape` shows every such character as a visible escape instead.
"""

from __future__ import annotations

from typing import TextIO

# The one definition (the generator's reports use it too): every control (a newline included), bidi and
# surrogate character written as a visible escape. A line printed as `escape(line)` stays one line.
from ..core.visible import escape

__all__ = ["EscapingWriter", "JsonStream", "escape", "raw_stream"]


class EscapingWriter:
    """A text stream for people: every write is escaped, line by line; `raw` is the stream underneath.

    Progress lines that redraw themselves with a carriage return write to `raw`: a carriage return in data
    would let a value overwrite the line it stands on.
    """

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        shown = "\n".join(escape(line) for line in text.split("\n"))
        encoding = getattr(self.raw, "encoding", None)
        if encoding:  # a terminal that cannot show a character gets its escape, never an exception
            shown = shown.encode(encoding, "backslashreplace").decode(encoding)
        return self.raw.write(shown)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()


def raw_stream(stream: TextIO | EscapingWriter) -> TextIO:
    """The stream under an EscapingWriter (for a self-redrawing progress line), or the stream itself."""
    return stream.raw if isinstance(stream, EscapingWriter) else stream


class JsonStream:
    """A stream for JSON output: exact, and UTF-8 on the bytes underneath whatever the terminal's encoding."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        buffer = getattr(self.raw, "buffer", None)
        if buffer is None or (getattr(self.raw, "encoding", "") or "").lower().replace("-", "") == "utf8":
            return self.raw.write(text)
        self.raw.flush()
        buffer.write(text.encode("utf-8"))
        return len(text)

    def write_bytes(self, data: bytes) -> None:
        """UTF-8 JSON bytes, written as they are when the stream has bytes underneath."""
        buffer = getattr(self.raw, "buffer", None)
        if buffer is None:
            self.raw.write(data.decode("utf-8"))
        else:
            self.raw.flush()
            buffer.write(data)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()


def run_options(workspace: str, session_id: str, run_id: str) -> str:
    """`--workspace W --session S --run R` as a shell reads it back, for a command a person pastes: each value
    quoted, and one that starts with `-` given as `--session=VALUE` (else it reads as an option)."""
    import shlex  # (only a hint needs it: a bare plan never loads shlex)

    def option(name: str, value: str) -> str:
        quoted = shlex.quote(value)
        return f"--{name}={quoted}" if value.startswith("-") else f"--{name} {quoted}"

    return " ".join((option("workspace", workspace), option("session", session_id), option("run", run_id)))
