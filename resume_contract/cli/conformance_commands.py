"""The conformance commands: `vectors` (the contract as language-neutral cases) and `conform` (another
implementation held to them)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from .common import add_format_arguments, jobs, project_root
from .errors import EXIT_FAIL, EXIT_OK, UsageError


def _write_vectors(root: Path, depth: int, out: Path) -> str:
    """Make the spec's vectors and write them to `out`; return a one-line account of what was written."""
    from resume_contract_generator.pipeline import load_checked

    from ..conformance.vectors import build_vectors, render_vectors, validate_manifest, write_vectors
    from ..errors import VectorError

    if not 0 <= depth <= 5:
        raise UsageError("--depth takes 0 to 5 (the ledgers explored grow tenfold per event)")
    spec = load_checked(root)  # the spec `generate` would accept, and no other
    try:
        vectors = build_vectors(spec, depth)
        files = render_vectors(spec, vectors, depth)
        validate_manifest(files)
        write_vectors(files, out)
    except VectorError as error:
        raise UsageError(str(error)) from None
    kinds: dict[str, int] = {}
    for vector in vectors:
        kinds[vector.kind] = kinds.get(vector.kind, 0) + 1
    detail = ", ".join(f"{count} {kind}" for kind, count in kinds.items())
    return f"wrote {len(vectors)} vectors to {out} ({detail}); spec sha256 {spec.sha256[:12]}"


def cmd_vectors(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="resume-contract-spec-") as scratch:
        out.write(_write_vectors(_contract_root(args, Path(scratch)), args.depth, Path(args.out)) + "\n")
    return EXIT_OK


