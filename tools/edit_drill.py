"""The contract-edit drill: make an ordinary spec edit on a throw-away copy, regenerate, run the whole suite.

    .venv/bin/python tools/edit_drill.py                       # every edit, one after the other
    .venv/bin/python tools/edit_drill.py reword-directive      # one edit (several names: each in turn)
    .venv/bin/python tools/edit_drill.py reword-directive+reword-boundary   # both edits on one copy
    .venv/bin/python tools/edit_drill.py --list                # the edits and what each one changes

An edit is the change a contract maintainer makes, and nothing else: spec lines (and, for a new failpoint,
the run loop hook it needs; for a new diagnostic, the independent oracle, which is deliberately not read
from the spec). An edit of the continuation decision also says how `resume-contract diff` must class it (between
the copy's spec and the edited one); another class fails the edit. If the suite then fails, some test pins the live contract instead of reading it from
`spec/` (or a tool test reads the live spec instead of its own frozen inputs): that is the bug the drill
exists to find. Exit 0 when every edit passes, 1 when one fails, 2 on usage errors.

Each edit runs in a copy of the working tree (the files git tracks or does not ignore) whose packages are put
first on PYTHONPATH, so the copy's regenerated code is what its tests import (as tools/spec_mutants.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import spec_mutants  # noqa: E402 - the one copy of the working tree, shared with spec mutation testing

# Set in the suite the drill runs, so tests/test_edit_drill.py does not run the drill again inside it.
NESTED = "RESUME_CONTRACT_EDIT_DRILL"


class EditDoesNotApply(Exception):
    """The text an edit replaces is not in the file (the spec moved on): update the edit, not the tests."""


def _replace(root: Path, name: str, old: str, new: str) -> None:
    path = root / name
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise EditDoesNotApply(f"{name}: expected exactly one {old!r}, found {text.count(old)}")
    path.write_text(text.replace(old, new), encoding="utf-8")


def _lines(root: Path, name: str) -> list[str]:
    return (root / name).read_text(encoding="utf-8").splitlines(keepends=True)


def _write(root: Path, name: str, lines: list[str]) -> None:
    (root / name).write_text("".join(lines), encoding="utf-8")


def _block_end(lines: list[str], start: int) -> int:
    """The index after the last line of the YAML block that starts at `start` (the lines indented deeper)."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _key_line(lines: list[str], key: str, name: str, after: int = 0) -> int:
    found = next((index for index in range(after, len(lines)) if lines[index].startswith(key)), None)
    if found is None:
        raise EditDoesNotApply(f"{name}: no line starts with {key!r}")
    return found


# The Phase 0 edits find what they change by its key (the directive, the third failpoint, a rule that raises an
# anomaly), never by the contract's wording: a reworded or evolved contract still takes them.
def reword_directive(root: Path) -> None:
    # One more sentence at the end of the directive, whatever it says and however it is written.
    lines = _lines(root, "spec/projector.yaml")
    start = _key_line(lines, "directive:", "spec/projector.yaml")
    end = _block_end(lines, start)
    text = lines[end - 1].rstrip("\n")
    quote = text[-1] if text[-1] in "'\"" else ""  # a quoted one-line directive: the sentence goes inside
    lines[end - 1] = f"{text[: len(text) - len(quote)]} Check first.{quote}\n"
    _write(root, "spec/projector.yaml", lines)


def reword_boundary(root: Path) -> None:
    # The third failpoint's boundary, reworded (a word added at its end).
    lines = _lines(root, "spec/failpoints.yaml")
    boundaries = [index for index, line in enumerate(lines) if line.lstrip().startswith("boundary: ")]
    if len(boundaries) < 3:
        raise EditDoesNotApply("spec/failpoints.yaml: fewer than three `boundary:` lines")
    lines[boundaries[2]] = lines[boundaries[2]].rstrip("\n") + ", reworded\n"
    _write(root, "spec/failpoints.yaml", lines)


