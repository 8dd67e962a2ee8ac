"""Benchmark: how long `resume-contract check` takes on a clean tree, beside two floors measured in the same run.

    .venv/bin/python benchmarks/check_speed.py                 # 21 rounds on this repository
    .venv/bin/python benchmarks/check_speed.py --rounds 51 --json
    .venv/bin/python benchmarks/check_speed.py --root ../other-project

Each round starts a fresh interpreter, as a person or a pre-commit hook does, and the three commands take
turns, so a noisy moment hits all of them alike:

- python:  `python -c pass`, the interpreter's own start-up;
- imports: importing what `check` cannot do without (jsonschema, jinja2, yaml, msgspec), nothing else;
- check:   `python -m resume_contract --root ROOT check` (validate the spec, run the invariants to depth 2,
           render every file in memory, compare with generated/), each round with an empty verdict cache
           (a remembered clean verdict skips all that: `benchmarks/latency.py` measures that path).

Reported: the median and the fastest round of each, and check's median as a multiple of the two floors'.
Compare the ratios of one run, not seconds across runs (the machines are noisy). Exit 1 if check does not
report a clean tree (the benchmark measures the clean-tree path only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
IMPORTS = "import jsonschema, jinja2, yaml, msgspec"


def _seconds(command: list[str]) -> float:
    with tempfile.TemporaryDirectory() as cache:  # nothing remembered: the full check, every round
        environment = {**os.environ, "RESUME_CONTRACT_CACHE_DIR": cache}
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=environment)
        return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=REPO, help="the project to check (default: this repository)")
    parser.add_argument("--rounds", type=int, default=21, help="rounds of the three commands (default 21)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args = parser.parse_args(argv)
    check = [sys.executable, "-m", "resume_contract", "--root", str(args.root), "check"]
    probe = subprocess.run(check, capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"check is not clean on {args.root} (exit {probe.returncode}); this benchmark measures a clean tree:\n{probe.stdout}{probe.stderr}", file=sys.stderr)
        return 1
    commands = {"python": [sys.executable, "-c", "pass"], "imports": [sys.executable, "-c", IMPORTS], "check": check}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, command in commands.items():
            samples[name].append(_seconds(command))
    figures = {name: {"median_s": round(statistics.median(times), 4), "fastest_s": round(min(times), 4)} for name, times in samples.items()}
    check_median = figures["check"]["median_s"]
    ratios = {f"check_over_{name}": round(check_median / figures[name]["median_s"], 2) for name in ("python", "imports")}
    if args.json:
        print(json.dumps({"root": str(args.root), "rounds": args.rounds, "figures": figures, "ratios": ratios}, indent=2))
        return 0
    print(f"{args.rounds} rounds, {args.root}")
    print(f"{'command':<8} {'median':>8} {'fastest':>8}")
    for name, figure in figures.items():
        print(f"{name:<8} {figure['median_s']:>7.3f}s {figure['fastest_s']:>7.3f}s")
    print(f"check median = {ratios['check_over_python']}x python start-up, {ratios['check_over_imports']}x the import floor")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
