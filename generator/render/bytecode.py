"""Bytecode under generated/: which cached `.pyc` files could change what runs, as this interpreter loads them.

Python runs a module's `__pycache__/<name>.<cache tag>[.opt-N].pyc` instead of compiling `<name>.py` when its
header says so: a timestamp pyc when its recorded source time and size are the source's, a hash-based one when
its recorded source hash matches, and an *unchecked*-hash one always, without reading the source. Any of these
can be written by hand, so a pyc is accepted only when this interpreter would not load it (stale, of another
Python, unreadable) or when what it holds is exactly what compiling the current source gives. An ordinary
import writes exactly that, so a legitimate cache is never drift.

pytest keeps assertion-rewritten pycs beside them (`<name>.<cache tag>-pytest-<version>.pyc`) and loads one
when it records the source's hash (pytest 8 on; flags 3), whatever wrote it: such a pyc is accepted only when it
holds what pytest's own rewriting of the current source gives (pytest, where it is installed, says), so the
generated tests cannot be swapped for a planted pass. Not judged here: pycs of another interpreter (each
interpreter checks its own when it runs `check`, and every command checks before it loads a project's contract,
which is compiled from source anyway).
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType

_HEADER = 16
_FLAGS_HASH_BASED = 0b01
_KNOWN_FLAGS = 0b11


def could_change_what_runs(source: Path, pyc: Path) -> bool:
    """True when `pyc` (in the `__pycache__` beside `source`) could make this interpreter run something other
    than `source`."""
    if _is_pytest_pyc(source.stem, pyc.name):
        return _pytest_could_run_other_code(source, pyc.read_bytes())
    optimization = _optimization_for_this_interpreter(source.stem, pyc.name)
    if optimization is None:
        return False  # another interpreter's: see the module's docstring
    data = pyc.read_bytes()
    if len(data) < _HEADER or data[:4] != importlib.util.MAGIC_NUMBER:
        return False  # Python discards it and compiles the source
    flags = int.from_bytes(data[4:8], "little")
    if flags & ~_KNOWN_FLAGS:
        return False  # an invalid header: discarded as well
    try:
        source_bytes = source.read_bytes()
        status = os.stat(source)
    except OSError:
        return False  # no source: Python never loads a __pycache__ entry without one
    if not flags & _FLAGS_HASH_BASED:
        recorded_time = int.from_bytes(data[8:12], "little")
        recorded_size = int.from_bytes(data[12:16], "little")
        if (recorded_time, recorded_size) != (int(status.st_mtime) & 0xFFFFFFFF, status.st_size & 0xFFFFFFFF):
            return False  # stale: Python recompiles the source (and rewrites the pyc)
    # Hash-based pycs are judged by their content whatever their hash says: `--check-hash-based-pycs never`
    # runs even a checked one unread, and no ordinary import writes either kind.
    try:
        code = marshal.loads(data[_HEADER:])
    except (EOFError, ValueError, TypeError):
        return True  # Python would fail to import the module: not what the spec generated
    expected = compile(source_bytes, str(source), "exec", dont_inherit=True, optimize=optimization)
    return not (isinstance(code, CodeType) and same_code(code, expected))


def _is_pytest_pyc(stem: str, name: str) -> bool:
    return name.startswith(f"{stem}.{sys.implementation.cache_tag}-pytest-") and name.endswith(".pyc")


def _pytest_could_run_other_code(source: Path, data: bytes) -> bool:
    # As pytest's `_read_pyc` reads it: this magic number, flags 3 and the first 8 bytes of the source's hash.
    if len(data) < _HEADER or data[:4] != importlib.util.MAGIC_NUMBER or data[4:8] != b"\x03\x00\x00\x00":
        return False  # pytest discards it and rewrites the source
    try:
        source_bytes = source.read_bytes()
    except OSError:
        return False
    if importlib.util.source_hash(source_bytes)[:8] != data[8:16]:
        return False  # out of date: rewritten again
    try:
        code = marshal.loads(data[_HEADER:])
        from _pytest.assertion.rewrite import rewrite_asserts  # pytest's own rewriting: what it would have written
    except (EOFError, ValueError, TypeError, ImportError):
        return True  # pytest would run it, and nothing here can show it is the source's
    import ast

    tree = ast.parse(source_bytes)
    rewrite_asserts(tree, source_bytes, str(source), None)
    expected = compile(tree, str(source), "exec", dont_inherit=True)
    return not (isinstance(code, CodeType) and same_code(code, expected))


def _optimization_for_this_interpreter(stem: str, name: str) -> int | None:
    tag = sys.implementation.cache_tag
    for optimization, suffix in ((0, ".pyc"), (1, ".opt-1.pyc"), (2, ".opt-2.pyc")):
        if name == f"{stem}.{tag}{suffix}":
            return optimization
    return None


def same_code(actual: CodeType, expected: CodeType) -> bool:
    """Whether two code objects run the same, nested code included (the file name they were compiled under aside).

    Code equality compares the bytecode, constants (by type and value), names, line table and flags; not the
    qualified name, the stack size or the free and cell variables, compared here at every depth.
    """
    if actual != expected:
        return False
    if (actual.co_qualname, actual.co_stacksize, actual.co_freevars, actual.co_cellvars) != (
        expected.co_qualname,
        expected.co_stacksize,
        expected.co_freevars,
        expected.co_cellvars,
    ):
        return False
    nested = [(a, e) for a, e in zip(actual.co_consts, expected.co_consts, strict=True) if isinstance(a, CodeType)]
    return all(isinstance(e, CodeType) and same_code(a, e) for a, e in nested)