def _contract_root(args: argparse.Namespace, scratch: Path) -> Path:
    """Whose contract the vectors are of: --root's, the project's around the current directory, else (as every
    command outside a project) the contract packaged with resume-contract, its spec copied into `scratch`."""
    import shutil

    from ..contract import packaged_spec_dir
    from ..project.locate import find_root

    if args.root is not None or find_root(Path.cwd()) is not None:
        root = project_root(args)
        if (root / "spec" / "contract.yaml").is_file():
            raise UsageError(f"`{args.command}` holds implementations to a contract of the catalogue's files, not one in the contract language (spec/contract.yaml)")
        return root
    shutil.copytree(packaged_spec_dir(), scratch / "spec", ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return scratch


def cmd_conform(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import tempfile

    from ..conformance.conform import DISAGREES, as_json, as_junit, as_text, conform, counts, load_vectors
    from ..errors import VectorsUnreadable
    from ..system.interrupts import default_workers

    command = list(args.implementation)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise UsageError("give the implementation's command after --, e.g. `resume-contract conform -- ./my-runtime plan --json`")
    if not 0 < args.timeout < _A_DAY:  # (nan compares false both ways; inf never times out: a hang would hang CI)
        raise UsageError(f"--timeout takes a number of seconds above 0 and below a day ({_A_DAY}), got {args.timeout}")
    workers = jobs(args.jobs, default_workers())
    with tempfile.TemporaryDirectory(prefix="resume-contract-vectors-") as scratch:
        directory = args.vectors
        if directory is None:
            directory = Path(scratch) / "vectors"
            _write_vectors(_contract_root(args, Path(scratch)), args.depth, directory)
        try:
            vectors = load_vectors(Path(directory), args.decision)
        except VectorsUnreadable as error:
            raise UsageError(str(error)) from None
        results = conform(command, vectors, strictness=args.strictness, workers=workers, timeout=args.timeout)
    if args.junit:
        Path(args.junit).write_text(as_junit(results), encoding="utf-8")
    out.write(as_json(results) if args.json else as_text(results, command))
    tally = counts(results)
    return EXIT_OK if tally[DISAGREES] + tally["crashed"] + tally["timed out"] == 0 else EXIT_FAIL




def register(commands: Any) -> None:
    """Add vectors and conform to the subcommand parsers."""
    vectors = commands.add_parser(
        "vectors",
        help="write language-neutral conformance vectors generated from the spec",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write the contract as cases any implementation can be checked against: a JSONL ledger each, an\n"
        "optional expected high-water, and the decision the contract pins (or the corruption kind it must be\n"
        "refused with). Cases: every canonical prefix and outcome, each with a wrong expected high-water, the\n"
        "shortest ledger for every reachable transition-table entry and every anomaly, one ledger per corruption\n"
        "kind, and every ledger up to --depth events (one per outcome). A contract with a continuation decision\n"
        "(spec/continuation.yaml) adds Phase 1's: each situation and each with one input changed, a ledger and a\n"
        "facts file each (DIR/facts/), and the corrupt ledgers again. DIR/manifest.json lists them (its schema:\n"
        "DIR/vectors.schema.json). Output is byte-identical across runs.\n\n"
        "  resume-contract vectors --out vectors/\n",
        epilog="exit: 0 written, 2 bad spec or usage (nothing written).",
    )
    vectors.add_argument("--out", required=True, metavar="DIR", help="a new directory, or one holding earlier vectors (replaced whole)")
    vectors.add_argument("--depth", type=int, default=3, metavar="N", help="explore every ledger up to N events (default 3)")
    vectors.set_defaults(handler=cmd_vectors)

    conform = commands.add_parser(
        "conform",
        help="run another implementation on every vector and report where it disagrees with the contract",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run COMMAND on every conformance vector: it gets LEDGER.jsonl (and --expected-high-water N when\n"
        "the vector sets one), prints its ResumePlan as JSON with the reference's camelCase keys and exits 0\n"
        "(safe_replay) or 1 (blocked), or exits 3 for a corrupt ledger. Compared: disposition, operations\n"
        "(toolCallId, status), the replayed rows' ids, the high-water, and when the plan has them, diagnostic\n"
        "codes, rejection reasons, requiresVerification and terminalRuntimeEventId.\n\n"
        "With --decision continuation, COMMAND is held to the continuation decision instead: it gets LEDGER.jsonl\n"
        "--facts FACTS.json, prints {disposition, rejectionReasons, diagnostics, continuation?} and exits 0\n"
        "(continue) or 1 (park), or 3 for a corrupt ledger. Compared: all four (a diagnostic's code, eventId and\n"
        "detail; runtimeContext as its rows' ids). With --decision continuation-planner it gets --workspace WS\n"
        "--session S (--run R or --latest) --host HOST.json --ids I,R,T instead, and is compared the same way.\n\n"
        "  resume-contract conform -- resume-contract plan --json\n"
        "  resume-contract conform --decision continuation -- resume-contract continue-plan --format json\n"
        "  resume-contract conform --decision continuation-planner -- resume-contract continue-plan --format json\n"
        "  resume-contract conform --vectors vectors/ --strictness reference --junit conform.xml -- node plan.js\n",
        epilog="exit: 0 every vector agrees, 1 some disagree, crash or time out, 2 usage.",
    )
    conform.add_argument("--vectors", metavar="DIR", help="vectors written by `resume-contract vectors` (default: made now from spec/)")
    conform.add_argument("--depth", type=int, default=3, metavar="N", help="with no --vectors: the depth to make them at (default 3)")
    conform.add_argument(
        "--decision", choices=("replay", "continuation", "continuation-planner"), default="replay",
        help="the decision COMMAND implements: Phase 0's replay plan (default), Phase 1's continuation decision over "
        "a ledger and facts, or the same decision in the planner form (a workspace run and HOST.json)",
    )
    conform.add_argument("--strictness", choices=("exact", "reference"), default="exact", help="reference: accept the spec's documented differences of a Phase 0 reference")
    conform.add_argument("--jobs", type=int, metavar="N", help="vectors run at once (default: all cores)")
    conform.add_argument("--timeout", type=float, default=30.0, metavar="S", help="seconds per vector (default 30)")
    add_format_arguments(conform, "the results as one document")
    conform.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one testcase per vector)")
    conform.add_argument("implementation", nargs=argparse.REMAINDER, metavar="-- COMMAND ...", help="the implementation to run")
    conform.set_defaults(handler=cmd_conform)


_A_DAY = 86400