def add_failpoint(root: Path) -> None:
    # A new failpoint after the last one, at the last one's committed prefix; the run loop hits it where the
    # continuation run has been created.
    lines = _lines(root, "spec/failpoints.yaml")
    entries = [index for index, line in enumerate(lines) if line.lstrip().startswith("- id: P")]
    if not entries:
        raise EditDoesNotApply("spec/failpoints.yaml: no `- id: P...` entry")
    last = entries[-1]
    end = _block_end(lines, last)
    indent = lines[last][: len(lines[last]) - len(lines[last].lstrip())]
    number = 1 + max(int(lines[index].split("- id: P", 1)[1].split()[0]) for index in entries)
    prefix = next((line.split(":", 1)[1].strip() for line in lines[last:end] if line.lstrip().startswith("committed_prefix:")), None)
    if prefix is None:
        raise EditDoesNotApply("spec/failpoints.yaml: the last failpoint has no committed_prefix")
    lines[end:end] = [f"{indent}- id: P{number}\n", f"{indent}  boundary: Continuation run created, not yet started\n", f"{indent}  committed_prefix: {prefix}\n"]
    _write(root, "spec/failpoints.yaml", lines)
    _replace(
        root, "resume_contract/crash/runloop.py",
        '        (run_dir.parent / f"{final.run_id}-continuation").mkdir(exist_ok=True)\n',
        '        (run_dir.parent / f"{final.run_id}-continuation").mkdir(exist_ok=True)\n'
        f'        failpoints.hit("P{number}")  # the continuation run exists; it has not started\n',
    )


def add_diagnostic(root: Path) -> None:
    # The last one-line rule that raises one anomaly without moving the state now raises a new, more specific
    # diagnostic of the same reason (and is a reference difference wherever the old one is).
    from resume_contract_generator.spec.loader import load_spec_file

    data = load_spec_file(root / "spec" / "projector.yaml", "spec/projector.yaml")[0].data
    lines = _lines(root, "spec/projector.yaml")
    rules = [index for index, line in enumerate(lines) if line.startswith("  - {") and " anomaly: " in line and " to: " not in line and line.rstrip().endswith("}")]
    rules = [index for index in rules if lines[index].rstrip()[:-1].rsplit(" anomaly: ", 1)[1].isidentifier()]
    if not rules:
        raise EditDoesNotApply("spec/projector.yaml: no one-line rule raising one anomaly without `to`")
    old = lines[rules[-1]].rstrip()[:-1].rsplit(" anomaly: ", 1)[1]
    lines[rules[-1]] = lines[rules[-1]].replace(f" anomaly: {old}}}", " anomaly: conflicting_tool_result}")
    at = _key_line(lines, "diagnostics:", "spec/projector.yaml") + 1
    lines[at:at] = [
        "  conflicting_tool_result:\n", f"    reason: {data['diagnostics'][old]['reason']}\n",
        "    message: a row contradicts what is already committed for the tool call\n",
    ]
    _write(root, "spec/projector.yaml", lines)
    decisions = _lines(root, "spec/decisions.yaml")
    for index, line in enumerate(decisions):
        if line.lstrip().startswith("anomalies: [") and f" {old}," in line.replace("[", " "):
            decisions[index] = line.replace(f"{old},", f"{old}, conflicting_tool_result,", 1) if f"{old}," in line else line
    _write(root, "spec/decisions.yaml", decisions)


# The continuation edits are written for the frozen Phase 1 spec (tests/frozen_spec/phase1: the cwd check parks), where
# tests/test_edit_drill.py checks `diff` classes each as it says; on a live spec that no longer reads so, the drill
# says the edit does not apply.
_CWD_MOVED_PARKS = """\
    cwd_moved:
      summary: a continuation in another working directory parks
      events: [{role: user, author: user, content: {kind: text, text: hello}}]
      facts: {currentCwd: /fresh-sandbox/repo}
      expect:
        disposition: park
        rejection_reasons: [workspace_cwd_mismatch]
        diagnostics:
          - {code: workspace_cwd_mismatch, detail: {sourceCwd: /workspace/repo, currentCwd: /fresh-sandbox/repo}}
"""

_CWD_TRAILING_SLASH_CONTINUES = """\
      summary: a working directory that differs only by a trailing slash is the same one
      events: [{role: user, author: user, content: {kind: text, text: hello}}]
      facts: {currentCwd: /workspace/repo/}
      expect:
        disposition: continue
        continuation:
          sessionId: session-1
          invocationId: invocation-2
          runId: run-2
          turnId: turn-2
          sourceInvocationId: invocation-1
          sourceRunId: run-1
          sourceTurnId: turn-1
          sourceRuntimeEventHighWater: 1
          runtimeContext: [event-1]
          safetySnapshot: {workspaceIdentity: workspace-1, backgroundOperationsSettled: true, availableToolNames: [Bash, Write]}
"""

_CWD_CHECK = """\
  - name: cwd
    when: [{differ: [input.sourceCwd, input.currentCwd], normalise: normalised_cwd}]
    diagnostic: workspace_cwd_mismatch
    detail: {sourceCwd: input.sourceCwd, currentCwd: input.currentCwd}
"""

