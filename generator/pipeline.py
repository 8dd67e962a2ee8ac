"""The generator's whole job, one entry point per command: what a checked spec is is decided here, once.

    load_checked(root)            the spec every command works from, or SpecInvalid: every problem of the
                                  three passes (schema, references and structure, the decision table against
                                  the projector), every declared invariant it breaks, a malformed review-waivers
                                  file; `vectors` and `conform` use it too
    check(root)                   the above, rendered and compared with generated/ (writes nothing, runs
                                  no project code unless asked: `run_oracle`)
    prepare_generate(root)        the above, after finishing or rolling back an interrupted generate
    write(root, prepared, force)  generated/ brought in line, all or nothing
    review_change(root, base, head, depth)
                                  `diff`: both sides loaded through the same checks, reviewed, waivers applied

Nothing here prints or exits: the command line prints what these return and maps what they raise.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import Mark, SpecError, SpecInvalid
from .hooks import missing_hook_message, missing_hooks, parse_problem, unknown_hooks
from .language import LanguageSpec, is_language_project, load_language, render_language
from .render.outputs import (
    Drift,
    UnsafeGeneratedTree,
    compare,
    interrupted_leftovers,
    recover_interrupted,
    write_outputs,
)
from .render.tree import GENERATED_DIR, render_all
from .review.collector import Review, review
from .review.source import WORKING_TREE, default_base, side_directory
from .review.waivers import WAIVERS_FILE, apply_waivers, parse_waivers, read_waivers
from .spec.invariant_check import invariant_errors
from .spec.model import Spec
from .spec.oracle_file import project_oracle
from .spec.validate import load_spec


@dataclass(frozen=True)
class Finding:
    """Something a check reports at a place in a file, without refusing the spec (a run loop's hooks)."""

    file: str
    line: int
    column: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}" if self.column is not None else f"{self.file}:{self.line}: {self.message}"


def validated(root: Path, *, waivers: bool = True, run_oracle: bool = False) -> tuple[Spec, list[SpecError]]:
    """The spec under `root`, and every declared invariant it breaks (empty: it is a checked spec). Raises
    SpecInvalid for anything else: the three passes, or (with `waivers`) a malformed review-waivers file.

    The project's own oracle (spec/invariants.yaml `oracle:`) is its Python: it is run, and `matches_oracle`
    judged with it, only with `run_oracle` (`generate`, `check --run-oracle`). Without it no project code runs,
    and `matches_oracle` is left to `verify` and the generated tests (`oracle_skipped` says so); a spec naming
    no oracle is judged by the packaged one, which is this tool's code."""
    spec = load_spec(root)
    waivers_file = root / WAIVERS_FILE
    if waivers and waivers_file.is_file():  # read by `diff` alone, but a broken one should not wait for the review
        parse_waivers(waivers_file)
    if oracle_skipped(spec, run_oracle=run_oracle):
        return spec, invariant_errors(spec, skip=ORACLE_INVARIANTS)
    oracle, problems = project_oracle(root, spec)
    if problems:
        raise SpecInvalid(problems)
    return spec, invariant_errors(spec, oracle=oracle)


ORACLE_INVARIANTS = ("matches_oracle",)  # the invariants a project's oracle judges


def oracle_skipped(spec: Spec, *, run_oracle: bool) -> bool:
    """Whether a check without `run_oracle` leaves the spec's own oracle (and the invariants it judges) unrun."""
    return spec.oracle is not None and not run_oracle


def load_checked(root: Path, *, run_oracle: bool = False) -> Spec:
    """The checked spec under `root` (see the module's docstring); raises SpecInvalid."""
    spec, violated = validated(root, run_oracle=run_oracle)
    if violated:
        raise SpecInvalid(violated)
    return spec


