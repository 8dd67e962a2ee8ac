"""The documentation cannot drift: every command it shows is one the parser accepts, every path it names exists,
every page is linked from the README, and the on-call examples are what the tool really prints.

The examples run against the tool's frozen contract (tests/frozen_spec/), so a contract edit never breaks them.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from resume_contract.cli.parser import build_parser
from resume_contract.project.locate import load_project

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_EXAMPLE = re.compile(r"^<!-- example: (\S+) -->\n```console\n(.*?)^```", re.MULTILINE | re.DOTALL)
_PATH = re.compile(r"`((?:tests|resume_contract|generator|spec|generated|docs|benchmarks|tools|\.ci)/[^`\s:]*)")


def _commands() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for language, body in _FENCE.findall(page.read_text(encoding="utf-8")):
            if language not in ("sh", "console", "bash", ""):
                continue
            for line in body.replace("\\\n", " ").splitlines():
                if language == "console" and not line.startswith("$ "):
                    continue  # output, not a command
                line = line.removeprefix("$ ").strip()
                if line.startswith("resume-contract "):
                    found.append((page.name, line))
    return found


@pytest.mark.parametrize(("page", "command"), _commands(), ids=[f"{page}:{command[:60]}" for page, command in _commands()])
def test_every_command_the_docs_show_is_accepted_by_the_parser(page: str, command: str) -> None:
    arguments = shlex.split(command, comments=True)[1:]
    if arguments[-1:] in (["--help"], ["--version"]):
        return
    for index, argument in enumerate(arguments):  # a shell redirection is not an argument
        if argument.startswith((">", "|")):
            arguments = arguments[:index]
            break
    try:
        build_parser().parse_args(arguments)
    except SystemExit as error:
        pytest.fail(f"{page}: `{command}` is refused by the parser (exit {error.code})")


# Files the docs name that live in a team's own repository, not in this one.
_PROJECT_FILES = {
    "spec/README.md": "written by `init`",
    "spec/review-waivers.yaml": "a project's waivers, once it has one",
    "spec/contract.yaml": "a contract in the contract language (`init --language`)",
    "generated/tests": "a project's generated tests",
}


def test_every_path_the_docs_name_exists_and_every_page_is_linked_from_the_readme() -> None:
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for path in _PATH.findall(text):
            path = path.rstrip(".,;)").split("::")[0]
            if path in _PROJECT_FILES or re.search(r"/[A-Z]+\.", path):  # a placeholder: spec/FILE.yaml
                continue
            if not (list(REPO.glob(path)) if "*" in path else (REPO / path).exists()):
                missing.append(f"{page.name}: {path}")
        for link in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", text):
            if not (page.parent / link).is_file():
                missing.append(f"{page.name}: link {link}")
    assert missing == []
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert [page.name for page in PAGES[1:] if f"docs/{page.name}" not in readme] == []
    assert len(readme.splitlines()) <= 180


def _rows(root: Path, session: str | None = None, run: str | None = None) -> list[str]:
    catalog = load_project(root).catalog
    rows = [json.loads(row) for row in catalog.CANONICAL_LEDGER_ROWS["ok"]]
    if session is not None:
        rows = [dict(row, sessionId=session, runId=run) for row in rows]
    return [json.dumps(row, separators=(",", ":")) for row in rows]


def _set_up(name: str, root: Path) -> None:
    lengths = load_project(root).catalog.PREFIX_LENGTHS
    rows = _rows(root)
    called, answered = lengths["after_function_call"], lengths["after_function_response"]
    ledger = root / "runtime-events.jsonl"
    if name in ("blocked", "offset"):
        ledger.write_text("".join(row + "\n" for row in rows[:called]))
    elif name == "torn":
        ledger.write_text("".join(row + "\n" for row in rows[:called]) + rows[called][:40])
    elif name == "invalid":
        ledger.write_text(rows[0] + "\n" + rows[1][:-1] + ",}\n")
    elif name == "audit":
        runs = root / "ws" / "sessions" / "s" / "runs"
        for run, chosen in {"safe": None, "pending": None, "unmatched": None, "torn": None}.items():
            rows = _rows(root, "s", run)
            chosen = {
                "safe": [row + "\n" for row in rows[:answered]],
                "pending": [row + "\n" for row in rows[:called]],
                "unmatched": [rows[0] + "\n", rows[answered - 1] + "\n"],
                "torn": [rows[0] + "\n", rows[1][:9]],
            }[run]
            (runs / run).mkdir(parents=True)
            (runs / run / "runtime-events.jsonl").write_text("".join(chosen))
    elif name == "sqlite":  # databases the reference's own writers wrote (tests/conformance_sqlite)
        shutil.copytree(REPO / "tests" / "conformance_sqlite" / "reference" / "S_multi_run_one_session" / "WS", root / "ws")
        shutil.copytree(REPO / "tests" / "conformance_sqlite" / "reference" / "S_unreadable_identity_mismatch" / "WS", root / "bad")
    else:
        raise AssertionError(f"docs/on-call.md has an example {name!r} this test does not set up")


def _pattern(expected: str) -> re.Pattern[str]:
    """The example as a pattern: a line `…` stands for any lines, `…` in a line for any text."""
    parts = ["(?:.*\\n)*?" if line == "…" else re.escape(line).replace("…", ".*") + "\\n" for line in expected.splitlines()]
    return re.compile("".join(parts))


# The progress line a terminal overwrites in place ("plan: runs 4/4 (100%), ..."): not part of what is read.
_PROGRESS = re.compile(r"^\w+: [\w ]+ \d+/\d+ \(\d+%\)")
EXAMPLES = _EXAMPLE.findall((REPO / "docs" / "on-call.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "session"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_the_on_call_examples_are_what_the_tool_prints(name: str, session: str, project: Path, run_cli, monkeypatch) -> None:
    _set_up(name, project)
    monkeypatch.chdir(project)  # the frozen project's contract, found from the current directory
    printed = ""
    for block in re.split(r"^(?=\$ )", session, flags=re.MULTILINE):
        if not block:
            continue
        command, _, expected = block.partition("\n")
        code, out, err = run_cli(*shlex.split(command.removeprefix("$ "))[1:])
        err = "".join(line for line in err.splitlines(keepends=True) if not _PROGRESS.match(line))
        printed += f"{command}\n{out}{err}exit {code}\n"
    assert _pattern(session).fullmatch(printed), f"docs/on-call.md example {name!r} now prints:\n{printed}"


def test_the_on_call_page_shows_every_example_this_test_sets_up() -> None:
    assert sorted(name for name, _ in EXAMPLES) == ["audit", "blocked", "invalid", "offset", "sqlite", "torn"]
