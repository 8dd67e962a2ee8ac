"""The gallery examples/maka-history/: a real contract's history, replayed as YAML edits.

    python tools/gallery.py materialise DIR [--through STEP]   # base/spec + each written step's patch, generated
    python tools/gallery.py check [--step STEP]                # each written step, as tests/test_gallery.py holds it

`materialise` makes DIR a contract project (spec/ and generated/) at a step, to use with `resume-contract
--root DIR ...`. `check`, for each written step in order: its patch changes spec/ only and applies with `git
apply` onto the step before; `generate` accepts it; its reference cases (cases/STEP, the reference's recorded
answers) decide as the reference did, but for the manifest's known gaps, which must still differ (and in
disposition and reasons agree) — or, for a step with `sqlite_cases`, the reference's SQLite runs do; `resume-contract
diff` gives it the class the reference's history names (or the manifest's `known_class`, with its reason). A case the
manifest lists under `later` was decided by a later change of the reference that no step writes: it must still
differ, and park.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evolution_cases  # noqa: E402 - a sibling script, not a package

GALLERY = Path(__file__).resolve().parent.parent / "examples" / "maka-history"
CLI = [sys.executable, "-m", "resume_contract"]


def manifest() -> dict[str, Any]:
    return json.loads((GALLERY / "manifest.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def written(through: str | None = None) -> list[dict[str, Any]]:
    """The written steps in order (up to `through`, when given; "base": none)."""
    steps = [step for step in manifest()["steps"] if step["patch"]]
    if through == "base":  # the contract before the first step
        return []
    if through is not None:
        names = [step["step"] for step in steps]
        if through not in names:
            raise SystemExit(f"no written step {through!r}; the written steps are {', '.join(names)}")
        steps = steps[: names.index(through) + 1]
    return steps


def patch_files(patch: Path) -> list[str]:
    return [line.split(" b/", 1)[1] for line in patch.read_text(encoding="utf-8").splitlines() if line.startswith("diff --git ")]


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, env={**os.environ, **env})


def materialise(directory: Path, through: str | None = None) -> Path:
    """DIR with base/spec and each written step's patch applied in order, then generated; on any failure DIR is
    left as it was found."""
    directory = directory.resolve()
    if directory.exists() and any(directory.iterdir()):
        raise SystemExit(f"{directory} is not empty: materialise into a new or empty directory")
    created = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copytree(GALLERY / "base" / "spec", directory / "spec")
        for step in written(through):
            # git apply inside another repository's work tree would apply (or skip) relative to that repository:
            # the ceiling keeps it to DIR, as a plain patch.
            applied = run(["git", "apply", "--verbose", str(GALLERY / step["patch"])], directory, GIT_CEILING_DIRECTORIES=str(directory.parent))
            if applied.returncode != 0 or "Skipped patch" in applied.stderr:
                raise SystemExit(f"{step['step']}: git apply failed: {applied.stderr.strip()}")
        generated = run([*CLI, "--root", str(directory), "generate"], directory)
        if generated.returncode != 0:
            raise SystemExit(f"generate failed at {through or 'the last step'}:\n{generated.stdout}{generated.stderr}")
    except BaseException:
        shutil.rmtree(directory / "spec", ignore_errors=True)
        shutil.rmtree(directory / "generated", ignore_errors=True)
        if created:
            directory.rmdir()
        raise
    return directory


def check_step(step: dict[str, Any], before: Path, after: Path) -> list[str]:
    """What is wrong with one written step, materialised in `after` (the step before it in `before`)."""
    problems = [f"{step['step']}: the patch changes {name}, not spec/" for name in patch_files(GALLERY / step["patch"]) if not name.startswith("spec/")]
    # A step with no evolution cases names the reference it is held to elsewhere (the manifest's `reference`).
    about: dict[str, Any] = {"expected_class": step["class"], "compare": None}
    cases: list[dict[str, Any]] = []
    if step["cases"] is not None:
        cases_dir = GALLERY / step["cases"]
        about = json.loads((cases_dir / "about.json").read_text(encoding="utf-8"))
        cases = [json.loads(line) for line in (cases_dir / "cases.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    full = about["compare"] == "full"
    if step.get("sqlite_cases"):
        problems += check_sqlite_runs(step, after)
    for number, case in enumerate(cases, 1):
        ours, theirs = evolution_cases.decide(case, after, full), evolution_cases.expected(case["expect"], full)
        gap = step.get("known_gaps", {}).get(str(number))
        later = step.get("later", {}).get(str(number))
        if later is not None:  # decided by a later change of the reference's (recorded at its HEAD) no step writes
            if ours == theirs:
                problems.append(f"{step['step']} case {number}: a case of a later change now agrees: take it out of the manifest's `later`")
            elif ours.get("disposition") == "continue" or ours.get("exit") not in (0, 1):
                problems.append(f"{step['step']} case {number}: a case of a later change must park here (fail closed), and decides {json.dumps(ours)[:200]}")
            continue
        if gap is None and ours != theirs:
            problems.append(f"{step['step']} case {number}: decides {json.dumps(ours)[:300]}, the reference {json.dumps(theirs)[:300]}")
        elif gap is not None and ours == theirs:
            problems.append(f"{step['step']} case {number}: a known gap now agrees: take it out of the manifest")
        elif gap is not None and any(ours.get(key) != theirs.get(key) for key in ("exit", "disposition", "rejectionReasons")):
            problems.append(f"{step['step']} case {number}: a known gap ({gap}) now differs in its decision too")
    review = run([*CLI, "--root", str(after), "diff", str(before / "spec"), str(after / "spec"), "--format", "json"], after)
    classes = json.loads(review.stdout)["summary"] if review.stdout.startswith("{") else None
    strongest = next((name for name in ("weakens-safety", "breaking", "tightens", "neutral") if classes and classes.get(name)), None)
    # The classes ../shared/contract/maka-history.md names for the step (the manifest's `class`: "tightens (where a
    # park's reason is replaced, breaking)" is both), besides the cases' own; a step that also corrects how base
    # modelled the reference may be classed otherwise: the manifest says so and why (`known_class`).
    expected = list(dict.fromkeys([*about["expected_class"], *step["class"]]))
    known_class = step.get("known_class", {}).get("class")
    if strongest not in expected and strongest != known_class:
        problems.append(f"{step['step']}: diff classes it {strongest}, the history {' or '.join(expected)} ({review.stderr.strip()[-200:]})")
    # The witness the history names for the step (08: a park whose reason terminal_repair_failed now gives) is shown.
    shown = " ".join(change.get("why", "") for change in json.loads(review.stdout)["changes"]) if classes else ""
    if step.get("witness") and step["witness"] not in shown:
        problems.append(f"{step['step']}: no finding shows the witness {step['witness']!r}")
    return problems


def check_sqlite_runs(step: dict[str, Any], after: Path) -> list[str]:
    """A step held to the reference's SQLite runs (`sqlite_cases`: tests/conformance_sqlite/reference, each
    case's expected.json): each run planned with the step's contract as the reference planned it, but for the
    manifest's known gaps (`case:session/run`), which must still differ."""
    problems = []
    reference = GALLERY.parent.parent / step["sqlite_cases"]
    for case in sorted(path.parent for path in reference.glob("*/expected.json")):
        expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
        runs = [expected, *(item for item in expected.get("runs", []) if (item["session"], item["run"]) != (expected["session"], expected["run"]))]
        with tempfile.TemporaryDirectory() as scratch:
            workspace = shutil.copytree(case / "WS", Path(scratch, "WS"))
            for want in runs:
                name = f"{case.name}:{want['session']}/{want['run']}"
                argv = ["plan", "--workspace", str(workspace), "--session", want["session"], "--run", want["run"], "--format", "json"]
                if want is expected and expected.get("expectedHighWater") is not None:
                    argv += ["--expected-high-water", str(expected["expectedHighWater"])]
                agrees = _agrees(run([*CLI, "--root", str(after), *argv], after), want)
                gap = step["known_gaps"].get(name)
                if gap is None and not agrees:
                    problems.append(f"{step['step']} {name}: does not decide as the reference")
                elif gap is not None and agrees:
                    problems.append(f"{step['step']} {name}: a known gap now agrees: take it out of the manifest")
    return problems