def hook_findings(root: Path, spec: Spec) -> list[Finding]:
    """One finding per failpoint the project's run loop (spec/failpoints.yaml `run_loop`) has no hook for, and per
    hook naming no failpoint; one when the run loop named does not exist. None when the spec names no run loop,
    or one in another language than Python (its hooks are found by `crash`, which kills it at each). The same
    for the continuation's crash boundaries and its run loop (spec/lifecycle.yaml `run_loop`), and for the SQLite
    store's boundaries and its run loop (spec/failpoints.yaml `sqlite.run_loop`: none named, the packaged one)."""
    findings: list[Finding] = []
    failpoints = {failpoint.id: failpoint.mark for failpoint in spec.failpoints}
    if spec.run_loop is not None:
        runloop, found = _loop_findings(root, spec.run_loop, spec.location("failpoints", "run_loop"), "run loop", failpoints)
        findings += found
        findings += [
            Finding(
                spec.run_loop,
                line,
                None,
                f"failpoints.hit({hook!r}) names no failpoint of spec/failpoints.yaml: add the failpoint to the spec or "
                "remove the hook (at run time it raises FailpointConfigError)",
            )
            for hook, line in (unknown_hooks(failpoints, runloop) if runloop is not None else [])
        ]
    crash = spec.continuation_crash
    if crash is not None and crash.run_loop is not None:
        marks = {boundary.id: boundary.mark for boundary in crash.boundaries}
        runloop, found = _loop_findings(root, crash.run_loop, spec.location("lifecycle", "run_loop"), "continuation run loop", marks)
        findings += found
        findings += [
            Finding(crash.run_loop, line, None, f"failpoints.hit({hook!r}) names no boundary of spec/lifecycle.yaml nor failpoint of spec/failpoints.yaml")
            for hook, line in (unknown_hooks({**marks, **failpoints}, runloop) if runloop is not None else [])
        ]
    if spec.sqlite_run_loop is not None:
        marks = {boundary.id: boundary.mark for boundary in spec.sqlite_failpoints}
        findings += _loop_findings(root, spec.sqlite_run_loop, spec.location("failpoints", "sqlite", "run_loop"), "SQLite run loop", marks)[1]
    return findings


def _loop_findings(root: Path, relative: str, where: Mark, what: str, marks: dict[str, Mark]) -> tuple[Path | None, list[Finding]]:
    """(the run loop, when its hooks can be read: a Python file that parses, else None; a finding when it does not
    exist or does not parse, else one per id of `marks` it has no `failpoints.hit` hook for)."""
    runloop = root / relative
    if not runloop.is_file():
        return None, [Finding(where.file, where.line, where.column, f"the {what} {relative!r} does not exist in the project")]
    if runloop.suffix != ".py":
        return None, []
    unparsed = _unparsed(runloop, relative)
    if unparsed is not None:
        return None, [unparsed]
    return runloop, [Finding(marks[i].file, marks[i].line, marks[i].column, missing_hook_message(i, relative)) for i in missing_hooks(marks, runloop)]


@dataclass(frozen=True)
class Checked:
    """`check`: the spec, what it renders to, how generated/ differs, the run loop's hook findings, and what an
    interrupted generate left (if anything, nothing else is compared)."""

    spec: Spec
    outputs: dict[str, str]
    drift: Drift
    hooks: tuple[Finding, ...]
    leftovers: tuple[str, ...]

    @property
    def clean(self) -> bool:
        return self.drift.clean and not self.hooks and not self.leftovers


def check(root: Path, *, run_oracle: bool = False) -> Checked:
    """Validate, render and compare with generated/; writes nothing (and, without `run_oracle`, runs no project
    code). Raises SpecInvalid, UnsafeGeneratedTree."""
    if is_language_project(root):
        language = load_language(root)
        outputs = render_language(language)
        return Checked(language, outputs, compare(root, outputs), (), tuple(interrupted_leftovers(root)))  # type: ignore[arg-type]
    spec = load_checked(root, run_oracle=run_oracle)
    outputs = render_all(spec)
    drift = compare(root, outputs)
    return Checked(spec, outputs, drift, tuple(hook_findings(root, spec)), tuple(interrupted_leftovers(root)))


@dataclass(frozen=True)
class Prepared:
    """`generate` before it writes: what an interrupted generate left and was done about, and the rest of a check."""

    spec: Spec
    outputs: dict[str, str]
    recovered: tuple[str, ...]
    drift: Drift
    hooks: tuple[Finding, ...]


