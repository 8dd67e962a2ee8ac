"""The reader reads a ledger in chunks and finds every corruption where reading it whole would.

Each corrupt ledger is built row by row, so the line and byte offset of its bad row are known by
construction (never asked of the reader). It is read with chunks far smaller than a row, about one row, a few
rows and the default, so the bad row sits in the first chunk, after a chunk boundary, and across one.
(Streaming plans of random ledgers are held to the oracle and python-statemachine in test_properties.py.)
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from resume_contract.core.plan_json import plan_json
from resume_contract.errors import LedgerChanged, LedgerCorruption
from resume_contract.ledger.file_plan import plan_ledger
from resume_contract.ledger.reader import decode_rows

PATH = Path("ledger.jsonl")
CHUNK_SIZES = [1, 97, 256, 700, 1 << 22]


def row(index: int, *, session: str = "s", content: str | None = None, event_id: str | None = None) -> bytes:
    body = content or '{"kind":"function_call","id":"c%d","name":"write","args":{"path":"notes/%d.md"}}' % (index, index)
    return (
        '{"id":"%s","ts":%d,"partial":false,"sessionId":"%s","invocationId":"i","runId":"r","turnId":"t",'
        '"author":"agent","role":"model","content":%s}' % (event_id or f"e{index}", index, session, body)
    ).encode()


# kind -> the bad row that replaces row `index` (rows 0..index-1 are good; the ledger has 12 rows).
BAD_ROWS = {
    "invalid_utf8": lambda index: row(index)[:-3] + b"\xff\"}}",
    "invalid_json": lambda index: row(index)[:-1],
    "invalid_event": lambda index: row(index).replace(b'"partial":false', b'"partial":"no"'),
    "duplicate_key": lambda index: row(index).replace(b'"turnId":"t"', b'"turnId":"t","turnId":"u"'),
    "duplicate_key_in_free_json": lambda index: row(index).replace(b'{"path"', b'{"path":1,"path"'),
    "duplicate_key_in_content": lambda index: row(index).replace(b'"name":"write"', b'"name":"write","name":"read"'),
    "foreign_row": lambda index: row(index, session="other"),
    "duplicate_event_id": lambda index: row(index, event_id="e0"),
}


def ledger_with(kind: str, bad_index: int, rows: int = 12) -> tuple[bytes, int]:
    """The ledger bytes and the byte offset of its bad row."""
    lines = [row(index) for index in range(rows)]
    lines[bad_index] = BAD_ROWS[kind](bad_index)
    offset = sum(len(line) + 1 for line in lines[:bad_index])
    return b"".join(line + b"\n" for line in lines), offset


def corruption(data: bytes, chunk_bytes: int) -> LedgerCorruption:
    with pytest.raises(LedgerCorruption) as raised:
        decode_rows(PATH, data, chunk_bytes=chunk_bytes)
    return raised.value


@pytest.mark.parametrize("chunk_bytes", CHUNK_SIZES)
@pytest.mark.parametrize("bad_index", [1, 5, 11])
@pytest.mark.parametrize("kind", sorted(BAD_ROWS))
def test_every_corruption_is_found_at_its_line_and_byte_whatever_the_chunks(kind: str, bad_index: int, chunk_bytes: int) -> None:
    data, offset = ledger_with(kind, bad_index)
    found = corruption(data, chunk_bytes)
    assert (found.kind, found.line, found.offset) == (kind.split("_in_")[0], bad_index + 1, offset)


def test_the_bad_rows_lie_after_and_across_chunk_boundaries() -> None:
    # The premise of the test above: with 97-byte chunks, row 5 starts after the first chunk and spans a
    # boundary (rows are ~200 bytes), and with 256-byte chunks row 11 straddles one too.
    data, offset = ledger_with("invalid_json", 5)
    end = data.index(b"\n", offset)
    assert offset > 97 and offset // 97 != end // 97
    data, offset = ledger_with("invalid_json", 11)
    end = data.index(b"\n", offset)
    assert offset // 256 != end // 256


@pytest.mark.parametrize("chunk_bytes", CHUNK_SIZES)
def test_a_torn_last_row_is_found_whatever_the_chunks(chunk_bytes: int) -> None:
    data, offset = ledger_with("invalid_json", 11)  # the last row, cut: no newline after it
    torn = data[:-10]
    found = corruption(torn, chunk_bytes)
    assert (found.kind, found.line, found.offset) == ("torn_row", 12, offset)


@pytest.mark.parametrize("chunk_bytes", CHUNK_SIZES)
def test_of_several_corruptions_the_one_reported_is_the_whole_file_order(chunk_bytes: int) -> None:
    lines = [row(index) for index in range(12)]
    lines[2] = BAD_ROWS["invalid_json"](2)
    lines[9] = BAD_ROWS["invalid_utf8"](9)
    found = corruption(b"".join(line + b"\n" for line in lines), chunk_bytes)
    assert (found.kind, found.line) == ("invalid_utf8", 10)  # invalid UTF-8 anywhere comes first

    lines = [row(index) for index in range(12)]
    lines[2] = BAD_ROWS["foreign_row"](2)
    lines[9] = BAD_ROWS["invalid_event"](9)
    found = corruption(b"".join(line + b"\n" for line in lines), chunk_bytes)
    assert (found.kind, found.line) == ("invalid_event", 10)  # then the first row that is not an event

    lines = [row(index) for index in range(12)]
    lines[2] = BAD_ROWS["duplicate_event_id"](2)
    lines[9] = BAD_ROWS["foreign_row"](9)
    found = corruption(b"".join(line + b"\n" for line in lines), chunk_bytes)
    assert (found.kind, found.line) == ("foreign_row", 10)  # then a row of another run, then a repeated id


def test_a_repeated_key_is_found_when_texts_hold_quote_colon_and_spaced_colons() -> None:
    # The fast proof counts `":` marks; texts that hold one, or a key spaced from its colon, send the chunk
    # to the slow proof, which must still find the repeat and pass the rest.
    quoted = row(1, content='{"kind":"text","text":"say \\"a\\": b"}')
    spaced = row(2).replace(b'"turnId":"t"', b'"turnId" :"t"')
    data = b"".join(line + b"\n" for line in [row(0), quoted, spaced])
    events, _ = decode_rows(PATH, data)
    assert [event.id for event in events] == ["e0", "e1", "e2"]
    repeated = spaced.replace(b'"invocationId":"i"', b'"invocationId" :"i","invocationId":"i"')
    found = corruption(b"".join(line + b"\n" for line in [row(0), quoted, repeated]), 1 << 22)
    assert (found.kind, found.line) == ("duplicate_key", 3)


def test_a_planned_file_that_changes_is_not_copied(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b"".join(row(index) + b"\n" for index in range(3)))
    plan = plan_ledger(path)
    assert len(plan.runtime_events) == 3
    with path.open("ab") as handle:
        handle.write(row(3) + b"\n")
    with pytest.raises(LedgerChanged):
        plan_json(plan)


def test_a_ledger_of_one_chunk_is_written_from_the_bytes_its_plan_walked(tmp_path: Path) -> None:
    # A change the file's identity cannot show (the same size, its mtime put back) must not reach the plan's rows.
    path = tmp_path / "ledger.jsonl"
    written = b"".join(row(index) + b"\n" for index in range(3))
    path.write_bytes(written)
    plan = plan_ledger(path)
    before = os.stat(path)
    path.write_bytes(written.replace(b"notes/1.md", b"notes/X.md"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == before.st_mtime_ns
    document = plan_json(plan)
    assert document.count(b"notes/1.md") == 2 and b"notes/X.md" not in document  # its row, and its call's args


def test_the_counting_proof_passes_clean_rows_and_only_them() -> None:
    # Else every ledger silently takes the slow proof. Rows with colons in texts are proven by the `":` count.
    from resume_contract.contract import active
    MODEL = active().model
    from resume_contract.ledger.proofs import keys_proven

    clean = [row(0), row(1, content='{"kind":"text","text":"at 12:30, see https://example.com"}'), row(2)]
    clean.append(row(3).replace(b'"turnId":"t"', b'"turnId":"t","refs":{"toolCallId":"c","n":{"a":1}},"actions":{}'))
    data = b"".join(line + b"\n" for line in clean)
    assert keys_proven(data, [MODEL.decoder.decode(line) for line in clean], MODEL)
    for written, repeated in ((b'"toolCallId":"c"', b'"toolCallId":"c","toolCallId":"c"'), (b'{"a":1}', b'{"a":1,"a":1}')):
        lines = clean[:3] + [clean[3].replace(written, repeated, 1)]
        data = b"".join(line + b"\n" for line in lines)
        assert not keys_proven(data, [MODEL.decoder.decode(line) for line in lines], MODEL)


def _nested(levels: int, branch: str = "") -> bytes:
    # The event and its content are two levels; `args` holds the rest.
    inner = levels - 2
    body = '{"kind":"function_call","id":"c","name":"n","args":%s}' % ("[" * inner + "]" * inner)
    return row(0, content=body).replace(b'"turnId":"t"', b'"turnId":"t"' + branch.encode()) + b"\n"


def _verdicts(path: Path) -> set[str]:
    from resume_contract.ledger.store import read_ledger

    verdicts = set()
    for read in (lambda: read_ledger(path), lambda: plan_ledger(path), lambda: decode_rows(path, path.read_bytes(), chunk_bytes=7)):
        try:
            read()
            verdicts.add("ok")
        except LedgerCorruption as refused:
            verdicts.add(f"{refused.kind}: {refused.detail}")
    return verdicts


def _from_deep_stack(frames: int, call):
    return call() if frames == 0 else _from_deep_stack(frames - 1, call)


@pytest.mark.parametrize("branch", ["", ',"branch":"\\ud83d"'])  # a lone surrogate sends the row to the standard library
def test_nesting_deeper_than_256_levels_is_refused_the_same_way_on_every_path_and_stack(tmp_path: Path, branch: str) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(_nested(256, branch))
    assert _verdicts(path) == {"ok"}
    assert _from_deep_stack(600, lambda: _verdicts(path)) == {"ok"}
    path.write_bytes(_nested(257, branch))
    refused = {"invalid_json: nested deeper than 256 levels of arrays and objects"}
    assert _verdicts(path) == refused
    assert _from_deep_stack(600, lambda: _verdicts(path)) == refused
    path.write_bytes(_nested(256, branch).replace(b"[[", b'["[[[[\\"[",[', 1))  # brackets inside strings do not count
    assert _verdicts(path) == {"ok"}


def _tool_result_row(copies: int, *, closed: bool) -> bytes:
    # A tool result holding JSON as a string (a quote escaped every few bytes) beside enough brackets to need the
    # depth check; `closed=False` is the same row with the string's closing quote flipped: no longer terminated.
    text = '{\\"path\\":\\"a.md\\",\\"lines\\":[1,2]}' * copies
    result = '{"lists":[%s],"text":"%s%s}' % (",".join(["[]"] * 300), text, '"' if closed else "x")
    return row(0, content='{"kind":"function_response","id":"c1","name":"read","result":%s}' % result)


def _cpu_seconds(call, repeat: int = 3) -> float:
    """The least CPU time `call` takes of `repeat` tries (CPU time: a busy machine slows it little)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        call()
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("path", ["reader", "audit worker"])
def test_a_row_with_an_unterminated_string_is_refused_in_time_linear_in_its_length(tmp_path: Path, path: str) -> None:
    # Issue 23, item 4: the depth check stripped strings with a pattern that, inside an unterminated string,
    # scanned to the row's end from every quote: 48 s for one flipped byte in a 104 KB row. Refusing the
    # hostile row must cost about what reading the same row intact costs (here ~1.5x; it was ~1000x at 30 KB).
    from resume_contract.ledger.audit import summarize

    good, hostile = _tool_result_row(800, closed=True), _tool_result_row(800, closed=False)
    assert len(good) == len(hostile) > 25_000 and good.count(b"[") > 256 and good.count(b'\\"') > 4000
    ledgers = {}
    for name, data in (("good", good), ("hostile", hostile)):
        ledger = tmp_path / "sessions" / "s" / "runs" / name / "runtime-events.jsonl"
        ledger.parent.mkdir(parents=True)
        ledger.write_bytes(data.replace(b'"runId":"r"', b'"runId":"%s"' % name.encode()) + b"\n")
        ledgers[name] = ledger

    def read(name: str) -> str:
        if path == "audit worker":
            return summarize((tmp_path, "s", name, ledgers[name])).status
        try:
            decode_rows(ledgers[name], ledgers[name].read_bytes())
            return "ok"
        except LedgerCorruption as refused:
            return refused.kind

    assert read("good") in ("ok", "blocked") and read("hostile") in ("invalid_json", "corrupt")
    baseline = _cpu_seconds(lambda: read("good"))
    assert _cpu_seconds(lambda: read("hostile")) < 10 * baseline + 0.05


