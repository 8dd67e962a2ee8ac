"""Never run a stranger's contract or code (issue 39): a project is trusted, never just found; the commands that
only read execute no project code; a remembered verdict is never a different verdict; the files a spec names to
run are regular files inside the project.

Each attack is performed with real processes. Where ownership matters the planted project belongs to another
real user (`nobody`, or one this test creates): only root can give files away, so those tests skip, saying so,
when the suite does not run as root.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "resume_contract"]
MARKER_CODE = "import pathlib, os\npathlib.Path(os.environ['RC_MARKER']).write_text('ran')\n"
# A ledger whose tool call has no response: blocked under any honest contract.
DANGLING = (
    '{"sessionId":"s","invocationId":"i","runId":"r","turnId":"t","id":"user","ts":1,"partial":false,"author":"user",'
    '"role":"user","content":{"kind":"text","text":"run the tool"}}\n'
    '{"sessionId":"s","invocationId":"i","runId":"r","turnId":"t","id":"call","ts":2,"partial":false,"author":"agent",'
    '"role":"model","content":{"kind":"function_call","id":"tool-1","name":"Bash","args":{"command":"touch marker"}}}\n'
)


def _other_user() -> pwd.struct_passwd:
    if os.geteuid() != 0:
        pytest.skip("only root can give a project to another user (the attack's planted directory); run the suite as root to perform it")
    for name in ("nobody", "rc-attacker"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    subprocess.run(["useradd", "--no-create-home", "rc-attacker"], check=True, capture_output=True)
    return pwd.getpwnam("rc-attacker")


def _environment(tmp_path: Path, marker: Path) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("RESUME_CONTRACT_")}
    environment |= {
        "RC_MARKER": str(marker),
        "RESUME_CONTRACT_CACHE_DIR": str(tmp_path / "cache"),
        "RESUME_CONTRACT_CONFIG_DIR": str(tmp_path / "config"),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    return environment


# The command, run by another interpreter with this suite's site-packages (their .pth files, an editable install's
# finder included): what `python -m resume_contract` is in this venv.
_WITH_OUR_SITE = (
    "import site, sys, runpy; [site.addsitedir(p) for p in {sites!r}]; sys.argv[0] = 'resume-contract'; "
    "runpy.run_module('resume_contract', run_name='__main__')"
)


def _run(*argv: str, cwd: Path, environment: dict[str, str], user: int | None = None, python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    command = [*CLI, *argv] if python == sys.executable else [python, "-c", _WITH_OUR_SITE.format(sites=_sites()), *argv]
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=600, user=user)


def _sites() -> list[str]:
    import site

    return [path for path in site.getsitepackages() if os.path.isdir(path)]


def _python_for(user: int, environment: dict[str, str]) -> str:
    """An interpreter of this version that `user` may run with this suite's packages (this one may live under
    root's home), or skip."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        try:
            tried = _run("--help", cwd=Path("/"), environment=environment, user=user, python=candidate)
        except OSError:
            continue
        if tried.returncode == 0 and "resume-contract" in tried.stdout:
            return candidate
    pytest.skip(f"no {version} that uid {user} may run with this suite's packages (the checkout or its interpreter is private)")