_WORKSPACE_IDENTITY_CHECK = """\
  - name: workspace_identity
    when: [{differ: [input.sourceWorkspaceIdentity, input.currentWorkspaceIdentity]}]
    diagnostic: workspace_identity_mismatch
    detail: {sourceWorkspaceIdentity: input.sourceWorkspaceIdentity, currentWorkspaceIdentity: input.currentWorkspaceIdentity}
"""


def cwd_reported(root: Path) -> None:
    # The team decides another working directory is reported, not parked: the diagnostic loses its reason (and the
    # reason its remedy), and the situation says what the team now wants.
    _replace(root, "spec/continuation.yaml",
             "  workspace_cwd_mismatch: {reason: workspace_cwd_mismatch, message: the current working directory is not the source's}\n",
             "  workspace_cwd_mismatch: {reason: null, message: the current working directory is not the source's}\n")
    _replace(root, "spec/continuation.yaml", "  workspace_cwd_mismatch: Run the continuation in the source run's working directory.\n", "")
    _replace(root, "spec/continuation.yaml", _CWD_MOVED_PARKS, _CWD_MOVED_PARKS
             .replace("parks\n", "is reported and continues\n")
             .replace("        disposition: park\n        rejection_reasons: [workspace_cwd_mismatch]\n", "        disposition: continue\n")
             + _CWD_TRAILING_SLASH_CONTINUES.split("        continuation:\n", 1)[1].join(["        continuation:\n", ""]))


def cwd_exact(root: Path) -> None:
    # A new parking check after the normalised one: the working directory must be spelt as the source spelt it.
    _replace(root, "spec/continuation.yaml", _CWD_CHECK, _CWD_CHECK
             + "  - name: cwd_exact\n    when: [{differ: [input.sourceCwd, input.currentCwd]}]\n    diagnostic: workspace_cwd_not_exact\n")
    _replace(root, "spec/continuation.yaml",
             "  workspace_identity_mismatch: {reason: workspace_identity_mismatch,",
             "  workspace_cwd_not_exact: {reason: workspace_cwd_not_exact, message: the working directory is not spelt as the source's}\n"
             "  workspace_identity_mismatch: {reason: workspace_identity_mismatch,")
    _replace(root, "spec/continuation.yaml",
             "  workspace_cwd_mismatch: Run the continuation in the source run's working directory.\n",
             "  workspace_cwd_mismatch: Run the continuation in the source run's working directory.\n"
             "  workspace_cwd_not_exact: Run the continuation in the source's working directory, spelt as the source spelt it.\n")
    _replace(root, "spec/continuation.yaml", _CWD_MOVED_PARKS, _CWD_MOVED_PARKS
             .replace("[workspace_cwd_mismatch]", "[workspace_cwd_mismatch, workspace_cwd_not_exact]")
             + "          - {code: workspace_cwd_not_exact}\n")
    _replace(root, "spec/continuation.yaml", _CWD_TRAILING_SLASH_CONTINUES, _CWD_TRAILING_SLASH_CONTINUES.split("        disposition:")[0]
             .replace("is the same one\n", "parks\n")
             + "        disposition: park\n        rejection_reasons: [workspace_cwd_not_exact]\n        diagnostics: [{code: workspace_cwd_not_exact}]\n")


def checks_swapped(root: Path) -> None:
    # The workspace identity is checked before the working directory: a run that moved both parks with the
    # same reasons in another order.
    _replace(root, "spec/continuation.yaml", _CWD_CHECK + _WORKSPACE_IDENTITY_CHECK, _WORKSPACE_IDENTITY_CHECK + _CWD_CHECK)


@dataclass(frozen=True)
class Edit:
    name: str
    change: str
    apply: Callable[[Path], None]
    # The class `resume-contract diff` must give every change between the copy's spec and the edited one (None:
    # not checked): an edit that weakens safety and is reviewed as anything else is a review bug.
    review_class: str | None = None


def no_edit(root: Path) -> None:
    """The baseline: the copy as it is, to tell a failure the drill's environment causes from one an edit causes."""


EDITS = [
    Edit("none", "nothing (the baseline: the suite must pass on the unedited copy)", no_edit),
    Edit("reword-directive", "projector.yaml: a sentence added to the directive", reword_directive),
    Edit("reword-boundary", "failpoints.yaml: the third failpoint's boundary is reworded", reword_boundary),
    Edit("add-failpoint", "failpoints.yaml: a failpoint after the last one; runloop.py: its hook", add_failpoint),
    Edit("add-diagnostic", "projector.yaml + decisions.yaml: the last one-line anomaly rule raises a new diagnostic, conflicting_tool_result", add_diagnostic),
    Edit("cwd-reported", "continuation.yaml: another working directory is reported, not parked", cwd_reported, "weakens-safety"),
    Edit("cwd-exact", "continuation.yaml: a new parking check, the working directory spelt as the source's", cwd_exact, "tightens"),
    Edit("checks-swapped", "continuation.yaml: the workspace identity is checked before the working directory", checks_swapped, "breaking"),
]