def prepare_generate(root: Path) -> Prepared:
    """Validate (running the project's oracle: refusing a spec that breaks an invariant is generate's job), render,
    finish or roll back an interrupted generate, and compare. Raises SpecInvalid, UnsafeGeneratedTree."""
    if is_language_project(root):  # (a language contract names no oracle nor run loop)
        spec: Spec | LanguageSpec = load_language(root)
        outputs = render_language(spec)  # type: ignore[arg-type]
    else:
        spec = load_checked(root, run_oracle=True)
        outputs = render_all(spec)
    if (root / GENERATED_DIR).is_symlink():
        raise UnsafeGeneratedTree(f"{GENERATED_DIR} is a symlink; the generator reads and writes only real files under {GENERATED_DIR}/")
    recovered = tuple(recover_interrupted(root))
    hooks = () if isinstance(spec, LanguageSpec) else tuple(hook_findings(root, spec))
    return Prepared(spec, outputs, recovered, compare(root, outputs), hooks)  # type: ignore[arg-type]


def write(root: Path, prepared: Prepared, *, force: bool = False) -> list[str]:
    """Bring generated/ in line with what `prepared` rendered, all or nothing; the paths written or removed.
    Raises RefusedToWrite, writing nothing, rather than lose someone's work."""
    return write_outputs(root, prepared.outputs, prepared.drift, force=force)


class SideInvalid(SpecInvalid):
    """One side of a review cannot be loaded; `side` is "base" or "head", `what` "spec" or "review waivers"."""

    def __init__(self, side: str, source: str, errors: list[SpecError], what: str = "spec") -> None:
        super().__init__(errors)
        self.side = side
        self.source = source
        self.what = what


@dataclass(frozen=True)
class ChangeReview:
    """`diff`: the review (waivers applied) of `base` -> `head`, and why the head would fail `check`, if it does."""

    review: Review
    base: str
    head: str
    head_check_errors: tuple[SpecError, ...]


def review_change(root: Path, base: str | None, head: str | None, depth: int | None = None) -> ChangeReview:
    """Review a contract change. `base` and `head` are git revisions or spec directories; by default the merge
    base with the default branch and the working tree. Each side goes through the same checks as `check`; a
    head that breaks a declared invariant is still reviewed (the review is where such an edit is seen), and
    its errors are handed back. Raises SideInvalid, SpecSourceError."""
    base_source = base if base is not None else default_base(root)
    head_source = head if head is not None else WORKING_TREE
    specs: list[Any] = []
    violated: list[SpecError] = []
    for side, source in (("base", base_source), ("head", head_source)):
        try:
            with side_directory(root, source) as project:
                # The head's waivers are read below, wherever it is; neither side's oracle is run (a revision's
                # Python is never executed by a review).
                spec: Any
                if is_language_project(project):
                    spec, violated = load_language(project), []
                else:
                    spec, violated = validated(project, waivers=False)
        except SpecInvalid as invalid:
            raise SideInvalid(side, source, invalid.errors) from None
        specs.append(spec)
    languages = [isinstance(spec, LanguageSpec) for spec in specs]
    if languages[0] != languages[1]:
        which = "base" if languages[0] else "head"
        raise SideInvalid(which, base_source if languages[0] else head_source, [SpecError(Mark("spec/contract.yaml", 1, 1), "one side is written in the contract language and the other is not: a review compares two contracts in one language")])
    try:
        waivers = read_waivers(root, head_source, base_source)  # a waiver only the head has is itself a finding (WAIVER_ADDED)
    except SpecInvalid as invalid:
        raise SideInvalid("head", head_source, invalid.errors, what="review waivers") from None
    if languages[0]:
        from .language.review import review_language

        reviewed = apply_waivers(review_language(specs[0], specs[1], depth=depth), waivers)
    else:
        reviewed = apply_waivers(review(specs[0], specs[1], depth=depth), waivers)
    return ChangeReview(reviewed, base_source, head_source, tuple(violated))


def _unparsed(runloop: Path, named: str) -> Finding | None:
    """The one finding for a run loop whose source cannot be parsed: not a "no hook" for every failpoint."""
    problem = parse_problem(runloop)
    if problem is None:
        return None
    line, column, why = problem
    return Finding(named, line, column, f"the run loop {why}; its failpoint hooks cannot be found until it parses")