def _init(where: Path, environment: dict[str, str]) -> Path:
    made = subprocess.run([*CLI, "init", str(where)], cwd=where.parent, env=environment, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr
    return where


def _plant(project: Path) -> None:
    """The attacker's version: an oracle and run loop that leave a mark when run, and a spec whose decision
    replays a dangling tool call (a permissive contract: generated from it, so in sync)."""
    for name in ("oracle.py", "runloop.py"):
        path = project / name
        path.write_text(path.read_text(encoding="utf-8") + "\n" + MARKER_CODE, encoding="utf-8")


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """A project another user owns, in a directory anyone may enter, with a ledger beside it."""
    other = _other_user()
    marker = tmp_path / "marker"
    environment = _environment(tmp_path, marker)
    shared = tmp_path / "shared"
    shared.mkdir()
    project = _init(shared / "project", environment)
    _plant(project)
    (project / "work").mkdir()
    (project / "work" / "runtime-events.jsonl").write_text(DANGLING, encoding="utf-8")
    (project / "work" / "facts.json").write_text("{}", encoding="utf-8")
    for path in [project, *project.rglob("*")]:
        os.lchown(path, other.pw_uid, other.pw_gid)
    return project, environment, marker


COMMANDS = [
    ("plan", "runtime-events.jsonl"),
    ("check",),
    ("check", "--run-oracle"),
    ("generate",),
    ("verify", "--depth", "1"),
    ("crash",),
    ("vectors", "--out", "vectors-out"),
    ("continue-plan", "runtime-events.jsonl", "--facts", "facts.json"),
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(argv) for argv in COMMANDS])
def test_a_project_another_user_planted_is_refused_and_runs_nothing(planted, argv: tuple[str, ...]) -> None:
    project, environment, marker = planted
    done = _run(*argv, cwd=project / "work", environment=environment)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert f"{project}: a contract project found upward from here that is not trusted" in done.stderr
    assert f"resume-contract trust {project}" in done.stderr and "owned by uid" in done.stderr
    assert not marker.exists(), "the planted project's code ran"
    assert not (project / "work" / "vectors-out").exists()


def test_the_decision_does_not_depend_on_where_one_stands(planted, tmp_path: Path) -> None:
    project, environment, _ = planted
    elsewhere = _run("plan", str(project / "work" / "runtime-events.jsonl"), cwd=tmp_path, environment=environment)
    inside = _run("plan", "runtime-events.jsonl", cwd=project / "work", environment=environment)
    assert elsewhere.returncode == 1 and "blocked" in elsewhere.stdout  # the packaged contract, outside any project
    assert inside.returncode == 2 and inside.stdout == ""  # never another contract in its place


def test_its_owner_runs_it_and_root_runs_it_once_trusted_or_named(planted) -> None:
    project, environment, marker = planted
    owner = project.stat().st_uid
    # Its owner runs it (the cache and config directories must be theirs to write).
    cache = Path(environment["RESUME_CONTRACT_CACHE_DIR"])
    config = Path(environment["RESUME_CONTRACT_CONFIG_DIR"])
    for directory in (cache, config):
        directory.mkdir()
        os.chown(directory, owner, -1)
    os.chmod(project.parent.parent, 0o755)  # (tmp_path: for the other user to reach the project)
    python = _python_for(owner, environment)
    as_owner = _run("plan", "runtime-events.jsonl", cwd=project / "work", environment=environment, user=owner, python=python)
    assert as_owner.returncode == 1 and "blocked" in as_owner.stdout, as_owner.stderr
    # Root names it: used.
    named = _run("--root", str(project), "plan", "runtime-events.jsonl", cwd=project / "work", environment=environment)
    assert named.returncode == 1, named.stderr
    # Root trusts it: used from then on, found upward.
    trusted = _run("trust", str(project), cwd=project, environment=environment)
    assert trusted.returncode == 0 and "trusted" in trusted.stdout and (config / "trusted").read_text().splitlines() == [str(project)]
    after = _run("plan", "runtime-events.jsonl", cwd=project / "work", environment=environment)
    assert after.returncode == 1, after.stderr
    assert not marker.exists()  # plan ran none of its code, trusted or not


def test_a_trust_file_someone_else_could_write_trusts_nothing(planted) -> None:
    project, environment, _ = planted
    config = Path(environment["RESUME_CONTRACT_CONFIG_DIR"])
    config.mkdir()
    (config / "trusted").write_text("*\n")
    os.chmod(config / "trusted", 0o666)
    done = _run("plan", "runtime-events.jsonl", cwd=project / "work", environment=environment)
    assert done.returncode == 2 and "not trusted" in done.stderr


