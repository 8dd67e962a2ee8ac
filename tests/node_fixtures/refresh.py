"""Write javascript.json: what node answers (tests/node_fixtures/javascript.js) for a fixed set of inputs, so
tests/test_javascript.py holds the code to JavaScript on machines without node. Run after changing the inputs:

    .venv/bin/python tests/node_fixtures/refresh.py
"""

from __future__ import annotations

import json
import random
import struct
import subprocess
from pathlib import Path

HERE = Path(__file__).parent

# Doubles: every kind of spelling Number::toString has (plain, fraction, 0.000..., exponent either way).
_NUMBERS = [1.5e-7, 1e21, 1e20, 123e-20, 0.1, 0.3, 1e-6, 1e-7, 2.0**53 + 2, 5e-324, 1.7976931348623157e308, 100.0, -0.0, 0.1 + 0.2, 18446744073709551616.0, 123456789012345680000.0]
# JSON values as refs keys may hold them.
_VALUES = ["null", "true", "false", "0", "-0", "1.5e-7", "1e21", '""', '"x"', '"\\ud83d"', "[]", "[0]", "[null]", "[1,[2,null],{}]", "{}", '{"a":1}', "1" + "0" * 400, "0.0"]
_PARSE = ['{"a":NaN}', '{"a":Infinity}', '{"a":-Infinity}', '{"a":1e400}', '{"a":' + "1" * 5000 + "}", "\ufeff{}", '{"a":1}\r', " {} ", '{"a":1,"a":2}', '{"a":"\\ud800"}', "{'a':1}", '{"a":01}', '{"a":1.}', '{"a":"\t"}', "null", "[1,]"]
# Values whose canonical JSON (maka's canonicalArgsHash) is written as JavaScript writes it: key order by UTF-16 code
# unit, numbers, escapes, lone surrogates.
_CANONICAL = [
    '{"toolName":"Bash","args":{"command":"echo tool-1"}}', '{"b":1,"a":[1.0,2.5,1e21,-0,1e-7,123456789012345678901]}',
    '{"\\ud83d\\ude00":1,"\\uffff":2,"\\u00e9":3,"z":null,"A":true}', '["\\u0001\\u001f\\"\\\\\\/\\u2028\\ud800x"]', '{"a":{"c":{},"b":[]}}', '{"b":1,"10":2,"2":3,"":4}', "0.1", '""', '{"big":1' + "0" * 400 + ',"x":[1e16,2.5e-6,9007199254740993]}',
]
# Tool calls as maka hashes them (canonicalizeMainlineV1): array-index keys, `__proto__`, arrays under `required` and
# `enum` at any depth (not in an array of arrays), mixed items, numbers, escapes; random ones follow.
_MAINLINE = [
    '{"toolName":"Bash","args":{"command":"echo tool-1"}}', '{"toolName":"t","args":{"b":1,"10":2,"9":3,"a":4,"":5,"4294967295":6,"4294967294":7,"01":8}}',
    '{"toolName":"t","args":{"__proto__":{"x":1},"a":{"__proto__":2}}}', '{"toolName":"t","args":{"required":["b","a","B","_","é","10","9"]}}',
    '{"toolName":"t","args":{"schema":{"enum":[3,1,"2",null,true,{"b":1,"a":2},[2,1]],"items":{"required":["z","y"]}}}}',
    '{"toolName":"t","args":{"required":[["b","a"],{"required":["d","c"]}],"x":[["required",["b","a"]]]}}',
    '{"toolName":"t","args":{"n":[1.0,2.5,1e21,-0,1e-7,123456789012345678901],"s":"\\u0001\\u2028\\ud800x"}}',
    '{"toolName":"t","args":{"enum":["a","A","a","b"],"required":[]}}', '{"toolName":"t","args":null}',
]
_KEYS = ["a", "b", "B", "_", "0", "1", "2", "10", "09", "required", "enum", "__proto__", "é", "z"]