def _agrees(done: subprocess.CompletedProcess[str], want: dict[str, Any]) -> bool:
    outcome = want["reference"]["outcome"]
    if outcome == "open_refused":
        return done.returncode in want["check"].get("acceptExit", [2, 3])
    if outcome == "read_error" or done.returncode not in (0, 1):
        return done.returncode == want["check"]["exit"]
    got = {**plan_check(json.loads(done.stdout)), "exit": done.returncode}
    return got == {key: want["check"].get(key) for key in got}


def plan_check(plan: dict[str, Any]) -> dict[str, Any]:
    """What ../shared/conformance-sqlite's `check` holds of a plan (in the reference's JSON form); `exit` from its
    disposition."""
    return {
        "exit": 0 if plan["disposition"] == "safe_replay" else 1,
        "disposition": plan["disposition"],
        "rejectionReasons": plan["rejectionReasons"],
        "diagnostics": [diagnostic["code"] for diagnostic in plan["diagnostics"]],
        "operations": [{"toolCallId": operation["toolCallId"], "status": operation["status"]} for operation in plan["operations"]],
        "requiresVerification": plan["requiresVerification"],
        "sourceRuntimeEventHighWater": plan["sourceRuntimeEventHighWater"],
        "replayRuntimeEventIds": [event["id"] for event in plan["replayRuntimeEvents"]],
    }