# Framings the one-call decoder (`decode_lines`) would read but a row-per-line ledger forbids, or that its
# framing proof cannot settle: each must get the per-line verdict, found at the same line and byte.
_FRAMINGS = {
    "two rows on one line": lambda rows: [rows[0], rows[1] + b" " + rows[2], *rows[3:]],
    "two rows on one line, no space": lambda rows: [rows[0], rows[1] + rows[2], *rows[3:]],
    "a row across two lines": lambda rows: [rows[0], rows[1][:40], rows[1][40:], *rows[2:]],
    "a row split after a nested object": lambda rows: [rows[0], rows[1][: rows[1].index(b"}") + 1], rows[1][rows[1].index(b"}") + 1 :], *rows[2:]],
    "a blank line": lambda rows: [rows[0], b"", *rows[1:]],
    "a row across lines, and two on one": lambda rows: [rows[0], rows[1][:40], rows[1][40:] + rows[2], *rows[3:]],
    # A raw newline inside a string between `}` and `{`, the line count made up by two rows on one line.
    "a newline inside a string, and two rows on one line": lambda rows: [
        rows[0], *row(1, content='{"kind":"text","text":"a}\n{b"}').split(b"\n"), rows[2] + rows[3], *rows[4:]
    ],
}
_ALLOWED_WHITESPACE = {
    "a leading space": lambda rows: [rows[0], b" " + rows[1], *rows[2:]],
    "a trailing carriage return": lambda rows: [rows[0], rows[1] + b"\r", *rows[2:]],
    "a tab before a row": lambda rows: [b"\t" + rows[0], *rows[1:]],
}


