"""The contract this process runs: a generated package (`resume_contract_generated`), bound in one place.

Everything that decides (the projector table, the decoding model, the failpoint catalog, the
python-statemachine class) is generated from a spec; this module is the only one that loads a generated
package, so which contract runs is decided here and nowhere else: the one packaged with this installation, or
a project's own (its `generated/`, loaded from its files). The pure core never imports either: it is handed a
table and a model.

    from resume_contract import build_resume_plan, event_from_wire
    plan = build_resume_plan([event_from_wire(row) for row in rows])
"""

from __future__ import annotations

import _thread
import functools
import importlib
import importlib.machinery
import os
import sys
import types
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import msgspec

from .core.plan import ResumePlan
from .core.project import project
from .core.project_files import open_project_file
from .core.spec_layout import LANGUAGE_SPEC, SPEC_DIR, spec_digest
from .core.table import ProjectorTable
from .core.wire import WireModel
from .errors import NoContinuationDecision

if TYPE_CHECKING:  # the continuation interpreter is loaded by a continuation alone, not by every plan
    from pathlib import Path

    from .core.continuation import ContinuationPlan
    from .core.continuation_table import ContinuationTable

PACKAGE = "resume_contract_generated"
_LOADING = _thread.allocate_lock()  # (threading's own Lock: `threading` costs every command its import)
GENERATED_PACKAGE_DIR = "generated/resume_contract_generated"
# A child process (the crash harness's child, a project's run loop) runs the contract of the project named here.
ROOT_VARIABLE = "RESUME_CONTRACT_ROOT"


# msgspec structs, not dataclasses: a dataclass costs every command about a millisecond to define (it compiles
# its methods), a struct a few microseconds. dict=True lets a struct hold cached properties.
class Identity(msgspec.Struct, frozen=True):
    """Which contract decided: its name and phase (spec/scope.yaml) and the sha256 of the spec it was made from."""

    name: str
    phase: str
    spec_sha256: str

    def __str__(self) -> str:
        return f"{self.name} ({self.phase}), spec sha256 {self.spec_sha256[:12]}"

    def as_json(self) -> dict[str, str]:
        return {"name": self.name, "phase": self.phase, "specSha256": self.spec_sha256}


class Contract(msgspec.Struct, frozen=True, dict=True):
    """One generated contract: where it comes from, its projector table, decoding model and catalog.

    `root` is the project it was loaded from (its spec/ and generated/), None for the one packaged with this
    installation of resume-contract.
    """

    package: str
    root: Path | None
    modules: str  # the directory its generated modules are in (a str: outside any project, no pathlib is loaded)
    table: ProjectorTable
    model: WireModel
    catalog: ModuleType

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # Crosses to a worker process by where it comes from (modules do not pickle); loaded there once.
        return (_packaged, ()) if self.root is None else (load_generated, (self.root,))

    @functools.cached_property
    def identity(self) -> Identity:
        spec_dir = _packaged_spec_directory() if self.root is None else os.path.join(self.root, SPEC_DIR)
        # Relative to the spec directory: the packaged one is installed as `resume_contract_spec`, not `spec`.
        digest = spec_digest(lambda relative: _read_or_none(os.path.join(spec_dir, _below_spec_dir(relative))))
        return Identity(self.catalog.CONTRACT_NAME, self.catalog.PHASE, digest)

    @property
    def origin(self) -> str:
        """Where it comes from, as a person reads it: the project's root, or this installation."""
        return "packaged with resume-contract" if self.root is None else f"project {self.root}"

    @functools.cached_property
    def continuation(self) -> ContinuationTable | None:
        """The continuation decision's table (spec/continuation.yaml), or None: a Phase 0 contract declares none."""
        if not os.path.isfile(os.path.join(self.modules, "continuation_table.py")):
            return None
        table: ContinuationTable = _module(self.package, self.modules, "continuation_table").TABLE
        return table

    @functools.cached_property
    def continuation_boundaries(self) -> ModuleType | None:
        """Phase 1's crash contract (spec/lifecycle.yaml): the continuation's lifecycle and its crash
        boundaries, or None when the contract declares none."""
        if not os.path.isfile(os.path.join(self.modules, "continuation_boundaries.py")):
            return None
        with _LOADING:
            return _module(self.package, self.modules, "continuation_boundaries")

    def lifecycle_class(self) -> type:
        """The continuation's lifecycle as a python-statemachine class (a contract with its crash contract only).
        Loaded under a lock: the crash harness's threads ask for it at once, and python-statemachine's own imports
        can otherwise hand one of them a module still being initialised."""
        with _LOADING:
            return _module(self.package, self.modules, "continuation_lifecycle").ContinuationLifecycle

    def machine_class(self) -> type:
        """The generated python-statemachine class (loaded when asked: python-statemachine is slow to import)."""
        return _module(self.package, self.modules, "projector_machine").ToolOperationMachine

    def file(self, relative: str | None) -> Path | None:
        """A file the spec names relative to the project (the run loop, the oracle), or None: a regular file inside
        the project, reached without following a link, else ProjectFileRefused (a missing one is its caller's to
        report)."""
        if relative is None or self.root is None:
            return None
        try:
            os.close(open_project_file(self.root, relative))
        except FileNotFoundError:
            pass
        return self.root / relative

    def child_environment(self, environment: dict[str, str]) -> dict[str, str]:
        """`environment` for a child process that must run this contract (see ROOT_VARIABLE)."""
        child = {key: value for key, value in environment.items() if key != ROOT_VARIABLE}
        if self.root is not None:
            child[ROOT_VARIABLE] = str(self.root)
        return child


