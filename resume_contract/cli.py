"""The `resume-contract` command: one `main()` that maps each failure to its exit code.

Exit codes: 0 success / clean / safe_replay; 1 drift, a refused write or a blocked plan; 2 a bad spec,
bad usage or unreadable input; 3 a corrupt ledger.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_CORRUPT = 3

DESCRIPTION = """\
Decide, after a crash, whether an AI-agent run may be replayed, from a contract kept as YAML in spec/.

The loop: edit spec/*.yaml -> `resume-contract generate` -> `resume-contract check` (CI runs it too) ->
review the spec and generated/CONTRACT.md diffs in the pull request.
"""

EPILOG = """\
exit codes: 0 ok, 1 drift / refused / blocked, 2 bad spec or usage, 3 corrupt ledger.
Run `resume-contract COMMAND --help` for each command's options.
"""


class UsageError(Exception):
    """The command line or its inputs cannot be used; exit 2."""


def find_root(start: Path) -> Path:
    """The nearest directory at or above `start` that holds spec/projector.yaml."""
    for candidate in (start, *start.parents):
        if (candidate / "spec" / "projector.yaml").is_file():
            return candidate
    raise UsageError(f"no spec/projector.yaml in {start} or any parent; run inside a resume-contract project or pass --root")


def _root(args: argparse.Namespace) -> Path:
    if args.root is not None:
        root = Path(args.root).resolve()
        if not (root / "spec").is_dir():
            raise UsageError(f"--root {args.root}: no spec/ directory there")
        return root
    return find_root(Path.cwd().resolve())


def _render(root: Path) -> dict[str, str]:
    from resume_contract_generator.render import render_all
    from resume_contract_generator.validate import load_spec

    return render_all(load_spec(root))


def cmd_generate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generator.outputs import RefusedToWrite, compare, write_outputs

    root = _root(args)
    outputs = _render(root)
    drift = compare(root, outputs)
    if drift.clean:
        print(f"generated/ is up to date ({len(outputs)} files)", file=out)
        return EXIT_OK
    try:
        written = write_outputs(root, outputs, drift, force=args.force)
    except RefusedToWrite as error:
        print(f"resume-contract generate: {error}", file=err)
        return EXIT_FAIL
    removed = set(drift.removable_orphans)
    for path in written:
        print(f"{'removed' if path in removed else 'wrote'} {path}", file=out)
    return EXIT_OK


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from resume_contract_generator.outputs import compare

    root = _root(args)
    outputs = _render(root)
    drift = compare(root, outputs)
    if drift.clean:
        print(f"generated/ matches spec/ ({len(outputs)} files)", file=out)
        return EXIT_OK
    print("generated/ does not match spec/:", file=out)
    for kind, path in drift.rows():
        print(f"  {kind:<12} {path}", file=out)
    if args.diff:
        for path, diff in drift.diffs.items():
            out.write(diff)
    fix = "resume-contract generate"
    if drift.hand_edited:
        fix += " --force  (after moving any hand edit into spec/: generated files are overwritten)"
    if [path for path in drift.orphaned if path not in drift.removable_orphans]:
        fix = "move files the generator did not write out of generated/, then " + fix
    print(f"to fix: {fix}", file=out)
    return EXIT_FAIL


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="resume-contract",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--root", metavar="DIR", help="the project root holding spec/ (default: found upward from the current directory)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    generate = commands.add_parser(
        "generate",
        help="validate spec/ and write generated/ (all files or none)",
        description="Validate spec/*.yaml and write every file under generated/, all or none. Refuses, writing "
        "nothing, to overwrite a hand-edited file (unless --force) or to delete a file it did not write.",
        epilog="exit: 0 written or up to date, 1 refused, 2 bad spec.",
    )
    generate.add_argument("--force", action="store_true", help="overwrite hand-edited generated files")
    generate.set_defaults(handler=cmd_generate)

    check = commands.add_parser(
        "check",
        help="fail when generated/ differs from what spec/ produces (changes nothing)",
        description="Report changed, missing, orphaned and hand-edited files under generated/, sorted, and the "
        "command that fixes them. Writes nothing.",
        epilog="exit: 0 clean, 1 drift, 2 bad spec.",
    )
    check.add_argument("--diff", action="store_true", help="also print a unified diff of every drifted file")
    check.set_defaults(handler=cmd_check)
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command line; return the exit code."""
    from resume_contract_generator.errors import SpecInvalid

    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code not in (0, None) else EXIT_OK
    try:
        return args.handler(args, out, err)
    except SpecInvalid as invalid:
        for error in invalid.errors:
            print(error, file=err)
        count = len(invalid.errors)
        print(f"resume-contract: the spec has {count} error{'s' if count != 1 else ''}; nothing was written", file=err)
        return EXIT_USAGE
    except UsageError as error:
        print(f"resume-contract: {error}", file=err)
        return EXIT_USAGE
