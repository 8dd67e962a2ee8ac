"""../shared/conformance-sqlite-phase1, byte for byte, from tests/conformance_sqlite_phase1/reference.tar.xz (38
workspaces written by apache/maka @ f19eede03's own writers, and what its continuation planner returned for each:
expected.json). The archive holds regular files only, under relative paths that never step up; anything else is
refused."""

from __future__ import annotations

import io
import json
import lzma
import tarfile
from functools import cache
from pathlib import Path
from typing import Any

ARCHIVE = Path(__file__).parent / "conformance_sqlite_phase1" / "reference.tar.xz"


@cache
def members() -> dict[str, bytes]:
    """{relative path: bytes} of every file the archive holds."""
    files = {}
    with lzma.open(ARCHIVE) as raw, tarfile.open(fileobj=io.BytesIO(raw.read())) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if not (member.isfile() and parts and not Path(member.name).is_absolute() and ".." not in parts):
                raise ValueError(f"{ARCHIVE}: {member.name!r} is not a plain file under the archive's root")
            extracted = tar.extractfile(member)
            assert extracted is not None
            files[member.name] = extracted.read()
    return files


def expected() -> dict[str, Any]:
    """expected.json: case -> {"args", "expect"}."""
    return json.loads(members()["expected.json"])  # type: ignore[no-any-return]


def write(root: Path) -> Path:
    """Every file of the archive under `root`; `root`."""
    for name, data in members().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def make(source: Path, archive: Path = ARCHIVE) -> None:
    """Write the archive from a copy of the shared set: every file, sorted, mode 0644, mtime 0, PAX, xz preset 9
    (the same bytes each time). `python tests/phase1_archive.py ../shared/conformance-sqlite-phase1`."""
    with lzma.open(archive, "wb", preset=9) as raw, tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(path for path in source.rglob("*") if path.is_file()):
            data = path.read_bytes()
            info = tarfile.TarInfo(path.relative_to(source).as_posix())
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    import sys

    make(Path(sys.argv[1]))
