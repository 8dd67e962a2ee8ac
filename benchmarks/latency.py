"""Benchmark: how long people wait for the common commands, whole process, each beside a floor measured in the
same run. Run it from a wheel install (an editable install recompiles every module on each run when byte code
is not written, and goes through an import finder of its own):

    python3 benchmarks/latency.py --make-venv /tmp/rc-wheel   # clone HEAD, build the wheel, install, compile, run
    python3 benchmarks/latency.py --make-venv /tmp/rc-ab --baseline a521900   # and an older revision beside it
    /tmp/rc-wheel/bin/python /tmp/rc-wheel/benchmarks/latency.py --rounds 15 --json

Every round starts fresh interpreters, as a person, a script or a pre-commit hook does, and the commands of a
group take turns, so a noisy moment hits them alike. Reported: the median of the rounds (never the best) of each
figure's wall time and of its CPU time (user + system, from wait4: what a loaded machine disturbs least), and each
as a multiple of its floor's:

- `python -c pass`, the interpreter's own start-up (the floor of `--version`);
- decode floor of a ledger: `python -c "import msgspec"` plus `msgspec.json.decode` of each of its lines, nothing
  kept (the floor of `plan --json LEDGER` and `repair LEDGER`: any planner must at least read and decode them);
- `plan --json` of a 200-event and of a 10,000-event ledger, outside any project (the packaged contract) and
  inside one (`resume-contract init`, its in-sync verdict remembered);
- `check` on that clean project, beside the import floor of its libraries (jsonschema, jinja2, yaml, msgspec);
- the audit, `plan --workspace W --jobs 1` over --audit-runs runs of --audit-events events, beside a floor
  that reads every run's file and decodes each of its rows with msgspec (one process, nothing kept).

Ledgers and the workspace are written once into --cache (deterministic: `plan_speed.write_ledger`). The in-sync
verdicts go to a cache directory of the benchmark's own. Machines are noisy: compare the ratios of one run.
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

DECODE_FLOOR = """
import sys, msgspec
decode = msgspec.json.decode
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        decode(line)
"""

AUDIT_FLOOR = """
import os, sys, msgspec
decode = msgspec.json.decode
sessions = os.path.join(sys.argv[1], "sessions")
for session in sorted(os.listdir(sessions)):
    runs = os.path.join(sessions, session, "runs")
    for run in sorted(os.listdir(runs)):
        with open(os.path.join(runs, run, "runtime-events.jsonl"), "rb") as handle:
            for line in handle.read().splitlines():
                decode(line)
"""

CHECK_IMPORTS = "import jsonschema, jinja2, yaml, msgspec"

# What the `resume-contract` script pip writes does (`cli.run`; `cli.main` before run existed); run with -c, so
# that a baseline installation on PYTHONPATH is started the same way.
LAUNCH = """
import sys
try:
    from resume_contract.cli import run
except ImportError:
    from resume_contract.cli import main
    sys.exit(main())
run()
"""


def make_venv(target: Path, argv: list[str], baseline: str | None) -> int:
    """Clone HEAD, build its wheel, install it into a fresh venv at `target`, compile its byte code once, and
    run this benchmark (the clone's copy) with that venv's python. With `baseline` (a git revision), its wheel
    too, installed beside it into `target/baseline` (on PYTHONPATH, it shadows HEAD's) and compiled."""
    if target.exists():
        raise SystemExit(f"{target} exists; give a new directory")
    build = Path(tempfile.mkdtemp(prefix="rc-latency-"))
    try:
        subprocess.run(["git", "clone", "-q", str(REPO), str(build / "src")], check=True)
        subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
        python = str(target / "bin" / "python")
        subprocess.run([python, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(build / "dist"), str(build / "src")], check=True)
        wheels = sorted((build / "dist").glob("*.whl"))
        subprocess.run([python, "-m", "pip", "install", "-q", *map(str, wheels)], check=True)
        site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run([python, "-m", "compileall", "-q", site], check=True, stdout=subprocess.DEVNULL)
        shutil.copytree(build / "src" / "benchmarks", target / "benchmarks")
        if baseline is not None:
            subprocess.run(["git", "-C", str(build / "src"), "checkout", "-q", baseline], check=True)
            subprocess.run([python, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(build / "baseline-dist"), str(build / "src")], check=True)
            wheels = sorted((build / "baseline-dist").glob("*.whl"))
            subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target / "baseline"), *map(str, wheels)], check=True)
            subprocess.run([python, "-m", "compileall", "-q", str(target / "baseline")], check=True, stdout=subprocess.DEVNULL)
            argv = [*argv, "--baseline-dir", str(target / "baseline")]
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return subprocess.run([str(target / "bin" / "python"), str(target / "benchmarks" / "latency.py"), *argv]).returncode