def test_a_project_others_may_write_is_refused_even_when_owned(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    environment = _environment(tmp_path, marker)
    project = _init(tmp_path / "project", environment)
    (project / "spec" / "decisions.yaml").chmod(0o666)
    done = _run("check", cwd=project, environment=environment)
    assert done.returncode == 2 and "spec/decisions.yaml is writable by anyone" in done.stderr
    assert f"resume-contract trust {project}" in done.stderr
    trusted = _run("trust", str(project), cwd=tmp_path, environment=environment)
    assert trusted.returncode == 0 and "writable by anyone" in trusted.stdout  # trusted, with a warning
    assert _run("check", cwd=project, environment=environment).returncode == 0


def test_a_spec_symlink_to_another_users_file_makes_the_project_untrusted(tmp_path: Path) -> None:
    other = _other_user()
    environment = _environment(tmp_path, tmp_path / "marker")
    project = _init(tmp_path / "project", environment)
    decisions = project / "spec" / "decisions.yaml"
    theirs = tmp_path / "theirs.yaml"
    shutil.copyfile(decisions, theirs)
    os.chown(theirs, other.pw_uid, other.pw_gid)
    decisions.unlink()
    decisions.symlink_to(theirs)
    done = _run("check", cwd=project, environment=environment)
    assert done.returncode == 2 and "the target of its symlink" in done.stderr and f"owned by uid {other.pw_uid}" in done.stderr


# -- read-only commands execute no project code -------------------------------------------------------------


@pytest.fixture
def own(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    marker = tmp_path / "marker"
    environment = _environment(tmp_path, marker)
    project = _init(tmp_path / "project", environment)
    _plant(project)
    (project / "work").mkdir()
    (project / "work" / "runtime-events.jsonl").write_text(DANGLING, encoding="utf-8")
    return project, environment, marker


@pytest.mark.parametrize(
    "argv",
    [("plan", "work/runtime-events.jsonl"), ("check",), ("check", "--format", "json"), ("vectors", "--out", "v", "--depth", "1")],
    ids=["plan", "check", "check json", "vectors"],
)
def test_read_only_commands_run_none_of_the_projects_code(own, argv: tuple[str, ...]) -> None:
    project, environment, marker = own
    done = _run(*argv, cwd=project, environment=environment)
    assert done.returncode in (0, 1), done.stderr
    assert not marker.exists(), f"{' '.join(argv)} ran the project's oracle or run loop"


def test_check_runs_the_oracle_only_when_asked_and_says_so(own) -> None:
    project, environment, marker = own
    plain = _run("check", cwd=project, environment=environment)
    assert plain.returncode == 0 and "oracle (oracle.py) was not run" in plain.stderr and not marker.exists()
    asked = _run("check", "--run-oracle", cwd=project, environment=environment)
    assert asked.returncode == 0 and marker.read_text() == "ran"


def test_a_wrong_oracle_is_found_by_check_run_oracle_after_a_remembered_clean_check(own) -> None:
    project, environment, _ = own
    assert _run("check", cwd=project, environment=environment).returncode == 0  # remembered clean
    # `oracle : oracle.py` (a space before the colon) once kept the oracle out of the remembered key.
    invariants = project / "spec" / "invariants.yaml"
    invariants.write_text(invariants.read_text().replace("oracle: oracle.py", "oracle : oracle.py"))
    assert _run("generate", cwd=project, environment=environment).returncode == 0
    oracle = project / "oracle.py"
    oracle.write_text(oracle.read_text().replace('"dangling_tool_state"', '"renamed_reason"'))
    assert _run("check", cwd=project, environment=environment).returncode == 0  # the oracle is no input of check
    judged = _run("check", "--run-oracle", cwd=project, environment=environment)
    assert judged.returncode == 2 and "matches_oracle" in judged.stderr


@pytest.mark.slow  # runs every vector or explores: CI runs it, the edit loop (-m 'not slow') does not
def test_diff_executes_nothing_from_the_revisions_it_compares(own, tmp_path: Path) -> None:
    project, environment, marker = own
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=project, check=True)
    subprocess.run([*git, "checkout", "-qb", "pr"], cwd=project, check=True)
    (project / "oracle.py").write_text(MARKER_CODE + "def decide(rows, expected_high_water):\n    raise SystemExit(0)\n")
    subprocess.run([*git, "commit", "-qam", "pr"], cwd=project, check=True)
    subprocess.run([*git, "checkout", "-q", "main"], cwd=project, check=True)
    marker.unlink(missing_ok=True)
    done = _run("diff", "main", "pr", "--fail-on", "weakens-safety", cwd=project, environment=environment)
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "diff ran the pr revision's oracle.py"


# -- a remembered verdict is never a different verdict ---------------------------------------------------------


def test_an_edit_through_a_symlinked_spec_file_is_never_hidden_by_a_remembered_verdict(own, tmp_path: Path) -> None:
    project, environment, _ = own
    decisions = project / "spec" / "decisions.yaml"
    real = project / "decisions-real.yaml"
    shutil.move(decisions, real)
    decisions.symlink_to(real)
    assert _run("check", cwd=project, environment=environment).returncode == 0  # clean, remembered
    real.write_text(real.read_text(encoding="utf-8") + "\nnot: [valid\n", encoding="utf-8")
    again = _run("check", cwd=project, environment=environment)
    assert again.returncode == 2, (again.stdout, again.stderr)


# -- files a spec names to run: regular files inside the project ----------------------------------------------


def test_an_oracle_that_is_a_symlink_out_of_the_project_is_never_run(own, tmp_path: Path) -> None:
    project, environment, marker = own
    outside = tmp_path / "elsewhere.py"
    outside.write_text((project / "oracle.py").read_text() + "\n" + MARKER_CODE)
    (project / "oracle.py").unlink()
    (project / "oracle.py").symlink_to(outside)
    for argv in (("check", "--run-oracle"), ("verify", "--depth", "1"), ("generate",)):
        done = _run(*argv, cwd=project, environment=environment)
        assert done.returncode == 2 and "never through a link" in done.stderr, (argv, done.stdout, done.stderr)
    assert not marker.exists()


def test_a_run_loop_that_is_a_symlink_is_never_run_by_crash(own, tmp_path: Path) -> None:
    project, environment, marker = own
    outside = tmp_path / "loop.py"
    outside.write_text((project / "runloop.py").read_text() + "\n" + MARKER_CODE)
    (project / "runloop.py").unlink()
    (project / "runloop.py").symlink_to(outside)
    done = _run("crash", cwd=project, environment=environment)
    assert done.returncode == 2 and "never through a link" in done.stderr, (done.stdout, done.stderr)
    assert not marker.exists()


# -- trust reads what the loader reads (issue 53: 3, 4) -------------------------------------------------------

OTHER_RUNTIME = REPO / "examples" / "other-runtime"


def test_a_language_projects_oracle_others_may_write_is_never_run(tmp_path: Path) -> None:
    # Issue 53 (3): a project in the contract language (examples/other-runtime) with a world-writable oracle.py:
    # `verify` from a subdirectory ran it (spec/contract.yaml world-writable was refused; the oracle was not looked at).
    marker = tmp_path / "marker"
    environment = _environment(tmp_path, marker)
    project = tmp_path / "project"
    shutil.copytree(OTHER_RUNTIME, project, ignore=shutil.ignore_patterns("__pycache__"))
    oracle = project / "oracle.py"
    oracle.write_text(oracle.read_text(encoding="utf-8") + "\n" + MARKER_CODE, encoding="utf-8")
    oracle.chmod(0o666)
    for argv in (("verify", "--depth", "1"), ("check", "--run-oracle"), ("generate",)):
        done = _run(*argv, cwd=project / "ledgers", environment=environment)
        assert done.returncode == 2, (argv, done.returncode, done.stdout, done.stderr)
        assert f"{project}: a contract project found upward from here that is not trusted" in done.stderr
        assert "oracle.py is writable by anyone" in done.stderr
        assert not marker.exists(), f"{' '.join(argv)} ran a world-writable oracle"


# The same YAML as `KEY: FILE`, written as the line pattern the trust check used to read missed it.
SPELLINGS = {
    "value on the next line": "{key}:\n  {file}\n",
    "folded block": "{key}: >-\n  {file}\n",
    "explicit key": "? {key}\n: {file}\n",
    "quoted key, value on the next line": '"{key}" :\n  "{file}"\n',
}


def _respell(path: Path, key: str, file: str, spelling: str) -> None:
    """Rewrite the top-level line `key: file` of a spec file in another spelling of the same YAML."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(index for index, line in enumerate(lines) if line.startswith(f"{key}:"))
    assert lines[at].split("#")[0].strip() == f"{key}: {file}"
    lines[at] = SPELLINGS[spelling].format(key=key, file=file)
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_oracle_named_in_any_yaml_spelling_is_checked_before_it_is_run(tmp_path: Path, spelling: str) -> None:
    # Issue 53 (4): `oracle:` with `oracle.py` on the next line is the same YAML; the line pattern missed it, and
    # `check --run-oracle` ran a world-writable oracle.
    marker = tmp_path / "marker"
    environment = _environment(tmp_path, marker)
    project = _init(tmp_path / "project", environment)
    _respell(project / "spec" / "invariants.yaml", "oracle", "oracle.py", spelling)
    assert _run("generate", cwd=project, environment=environment).returncode == 0  # the loader reads the same oracle
    _plant(project)
    (project / "oracle.py").chmod(0o666)
    for argv in (("check", "--run-oracle"), ("verify", "--depth", "1")):
        done = _run(*argv, cwd=project, environment=environment)
        assert done.returncode == 2 and "oracle.py is writable by anyone" in done.stderr, (argv, done.stdout, done.stderr)
        assert not marker.exists(), f"{' '.join(argv)} ran a world-writable oracle named as {spelling!r}"


def test_every_file_the_build_runs_is_a_file_the_trust_check_reads(tmp_path: Path) -> None:
    # The build's run files (the oracle, the run loops of each harness; a language project's oracle) are each
    # among those the trust check reads, for the packaged contract, a project made by init and other-runtime.
    from resume_contract_generator.language.build import load_language
    from resume_contract_generator.pipeline import load_checked

    from resume_contract.project.trust import spec_run_files

    environment = _environment(tmp_path, tmp_path / "marker")
    project = _init(tmp_path / "project", environment)
    failpoints = project / "spec" / "failpoints.yaml"
    failpoints.write_text(failpoints.read_text(encoding="utf-8").replace("sqlite:\n", "sqlite:\n  run_loop: sqlite_loop.py\n", 1), encoding="utf-8")
    (project / "sqlite_loop.py").write_text("", encoding="utf-8")
    for root in (REPO, project):
        spec = load_checked(root)
        named = {spec.run_loop, spec.oracle, spec.sqlite_run_loop, spec.continuation_crash.run_loop if spec.continuation_crash else None} - {None}
        assert named and named <= set(spec_run_files(str(root))), (root, named, spec_run_files(str(root)))
    assert "sqlite_loop.py" in spec_run_files(str(project))
    language = load_language(OTHER_RUNTIME)
    assert language.oracle == "oracle.py" and spec_run_files(str(OTHER_RUNTIME)) == ["oracle.py"]


def test_what_the_spec_names_to_run_is_remembered_only_as_the_users_own_record(own) -> None:
    # A plan in a project loads no YAML parser once the spec's run files were read (project/verdicts.py keeps them
    # under the sha256 of the spec files' bytes); a record others could have written is not believed.
    project, environment, marker = own
    assert _run("check", cwd=project, environment=environment).returncode == 0
    records = list((Path(environment["RESUME_CONTRACT_CACHE_DIR"]) / "run-files").iterdir())
    assert len(records) == 1 and sorted(json.loads(records[0].read_text())) == ["oracle.py", "runloop.py"]
    records[0].write_text("[]")
    records[0].chmod(0o666)
    (project / "oracle.py").chmod(0o666)
    done = _run("check", "--run-oracle", cwd=project, environment=environment)
    assert done.returncode == 2 and "oracle.py is writable by anyone" in done.stderr, done.stderr
    assert not marker.exists()
