"""The run-header store: `<workspace>/sessions/<S>/runs/<R>/run.json`, one JSON object per run.

A header is replaced whole, never edited in place: the new bytes go to a temporary file in the run's own
directory, are fsynced, and are renamed over `run.json`, and the directory is fsynced. A writer killed at any
moment leaves the old header or the new one, never a mix (a temporary file may be left beside it; readers never
look at one). `create` is the exclusive form, the continuation's idempotency claim: the finished temporary file is
hard-linked to `run.json`, which fails if any run.json is already there, so two claimers can never both win.

A continuation's claim of its source is a file of its own, `<workspace>/sessions/<S>/claims/<source run>@<high-water>`
(`claim_source`): keyed by the source run and its high-water, not by the new run, so two executors with different
fresh run ids contend for the same name. Its content (a JSON object naming the claiming run) is written to a
temporary file, fsynced, and hard-linked to that name: the link is the one atomic, exclusive create (two claimers
can never both win, and a reader never sees a claim half written). A claim is never removed: a source claimed is
never continued twice, even when the claimer died before its run was created (`recover` reports such a claim).

Containment is the ledger's (`containment`): every step below the workspace is opened relative to the one before
it, never through a symlink, and the ids are checked (`ids.check_ledger_id`) before a path is built. Reading is
bounded: a header larger than MAX_HEADER_BYTES, not JSON (a repeated key included) or not an object is
RunHeaderUnreadable, naming the file and why.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..core.wire import python_json
from ..errors import (
    EscapesWorkspace,
    RowRefused,
    RunHeaderExists,
    RunHeaderMissing,
    RunHeaderRefused,
    RunHeaderUnreadable,
)
from .bytes import StrPath
from .containment import open_directory, open_in, temporary_file
from .ids import check_ledger_id, is_ledger_id

HEADER_NAME = "run.json"
MAX_HEADER_BYTES = 1 << 20  # a run header is a few hundred bytes; a huge one is not read into memory
_TEMPORARY_PREFIX = ".run.json."
_TEMPORARY_SUFFIX = ".tmp"
CLAIMS_DIR = "claims"
_CLAIM_SEPARATOR = "@"  # never in an id (`ids.check_ledger_id`): `<source run>@<high-water>` reads back unambiguously


def header_path(workspace: StrPath, session_id: str, run_id: str) -> Path:
    """The header file of one run, after both ids are checked."""
    check_ledger_id("session", session_id)
    check_ledger_id("run", run_id)
    return Path(workspace) / "sessions" / session_id / "runs" / run_id / HEADER_NAME


def read_header_file(path: Path, directory_fd: int | None = None) -> dict[str, Any]:
    """The JSON object in the header at `path` (opened in `directory_fd` by its name when given), never through
    a symlink. Raises RunHeaderMissing, or RunHeaderUnreadable saying why."""
    try:
        if directory_fd is None:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        else:
            fd = open_in(directory_fd, path.name, os.O_RDONLY | os.O_NONBLOCK, path)
    except FileNotFoundError:
        raise RunHeaderMissing(f"{path}: no run header") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise RunHeaderUnreadable(f"{path}: a symlink; refusing to follow it") from None
        raise RunHeaderUnreadable(f"{path}: cannot be opened ({error.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RunHeaderUnreadable(f"{path}: not a regular file")
        chunks = []
        size = 0
        while size <= MAX_HEADER_BYTES and (chunk := os.read(fd, 1 << 16)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise RunHeaderUnreadable(f"{path}: cannot be read ({error.strerror})") from None
    finally:
        os.close(fd)
    if size > MAX_HEADER_BYTES:
        raise RunHeaderUnreadable(f"{path}: larger than {MAX_HEADER_BYTES} bytes; not a run header")
    try:
        value = python_json(b"".join(chunks))
    except RowRefused as error:
        raise RunHeaderUnreadable(f"{path}: not JSON ({error})") from None
    if not isinstance(value, dict):
        raise RunHeaderUnreadable(f"{path}: a JSON {type(value).__name__}, not an object")
    return value


def encode_header(header: Mapping[str, Any]) -> bytes:
    """The bytes a header is written as: one compact JSON object and a newline. RunHeaderRefused for anything
    that would not read back as the same object (a non-string key, NaN, a value JSON has no form for)."""
    if not isinstance(header, Mapping):
        raise RunHeaderRefused(f"a run header is a JSON object, not {type(header).__name__}")
    try:
        text = json.dumps(dict(header), ensure_ascii=False, allow_nan=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError) as error:
        raise RunHeaderRefused(f"a run header must be plain JSON: {error}") from None
    if python_json(text.encode()) != dict(header):
        raise RunHeaderRefused("a run header must be plain JSON: it does not read back as the same object")
    return text.encode() + b"\n"


class RunHeaderStore:
    """Reads, creates and replaces the run headers under one workspace. `durable=False` skips the fsyncs (a
    test's speed only: a process kill still never tears a header, as the rename is what publishes it)."""

    def __init__(self, workspace: StrPath, *, durable: bool = True) -> None:
        self.workspace = Path(workspace)
        self.durable = durable

    def path(self, session_id: str, run_id: str) -> Path:
        return header_path(self.workspace, session_id, run_id)

    def read(self, session_id: str, run_id: str) -> dict[str, Any]:
        """The run's header. Raises RunHeaderMissing (no run.json, or no such run), RunHeaderUnreadable,
        InvalidLedgerId, EscapesWorkspace (a symlink below the workspace)."""
        path = self.path(session_id, run_id)
        try:
            directory_fd = open_directory(self.workspace, path.relative_to(self.workspace).parts[:-1])
        except (FileNotFoundError, NotADirectoryError):
            raise RunHeaderMissing(f"{path}: no run header (no run directory)") from None
        try:
            return read_header_file(path, directory_fd)
        finally:
            os.close(directory_fd)

    def read_or_none(self, session_id: str, run_id: str) -> dict[str, Any] | None:
        """The run's header, or None when it has none (other problems still raise)."""
        try:
            return self.read(session_id, run_id)
        except RunHeaderMissing:
            return None

    def runs(self, session_id: str) -> Iterator[str]:
        """The run ids of a session that have a run directory, sorted (none when the session has none)."""
        check_ledger_id("session", session_id)
        try:
            fd = open_directory(self.workspace, ("sessions", session_id, "runs"))
        except (FileNotFoundError, NotADirectoryError):
            return
        try:
            names = sorted(os.listdir(fd))
            for name in names:
                try:
                    if stat.S_ISDIR(os.lstat(name, dir_fd=fd).st_mode) and check_ledger_id("run", name):
                        yield name
                except (FileNotFoundError, ValueError):
                    continue
        finally:
            os.close(fd)

    def write(self, session_id: str, run_id: str, header: Mapping[str, Any]) -> None:
        """Replace the run's header with `header`, atomically (the run directory is created if needed)."""
        self._publish(session_id, run_id, encode_header(header), exclusive=False)

    def create(self, session_id: str, run_id: str, header: Mapping[str, Any]) -> None:
        """Write the run's first header; RunHeaderExists, with nothing changed, if the run already has one."""
        self._publish(session_id, run_id, encode_header(header), exclusive=True)

    def _publish(self, session_id: str, run_id: str, data: bytes, *, exclusive: bool) -> None:
        path = self.path(session_id, run_id)
        self.workspace.mkdir(parents=True, exist_ok=True)
        directory_fd = open_directory(self.workspace, path.relative_to(self.workspace).parts[:-1], create=True)
        try:
            temporary = f"{_TEMPORARY_PREFIX}{secrets.token_hex(8)}{_TEMPORARY_SUFFIX}"
            with temporary_file(directory_fd, temporary, [data], path.with_name(temporary), durable=self.durable):
                if exclusive:
                    try:
                        os.link(temporary, HEADER_NAME, src_dir_fd=directory_fd, dst_dir_fd=directory_fd, follow_symlinks=False)
                    except FileExistsError:
                        raise RunHeaderExists(f"{path}: the run already has a header; nothing was written") from None
                    os.unlink(temporary, dir_fd=directory_fd)
                else:
                    os.rename(temporary, HEADER_NAME, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
            if self.durable:
                os.fsync(directory_fd)
        finally:
            os.close(directory_fd)


class ClaimTaken(Exception):
    """The source is already claimed at that high-water: `claim` is the claim there (None when it cannot be read)."""

    def __init__(self, path: Path, claim: dict[str, Any] | None) -> None:
        super().__init__(f"{path}: the source is already claimed at this high-water")
        self.path = path
        self.claim = claim


def claim_name(source_run_id: str, high_water: int) -> str:
    """The claim file's name for a source run at a high-water (the run id checked)."""
    check_ledger_id("run", source_run_id)
    if not isinstance(high_water, int) or isinstance(high_water, bool) or high_water < 0:
        raise ValueError(f"a high-water is a non-negative integer, not {high_water!r}")
    return f"{source_run_id}{_CLAIM_SEPARATOR}{high_water}"


def parse_claim_name(name: str) -> tuple[str, int] | None:
    """(source run id, high-water) of a claim file's name, or None when it is no claim's name."""
    source, separator, high_water = name.partition(_CLAIM_SEPARATOR)
    if not separator or not high_water.isascii() or not high_water.isdigit():
        return None
    return (source, int(high_water)) if is_ledger_id(source) else None


def claims_path(workspace: StrPath, session_id: str) -> Path:
    check_ledger_id("session", session_id)
    return Path(workspace) / "sessions" / session_id / CLAIMS_DIR


def _open_claims(workspace: Path, session_id: str, *, create: bool) -> int:
    """A descriptor of the session's `claims/` (created if `create`), never through a link; FileNotFoundError when
    the session (or, without `create`, the directory) is not there. Creating it is idempotent under concurrency."""
    where = claims_path(workspace, session_id)
    session_fd = open_directory(workspace, ("sessions", session_id))
    try:
        if create:
            try:
                os.mkdir(CLAIMS_DIR, 0o755, dir_fd=session_fd)
            except FileExistsError:
                pass  # another claimer made it, or it is there (a link is refused just below)
        try:
            return open_in(session_fd, CLAIMS_DIR, os.O_RDONLY | os.O_DIRECTORY, where)
        except NotADirectoryError:
            raise EscapesWorkspace(f"{where}: not a directory; refusing to use it for claims") from None
    finally:
        os.close(session_fd)


def claim_source(workspace: StrPath, session_id: str, source_run_id: str, high_water: int, claim: Mapping[str, Any], *, durable: bool = True) -> Path:
    """Claim `source_run_id` of `session_id` at `high_water`, with `claim` (a JSON object naming the claiming run)
    as its content: one exclusive, atomic create. ClaimTaken (nothing written) when it is claimed already;
    EscapesWorkspace for a symlink on the way; FileNotFoundError when the session is not there."""
    workspace = Path(workspace)
    name = claim_name(source_run_id, high_water)
    where = claims_path(workspace, session_id) / name
    data = encode_header(claim)
    directory_fd = _open_claims(workspace, session_id, create=True)
    try:
        temporary = f"{_TEMPORARY_PREFIX}{secrets.token_hex(8)}{_TEMPORARY_SUFFIX}"
        with temporary_file(directory_fd, temporary, [data], where.with_name(temporary), durable=durable):
            try:
                os.link(temporary, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd, follow_symlinks=False)
            except FileExistsError:
                raise ClaimTaken(where, _read_claim(directory_fd, name, where)) from None
            finally:
                os.unlink(temporary, dir_fd=directory_fd)
        if durable:
            os.fsync(directory_fd)
    finally:
        os.close(directory_fd)
    return where


def read_claim(workspace: StrPath, session_id: str, source_run_id: str, high_water: int) -> dict[str, Any] | None:
    """The claim of a source at a high-water, None when there is none. RunHeaderUnreadable for one that is there
    but cannot be read as a JSON object (a symlink included); EscapesWorkspace for a symlinked `claims/`."""
    workspace = Path(workspace)
    name = claim_name(source_run_id, high_water)
    try:
        directory_fd = _open_claims(workspace, session_id, create=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
    where = claims_path(workspace, session_id) / name
    try:
        return read_header_file(where, directory_fd)
    except RunHeaderMissing:
        return None
    except EscapesWorkspace as error:
        raise RunHeaderUnreadable(str(error)) from None
    finally:
        os.close(directory_fd)


def session_claims(workspace: StrPath, session_id: str) -> Iterator[tuple[str, int, dict[str, Any] | RunHeaderUnreadable]]:
    """(source run id, high-water, the claim or why it cannot be read) of every claim of a session, sorted by name.
    EscapesWorkspace for a symlinked `claims/`; nothing when the session has no claims."""
    workspace = Path(workspace)
    try:
        directory_fd = _open_claims(workspace, session_id, create=False)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        for name in sorted(os.listdir(directory_fd)):
            key = parse_claim_name(name)
            if key is None:
                continue  # a temporary file a killed claimer left, or no claim
            try:
                yield key[0], key[1], read_header_file(claims_path(workspace, session_id) / name, directory_fd)
            except RunHeaderMissing:
                continue
            except RunHeaderUnreadable as error:
                yield key[0], key[1], error
            except EscapesWorkspace as error:  # a symlink where a claim belongs: a claim, never followed
                yield key[0], key[1], RunHeaderUnreadable(str(error))
    finally:
        os.close(directory_fd)


def _read_claim(directory_fd: int, name: str, where: Path) -> dict[str, Any] | None:
    try:
        return read_header_file(where, directory_fd)
    except (RunHeaderMissing, RunHeaderUnreadable, EscapesWorkspace):
        return None


def is_temporary_header(name: str) -> bool:
    """A file a header writer left when it was killed before its rename: never a header."""
    return name.startswith(_TEMPORARY_PREFIX) and name.endswith(_TEMPORARY_SUFFIX)
