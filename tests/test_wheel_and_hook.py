"""The package as another repository gets it: a built wheel in a fresh venv, and the shared pre-commit hook.

The editable install used by the rest of the suite hides packaging mistakes (a wheel once lacked the tests
template, another the `cli` package), so this test builds the wheel, installs it into a new venv, and runs
`generate` and `check` against a second repository with its own spec/ (a copy of the frozen spec with one
wording changed, to prove the tool reads *that* tree, not its own). Then `pre-commit` installs the hook from a
clone of this repository (`repo:`/`rev:`, as .pre-commit-hooks.yaml offers it) and runs it in that repository:
clean passes, drift fails.

Needs git and the package index pip already uses (for the dependencies and pre-commit); skipped without git.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FROZEN_SPEC = Path(__file__).resolve().parent / "frozen_spec" / "spec"
OTHER_WORDING = "A boundary only the second repository has"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs git and a checkout"),
]


def _run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def _git(cwd: Path, *args: str) -> str:
    return _run("git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args, cwd=cwd).stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel built from a clean clone of this repository's HEAD installed in it."""
    root = tmp_path_factory.mktemp("wheel")
    clone = root / "clone"
    _run("git", "clone", "-q", REPO, clone, cwd=root)
    _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root / "dist", clone, cwd=root)
    (wheel,) = (root / "dist").glob("resume_contract-*.whl")
    _run(sys.executable, "-m", "venv", root / "venv", cwd=root)
    _run(root / "venv" / "bin" / "pip", "install", "-q", wheel, cwd=root)
    return root / "venv" / "bin"


@pytest.fixture
def other_repository(tmp_path: Path) -> Path:
    """A second repository: its own spec (the frozen one, one boundary reworded) and no generated/ yet."""
    other = tmp_path / "other"
    shutil.copytree(FROZEN_SPEC, other / "spec")
    failpoints = other / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text(encoding="utf-8").replace("Tool implementation in progress", OTHER_WORDING), encoding="utf-8")
    return other


def test_the_wheel_generates_and_checks_another_repositorys_own_spec(installed: Path, other_repository: Path) -> None:
    tool = installed / "resume-contract"
    # Before its generate: the version, and why it has no contract yet (exit 0: the version still stands).
    version = _run(tool, "--version", cwd=other_repository).stdout
    assert version.startswith("resume-contract ") and "contract: none (" in version and "run `resume-contract generate` there" in version
    # Outside any project: the packaged contract, whose spec is this repository's (its sha256 as a checkout reads it).
    elsewhere = other_repository.parent / "elsewhere"
    elsewhere.mkdir()
    from resume_contract.project.locate import load_project

    packaged = load_project(REPO).identity
    assert f"contract: {packaged}; packaged with resume-contract" in _run(tool, "--version", cwd=elsewhere).stdout
    generate = _run(tool, "generate", cwd=other_repository)
    assert "wrote generated/tests/test_contract.py" in generate.stdout  # the template a wheel once lacked
    assert OTHER_WORDING in (other_repository / "generated" / "CONTRACT.md").read_text(encoding="utf-8")
    assert _run(tool, "check", cwd=other_repository).stdout.startswith("generated/ matches spec/")

    contract = other_repository / "generated" / "CONTRACT.md"
    contract.write_text(contract.read_text(encoding="utf-8") + "a hand edit\n", encoding="utf-8")
    drift = _run(tool, "check", cwd=other_repository, check=False)
    assert drift.returncode == 1 and "hand-edited  generated/CONTRACT.md" in drift.stdout


def test_the_shared_hook_installs_from_the_repository_and_checks_the_users_tree(installed: Path, other_repository: Path, tmp_path: Path) -> None:
    _run(installed / "pip", "install", "-q", "pre-commit", cwd=tmp_path)
    source = tmp_path / "hook-source"  # what `repo:` points at: a git repository whose HEAD holds the hook
    _run("git", "clone", "-q", REPO, source, cwd=tmp_path)
    revision = _git(source, "rev-parse", "HEAD").strip()
    _run(installed / "resume-contract", "generate", cwd=other_repository)
    (other_repository / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {source}\n    rev: {revision}\n    hooks:\n      - id: resume-contract-check\n", encoding="utf-8"
    )
    _git(other_repository, "init", "-q")
    _git(other_repository, "add", ".")
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    clean = _run(installed / "pre-commit", "run", "--all-files", cwd=other_repository, env=environment, check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "resume-contract check" in clean.stdout and "Passed" in clean.stdout

    failpoints = other_repository / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text(encoding="utf-8").replace(OTHER_WORDING, "Reworded without regenerating"), encoding="utf-8")
    _git(other_repository, "add", ".")
    drift = _run(installed / "pre-commit", "run", "--all-files", cwd=other_repository, env=environment, check=False)
    assert drift.returncode == 1
    assert "changed      generated/resume_contract_generated/catalog.py" in drift.stdout


