"""The spec commands: `generate` and `check` (the fast loop), and `diff` (the review of a contract change).

The generator's pipeline (`resume_contract_generator.pipeline`) does the work and raises; this module parses
arguments, calls it, prints what it returns and turns its refusals into exit codes.

What it prints quotes the project (spec keys and values, file names under generated/), which may be a pull
request's: each line is printed through `escape`, so a newline or other control character in what it quotes
is shown as an escape and can never start a line of its own (a forged `::error` workflow command in CI); an
annotation's message is escaped the same way before GitHub's own escaping. JSON is exact.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..output.terminal import escape
from .common import project_root
from .errors import EXIT_FAIL, EXIT_OK, Refused, Reported, UsageError

if TYPE_CHECKING:
    from resume_contract_generator.pipeline import Finding
    from resume_contract_generator.render.outputs import Drift


def _unsafe_tree_is_usage(call: Callable[[], Any]) -> Any:
    from resume_contract_generator.render.outputs import UnsafeGeneratedTree

    try:
        return call()
    except UnsafeGeneratedTree as error:
        raise UsageError(str(error)) from None


def cmd_generate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generator.pipeline import prepare_generate, write
    from resume_contract_generator.render.outputs import RefusedToWrite

    root = project_root(args)
    prepared = _unsafe_tree_is_usage(lambda: prepare_generate(root))
    for line in prepared.recovered:
        print(escape(line), file=out)
    _print_spec_warnings(prepared.spec, args.format, out, err)
    # Not a reason to refuse: the generated code is what the hook is written against. `check` fails on it.
    for finding in prepared.hooks:
        if args.format == "github":
            print(_annotation("warning", finding), file=out)
        print(escape(f"warning: {finding}"), file=err)
    drift = prepared.drift
    if drift.clean:
        print(f"generated/ is up to date ({len(prepared.outputs)} files)", file=out)
        return EXIT_OK
    try:
        written = write(root, prepared, force=args.force)
    except RefusedToWrite as error:
        raise Refused(str(error), command="generate") from None
    removed, conflicted = set(drift.removable_orphans) | set(drift.bytecode), set(drift.conflicted)
    for path in written:
        if path in conflicted:
            print(escape(f"regenerated {path} (it held merge-conflict markers; `git add` it to mark the conflict resolved)"), file=out)
        else:
            print(escape(f"{'removed' if path in removed else 'wrote'} {path}"), file=out)
    return EXIT_OK


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..project.verdicts import remember_clean_check, remembered_clean_check

    root = project_root(args)
    # The same inputs as a clean check's: its verdict, without rendering (a check that runs the oracle is never
    # remembered: the oracle is no input of the key).
    remembered = None if args.run_oracle else remembered_clean_check(root)
    if remembered is not None:
        _print_clean(args.format, remembered[0], out)
        _oracle_note(args, err, remembered[1])
        return EXIT_OK
    from resume_contract_generator.annotations import annotation
    from resume_contract_generator.language import is_language_project
    from resume_contract_generator.pipeline import check

    if args.run_oracle and is_language_project(root):
        raise UsageError("--run-oracle: a contract in the contract language is held to its oracle by `resume-contract verify`")

    checked = _unsafe_tree_is_usage(lambda: check(root, run_oracle=args.run_oracle))
    _oracle_note(args, err, checked.spec.oracle)
    _print_spec_warnings(checked.spec, "text" if args.format == "json" else args.format, out, err)
    if checked.leftovers:
        print(escape(f"an interrupted generate left {', '.join(checked.leftovers)}: run `resume-contract generate`, which finishes or rolls it back"), file=out)
        return EXIT_FAIL
    drift, hooks, files = checked.drift, list(checked.hooks), len(checked.outputs)
    if checked.clean:
        crash = checked.spec.continuation_crash
        if not args.run_oracle:
            remember_clean_check(root, files, checked.spec.run_loop, None if crash is None else crash.run_loop, checked.spec.oracle)
        _print_clean(args.format, files, out)
        return EXIT_OK
    fix = _fix(drift, hooks)
    if args.format == "json":
        out.write(_check_json(drift.clean, drift.rows(), hooks, files, fix) + "\n")
    elif args.format == "github":
        for finding in hooks:
            print(_annotation("error", finding), file=out)
        for kind, path in drift.rows():
            print(annotation("error", escape(f"{path} is {kind} (to fix: {fix})"), file=path, title="resume-contract check"), file=out)
        print(_check_summary(drift.clean, files), file=out)
    else:
        _print_check(drift, hooks, files, fix, show_diff=args.diff, out=out)
    return EXIT_FAIL


def _print_spec_warnings(spec: Any, format: str, out: TextIO, err: TextIO) -> None:
    """What the spec declares and nothing uses yet (a diagnostic no check raises): on stderr, never a failure."""
    from resume_contract_generator.annotations import annotation

    continuation = getattr(spec, "continuation", None)
    for warning in () if continuation is None else continuation.warnings:
        if format == "github":
            print(annotation("warning", escape(warning.message), file=warning.mark.file, line=warning.mark.line, title="resume-contract"), file=out)
        print(escape(f"warning: {warning}"), file=err)


def _oracle_note(args: argparse.Namespace, err: TextIO, oracle: str | None) -> None:
    """On stderr (text format): that the oracle the spec names was not run, and what runs it."""
    if args.run_oracle or args.format != "text" or oracle is None:
        return
    print(
        f"note: the project's oracle ({escape(oracle)}) was not run: check executes no project code; `resume-contract verify` "
        "(or, for the catalogue's files, `check --run-oracle`) judges the spec against it",
        file=err,
    )


def _print_clean(format: str, files: int, out: TextIO) -> None:
    """What check prints for a clean tree (nothing drifted, every hook there), in each format."""
    if format == "json":
        out.write(_check_json(True, [], [], files, "") + "\n")
    else:
        print(_check_summary(True, files), file=out)


def _fix(drift: Drift, hooks: list[Finding]) -> str:
    if drift.clean:
        return "make the run loop's failpoint hooks match spec/failpoints.yaml, as named above" if hooks else ""
    fix = "resume-contract generate"
    if drift.hand_edited:
        fix += " --force  (after moving any hand edit into spec/: generated files are overwritten)"
    if [path for path in drift.orphaned if path not in drift.removable_orphans]:
        fix = "move files the generator did not write out of generated/, then " + fix
    return fix


def _check_summary(clean: bool, files: int) -> str:
    return f"generated/ matches spec/ ({files} files)" if clean else "generated/ does not match spec/"


def _print_check(drift: Drift, hooks: list[Finding], files: int, fix: str, *, show_diff: bool, out: TextIO) -> None:
    for finding in hooks:
        print(escape(finding), file=out)
    if drift.clean:
        print(_check_summary(True, files), file=out)
        if hooks:
            print(escape(f"to fix: {fix}"), file=out)
        return
    print(_check_summary(False, files) + ":", file=out)
    for kind, path in drift.rows():
        print(escape(f"  {kind:<12} {path}"), file=out)
    if show_diff:
        for diff in drift.diffs.values():
            out.write(diff)
    if drift.conflicted:
        print("  (a merge left conflict markers in generated files: never merge them by hand; resolve any conflict in "
              "spec/, then regenerate)", file=out)
    print(escape(f"to fix: {fix}"), file=out)


def _check_json(drift_clean: bool, drift: list[tuple[str, str]], hooks: list[Finding], files: int, fix: str) -> str:
    document = {
        "clean": drift_clean and not hooks,
        "generatedFiles": files,
        "drift": [{"kind": kind, "path": path} for kind, path in drift],
        "hooks": [{"file": f.file, "line": f.line, "column": f.column, "message": f.message} for f in hooks],
        "fix": fix or None,
    }
    return json.dumps(document, indent=2)


def _annotation(level: str, finding: Finding) -> str:
    from resume_contract_generator.annotations import annotation

    return annotation(level, escape(finding.message), file=finding.file, line=finding.line, col=finding.column, title="resume-contract check")


def _diff_root(args: argparse.Namespace) -> Path:
    """The project a diff is run in; two spec directories compared outside any need none (no revision is read):
    the head's then stands for it (its waivers are the head's)."""
    from ..project.locate import find_root

    sides = [args.base, args.head]
    if args.root is None and all(side is not None and Path(side).is_dir() for side in sides) and find_root(Path.cwd()) is None:
        head = Path(args.head).resolve()
        return head.parent if (head / "projector.yaml").is_file() else head
    return project_root(args)


def _check_diff_arguments(args: argparse.Namespace) -> None:
    for name, value in (("BASE", args.base), ("HEAD", args.head)):
        if value is not None and not value.strip():
            raise UsageError(f"{name} is empty: give a git revision or a spec directory")
    if args.depth is not None and not 0 <= args.depth <= 6:
        raise UsageError("--depth takes 0 to 6 (the ledgers explored grow tenfold or more per event)")
    if args.ledgers < 0:
        raise UsageError("--ledgers takes 0 (all) or more")
    if args.links is not None and args.format != "markdown":
        raise UsageError("--links links the locations of a Markdown review; add --format markdown")
    if args.links is not None and (not re.fullmatch(r"https?://[^\s()<>\[\]?#]+", args.links) or args.links.rstrip("/").endswith(".git")):
        raise UsageError(
            f"--links takes the repository's web address, without .git, a query or a fragment, e.g. "
            f"https://github.com/OWNER/REPO (got {args.links!r})"
        )


def cmd_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generator.pipeline import SideInvalid, review_change
    from resume_contract_generator.review.report import as_github, as_json, as_markdown, as_text
    from resume_contract_generator.review.source import WORKING_TREE, SpecSourceError

    _check_diff_arguments(args)
    root = _diff_root(args)
    try:
        change = review_change(root, args.base, args.head, args.depth)
    except SpecSourceError as error:
        raise UsageError(str(error)) from None
    except SideInvalid as invalid:
        lines = [escape(f"{invalid.side} ({invalid.source}): {error}") for error in invalid.errors]
        whose = f"the {invalid.side} spec is" if invalid.what == "spec" else f"the {invalid.side}'s {invalid.what} are"
        raise Reported(*lines, f"resume-contract diff: {whose} invalid; nothing was compared") from None
    # A head that `check` would refuse (it breaks a declared invariant) is still reviewed, but said first.
    for problem in change.head_check_errors:
        print(escape(f"resume-contract diff: warning: the head fails `resume-contract check`: {problem}"), file=err)
    result = change.review
    base_label = change.base if args.base is not None else f"merge-base {change.base[:12]}"
    head_label = "working tree" if change.head == WORKING_TREE else change.head
    if args.links is not None:
        try:
            links = _links(args.links, root, change.base, change.head)
        except SpecSourceError as error:
            raise UsageError(str(error)) from None
        out.write(as_markdown(result, base_label, head_label, links))
    else:
        renderers: dict[str, Callable[[Any, str, str], str]] = {
            "text": as_text, "markdown": as_markdown, "json": partial(as_json, ledgers=args.ledgers), "github": as_github
        }
        out.write(renderers[args.format](result, base_label, head_label))
    fail_on, counts = args.fail_on, result.unwaived_counts
    if fail_on is not None and result.stale_waivers:
        print(f"resume-contract diff: {len(result.stale_waivers)} stale waiver(s) in the head's spec/review-waivers.yaml: remove them", file=err)
        return EXIT_FAIL
    if fail_on == "any" and sum(counts.values()):
        return EXIT_FAIL
    if fail_on in counts and counts[fail_on]:
        return EXIT_FAIL
    return EXIT_OK


def _links(repository: str, root: Path, base_source: str, head_source: str) -> Any:
    """`--links`: each side's files linked at the commit it names (a directory or the working tree: not linked)."""
    from resume_contract_generator.review.report import Links
    from resume_contract_generator.review.source import commit_of

    return Links(repository.rstrip("/"), commit_of(root, base_source), commit_of(root, head_source))