def copy_repository(target: Path) -> None:
    spec_mutants.copy_repository(target)
    # The conformance set lives beside the repository (../shared), where the tests look for it.
    shared = REPO.parent / "shared"
    if shared.is_dir() and not (target.parent / "shared").exists():
        (target.parent / "shared").symlink_to(shared)


def _default_signals() -> None:
    # A shell starts background jobs with SIGINT ignored, and children inherit that: the suite's Ctrl-C tests
    # would then fail for a reason that is not the edit's.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def review_classes(base: Path, head: Path, environment: dict[str, str]) -> list[str]:
    """The class `resume-contract diff` gives each change from the spec under `base` to the one under `head`."""
    diff = subprocess.run([sys.executable, "-m", "resume_contract", "diff", str(base), str(head), "--format", "json"], capture_output=True, text=True, env=environment, preexec_fn=_default_signals)
    if diff.returncode != 0:
        raise EditDoesNotApply(f"diff exited {diff.returncode}:\n{diff.stderr.strip()}")
    return [change["class"] for change in json.loads(diff.stdout)["changes"]]


def _wrong_review(edits: list[Edit], base: Path, head: Path, environment: dict[str, str]) -> str:
    """What is wrong with the review of the edits ('' when each class is the one they declare, or none declares one)."""
    expected = {edit.review_class for edit in edits} - {None}
    if not expected:
        return ""
    if len(expected) > 1:
        return f"the edits declare different review classes ({', '.join(sorted(c for c in expected if c))}): run them apart"
    classes = review_classes(base, head, environment)
    if not classes or set(classes) != expected:
        return f"diff classed the edit {sorted(set(classes)) or 'as no change'}, not {expected.pop()}"
    return ""


def run_edits(edits: list[Edit], pytest_args: list[str]) -> tuple[bool, str]:
    """(passed, what happened) for some edits made together on one fresh copy."""
    with tempfile.TemporaryDirectory(prefix="edit-drill-") as scratch:
        root, original = Path(scratch) / "repo", Path(scratch) / "original"
        copy_repository(root)
        shutil.copytree(root / "spec", original / "spec")
        for edit in edits:
            edit.apply(root)
        environment = {**os.environ, "PYTHONPATH": str(root / "_import_shim"), "PYTHONDONTWRITEBYTECODE": "1", NESTED: "1"}
        generate = subprocess.run([sys.executable, "-m", "resume_contract", "--root", str(root), "generate"], capture_output=True, text=True, env=environment, preexec_fn=_default_signals)
        if generate.returncode != 0:
            return False, f"generate exited {generate.returncode}:\n{generate.stderr}"
        wrong_review = _wrong_review(edits, original, root, environment)
        if wrong_review:
            return False, wrong_review
        tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args], cwd=root, capture_output=True, text=True, env=environment, preexec_fn=_default_signals)
        summary = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else tests.stderr.strip()[-300:]
        if tests.returncode != 0:
            failed = [line for line in tests.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
            return False, "\n".join([*failed, summary])
        return True, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("edits", nargs="*", metavar="EDIT", help="edits to run, each on its own copy (default: all; A+B: both on one copy); see --list")
    parser.add_argument("--list", action="store_true", help="list the edits and stop")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, e.g. '-x tests/test_review_cases.py'")
    args = parser.parse_args(argv)
    by_name = {edit.name: edit for edit in EDITS}
    if args.list:
        for edit in EDITS:
            print(f"{edit.name:<18} {edit.change}")
        return 0
    unknown = [name for group in args.edits for name in group.split("+") if name not in by_name]
    if unknown:
        parser.error(f"unknown edit {', '.join(unknown)}; the edits are {', '.join(by_name)}")
    failures = 0
    for name in args.edits or [name for name in by_name if name != "none"]:
        started = time.perf_counter()
        try:
            passed, detail = run_edits([by_name[part] for part in name.split("+")], shlex.split(args.pytest_args))
        except EditDoesNotApply as error:
            passed, detail = False, f"the edit does not apply: {error}"
        failures += not passed
        print(f"{'passed' if passed else 'FAILED':<7} {name} ({time.perf_counter() - started:.0f} s): {detail}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