def _random_json(generator: random.Random, depth: int) -> object:
    roll = generator.random()
    if depth <= 0 or roll < 0.35:
        return generator.choice([None, True, False, 0, 1, -1, 2.5, 1e21, "a", "B", "_b", "10", "9", "é", "a b", ""])
    if roll < 0.65:
        return [_random_json(generator, depth - 1) for _ in range(generator.randint(0, 4))]
    return {generator.choice(_KEYS): _random_json(generator, depth - 1) for _ in range(generator.randint(0, 5))}


# Frame lists as maka's boundary digests hash them: a tag, canonical JSON, sequence numbers, nesting, the 2**53 - 1 bound,
# non-ASCII and lone surrogates (node writes one as U+FFFD), empty strings and lists.
_FRAMES = [
    '["maka.runtime-prefix.v1", "{}", [1, "{}"], [2, "{\\"a\\":1}"]]', "[]", '[""]', "[0]", "[9007199254740991]", '["é", "\\ud800", "\\ud83d\\ude00"]',
    '[[], [[]], [[["x"]]]]', '["maka.runtime-boundary-manifest.v1", "{\\"protocol\\":\\"runtime_boundary_cursor_v1\\",\\"segments\\":[]}"]',
]


def _random_frames(generator: random.Random, depth: int) -> list[object]:
    items: list[object] = []
    for _ in range(generator.randint(0, 5)):
        roll = generator.random()
        if depth > 0 and roll < 0.25:
            items.append(_random_frames(generator, depth - 1))
        elif roll < 0.55:
            items.append(generator.choice([0, 1, 2, 255, 256, 65535, 2**32, 2**53 - 1, generator.randint(0, 2**53 - 1)]))
        else:
            items.append(json.dumps(_random_json(generator, 2), ensure_ascii=False) if generator.random() < 0.5 else generator.choice(["", "a", "é", "\ud800", "tag.v1", "\U0001f600"]))
    return items


# Ids as the reference writes them, and the pairs the approximation got wrong.
_PAIRS = [["chunk-1", "chunk_1"], ["rt_event_88", "rt_event97"], ["a", "B"], ["B", "a"], ["a", "A"], ["item-10", "item-9"], ["x.1", "x-1"], ["é", "f"], ["a\u0000", "a"]]


def _requests() -> dict[str, list]:
    generator = random.Random(20240523)
    numbers = [struct.unpack(">Q", struct.pack(">d", x))[0] for x in _NUMBERS]
    numbers += [generator.getrandbits(64) for _ in range(1500)]
    numbers += [struct.unpack(">Q", struct.pack(">d", generator.randint(1, 999) * 10.0 ** generator.randint(-30, 30)))[0] for _ in range(500)]
    alphabet = "abcxyzABCXYZ0189_-.:/ é"
    pairs = list(_PAIRS)
    for _ in range(2000):
        a = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 10)))
        b = a[: generator.randint(0, len(a))] + "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 4)))
        pairs.append([a, b])
    mainline = list(_MAINLINE)
    mainline += [json.dumps({"toolName": "t", "args": _random_json(generator, 4)}, ensure_ascii=False) for _ in range(300)]
    stable = list(_CANONICAL) + [json.dumps(_random_json(generator, 4), ensure_ascii=False) for _ in range(200)]
    frames = list(_FRAMES) + [json.dumps(_random_frames(generator, 3), ensure_ascii=False) for _ in range(200)]
    return {
        "numbers": [f"{bits:016x}" for bits in numbers], "values": _VALUES, "parse": _PARSE, "pairs": pairs, "canonical": _CANONICAL,
        "mainline": mainline, "stable": stable, "frames": frames,
    }


def ask_node(request: dict[str, list]) -> dict[str, list]:
    done = subprocess.run(["node", str(HERE / "javascript.js")], input=json.dumps(request), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main() -> None:
    request = _requests()
    answer = ask_node(request)
    fixture = {key: [list(pair) for pair in zip(request[key], answer[key])] for key in request}
    lines = [f"{json.dumps(key)}: [\n" + ",\n".join(json.dumps(entry) for entry in entries) + "\n]" for key, entries in fixture.items()]
    (HERE / "javascript.json").write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")  # one entry a line


if __name__ == "__main__":
    main()
