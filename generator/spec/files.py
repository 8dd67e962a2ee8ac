"""Where the spec lives and how each file is read: the file layout, its hash, and the first (schema) pass."""

from __future__ import annotations

import json
from pathlib import Path

from resume_contract.core.spec_layout import (
    ALL_SPEC_FILES,
    OPTIONAL_SPEC_FILES,
    SCHEMA_DIR,
    SPEC_DIR,
    SPEC_FILES,
    spec_digest,
)

from ..errors import Mark, SpecError, SpecInvalid
from .loader import LoadedFile, load_spec_file
from .schema_check import load_schema, schema_errors

__all__ = ["ALL_SPEC_FILES", "OPTIONAL_SPEC_FILES", "SCHEMA_DIR", "SPEC_DIR", "SPEC_FILES", "canonical_schema", "read_spec_files", "spec_sha256"]


def spec_sha256(root: Path) -> str:
    """The spec's sha256 (`core.spec_layout.spec_digest`) over the files under `root/spec`."""
    return spec_digest(lambda relative: (root / relative).read_bytes() if (root / relative).is_file() else None)


def read_spec_files(root: Path) -> dict[str, LoadedFile]:
    """Every spec file under `root/spec`, read and checked against its schema; raise SpecInvalid listing every problem."""
    spec_dir = root / SPEC_DIR
    if not spec_dir.is_dir():
        raise SpecInvalid([SpecError(Mark(SPEC_DIR, 1, 1), f"no spec directory at {spec_dir}")])
    errors = _unknown_files(spec_dir)
    files: dict[str, LoadedFile] = {}
    for name in ALL_SPEC_FILES:
        if name in OPTIONAL_SPEC_FILES and not (root / SPEC_DIR / f"{name}.yaml").is_file():
            continue  # a contract without it (e.g. without a continuation decision: a Phase 0 contract)
        loaded = _read_one(root, name, errors)
        if loaded is not None:
            files[name] = loaded
    if errors:
        raise SpecInvalid(errors)
    return files


def canonical_schema(root: Path, name: str) -> str:
    """A spec file's schema as canonical JSON (sorted keys), so a reformatting is no change."""
    value = json.loads((root / SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# Files kept beside the contract that are not part of it: the review's accepted findings (review_waivers.py).
NOT_CONTRACT = frozenset({"review-waivers.yaml"})


def _unknown_files(spec_dir: Path) -> list[SpecError]:
    # A misspelt file name would otherwise be silently ignored, and its content with it.
    allowed = ", ".join(f"{name}.yaml" for name in ALL_SPEC_FILES)
    return [
        SpecError(Mark(f"{SPEC_DIR}/{path.name}", 1, 1), f"unknown spec file; the spec files are [{allowed}]")
        for path in sorted(spec_dir.iterdir())
        if path.is_file() and path.suffix in (".yaml", ".yml") and path.stem not in ALL_SPEC_FILES and path.name not in NOT_CONTRACT
    ]


def _read_one(root: Path, name: str, errors: list[SpecError]) -> LoadedFile | None:
    """One spec file, parsed and schema-checked; its problems go to `errors`. None if it could not be parsed."""
    display = f"{SPEC_DIR}/{name}.yaml"
    path = root / display
    if not path.is_file():
        errors.append(SpecError(Mark(display, 1, 1), "not a file (a directory or a special file where the spec file goes)" if path.exists() else "missing spec file"))
        return None
    loaded, load_errors = load_spec_file(path, display)
    errors.extend(load_errors)
    if loaded is None or load_errors:
        return None
    validator, schema_problems = load_schema(root / SCHEMA_DIR / f"{name}.schema.json", f"{SCHEMA_DIR}/{name}.schema.json")
    errors.extend(schema_problems)
    if validator is not None:
        errors.extend(schema_errors(loaded, validator))
    return loaded
