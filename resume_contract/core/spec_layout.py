"""What a contract's spec directory holds, and its identity: the one place both the generator (which reads the
spec) and the runtime (which names the contract a plan was decided by) learn it from.

A spec is `spec/<name>.yaml` for each name in SPEC_FILES, and for each name in OPTIONAL_SPEC_FILES that is there
(a contract without `continuation.yaml` is a Phase 0 contract), each checked against
`spec/schema/<name>.schema.json`. Its sha256 is taken over the YAML files' names and bytes in that order (an
optional file only when present, so adding the option changed no existing contract's identity): comments and
wording count (the contract's text is part of it), the review waivers beside it do not (they are not the contract).
"""

from __future__ import annotations

from collections.abc import Callable

from .sha256 import sha256

SPEC_DIR = "spec"
SCHEMA_DIR = "spec/schema"
SPEC_FILES = ("failpoints", "runtime_event", "ledger", "decisions", "projector", "invariants", "scope")
# Files a contract may hold or not: the Phase 1 continuation decision, and its crash contract (the continuation's
# lifecycle and crash boundaries, which needs the decision).
OPTIONAL_SPEC_FILES = ("continuation", "lifecycle")
ALL_SPEC_FILES = SPEC_FILES + OPTIONAL_SPEC_FILES
# A contract written in the contract language (docs/language.md) is this one file instead of the files above.
LANGUAGE_SPEC = f"{SPEC_DIR}/contract.yaml"

# Where a spec names the files its commands run, as (spec file, keys down to the name): the oracle (`generate`,
# `check --run-oracle`, `verify`) and the run loops (`crash`). The build reads them here and nowhere else, and the
# trust check (resume_contract/project/trust.py) looks at each file named before any command runs one.
RUN_FILE_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (f"{SPEC_DIR}/invariants.yaml", ("oracle",)),
    (f"{SPEC_DIR}/failpoints.yaml", ("run_loop",)),
    (f"{SPEC_DIR}/failpoints.yaml", ("sqlite", "run_loop")),
    (f"{SPEC_DIR}/lifecycle.yaml", ("run_loop",)),
    (LANGUAGE_SPEC, ("oracle",)),
)

# `generate` builds the whole new tree beside generated/ and swaps the two directories, so generated/ is always
# wholly old or wholly new; these siblings of it exist only while it runs, or after it was cut off.
STAGING_SUFFIX = ".resume-contract-new"
RETIRED_SUFFIX = ".resume-contract-old"


def spec_digest(read: Callable[[str], bytes | None]) -> str:
    """sha256 over every spec YAML file's name and bytes; `read(relative_path)` gives a file's bytes, or None when
    it is missing. A language contract's is over its one file."""
    digest = sha256()
    language = read(LANGUAGE_SPEC)
    if language is not None:
        digest.update(f"{LANGUAGE_SPEC}\0".encode())
        digest.update(language)
        digest.update(b"\0")
        return digest.hexdigest()
    for name in SPEC_FILES:
        relative = f"{SPEC_DIR}/{name}.yaml"
        data = read(relative)
        digest.update(f"{relative}\0".encode())
        digest.update(data if data is not None else b"<missing>")
        digest.update(b"\0")
    for name in OPTIONAL_SPEC_FILES:
        relative = f"{SPEC_DIR}/{name}.yaml"
        data = read(relative)
        if data is not None:
            digest.update(f"{relative}\0".encode())
            digest.update(data)
            digest.update(b"\0")
    return digest.hexdigest()