def packaged() -> Contract:
    """The contract generated into this installation of resume-contract."""
    return _packaged()


def active() -> Contract:
    """The contract used when none is given: the project's named by RESUME_CONTRACT_ROOT (a child process of a
    command run in that project), else the one packaged with resume-contract. Commands select the contract of
    the project they run in (`resume_contract.project`) and pass it explicitly."""
    root = os.environ.get(ROOT_VARIABLE)
    if root:
        from pathlib import Path

        return load_generated(Path(root))
    return _packaged()


def packaged_spec_dir() -> Path:
    """The spec this installation's contract was generated from (shipped with it as `resume_contract_spec`)."""
    from pathlib import Path

    return Path(_packaged_spec_directory())


def _packaged_spec_directory() -> str:
    # YAML only: a directory shipped as a package, never imported. PathFinder is what importlib.util.find_spec
    # asks first (and finds it in an installed wheel), without importing importlib.util; an editable install's
    # finder comes after it.
    found = importlib.machinery.PathFinder.find_spec("resume_contract_spec")
    if found is None:
        from importlib.util import find_spec

        found = find_spec("resume_contract_spec")
    locations = [] if found is None else list(found.submodule_search_locations or [])
    return next(entry for entry in locations if os.path.isdir(entry))


def _below_spec_dir(relative: str) -> str:
    """`spec/x.yaml` -> `x.yaml` (a name spec_digest gives)."""
    head, separator, rest = relative.partition("/")
    if head != SPEC_DIR or not separator or not rest:
        raise ValueError(f"{relative!r} is not below {SPEC_DIR}/")
    return rest


@functools.cache
def _packaged() -> Contract:
    package = importlib.import_module(PACKAGE)
    return _bound(PACKAGE, None, os.path.dirname(str(package.__file__)))


def _packaged_modules() -> str:
    """Where the packaged contract's modules are, found without loading them (a project's contract is not it)."""
    from importlib.util import find_spec

    found = find_spec(PACKAGE)
    assert found is not None and found.origin is not None
    return os.path.dirname(found.origin)


@functools.cache
def load_generated(root: Path) -> Contract:
    """The contract generated into a project's `generated/`, loaded from its files (not checked against its spec:
    `resume_contract.project.load_project` does that). Raises FileNotFoundError when it has none."""
    from pathlib import Path  # a project's: outside any project, nothing here loads pathlib

    root = Path(root).resolve()
    modules = root / GENERATED_PACKAGE_DIR
    if modules.resolve() == Path(_packaged_modules()).resolve():  # this installation's own checkout
        return msgspec.structs.replace(_packaged(), root=root)
    if (root / LANGUAGE_SPEC).is_file():
        return _language(root, modules)  # type: ignore[return-value]  # (callers of a language contract ask its kind)
    if not (modules / "catalog.py").is_file():
        raise FileNotFoundError(f"{root}: no generated contract ({GENERATED_PACKAGE_DIR}/); run `resume-contract generate` there")
    return _bound(_project_package("_resume_contract_project_", root, modules), root, str(modules))


