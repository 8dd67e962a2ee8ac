"""Benchmark: generation is linear in the spec's size — a diagnostic message of 100,000 characters generates in about
the time a short one does (issue 53: a 7,000-character message cost 20 s, 20,000 characters more than 300 s).

    .venv/bin/python benchmarks/long_text.py                       # 5 rounds, 100,000 characters
    .venv/bin/python benchmarks/long_text.py --chars 20000 --rounds 9 --json

Two projects of each kind are made in a temporary directory: one by `resume-contract init` (the catalogue's files)
and one copied from examples/other-runtime (the contract language). In each, one diagnostic's message is replaced
by a short text (the floor) or by `--chars` characters of words (the subject). Each round runs, in a fresh
interpreter and with an empty verdict cache, `generate` and then `check` in each of the four projects, taking
turns so that a noisy moment hits all of them alike. Reported: each command's median, and the long message's
median as a multiple of the short one's in the same run (1.0x is linear with nothing to spare; what a message of
that size adds to rendering, escaping and writing is a few milliseconds). Exit 1 if a command fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "resume_contract"]
# The first message of each kind of spec, replaced by the text measured.
MESSAGE = re.compile(r"^(\s+message: ).*$", re.MULTILINE)


def _words(chars: int) -> str:
    text = " ".join(f"word{index}" for index in range(chars // 4 + 1))
    return text[:chars].rstrip()


def _make(where: Path, kind: str, message: str) -> Path:
    if kind == "catalogue":
        subprocess.run([*CLI, "init", str(where)], check=True, capture_output=True)
        spec = where / "spec" / "projector.yaml"
    else:
        shutil.copytree(REPO / "examples" / "other-runtime", where, ignore=shutil.ignore_patterns("__pycache__"))
        spec = where / "spec" / "contract.yaml"
    text = spec.read_text(encoding="utf-8")
    spec.write_text(MESSAGE.sub(lambda found: found.group(1) + message, text, count=1), encoding="utf-8")
    return where


def _seconds(root: Path, command: str, cache: Path) -> float:
    shutil.rmtree(cache, ignore_errors=True)
    environment = {**os.environ, "RESUME_CONTRACT_CACHE_DIR": str(cache)}
    started = time.perf_counter()
    done = subprocess.run([*CLI, "--root", str(root), command], capture_output=True, text=True, env=environment)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command} failed in {root} (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=100_000, help="the long message's length (default 100,000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of every command (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args(argv)
    samples: dict[tuple[str, str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as temporary:
        base = Path(temporary)
        projects = {
            (kind, size): _make(base / f"{kind}-{size}", kind, message)
            for kind in ("catalogue", "language")
            for size, message in (("short", "a short message"), ("long", _words(args.chars)))
        }
        for _ in range(args.rounds):
            for (kind, size), root in projects.items():
                for command in ("generate", "check"):
                    samples.setdefault((kind, command, size), []).append(_seconds(root, command, base / "cache"))
    medians = {key: statistics.median(times) for key, times in samples.items()}
    rows = [
        {"kind": kind, "command": command, "short_s": round(medians[(kind, command, "short")], 3),
         "long_s": round(medians[(kind, command, "long")], 3),
         "ratio": round(medians[(kind, command, "long")] / medians[(kind, command, "short")], 2)}
        for kind in ("catalogue", "language") for command in ("generate", "check")
    ]
    if args.json:
        print(json.dumps({"chars": args.chars, "rounds": args.rounds, "figures": rows}, indent=2))
        return 0
    print(f"a diagnostic message of {args.chars} characters against a short one, medians of {args.rounds} rounds")
    print(f"{'contract':<10} {'command':<9} {'short':>8} {'long':>8} {'ratio':>6}")
    for row in rows:
        print(f"{row['kind']:<10} {row['command']:<9} {row['short_s']:>7.3f}s {row['long_s']:>7.3f}s {row['ratio']:>5.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