def _timed(command: list[str], cwd: Path, env: dict[str, str], codes: tuple[int, ...]) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one run of `command`, which must exit with one of `codes`."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = code = os.waitstatus_to_exitcode(status)
    process.stderr.close()
    if code not in codes:
        raise SystemExit(f"{' '.join(command)} exited {code}: {errors.decode(errors='replace')}")
    return elapsed, usage.ru_utime + usage.ru_stime


Group = dict[str, tuple[list[str], Path, tuple[int, ...]]]


def _instructions(command: list[str], cwd: Path, env: dict[str, str], codes: tuple[int, ...]) -> float:
    """The instructions one run of `command` executes (valgrind's cachegrind, "I refs"): nearly the same count on
    a busy machine as on an idle one, where the seconds of two runs can differ by a tenth."""
    counted = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *command]
    result = subprocess.run(counted, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if result.returncode not in codes or found is None:
        raise SystemExit(f"valgrind {' '.join(command)} exited {result.returncode}: {result.stderr[-500:]}")
    return float(found.group(1).replace(",", ""))


def measure(
    group: Group,
    rounds: int,
    env: dict[str, str],
    baseline: dict[str, str] | None = None,
    instructions: bool = False,
    baseline_directories: dict[Path, Path] | None = None,
) -> dict[str, dict[str, float]]:
    """The median wall and CPU seconds of each command of `group`, the commands taking turns in each round. With
    `baseline` (an environment that imports another installation), each resume-contract command (`LAUNCH`) is
    also measured there, as "NAME (baseline)", run in `baseline_directories[cwd]` where given (its own project).
    With `instructions`, each is also run once under valgrind."""
    commands = {name: (command, cwd, codes, env) for name, (command, cwd, codes) in group.items()}
    moved = baseline_directories or {}
    if baseline is not None:
        commands.update({f"{name} (baseline)": (command, moved.get(cwd, cwd), codes, baseline) for name, (command, cwd, codes) in group.items() if command[1:3] == ["-c", LAUNCH]})
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (command, cwd, codes, environment) in commands.items():
            samples[name].append(_timed(command, cwd, environment, codes))
    figures = {
        name: {"wall": statistics.median(wall for wall, _ in times), "cpu": statistics.median(cpu for _, cpu in times)}
        for name, times in samples.items()
    }
    if instructions:
        for name, (command, cwd, codes, environment) in commands.items():
            figures[name]["instructions"] = _instructions(command, cwd, environment, codes)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="rounds of each group of commands (default: %(default)s)")
    parser.add_argument("--audit-runs", type=int, default=10_000, help="runs in the audited workspace (0: no audit)")
    parser.add_argument("--audit-events", type=int, default=200, help="events in each audited run")
    parser.add_argument("--audit-rounds", type=int, default=5, help="rounds of the audit and its floor (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "resume-contract-bench", help="where ledgers are cached (default: %(default)s)")
    parser.add_argument("--make-venv", type=Path, metavar="DIR", help="build a wheel venv at DIR from a clone of HEAD and run there")
    parser.add_argument("--baseline", metavar="REV", help="with --make-venv: also measure the commands of git revision REV, side by side")
    parser.add_argument("--baseline-dir", type=Path, metavar="DIR", help="an installation (pip --target) to measure beside this one")
    parser.add_argument("--instructions", action="store_true", help="also count each command's instructions once, under valgrind (slow; steady on a busy machine)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    args, rest = parser.parse_known_args(argv)
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions counts under valgrind, which is not installed here (e.g. apt-get install valgrind)")
    if args.make_venv is not None:
        given = argv if argv is not None else sys.argv[1:]
        dropped = {"--make-venv", str(args.make_venv), "--baseline", str(args.baseline)}
        return make_venv(args.make_venv.resolve(), [arg for arg in given if arg not in dropped] + rest, args.baseline)
    from plan_speed import write_ledger, write_workspace  # it imports resume_contract: only in the wheel's venv

    import resume_contract

    installed = Path(resume_contract.__file__).resolve()
    if "site-packages" not in installed.parts:
        print(f"resume_contract is imported from {installed.parent}, not a wheel install: run with --make-venv DIR", file=sys.stderr)
        return 2
    python = sys.executable
    command = [python, "-c", LAUNCH]
    args.cache.mkdir(parents=True, exist_ok=True)
    ledgers = {}
    for events in (200, 10_000):
        ledgers[events] = args.cache / f"ledger-{events}.jsonl"
        if not ledgers[events].exists():
            write_ledger(ledgers[events], events)

    work = Path(tempfile.mkdtemp(prefix="rc-latency-"))
    try:
        env = {**os.environ, "RESUME_CONTRACT_CACHE_DIR": str(work / "cache")}
        project, outside = work / "project", work / "outside"
        project.mkdir()
        outside.mkdir()
        baseline = None if args.baseline_dir is None else {**env, "PYTHONPATH": str(args.baseline_dir.resolve())}
        # The baseline has a project of its own, made by its own `init`: a revision whose templates differ
        # renders another generated/ from the same spec, and would find HEAD's project out of sync.
        projects = {project: project if baseline is None else work / "project-baseline"}
        for environment, directory in ((env, project), (baseline, projects[project])) if baseline is not None else ((env, project),):
            directory.mkdir(exist_ok=True)
            subprocess.run([*command, "init"], cwd=directory, env=environment, check=True, capture_output=True)
            subprocess.run([*command, "check"], cwd=directory, env=environment, check=True, capture_output=True)  # each verdict remembered
            subprocess.run([*command, "plan", "--json", str(ledgers[200])], cwd=directory, env=environment, capture_output=True)
        results: dict[str, dict[str, dict[str, float]]] = {}
        plan_codes = (0, 1)  # safe_replay or blocked: either is a plan
        for events, ledger in ledgers.items():
            repaired = work / f"repair-{events}.jsonl"
            shutil.copyfile(ledger, repaired)
            figures = measure(
                {
                    "python -c pass": ([python, "-c", "pass"], outside, (0,)),
                    "decode floor": ([python, "-c", DECODE_FLOOR, str(ledger)], outside, (0,)),
                    "plan --json": ([*command, "plan", "--json", str(ledger)], outside, plan_codes),
                    "plan --json, in a project": ([*command, "plan", "--json", str(ledger)], project, plan_codes),
                    "repair": ([*command, "repair", str(repaired)], outside, (0,)),
                },
                args.rounds,
                env,
                baseline,
                args.instructions,
                projects,
            )
            results[f"{events} events"] = figures
        results["check"] = measure(
            {
                "python -c pass": ([python, "-c", "pass"], outside, (0,)),
                "import floor": ([python, "-c", CHECK_IMPORTS], outside, (0,)),
                "check": ([*command, "check"], project, (0,)),
                "--version": ([*command, "--version"], outside, (0,)),
            },
            args.rounds,
            env,
            baseline,
            args.instructions,
            projects,
        )
        if args.audit_runs:
            workspace = args.cache / f"workspace-{args.audit_runs}x{args.audit_events}"
            write_workspace(workspace, args.audit_runs, args.audit_events)
            results[f"audit of {args.audit_runs} runs x {args.audit_events} events"] = measure(
                {
                    "decode floor": ([python, "-c", AUDIT_FLOOR, str(workspace)], outside, (0,)),
                    "plan --workspace --jobs 1": ([*command, "plan", "--workspace", str(workspace), "--jobs", "1"], outside, plan_codes),
                },
                args.audit_rounds,
                env,
                baseline,
                args.instructions,
                projects,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(results, args, installed)
    return 0


# Each figure's floor, by name within its group.
FLOORS = {
    "plan --json": "decode floor",
    "plan --json, in a project": "decode floor",
    "repair": "decode floor",
    "check": "import floor",
    "--version": "python -c pass",
    "plan --workspace --jobs 1": "decode floor",
}


def _unmarked(name: str) -> str:
    return name.removesuffix(" (baseline)")


def report(results: dict[str, dict[str, dict[str, float]]], args: argparse.Namespace, installed: Path) -> None:
    clocks = ("wall", "cpu", "instructions") if args.instructions else ("wall", "cpu")
    ratios = {
        group: {
            name: {clock: round(seconds[clock] / figures[FLOORS[_unmarked(name)]][clock], 2) for clock in clocks}
            for name, seconds in figures.items()
            if _unmarked(name) in FLOORS
        }
        for group, figures in results.items()
    }
    if args.json:
        document = {
            "python": sys.version.split()[0],
            "installed": str(installed.parent),
            "rounds": args.rounds,
            "audit_rounds": args.audit_rounds,
            "median_seconds": {
                group: {name: {clock: round(seconds[clock], 4) for clock in ("wall", "cpu")} for name, seconds in figures.items()}
                for group, figures in results.items()
            },
            "ratio_to_floor": ratios,
        }
        if args.instructions:
            document["instructions"] = {
                group: {name: int(seconds["instructions"]) for name, seconds in figures.items()} for group, figures in results.items()
            }
        print(json.dumps(document, indent=2))
        return
    print(f"python {sys.version.split()[0]}, {installed.parent}; medians of {args.rounds} rounds ({args.audit_rounds} for the audit)")
    counted = f" {'instructions':>13}" if args.instructions else ""
    print(f"  {'':<28} {'wall':>9} {'CPU':>9}{counted}   ratios to the floor (wall, CPU{', instructions' if args.instructions else ''})")
    for group, figures in results.items():
        print(group)
        for name, seconds in figures.items():
            floor = FLOORS.get(_unmarked(name))
            beside = f"  {', '.join(f'{ratios[group][name][clock]:.2f}x' for clock in clocks)} {floor}" if floor else ""
            count = f" {seconds['instructions'] / 1e6:>11.1f} M" if args.instructions else ""
            print(f"  {name:<28} {seconds['wall']:>7.3f} s {seconds['cpu']:>7.3f} s{count}{beside}")


if __name__ == "__main__":
    raise SystemExit(main())