_PUBLIC_USE = '''
import sys
from pathlib import Path

from resume_contract import (
    CommittedLedger,
    Diagnostic,
    LedgerCorruption,
    RepairResult,
    ResumeContractError,
    ResumePlan,
    RuntimeEventStore,
    ToolOperation,
    build_resume_plan,
    event_from_wire,
    plan_json,
    plan_json_pieces,
    plan_ledger,
    plan_run,
    read_ledger,
    read_run,
    repair_ledger,
)


def use(workspace: Path) -> str:
    wire = {"id": "e1", "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": 1, "partial": False,
            "author": "agent", "role": "model", "content": {"kind": "function_call", "id": "c", "name": "w", "args": {}}}
    with RuntimeEventStore(str(workspace)) as store:
        appended: bool = store.append(event_from_wire(wire))
    path = workspace / "sessions" / "s" / "runs" / "r" / "runtime-events.jsonl"
    plan: ResumePlan = plan_ledger(path, expected_high_water=1)
    reasons: tuple[str, ...] = plan.rejection_reasons
    operation: ToolOperation = plan.operations[0]
    diagnostics: tuple[Diagnostic, ...] = plan.diagnostics
    ledger: CommittedLedger = read_ledger(str(path))
    same: ResumePlan = build_resume_plan(ledger.events, 1, rows=ledger.rows)
    data: bytes = plan_json(same)
    pieces: bytes = b"".join(plan_json_pieces(plan))
    assert data == pieces and plan_run(workspace, "s", "r") == plan and read_run(workspace, "s", "r").events == ledger.events
    repaired: RepairResult = repair_ledger(path)
    try:
        read_ledger(workspace / "missing.jsonl")
    except ResumeContractError as error:
        assert not isinstance(error, LedgerCorruption)
    return f"{appended} {plan.disposition} {reasons} {operation.status} {len(diagnostics)} {repaired.torn_bytes}"


print(use(Path(sys.argv[1])))
'''


def _readme_public_names() -> set[str]:
    """Every name the README's and docs/deciding.md's Python examples import from the package."""
    readme = "".join((REPO / page).read_text(encoding="utf-8") for page in ("README.md", "docs/deciding.md"))
    names: set[str] = set()
    for block in re.findall(r"```python\n(.*?)```", readme, re.S):
        for grouped, single in re.findall(r"^from resume_contract import (?:\(([^)]*)\)|(.+))$", block, re.M):
            names |= {name.strip() for name in (grouped or single).replace("\n", ",").split(",") if name.strip()}
    return names


def test_the_public_face_works_and_type_checks_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    # A script outside the repository, against the installed wheel only: every name the README shows imports
    # from the package, runs, and passes mypy; a wrong type is caught (so the check can fail).
    shown = _readme_public_names()
    assert shown and shown <= set(re.findall(r"\b[A-Za-z_]+\b", _PUBLIC_USE)), f"the README shows names this script does not use: {sorted(shown)}"
    script = tmp_path / "use_it.py"
    script.write_text(_PUBLIC_USE, encoding="utf-8")
    ran = _run(installed / "python", script, tmp_path / "ws", cwd=tmp_path)
    assert ran.stdout == "True blocked ('dangling_tool_state',) indeterminate 1 0\n"
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null", "--python-executable", str(installed / "python")]
    assert _run(*mypy, script, cwd=tmp_path).returncode == 0
    wrong = tmp_path / "wrong.py"
    wrong.write_text("from resume_contract import plan_json, build_resume_plan\ncount: int = plan_json(build_resume_plan([]))\n", encoding="utf-8")
    failed = _run(*mypy, wrong, cwd=tmp_path, check=False)
    assert failed.returncode == 1 and 'Incompatible types in assignment (expression has type "bytes", variable has type "int")' in failed.stdout