def register(commands: Any) -> None:
    """Add generate, check and diff to the subcommand parsers."""
    generate = commands.add_parser(
        "generate",
        help="validate spec/ and write generated/ (all files or none)",
        description="Validate spec/*.yaml and write every file under generated/, all or none. Refuses, writing "
        "nothing, to overwrite a hand-edited file (unless --force) or to delete a file it did not write.",
        epilog="exit: 0 written or up to date, 1 refused, 2 bad spec.",
    )
    generate.add_argument("--force", action="store_true", help="overwrite hand-edited generated files")
    generate.add_argument("--format", choices=("text", "github"), default="text", help="github: also print spec errors and warnings as GitHub Actions annotations")
    generate.set_defaults(handler=cmd_generate)

    check = commands.add_parser(
        "check",
        help="fail when generated/ differs from what spec/ produces (changes nothing)",
        description="Validate spec/ (every error as file:line:col), run its declared invariants over every ledger up "
        "to 2 events (matches_oracle, when the spec names an oracle of its own, only with --run-oracle: check "
        "executes no project code unless asked), and report changed, missing, orphaned, hand-edited and merge-conflicted files under "
        "generated/ and bytecode Python would run instead of a generated source, sorted, with the command that fixes them. In a project whose spec names its run loop "
        "(spec/failpoints.yaml `run_loop`), also report a failpoint without a hook and a hook without a failpoint. "
        "Writes nothing.",
        epilog="exit: 0 clean, 1 drift or failpoint hooks that do not match the spec, 2 bad spec (including a broken "
        "invariant) or usage.",
    )
    check.add_argument("--diff", action="store_true", help="also print a unified diff of every drifted file (text format)")
    check.add_argument("--run-oracle", action="store_true", help="also run the project's oracle (its Python, spec/invariants.yaml "
                       "`oracle:`) and judge the invariant matches_oracle with it; without it check executes no project code")
    check.add_argument("--format", choices=("text", "github", "json"), default="text", help="github: GitHub Actions annotations at each file:line; json: one document for scripts")
    check.set_defaults(handler=cmd_check)

    diff = commands.add_parser(
        "diff",
        help="review a contract change: every semantic change, classified by safety",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare two specs and list every semantic change with a stable rule name, its spec location on\n"
        "both sides, a class and a one-line why. The classes, most severe first:\n"
        "  weakens-safety  a decision or a safety fact got weaker (more replays, less evidence)\n"
        "  breaking        a diagnostic or reason consumers match on was renamed, removed or replaced;\n"
        "                  no decision got weaker (a rename is detected and reported once)\n"
        "  tightens        a decision or a safety fact got stronger\n"
        "  neutral         wording, messages, order\n"
        "Changes whose effect is not obvious are decided by running both projectors over the canonical ledgers\n"
        "and every ledger up to --depth events, over an alphabet derived from both specs (every content kind,\n"
        "status and flag either declares). Every finding has a fingerprint (RULE:HEX: its rule, place and\n"
        "whole base and head values); a finding accepted in the head's spec/review-waivers.yaml\n"
        "(`- {finding: RULE:HEX, reason: ...}`) is listed but not counted by --fail-on; a waiver that\n"
        "matches no finding is stale and fails --fail-on.\n\n"
        "BASE and HEAD are git revisions or spec directories. Default: the merge base of HEAD with the default\n"
        "branch, against the working tree.\n\n"
        "  resume-contract diff                          # this branch's change\n"
        "  resume-contract diff main HEAD --format markdown --fail-on weakens-safety\n"
        "  resume-contract diff old/spec new/spec --format json\n",
        epilog="exit: 0 no change of the --fail-on class, 1 such a change (unwaived) or a stale waiver, 2 bad input (an invalid spec on either side\n"
        "is reported with its file:line and not compared).",
    )
    diff.add_argument("base", nargs="?", metavar="BASE", help="git revision or spec directory (default: merge base with the default branch)")
    diff.add_argument("head", nargs="?", metavar="HEAD", help="git revision or spec directory (default: the working tree)")
    diff.add_argument("--format", choices=("text", "markdown", "json", "github"), default="text", help="text for a terminal, markdown for a pull-request comment, json for scripts, github for GitHub Actions annotations at each change's spec line")
    diff.add_argument("--fail-on", choices=("weakens-safety", "breaking", "tightens", "any"), help="exit 1 when an unwaived change of this class is present")
    diff.add_argument("--links", metavar="URL", help="with --format markdown: link each location to URL/blob/COMMIT/FILE#LINE, URL being the "
                      "repository's web address (e.g. https://github.com/OWNER/REPO); a side given as a directory or the working tree is not linked")
    diff.add_argument("--ledgers", type=int, default=200, metavar="N", help="with --format json: list the first N ledgers that decide differently, with their events (0: all; default 200)")
    diff.add_argument("--depth", type=int, metavar="N", help="explore every ledger up to N events for evidence (default: up to 4, less "
                      "for a larger alphabet, keeping to about 30,000 ledgers; the report says how deep)")
    diff.set_defaults(handler=cmd_diff)

