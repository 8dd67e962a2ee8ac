"""Which projects found upward may be run: a contract is trusted, never just found.

Every command runs the contract of the project it is run in, found upward from the current directory as git finds
a repository. A directory one merely stands in (a shared /tmp, another user's checkout) could otherwise decide a
crash with someone else's contract, or have `crash` and `verify` run its code as you. So a project *found* is used
only when it is trusted (as git's `safe.directory` works):

- owned: its root, every directory and file under spec/ and generated/ (a symlink there by what it points at),
  and the files its spec names to run (the oracle of either kind of contract, the run loops; read with the spec's
  own YAML loader) are owned by the invoking user or by root,
  and none is writable by others (nor by the group, unless the group is the invoking user's own); or
- listed: its root (as `realpath` gives it) is a line of the user's trust file, `$RESUME_CONTRACT_CONFIG_DIR/trusted`,
  else `$XDG_CONFIG_HOME/resume-contract/trusted`, else `~/.config/resume-contract/trusted` (`resume-contract trust
  DIR` adds one; a line `*` trusts every directory). The file is believed only when it is the invoking user's
  and writable by no one else; or
- named: the user gave it with `--root` (what one names is what one means to run).

Otherwise the command refuses (UntrustedProject, exit 2) naming the directory and the one command that trusts it;
it never falls back to the packaged contract. A CI checkout is owned by the runner's user, who runs the command:
trusted. A container running as root over a checkout owned by another uid (a bind mount) is not: its job names
the project with `--root`, or runs `resume-contract trust DIR` first.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator

from ..core.spec_layout import SPEC_DIR
from ..errors import ResumeContractError

CONFIG_VARIABLE = "RESUME_CONTRACT_CONFIG_DIR"
TRUST_FILE = "trusted"
CHECKED_TREES = (SPEC_DIR, "generated")


class UntrustedProject(ResumeContractError):
    """A project found upward that is neither owned (as above), listed, nor named."""

    def __init__(self, root: str, why: str) -> None:
        import shlex

        self.root = root
        super().__init__(
            f"{root}: a contract project found upward from here that is not trusted ({why}); nothing was run. "
            f"If it is yours to run: `resume-contract trust {shlex.quote(root)}` (or name it: `--root {shlex.quote(root)}`)"
        )


def trust_file() -> str:
    """The user's trust file (see the module's docstring)."""
    configured = os.environ.get(CONFIG_VARIABLE)
    if configured:
        return os.path.join(configured, TRUST_FILE)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "resume-contract", TRUST_FILE)


def listed(root: str) -> bool:
    """Whether the user's trust file lists `root` (or `*`)."""
    real = os.path.realpath(root)
    for line in _trusted_lines():
        if line == "*" or os.path.realpath(line) == real:
            return True
    return False


def _trusted_lines() -> list[str]:
    path = trust_file()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(file.fileno())
        if status.st_uid != os.geteuid() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or not stat.S_ISREG(status.st_mode):
            return []  # a trust file someone else could have written trusts nothing
        text = file.read().decode("utf-8", "replace")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def add_trusted(root: str) -> tuple[str, bool]:
    """List `root` (its realpath) in the user's trust file, creating it (mode 600) if needed; (the file, whether a
    line was added)."""
    real = os.path.realpath(root)
    path = trust_file()
    if real in _trusted_lines():
        return path, False
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "ab") as file:
        status = os.fstat(file.fileno())
        if status.st_uid != os.geteuid() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise ResumeContractError(f"{path}: the trust file is not yours alone (owner {status.st_uid}, mode {stat.filemode(status.st_mode)}); fix it first")
        if status.st_size:
            with open(path, "rb") as existing:  # (same file: O_NOFOLLOW above refused a link)
                if not existing.read().endswith(b"\n"):
                    file.write(b"\n")
        file.write(real.encode("utf-8", "surrogateescape") + b"\n")
    return path, True


def require_trusted(root: str, run_files: Iterable[str] | None = None) -> None:
    """Raise UntrustedProject unless the project found at `root` is listed or owned (module docstring). `run_files`
    are the files relative to root its spec names to run (default: as `spec_run_files` finds them)."""
    if listed(root):
        return
    problem = ownership_problem(root, spec_run_files(root) if run_files is None else run_files)
    if problem is not None:
        raise UntrustedProject(root, problem)


def ownership_problem(root: str, run_files: Iterable[str] = ()) -> str | None:
    """The first path of the project that another user owns or may write, said as a person reads it; or None."""
    user, group = os.geteuid(), os.getegid()
    for path, status in _read_paths(root, run_files):
        if stat.S_ISLNK(status.st_mode):
            continue  # a link's own bits mean nothing: what it points at is checked, and its directory
        if status.st_uid not in (user, 0):
            return f"{path} is owned by uid {status.st_uid}, not by you (uid {user}) or root"
        if status.st_mode & stat.S_IWOTH:
            return f"{path} is writable by anyone ({stat.filemode(status.st_mode)})"
        if status.st_mode & stat.S_IWGRP and status.st_gid != group:
            return f"{path} is writable by group {status.st_gid}, not yours ({stat.filemode(status.st_mode)})"
    return None


def _read_paths(root: str, run_files: Iterable[str]) -> Iterator[tuple[str, os.stat_result]]:
    """Every path a command reads of the project, with the status of what it is read as."""
    yield root, os.stat(root)
    for tree in CHECKED_TREES:
        top = os.path.join(root, tree)
        if not os.path.lexists(top):
            continue
        yield from _statuses(top)
        if os.path.isdir(top) and not os.path.islink(top):
            for directory, subdirectories, files in os.walk(top):
                subdirectories.sort()
                for name in sorted(subdirectories) + sorted(files):
                    yield from _statuses(os.path.join(directory, name))
    for relative in run_files:  # the file, and each directory on its way from the root
        parts = relative.replace("\\", "/").split("/")
        for depth in range(1, len(parts) + 1):
            path = os.path.join(root, *parts[:depth])
            if not os.path.lexists(path):
                break
            yield from _statuses(path)


def spec_run_files(root: str) -> list[str]:
    """The files the spec under `root` names to run (`oracle:`, `run_loop:`, of a project of either kind), read by
    the loader the spec is built with (resume_contract_generator/spec/run_files.py): a key written any way YAML
    allows is the key the build reads. What it found is remembered under the sha256 of those files' bytes and of
    this tool (project/verdicts.py), so that a plan in a project loads no YAML parser once it has been read."""
    from pathlib import Path

    from .verdicts import remember_run_files, remembered_run_files, run_files_key

    key = run_files_key(Path(root))
    found = remembered_run_files(key)
    if found is None:
        from resume_contract_generator.spec.run_files import named_run_files

        found = named_run_files(root)
        remember_run_files(key, found)
    return found


def _statuses(path: str) -> Iterator[tuple[str, os.stat_result]]:
    status = os.lstat(path)
    yield path, status
    if stat.S_ISLNK(status.st_mode):
        try:
            yield f"{path} (the target of its symlink)", os.stat(path)
        except OSError:
            return