def check(only: str | None = None) -> list[str]:
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch, "base")
        shutil.copytree(GALLERY / "base" / "spec", base / "spec")
        generated = run([*CLI, "--root", str(base), "generate"], base)
        if generated.returncode != 0:
            return [f"base: generate failed: {generated.stdout}{generated.stderr}"]
        previous = base
        for step in written():
            after = materialise(Path(scratch, step["step"]), through=step["step"])
            if only in (None, step["step"]):
                problems += check_step(step, previous, after)
            previous = after
    return problems


def check_drafts() -> list[str]:
    """Each step written in part (the manifest's `draft`: a patch onto the last written step, not yet a step): it
    applies, `generate` accepts it, and it decides at least `draft_agrees` of its reference cases as the reference
    did (what it held when it was written: a change of the tool that loses one says so)."""
    problems: list[str] = []
    for step in manifest()["steps"]:
        if not step.get("draft"):
            continue
        with tempfile.TemporaryDirectory() as scratch:
            directory = materialise(Path(scratch, "draft"))
            applied = run(["git", "apply", "--verbose", str(GALLERY / step["draft"])], directory, GIT_CEILING_DIRECTORIES=str(directory.parent))
            if applied.returncode != 0 or "Skipped patch" in applied.stderr:
                problems.append(f"{step['step']}: its draft does not apply onto the last written step: {applied.stderr.strip()}")
                continue
            generated = run([*CLI, "--root", str(directory), "generate"], directory)
            if generated.returncode != 0:
                problems.append(f"{step['step']}: generate refuses its draft: {generated.stdout}{generated.stderr}")
                continue
            cases = [json.loads(line) for line in (GALLERY / step["cases"] / "cases.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
            agree = sum(evolution_cases.decide(case, directory, False) == evolution_cases.expected(case["expect"], False) for case in cases)
            if agree < step["draft_agrees"]:
                problems.append(f"{step['step']}: its draft decides {agree} of {len(cases)} cases as the reference, fewer than the {step['draft_agrees']} it did")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    commands = parser.add_subparsers(dest="command", required=True)
    making = commands.add_parser("materialise", help="a contract project at a step")
    making.add_argument("directory", type=Path)
    making.add_argument("--through", help="the last step to apply (default: every written step)")
    checking = commands.add_parser("check", help="every written step against its reference cases and class")
    checking.add_argument("--step", help="check this step only")
    args = parser.parse_args(argv)
    if args.command == "materialise":
        print(f"materialised {materialise(args.directory, args.through)}: resume-contract --root {args.directory} ...")
        return 0
    problems = check(args.step)
    for problem in problems:
        print(problem)
    print(f"{len(written())} written steps: {'all hold' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
