"""Spec values -> Python and Markdown source text. The only place a spec string becomes code.

Every value is emitted through `repr()` (or a Markdown/Mermaid escape), never spliced into code, so a YAML
value such as `"x'); import os #"` stays a string. Long literals are wrapped one element per line, the way a
formatter would, so a one-value spec change is a one-line diff.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Any

LINE_WIDTH = 120
# A value on a top-level assignment (`NAME: Mapping[...] = MappingProxyType(<value>)`) starts at most this
# far into its line; values nested in a wrapped literal start at their indent.
TOP_LEVEL_LEAD = 64


def py(value: Any, indent: int = 0, lead: int = 0) -> str:
    """A deterministic Python literal for JSON-like values, tuples and None, wrapped to LINE_WIDTH.

    `indent` is the indentation of the line the value starts on, `lead` how many columns of that line come
    before the value. A container that does not fit is written one element per line; a string that does not
    fit becomes a parenthesized implicit concatenation of pieces cut after spaces or commas."""
    flat = _flat(value)
    # Two columns for what may follow the value on its line: `,` `)` or `},`.
    if indent + lead + len(flat) + 2 <= LINE_WIDTH or not value or isinstance(value, Code):
        return flat
    if isinstance(value, str):
        return _wrapped_string(value, indent)
    if not isinstance(value, (dict, list, tuple)):
        return flat
    inner = " " * (indent + 4)
    if isinstance(value, dict):
        items = [f"{inner}{_flat(key)}: {py(item, indent + 4, len(_flat(key)) + 2)}," for key, item in value.items()]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    items = [f"{inner}{py(item, indent + 4)}," for item in value]
    open_, close = ("[", "]") if isinstance(value, list) else ("(", ")")
    return open_ + "\n" + "\n".join(items) + "\n" + " " * indent + close


def py_call(name: str, fields: list[tuple[str, Any]], indent: int = 0, lead: int = 0) -> str:
    """`Name(field=value, ...)`, on one line if it fits, else one keyword argument per line."""
    flat = f"{name}(" + ", ".join(f"{key}={_flat(value)}" for key, value in fields) + ")"
    if indent + lead + len(flat) + 2 <= LINE_WIDTH:
        return flat
    inner = " " * (indent + 4)
    lines = [f"{inner}{key}={py(value, indent + 4, len(key) + 1)}," for key, value in fields]
    return f"{name}(\n" + "\n".join(lines) + "\n" + " " * indent + ")"


_BREAK_AFTER = re.compile(r"[ ,]")


def _wrapped_string(text: str, indent: int) -> str:
    inner = " " * (indent + 4)
    pieces = _string_pieces(text, LINE_WIDTH - len(inner))
    return "(\n" + "\n".join(f"{inner}{piece!r}" for piece in pieces) + "\n" + " " * indent + ")"


def _string_pieces(text: str, room: int) -> list[str]:
    """`text` cut into pieces whose literals fit `room` columns (one character a piece at the least)."""
    pieces: list[str] = []
    rest = text
    while rest:
        cut = len(rest)
        if cut > room - 2 >= 1:
            # A literal is at least two characters longer than its text, so every cut past room - 2 fails: start
            # where the search below would first come within reach (the last break there, else room - 2), which
            # keeps each piece's search within its line and the whole cut linear in the text (it was cubic).
            breaks = [match.end() for match in _BREAK_AFTER.finditer(rest, 0, room - 2)]
            cut = breaks[-1] if breaks else room - 2
        while len(repr(rest[:cut])) > room:
            # The last space or comma that keeps the piece within the line; a hard cut when there is none.
            breaks = [match.end() for match in _BREAK_AFTER.finditer(rest, 0, cut - 1)]
            cut = breaks[-1] if breaks and breaks[-1] < cut else max(1, cut - 1)
        pieces.append(rest[:cut])
        rest = rest[cut:]
    return pieces or [""]


class Code(str):
    """Python the generator itself wrote (a generated function's name): emitted as it is, never as a string."""


def py_expression(source: str, indent: int) -> str:
    """A compiled expression (generator/expr: its string literals already repr()'d) as the parenthesized value of
    a `return`, broken at the spaces between its tokens (between any two, where a run has none) so that no line
    passes LINE_WIDTH."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in (tokenize.NEWLINE, tokenize.ENDMARKER)]
    inner = " " * (indent + 4)
    pieces, position = [], 0  # (the text before the token, the token)
    for token in tokens:
        gap = source[position : token.start[1]]
        position = token.end[1]
        if token.type == tokenize.STRING and len(inner) + len(token.string) > LINE_WIDTH:
            parts = [repr(piece) for piece in _string_pieces(ast.literal_eval(token.string), LINE_WIDTH - len(inner) - 2)]  # adjacent literals concatenate
            pieces += [(gap, parts[0])] + [(" ", part) for part in parts[1:]]
            continue
        pieces.append((gap, token.string))
    lines: list[str] = []
    line: list[tuple[str, str]] = []
    for piece in pieces:
        line.append(piece)
        if len(inner) + len("".join(gap + text for gap, text in line).lstrip()) > LINE_WIDTH and len(line) > 1:
            spaces = [index for index, (gap, _) in enumerate(line) if gap and index > 0]
            cut = spaces[-1] if spaces else len(line) - 1
            lines.append(inner + "".join(gap + text for gap, text in line[:cut]).strip())
            line = line[cut:]
    lines.append(inner + "".join(gap + text for gap, text in line).strip())
    return "(\n" + "\n".join(lines) + "\n" + " " * indent + ")"


def _flat(value: Any) -> str:
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flat(key)}: {_flat(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(item) for item in value) + "]"
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({_flat(value[0])},)"
        return "(" + ", ".join(_flat(item) for item in value) + ")"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return repr(value)
    raise TypeError(f"cannot emit a literal for {type(value).__name__}")


def md_cell(text: str) -> str:
    """Text safe inside one Markdown table cell: shown as written, never a link, an image, code or HTML."""
    # `&` first: an entity such as `&#x202E;` would otherwise render as the character the spec refuses. The
    # backslash before the characters it escapes; brackets and backticks, so that text from a pull request's spec
    # cannot place a link, an image or a code span in the project's own comment.
    text = " ".join(str(text).split()).replace("&", "&amp;").replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")
    return text.replace("[", "\\[").replace("]", "\\]").replace("`", "\\`")


_BLOCK_START = re.compile(r"^(?:[#>+*=_-]|~~~|```|\d+[.)]|\[)")


def md_text(text: str) -> str:
    """Text that starts a Markdown line or list item: one line, and never the start of a heading, quote, list,
    fence or rule (a summary beginning with `~~~` would otherwise swallow the rest of the document)."""
    cell = md_cell(text)
    return "\\" + cell if _BLOCK_START.match(cell) else cell


def md_code(text: str) -> str:
    """A value as inline code in a table cell: shown exactly as written. Inside a code span nothing is markup (no
    entity, escape or link), so only `|`, which ends the cell even there, is escaped; the span's fence is one
    backtick longer than the longest run of backticks in the text (CommonMark closes a span at an equal run)."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def mermaid_label(text: str) -> str:
    """A Mermaid transition label: no characters that end the label or start a new statement."""
    return "".join(character if character.isalnum() or character in " _-[]" else " " for character in text)