def _tree_digest(directory: Path) -> dict[str, str]:
    import hashlib

    return {
        path.relative_to(directory).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_team_adopts_the_tool_from_the_wheel_and_every_command_runs_their_contract(installed: Path, tmp_path: Path) -> None:
    import hashlib
    import json

    tool = installed / "resume-contract"
    _run(installed / "pip", "install", "-q", "pytest", "pre-commit", cwd=tmp_path)
    site_packages = next((installed.parent / "lib").glob("python3*/site-packages"))
    environment = {**os.environ, "PATH": f"{installed}{os.pathsep}{os.environ.get('PATH', '')}", "RESUME_CONTRACT_CACHE_DIR": str(tmp_path / "cache"),
                   "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    environment.pop("RESUME_CONTRACT_ROOT", None)

    _run(tool, "init", "team", cwd=tmp_path, env=environment)
    repo = tmp_path / "team"
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    before = _tree_digest(site_packages)

    def run(*arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run(*arguments, cwd=repo, env=environment, check=check)

    # Right after init: everything passes, against the project's own contract.
    assert run(str(tool), "check").stdout.startswith("generated/ matches spec/")
    assert f"project {repo.resolve()}" in run(str(tool), "--version").stdout
    assert re.search(r"^(\d+) of \1 cases verified$", run(str(tool), "crash").stdout, re.M)
    assert run(str(tool), "verify", "--depth", "3").stdout.rstrip().endswith("no violation")
    assert " passed" in run(str(installed / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "generated/tests").stdout
    hook = run(str(installed / "pre-commit"), "run", "--all-files")
    assert "resume-contract check" in hook.stdout and "Passed" in hook.stdout

    ledger = tmp_path / "dangling.jsonl"
    wire = {"id": "e1", "sessionId": "s", "invocationId": "i", "runId": "r", "turnId": "t", "ts": 1, "partial": False,
            "author": "agent", "role": "model", "content": {"kind": "function_call", "id": "c", "name": "w", "args": {}}}
    ledger.write_text(json.dumps(wire) + "\n", encoding="utf-8")

    def spec_sha256() -> str:
        digest = hashlib.sha256()
        for name in ("failpoints", "runtime_event", "ledger", "decisions", "projector", "invariants", "scope"):
            digest.update(f"spec/{name}.yaml\0".encode() + (repo / "spec" / f"{name}.yaml").read_bytes() + b"\0")
        return digest.hexdigest()

    # A reworded directive: plan prints it, and names the new spec.
    _replace(repo / "spec" / "projector.yaml", "Do not retry the tool call immediately.", "Never retry the tool call until verified.")
    out_of_sync = run(str(tool), "plan", "--json", str(ledger), check=False)
    assert out_of_sync.returncode == 2 and out_of_sync.stdout == ""
    assert "generated/ does not match spec/ (changed generated/" in out_of_sync.stderr and "resume-contract generate" in out_of_sync.stderr
    run(str(tool), "generate")
    planned = run(str(tool), "plan", "--json", str(ledger), check=False)
    plan = json.loads(planned.stdout)
    assert planned.returncode == 1 and "Never retry the tool call until verified." in plan["directive"]
    assert plan["contract"] == {"name": "runtime-resume", "phase": "Phase 0", "specSha256": spec_sha256()}

    # A new failpoint and its hook in their run loop: crash kills it there.
    _replace(repo / "spec" / "failpoints.yaml", "    boundary: Continuation-run creation\n    committed_prefix: after_terminal_event\n",
             "    boundary: Continuation-run creation\n    committed_prefix: after_terminal_event\n"
             "  - id: P12\n    boundary: Continuation run created, not yet started\n    committed_prefix: after_terminal_event\n")
    _replace(repo / "runloop.py", '        (run_dir.parent / f"{final.run_id}-continuation").mkdir(exist_ok=True)\n',
             '        (run_dir.parent / f"{final.run_id}-continuation").mkdir(exist_ok=True)\n        failpoints.hit("P12")\n')
    run(str(tool), "generate")
    crashed = run(str(tool), "crash", "--failpoint", "P12")
    assert "P12" in crashed.stdout and "5 of 5 cases verified" in crashed.stdout

    # A renamed rejection reason, in their spec and their oracle: every check passes and plans give the new name.
    for name in ("spec/projector.yaml", "spec/decisions.yaml", "oracle.py"):
        _replace(repo / name, "dangling_tool_state", "unresolved_tool_state")
    run(str(tool), "generate")
    assert run(str(tool), "check").stdout.startswith("generated/ matches spec/")
    assert json.loads(run(str(tool), "plan", "--json", str(ledger), check=False).stdout)["rejectionReasons"] == ["unresolved_tool_state"]
    assert run(str(tool), "verify", "--depth", "3").stdout.rstrip().endswith("no violation")
    assert " passed" in run(str(installed / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "generated/tests").stdout
    assert _tree_digest(site_packages) == before, "no file outside their repository changed"
