"""Which failpoint hooks a run loop's source holds, read with `ast` (checking a run loop must not run it).

A failpoint is only testable if the run loop calls `failpoints.hit("<id>")` where its boundary is crossed; the
crash harness kills the process there. A failpoint added to spec/failpoints.yaml without its hook would
otherwise surface as "the run loop did not die by the kill"; `check`, `generate` and `crash` name it instead,
with the file to edit.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path


def hook_lines(path: Path) -> dict[str, int]:
    """Each id of a `<anything>.hit("<id>")` call in the file -> the line of its first call (a syntax error: none)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "hit"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found[node.args[0].value] = min(node.lineno, found.get(node.args[0].value, node.lineno))
    return dict(sorted(found.items(), key=lambda item: item[1]))


def parse_problem(path: Path) -> tuple[int, int | None, str] | None:
    """(line, column, why) when the run loop's source cannot be read or parsed (so no hook can be found), else None."""
    try:
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as error:
        return error.lineno or 1, error.offset, f"has a syntax error: {error.msg}"
    except UnicodeDecodeError as error:
        return 1, None, f"is not UTF-8 ({error.reason} at byte {error.start})"
    except OSError as error:
        return 1, None, f"cannot be read ({error.strerror or error})"
    return None


def hooks_in(path: Path) -> set[str]:
    """The ids of every `<anything>.hit("<id>")` call in the file."""
    return set(hook_lines(path))


def unknown_hooks(failpoint_ids: Iterable[str], path: Path) -> list[tuple[str, int]]:
    """(id, line) of each hook naming no failpoint of the spec: at run time it raises FailpointConfigError."""
    known = set(failpoint_ids)
    return [(hook, line) for hook, line in hook_lines(path).items() if hook not in known]


def missing_hooks(failpoint_ids: Iterable[str], path: Path) -> list[str]:
    """The failpoint ids, in the given order, that the run loop at `path` never hits."""
    present = hooks_in(path)
    return [failpoint_id for failpoint_id in failpoint_ids if failpoint_id not in present]


def missing_hook_message(failpoint_id: str, runloop: str) -> str:
    return (
        f"failpoint {failpoint_id} has no hook in the run loop: add `failpoints.hit(\"{failpoint_id}\")` to {runloop} "
        "where its boundary is crossed (the crash harness kills the run loop there)"
    )
