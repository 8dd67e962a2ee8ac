"""A file a project's spec names (its oracle, its run loops), reached only inside the project.

The spec names these files relative to the project's root, and the commands whose job it is run them
(`generate` and `check --run-oracle` the oracle, `verify` the oracle, `crash` the run loops). A name that leaves
the root (`../x`, an absolute path) or a step that is a symlink could make them run a file anywhere on the
machine, so each step below the root is opened relative to the one before it with O_NOFOLLOW, and the last
must be a regular file. The one helper the generator (which reads the oracle) and the runtime share: it opens
files and nothing else.
"""

from __future__ import annotations

import errno
import os
import stat

from ..errors import ResumeContractError


class ProjectFileRefused(ResumeContractError):
    """A file the spec names is not a regular file inside the project reached without a symlink."""


def project_file_bytes(root: str | os.PathLike[str], relative: str) -> bytes:
    """The bytes of `root/relative`, read through descriptors that never follow a link; raises
    ProjectFileRefused (outside the project, a symlink, not a regular file) or FileNotFoundError."""
    fd = open_project_file(root, relative)
    with os.fdopen(fd, "rb") as file:
        return file.read()


def open_project_file(root: str | os.PathLike[str], relative: str) -> int:
    """A read-only descriptor of `root/relative` (see the module's docstring)."""
    parts = relative.replace("\\", "/").split("/")
    if os.path.isabs(relative) or not relative or any(part in ("", ".", "..") for part in parts):
        raise ProjectFileRefused(f"{relative!r}: a file the spec names must be a plain path inside the project (no '..', not absolute)")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, part in enumerate(parts, 1):
            last = depth == len(parts)
            flags = os.O_RDONLY | os.O_NOFOLLOW | (0 if last else os.O_DIRECTORY)
            try:
                step = os.open(part, flags | getattr(os, "O_NONBLOCK", 0) if last else flags, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise ProjectFileRefused(
                        f"{relative!r}: {'/'.join(parts[:depth])} is a symlink or not a directory; a file the spec names "
                        "is read only inside the project, never through a link"
                    ) from None
                raise
            os.close(fd)
            fd = step
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ProjectFileRefused(f"{relative!r} is not a regular file")
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise
