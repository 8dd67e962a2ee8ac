"""Decide a maka-history step's reference cases with a contract, and say where it agrees with the reference.

    python tools/evolution_cases.py ../shared/evolutions/04-cwd-diagnostic [--root PROJECT] [--show N]

Each case of STEP/cases.jsonl is written to a fresh directory and decided by `resume-contract --root PROJECT`
(default: this checkout) with the case's own command line; the outcome is compared as STEP/about.json's
`compare` says (`codes`: exit, disposition, rejectionReasons, diagnostic codes; `full`: also the continuation).
Expectations are the reference's recorded answers (apache/maka at the step's commit), never this tool's.
Exit 0 when every case agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def outcome(result: subprocess.CompletedProcess[str], full: bool) -> dict[str, Any]:
    try:
        printed = json.loads(result.stdout)
    except json.JSONDecodeError:
        return {"exit": result.returncode, "error": result.stderr.strip()[-300:]}
    decided = {
        "exit": result.returncode,
        "disposition": printed.get("disposition"),
        "rejectionReasons": printed.get("rejectionReasons"),
        "diagnostics": [diagnostic.get("code") for diagnostic in printed.get("diagnostics", [])],
    }
    if full:
        decided["continuation"] = printed.get("continuation")
    return decided


def expected(expect: dict[str, Any], full: bool) -> dict[str, Any]:
    wanted = {key: expect.get(key) for key in ("exit", "disposition", "rejectionReasons", "diagnostics")}
    if full:
        wanted["continuation"] = expect.get("continuation")
    return wanted


def decide(case: dict[str, Any], root: Path, full: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        for relative, text in case["files"].items():
            path = Path(directory, relative)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        args = [argument.replace("{case}", directory) for argument in case["args"]]
        command = [sys.executable, "-m", "resume_contract", "--root", str(root), *args]
        return outcome(subprocess.run(command, capture_output=True, text=True, check=False), full)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    parser.add_argument("step", type=Path, help="a folder of ../shared/evolutions (about.json, cases.jsonl)")
    parser.add_argument("--root", type=Path, default=HERE, help="the contract project deciding the cases (default: this checkout)")
    parser.add_argument("--show", type=int, default=3, help="how many disagreements to print (default 3)")
    args = parser.parse_args(argv)
    if not (args.step / "about.json").is_file() or not (args.step / "cases.jsonl").is_file():
        parser.error(f"{args.step}: no about.json and cases.jsonl there (a folder of ../shared/evolutions or examples/maka-history/cases)")
    about = json.loads((args.step / "about.json").read_text(encoding="utf-8"))
    full = about.get("compare") == "full"
    cases = [json.loads(line) for line in (args.step / "cases.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    disagree = []
    for number, case in enumerate(cases, 1):
        ours, theirs = decide(case, args.root, full), expected(case["expect"], full)
        if ours != theirs:
            disagree.append((number, ours, theirs))
    print(f"{about['step']}: {len(cases) - len(disagree)} of {len(cases)} cases decide as the reference ({about['compare']})")
    for number, ours, theirs in disagree[: args.show]:
        print(f"  case {number}: ours   {json.dumps({k: v for k, v in ours.items() if k != 'continuation'})}")
        print(f"  {' ' * len(str(number))}       theirs {json.dumps({k: v for k, v in theirs.items() if k != 'continuation'})}")
        if full and ours.get("continuation") != theirs.get("continuation"):
            print(f"  {' ' * len(str(number))}       (the continuations differ)")
    return 0 if not disagree else 1


if __name__ == "__main__":
    sys.exit(main())
