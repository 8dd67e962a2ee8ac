"""The oracle a project keeps beside its spec (`oracle:` in spec/invariants.yaml), loaded from its file.

The oracle is the check that a consistent but wrong spec shows up, so it is written by hand, independently of
the spec; a project whose contract legitimately differs from Phase 0 (a renamed reason) keeps its own copy and
edits it there, never an installed file. The file is Python defining `decide(rows, expected_high_water)` with
the packaged oracle's result fields (resume_contract/core/oracle.py); it is the project's own code, run only by
the commands whose job that is (`generate`, `check --run-oracle`, `verify`), as its tests are: never by a command
that only reads (`check`, `diff`, `plan`, `vectors`). It must be a regular file inside the project, read without
following a symlink.
"""

from __future__ import annotations

import hashlib
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from resume_contract.core.project_files import ProjectFileRefused, project_file_bytes

from ..errors import SpecError
from .model import Spec


def load_project_module(root: Path, relative: str, purpose: str) -> Any:
    """The module in the file the spec names `relative` to the project at `root`: a regular file inside the
    project, read without following a link (`core.project_files`). Raises ProjectFileRefused, OSError, SyntaxError
    or whatever the module raises while it runs."""
    return load_module_file(root / relative, purpose, project_file_bytes(root, relative))


def load_module_file(path: Path, purpose: str, data: bytes | None = None) -> Any:
    """The Python module in the file at `path` (whose bytes are `data` when the caller read them), executed under
    a name of its own (its path's and bytes' hash: two files never share one). Raises OSError, SyntaxError or
    whatever the module raises while it runs.

    Compiled from the bytes read, never loaded from `__pycache__`: a pyc there can be written by hand (an
    unchecked-hash one runs without its source being read), and `verify` would judge the spec against it."""
    if data is None:
        data = path.read_bytes()
    name = f"_resume_contract_{purpose}_" + hashlib.sha256(str(path.resolve()).encode() + b"\0" + data).hexdigest()[:16]
    module = sys.modules.get(name)
    if module is not None:
        return module
    code = compile(data, str(path), "exec", dont_inherit=True)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module  # (dataclasses and the like look their module up while it runs)
    try:
        exec(code, module.__dict__)  # noqa: S102 - the project's own oracle, run as its tests are
    except BaseException:
        del sys.modules[name]
        raise
    return module


def project_oracle(root: Path, spec: Spec) -> tuple[Callable[..., Any] | None, list[SpecError]]:
    """(the oracle the spec names, or None for the packaged one; the errors that keep it from loading)."""
    if spec.oracle is None:
        return None, []
    mark = spec.location("invariants", "oracle")
    try:
        module = load_project_module(root, spec.oracle, "oracle")
    except FileNotFoundError:
        return None, [SpecError(mark, f"oracle {spec.oracle!r}: no such file in the project (relative to {root})")]
    except ProjectFileRefused as error:
        return None, [SpecError(mark, f"oracle {error}")]
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the project's code: whatever it raises (an exit too) is reported at the key
        return None, [SpecError(mark, f"oracle {spec.oracle!r} cannot be loaded: {type(error).__name__}: {error}")]
    decide = getattr(module, "decide", None)
    if not callable(decide):
        return None, [SpecError(mark, f"oracle {spec.oracle!r} defines no function decide(rows, expected_high_water)")]
    return decide, []
