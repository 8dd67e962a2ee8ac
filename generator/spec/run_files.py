"""The files a spec names to run (`core.spec_layout.RUN_FILE_KEYS`), read with the loader the spec is built with.

A project's commands run Python it names: the oracle (`generate`, `check --run-oracle`, `verify`) and the run loops
(`crash`). The trust check (resume_contract/project/trust.py) must look at exactly those files before any command
runs one, so it asks here, and the build reads each through `run_file_at`: one list of keys, one YAML parse. A file
the loader cannot parse names nothing here, and the build refuses the same file before anything of the project runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from resume_contract.core.spec_layout import RUN_FILE_KEYS

from .loader import load_spec_file


def run_file_at(data: Any, keys: tuple[str, ...]) -> Any:
    """The value at `keys` in a spec file's data (None where a step is missing or not a mapping)."""
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def named_run_files(root: str | Path) -> list[str]:
    """Every file the spec under `root` names to run, as written (relative to the root), in RUN_FILE_KEYS' order."""
    found: list[str] = []
    loaded: dict[str, Any] = {}
    for relative, keys in RUN_FILE_KEYS:
        if relative not in loaded:
            path = Path(root) / relative
            file = load_spec_file(path, relative)[0] if path.is_file() else None
            loaded[relative] = None if file is None else file.data
        value = run_file_at(loaded[relative], keys)
        if isinstance(value, str) and value not in found:
            found.append(value)
    return found