@pytest.mark.parametrize("chunk_bytes", CHUNK_SIZES)
@pytest.mark.parametrize("framing", sorted(_FRAMINGS))
def test_a_line_that_does_not_hold_exactly_one_row_is_invalid_json_at_its_line(framing: str, chunk_bytes: int) -> None:
    lines = _FRAMINGS[framing]([row(index) for index in range(6)])
    data = b"".join(line + b"\n" for line in lines)
    bad = next(index for index, line in enumerate(lines) if line != row(index))
    refused = corruption(data, chunk_bytes)
    assert (refused.kind, refused.line, refused.offset) == ("invalid_json", bad + 1, sum(len(line) + 1 for line in lines[:bad]))


@pytest.mark.parametrize("chunk_bytes", CHUNK_SIZES)
@pytest.mark.parametrize("spacing", sorted(_ALLOWED_WHITESPACE))
def test_whitespace_around_a_row_is_read_as_one_line_at_a_time_reads_it(spacing: str, chunk_bytes: int) -> None:
    lines = _ALLOWED_WHITESPACE[spacing]([row(index) for index in range(6)])
    events, rows = decode_rows(PATH, b"".join(line + b"\n" for line in lines), chunk_bytes=chunk_bytes)
    assert [event.id for event in events] == [f"e{index}" for index in range(6)]
    assert [bytes(item) for item in rows] == lines  # verbatim, whitespace and all