def _project_package(prefix: str, root: Path, modules: Path) -> str:
    """The package a project's generated modules are loaded under: a name of its own, so that it never shadows (or is
    shadowed by) the packaged contract's modules."""
    import hashlib

    package = prefix + hashlib.sha256(str(root).encode()).hexdigest()[:16]
    if package not in sys.modules:
        parent = types.ModuleType(package)
        parent.__path__ = [str(modules)]
        sys.modules[package] = parent
    return package


class LanguageContract(msgspec.Struct, frozen=True, dict=True):
    """A contract written in the contract language (spec/contract.yaml): its generated language.py."""

    root: Path
    modules: str
    module: ModuleType

    @functools.cached_property
    def identity(self) -> Identity:
        digest = spec_digest(lambda relative: _read_or_none(os.path.join(self.root, SPEC_DIR, _below_spec_dir(relative))))
        return Identity(self.module.NAME, self.module.PHASE, digest)

    @property
    def origin(self) -> str:
        return f"project {self.root}"


def _language(root: Path, modules: Path) -> LanguageContract:
    if not (modules / "language.py").is_file():
        raise FileNotFoundError(f"{root}: no generated contract ({GENERATED_PACKAGE_DIR}/language.py); run `resume-contract generate` there")
    package = _project_package("_resume_contract_language_", root, modules)
    return LanguageContract(root, str(modules), _module(package, str(modules), "language"))


def _bound(package: str, root: Path | None, modules: str) -> Contract:
    runtime_event = _module(package, modules, "runtime_event")
    table = _module(package, modules, "projector_table").TABLE
    catalog = _module(package, modules, "catalog")
    return Contract(package, root, modules, table, WireModel(runtime_event), catalog)


def _module(package: str, directory: str, name: str) -> ModuleType:
    full = f"{package}.{name}"
    module = sys.modules.get(full)
    if module is not None:
        return module
    if package == PACKAGE:
        return importlib.import_module(full)
    from importlib.util import module_from_spec, spec_from_file_location

    path = os.path.join(directory, f"{name}.py")
    spec = spec_from_file_location(full, path, loader=_SourceOnlyLoader(full, path))
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    sys.modules[full] = module  # msgspec resolves a struct's annotations through sys.modules
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[full]
        raise
    return module


class _SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Loads a project's generated module from its source, never from (or into) `__pycache__`: bytecode there can
    be written by hand, and an unchecked-hash pyc would run in place of the source `check` compared with the
    spec. The packaged contract is imported normally: an installation is trusted (docs/adopting.md)."""

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


def _read_or_none(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def build_resume_plan(
    events: Sequence[Any],
    expected_high_water: int | None = None,
    *,
    rows: Sequence[msgspec.Raw] | None = None,
    contract: Contract | None = None,
) -> ResumePlan:
    """Project a committed prefix into its ResumePlan. Pure, deterministic, and it never mutates `events`.

    `rows` are the committed rows the events were read from (a `CommittedLedger` has both): the plan's
    `runtime_events` and `replay_runtime_events` hand them back exactly as written.
    """
    return project(events, (contract or active()).table, expected_high_water, rows=rows)


def build_continuation_plan(
    events: Sequence[Any],
    facts: Any,
    *,
    rows: Sequence[msgspec.Raw] | None = None,
    contract: Contract | None = None,
) -> ContinuationPlan:
    """Decide whether the committed prefix `events` may be continued (`continue`) or must stop (`park`) under
    `facts`, the host's facts object. Pure. Raises FactsRefused when the facts are not exactly the inputs the
    spec declares, NoContinuationDecision when the contract declares no continuation decision (Phase 0)."""
    chosen = contract or active()
    table = chosen.continuation
    if table is None:
        raise NoContinuationDecision(f"the contract {chosen.identity} declares no continuation decision (spec/continuation.yaml)")
    from .core.continuation import decide_continuation

    return decide_continuation(events, facts, chosen.table, table, rows=rows)


def event_from_wire(wire: Any, contract: Contract | None = None) -> Any:
    """A decoded JSON value as a RuntimeEvent; raises `errors.RowRefused` when it is not one."""
    return (contract or active()).model.event_from_wire(wire)


def decode_event(row: bytes, contract: Contract | None = None) -> Any:
    """One ledger row (without its newline) as a RuntimeEvent; raises `errors.RowRefused`."""
    return (contract or active()).model.decode_row(row)


def encode_event(event: Any, contract: Contract | None = None) -> bytes:
    """The event's canonical JSON row, without the trailing newline."""
    return (contract or active()).model.encode(event)
