"""Attacks on `generate` (issue 10, items 9 and 10): a failure or an interrupt at any step leaves generated/
wholly old or wholly new, and the next run converges; symlinks under generated/ are refused.

These are tests of the tool: the spec change is a one-word edit of a copy, made only to have two trees.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from resume_contract_generator.render import outputs as outputs_module


def _tree(root: Path) -> dict[str, bytes]:
    base = root / "generated"
    return {
        path.relative_to(base).as_posix(): path.read_bytes()
        for path in sorted(base.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _new_tree(project: Path, run_cli) -> dict[str, bytes]:
    """The tree the edited spec generates, computed on a scratch copy."""
    scratch = project.parent / "scratch"
    shutil.copytree(project, scratch)
    assert run_cli("--root", str(scratch), "generate")[0] == 0
    return _tree(scratch)


def _edit(project: Path) -> None:
    path = project / "spec" / "projector.yaml"
    path.write_text(path.read_text().replace("Do not retry the tool call", "Never retry the tool call"))


# (the function generate calls, and which call of it fails): every step of building and swapping the tree.
STEPS = [
    ("write_bytes", 1),
    ("write_bytes", 4),
    ("rename", 1),  # generated/ -> generated.resume-contract-old
    ("rename", 2),  # generated.resume-contract-new -> generated/
    ("rmtree", 1),  # removing the old tree
]


@pytest.mark.parametrize(("step", "failing_call"), STEPS)
@pytest.mark.parametrize("failure", [KeyboardInterrupt, lambda: OSError(28, "No space left on device")], ids=["ctrl-c", "enospc"])
def test_generate_cut_off_anywhere_leaves_one_whole_tree_and_converges(project: Path, run_cli, monkeypatch, step: str, failing_call: int, failure) -> None:
    old = _tree(project)
    _edit(project)
    new = _new_tree(project, run_cli)
    calls = {"n": 0}
    targets = {"write_bytes": (Path, "write_bytes"), "rename": (outputs_module.os, "rename"), "rmtree": (outputs_module.shutil, "rmtree")}
    owner, name = targets[step]
    real = getattr(owner, name)

    def flaky(*args, **kwargs):
        if step == "rmtree" and kwargs.get("ignore_errors") is not True:
            return real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == failing_call:
            raise failure()
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, flaky)
    try:
        run_cli("--root", str(project), "generate")
    except (KeyboardInterrupt, OSError):
        pass  # main maps some failures to exit codes and lets Ctrl-C through; either way it stopped here
    monkeypatch.setattr(owner, name, real)
    assert calls["n"] >= failing_call, "the failure was never injected"

    # Cut off at any step: generated/ is wholly the old tree or wholly the new one (or absent mid-swap,
    # with the old tree put aside whole), never a mix.
    if (project / "generated").exists():
        assert _tree(project) in (old, new)
    else:
        assert step == "rename" and failing_call == 2
    code, out, _ = run_cli("--root", str(project), "generate")
    assert code == 0
    assert _tree(project) == new
    assert run_cli("--root", str(project), "check")[0] == 0
    assert not list(project.glob("generated.resume-contract-*"))


def test_check_reports_an_interrupted_generate_and_changes_nothing(project: Path, run_cli, snapshot) -> None:
    (project / "generated").rename(project / "generated.resume-contract-old")
    before = snapshot(project)
    code, out, _ = run_cli("--root", str(project), "check")
    assert code == 1 and "an interrupted generate left generated.resume-contract-old" in out
    assert snapshot(project) == before
    code, out, _ = run_cli("--root", str(project), "generate")
    assert code == 0 and "restored generated from generated.resume-contract-old" in out
    assert run_cli("--root", str(project), "check")[0] == 0


@pytest.mark.parametrize("link", ["generated/tests", "generated/resume_contract_generated/catalog.py", "generated"])
def test_a_symlink_under_generated_is_refused_and_nothing_outside_is_written(project: Path, run_cli, snapshot, link: str) -> None:
    elsewhere = project.parent / "elsewhere"
    target = project / link
    shutil.move(str(target), str(elsewhere))
    os.symlink(elsewhere, target)
    _edit(project)
    before = snapshot(elsewhere) if elsewhere.is_dir() else elsewhere.read_bytes()
    for command in ("check", "generate", "generate"):
        code, out, err = run_cli("--root", str(project), command)
        assert code == 2 and "is a symlink" in err, (command, out, err)
    assert (snapshot(elsewhere) if elsewhere.is_dir() else elsewhere.read_bytes()) == before