def test_the_one_call_decoder_is_used_exactly_when_its_framing_proof_holds() -> None:
    from resume_contract.contract import active
    MODEL = active().model
    from resume_contract.ledger.reader import _decode_framed

    rows = [row(index) for index in range(6)]
    assert _decode_framed(b"".join(line + b"\n" for line in rows), MODEL) is not None  # else every ledger is slow
    for name, framing in {**_FRAMINGS, **_ALLOWED_WHITESPACE}.items():
        assert _decode_framed(b"".join(line + b"\n" for line in framing(list(rows))), MODEL) is None, name


@pytest.mark.parametrize("in_a_set", [0, 1 << 16])
def test_a_repeated_event_id_is_found_however_the_id_hashes_are_checked(in_a_set: int, monkeypatch: pytest.MonkeyPatch, numpy_or_not: str) -> None:
    # Long ledgers sort their id hashes (with NumPy or without), short ones use a set (hashes.repeated_hashes).
    from resume_contract.core import hashes

    monkeypatch.setattr(hashes, "_HASHES_IN_A_SET", in_a_set)
    data, offset = ledger_with("duplicate_event_id", 9, rows=40)
    refused = corruption(data, 256)
    assert (refused.kind, refused.line, refused.offset) == ("duplicate_event_id", 10, offset)
    clean = b"".join(row(index) + b"\n" for index in range(40))
    assert [event.id for event in decode_rows(PATH, clean, chunk_bytes=256)[0]] == [f"e{index}" for index in range(40)]


@pytest.mark.parametrize("in_a_set", [0, 1 << 16])
def test_repeated_hashes_finds_every_repeat_across_arrays_and_uses_them_up(in_a_set: int, monkeypatch: pytest.MonkeyPatch, numpy_or_not: str) -> None:
    from array import array

    from resume_contract.core import hashes

    monkeypatch.setattr(hashes, "_HASHES_IN_A_SET", in_a_set)
    first = array("q", [5, -(1 << 63), 9, 1 << 62, 7])
    second = array("q", [11, 9, (1 << 63) - 1, -(1 << 63), 12, 12])
    assert hashes.repeated_hashes([first, second]) == {9, -(1 << 63), 12}
    assert len(first) == len(second) == 0
    assert hashes.repeated_hashes(array("q", range(100))) == set()
