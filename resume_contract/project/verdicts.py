"""The verdicts remembered about a project, and the key they are remembered under.

Rendering a spec costs a few tenths of a second, so a clean verdict is remembered in a cache outside the project
(`$RESUME_CONTRACT_CACHE_DIR`, else `$XDG_CACHE_HOME/resume-contract`, else `~/.cache/resume-contract`), keyed
by the sha256 of everything the verdict depends on: every file under spec/ (an unknown one is an error, so every
one counts), the oracle the spec names, every file under generated/ (hidden ones and byte code included, with its time and size), whether
an interrupted generate left anything beside it, the generator's, the core's and the errors' own files, and the
installed metadata (the versions) of the libraries rendering uses. Any difference is a new key, and a full check: the cache can make a
verdict faster, never different. The project's oracle is no input: neither verdict runs it (`check --run-oracle`,
which does, is never remembered). A cache that cannot be written only costs the next command that check again.

Two verdicts share the key: generated/ is in sync with the spec (`locate.ensure_in_sync`, before a command runs
a project's contract), and `check` is clean, which also says that the run loop the spec names has a hook for
every failpoint: that record holds the run loop's path and sha256, compared again before the verdict is believed
(the path is the spec's, and the spec is in the key).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
import sys
from pathlib import Path

from ..core.spec_layout import RETIRED_SUFFIX, RUN_FILE_KEYS, SCHEMA_DIR, SPEC_DIR, SPEC_FILES, STAGING_SUFFIX

CACHE_VARIABLE = "RESUME_CONTRACT_CACHE_DIR"
_RENDERING_LIBRARIES = ("jinja2", "PyYAML", "jsonschema", "msgspec", "python-statemachine")


def remembered_in_sync(root: Path) -> bool:
    """Whether generated/ under `root` was found in sync with its spec, with exactly these inputs."""
    key = _fingerprint(root)
    try:
        return key is not None and (_cache_dir() / "in-sync" / key).is_file()
    except OSError:  # a cache this user may not search (another user's $HOME): nothing remembered, so it is checked
        return False


def remember_in_sync(root: Path) -> None:
    """Remember that generated/ under `root` is in sync with its spec (just checked)."""
    key = _fingerprint(root)
    if key is not None:
        _remember(_cache_dir() / "in-sync" / key, b"")


def remembered_clean_check(root: Path) -> tuple[int, str | None] | None:
    """(the number of generated files, the oracle the spec names) of a clean `check` of exactly these inputs,
    if one was remembered."""
    import json  # (this module is on every command's path; only check reads and writes these records)

    key = _fingerprint(root)
    if key is None:
        return None
    try:
        record = json.loads((_cache_dir() / "checked" / key).read_bytes())
        files, run_loop, run_loop_sha256 = record["files"], record["runLoop"], record["runLoopSha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if run_loop is not None and _file_sha256(root, run_loop) != run_loop_sha256:
        return None
    # The continuation's run loop (spec/lifecycle.yaml), whose hooks check reads too; a record without it: none.
    continuation_loop = record.get("continuationRunLoop")
    if continuation_loop is not None and _file_sha256(root, continuation_loop) != record.get("continuationRunLoopSha256"):
        return None
    oracle = record.get("oracle")
    return (files, oracle) if isinstance(files, int) and isinstance(oracle, str | None) else None


def remember_clean_check(root: Path, files: int, run_loop: str | None, continuation_run_loop: str | None = None, oracle: str | None = None) -> None:
    """Remember that `check` found `root` clean, with `files` generated files, the run loops and the oracle the
    spec names."""
    import json

    key = _fingerprint(root)
    if key is not None:
        record = {"files": files, "oracle": oracle, "runLoop": run_loop, "runLoopSha256": None if run_loop is None else _file_sha256(root, run_loop)}
        if continuation_run_loop is not None:
            record |= {"continuationRunLoop": continuation_run_loop, "continuationRunLoopSha256": _file_sha256(root, continuation_run_loop)}
        _remember(_cache_dir() / "checked" / key, json.dumps(record).encode())


def run_files_key(root: Path) -> str:
    """The key of what the spec under `root` names to run: this installation's tool (its loader among it) and the
    name and bytes of each spec file that may name one (core.spec_layout.RUN_FILE_KEYS)."""
    digest = hashlib.sha256(_tool_fingerprint().encode())
    for relative in dict.fromkeys(relative for relative, _ in RUN_FILE_KEYS):
        _add(digest, relative, root / relative)
    return digest.hexdigest()


def remembered_run_files(key: str) -> list[str] | None:
    """The files remembered under `key` (`run_files_key`) as the ones the spec names to run, or None. Believed
    only from a record that is this user's alone (the list is what the trust check looks at before code runs)."""
    import msgspec

    try:
        fd = os.open(_cache_dir() / "run-files" / key, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(file.fileno())
        if status.st_uid != os.geteuid() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or not stat.S_ISREG(status.st_mode):
            return None
        try:
            return msgspec.json.decode(file.read(), type=list[str])
        except (OSError, msgspec.DecodeError):
            return None


def remember_run_files(key: str, files: list[str]) -> None:
    """Remember what the spec of `key` names to run (read by the spec's own YAML loader, which a plan never loads)."""
    import msgspec

    _remember(_cache_dir() / "run-files" / key, msgspec.json.encode(files))


def _remember(marker: Path, content: bytes) -> None:
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        temporary = marker.with_name(f".{marker.name}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(content)
        temporary.replace(marker)
    except OSError:
        pass  # no cache: the next command checks again


def _file_sha256(root: Path, relative: str) -> str:
    digest = hashlib.sha256()
    _add(digest, relative, root / relative)
    return digest.hexdigest()


def _cache_dir() -> Path:
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "resume-contract"


def _fingerprint(root: Path) -> str | None:
    """The cache key of `root`'s verdict. (The project's oracle is no input: neither verdict runs it.)"""
    digest = hashlib.sha256(_tool_fingerprint().encode())
    named = [f"{SPEC_DIR}/{name}.yaml" for name in SPEC_FILES] + [f"{SCHEMA_DIR}/{name}.schema.json" for name in SPEC_FILES]
    named += [f"{SPEC_DIR}/review-waivers.yaml"]
    for relative in named:
        _add(digest, relative, root / relative)
    _add_tree(digest, root, SPEC_DIR)  # any other file there too: an unknown spec file is an error
    generated = root / "generated"
    _add(digest, "generated", generated)
    for suffix in (STAGING_SUFFIX, RETIRED_SUFFIX):  # a leftover is refused, whatever it is
        digest.update(b"leftover" if os.path.lexists(generated.with_name(generated.name + suffix)) else b"none")
    # With each file's time and size: Python runs a timestamp pyc whose recorded time and size are its source's,
    # so the same bytes with another time can be drift (a source touched to match a planted pyc).
    _add_tree(digest, root, "generated", with_times=True)
    return digest.hexdigest()


def _add_tree(digest: hashlib._Hash, root: Path, relative: str, *, with_times: bool = False) -> None:
    """Every file under root/relative (a real directory), and every symlink there, by path and bytes (and, with
    `with_times`, its modification time and size)."""
    top = root / relative
    if not top.is_dir() or top.is_symlink():
        return
    for directory, subdirectories, files in os.walk(top):
        subdirectories.sort()
        for name in sorted(files + [d for d in subdirectories if Path(directory, d).is_symlink()]):
            path = Path(directory, name)
            _add(digest, path.relative_to(root).as_posix(), path)
            if with_times:
                try:
                    status = path.lstat()
                    digest.update(f"{status.st_mtime_ns}:{status.st_size}\0".encode())
                except OSError as error:
                    digest.update(f"<unreadable {error.errno}>\0".encode())


def _add(digest: hashlib._Hash, relative: str, path: Path) -> None:
    digest.update(relative.encode("utf-8", "surrogateescape") + b"\0")
    try:
        if path.is_symlink():  # the link, and the bytes it is read as (an edit made through it is a new key)
            digest.update(b"<symlink>" + os.readlink(path).encode("utf-8", "surrogateescape") + b"\0")
        if path.is_file():
            digest.update(path.read_bytes())
        else:
            digest.update(b"<not a file>")
    except OSError as error:
        digest.update(f"<unreadable {error.errno}>".encode())
    digest.update(b"\0")


@functools.cache
def _tool_fingerprint() -> str:
    """What rendering depends on besides the project: this installation's generator and core, and its libraries."""
    from importlib.util import find_spec

    from .. import errors

    digest = hashlib.sha256(sys.version.encode())
    for package in ("resume_contract_generator", "resume_contract.core"):
        found = find_spec(package)  # where it is installed, without importing it
        assert found is not None and found.origin is not None
        base = Path(found.origin).parent
        for path in sorted(base.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                _add(digest, path.relative_to(base).as_posix(), path)
    _add(digest, "errors.py", Path(str(errors.__file__)))  # the generator's one other import of the runtime
    for library, metadata in library_metadata().items():
        if metadata is None:
            digest.update(f"{library} missing\0".encode())
        else:
            _add(digest, library, metadata)
    return digest.hexdigest()


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def library_metadata() -> dict[str, Path | None]:
    """Each rendering library's metadata file (`METADATA` of its `.dist-info`, `PKG-INFO` of an `.egg-info`),
    the first on sys.path as import finds it, or None. Its bytes hold the version and more: what
    `importlib.metadata.version` reads, found by listing each sys.path directory once (importing
    importlib.metadata alone costs every command run in a project ~20 ms)."""
    wanted = {_normalized(library): library for library in _RENDERING_LIBRARIES}
    found: dict[str, Path | None] = dict.fromkeys(_RENDERING_LIBRARIES)
    for entry in sys.path:
        directory = Path(entry or ".")
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            stem, _, suffix = name.rpartition(".")
            library = wanted.get(_normalized(stem.partition("-")[0]))
            if library is None or found[library] is not None or suffix not in ("dist-info", "egg-info"):
                continue
            metadata = directory / name / ("METADATA" if suffix == "dist-info" else "PKG-INFO")
            if metadata.is_file():
                found[library] = metadata
    return found
