"""The contract this process runs: a generated package (`resume_contract_generated`), bound in one place.

Everything that decides (the projector table, the decoding model, the failpoint catalog, the
python-statemachine class) is generated from a spec; this module is the only one that imports the generated
package, so which contract runs is decided here and nowhere else. The pure core never imports it: it is
handed a table and a model.

    from resume_contract import build_resume_plan, event_from_wire
    plan = build_resume_plan([event_from_wire(row) for row in rows])
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import msgspec

from .core.plan import ResumePlan
from .core.project import project
from .core.table import ProjectorTable
from .core.wire import WireModel

PACKAGE = "resume_contract_generated"


@dataclass(frozen=True)
class Contract:
    """One generated contract: its package, projector table, decoding model and catalog."""

    package: str
    table: ProjectorTable
    model: WireModel
    catalog: ModuleType

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # Crosses to a worker process by its package's name (modules do not pickle); loaded there once.
        return (_loaded, (self.package,))

    def machine_class(self) -> type:
        """The generated python-statemachine class (imported when asked: python-statemachine is slow to import)."""
        return importlib.import_module(f"{self.package}.projector_machine").ToolOperationMachine


def packaged() -> Contract:
    """The contract generated into this installation of resume-contract."""
    return _loaded(PACKAGE)


def active() -> Contract:
    """The contract the API and the commands use when none is given: the one installed with resume-contract."""
    return packaged()


@functools.cache
def _loaded(package: str) -> Contract:
    runtime_event = importlib.import_module(f"{package}.runtime_event")
    table = importlib.import_module(f"{package}.projector_table").TABLE
    catalog = importlib.import_module(f"{package}.catalog")
    return Contract(package, table, WireModel(runtime_event), catalog)


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


def event_from_wire(wire: Any, contract: Contract | None = None) -> Any:
    """A decoded JSON value as a RuntimeEvent; raises `errors.RowRefused` when it is not one."""
    return (contract or active()).model.event_from_wire(wire)


def decode_event(row: bytes, contract: Contract | None = None) -> Any:
    """One ledger row (without its newline) as a RuntimeEvent; raises `errors.RowRefused`."""
    return (contract or active()).model.decode_row(row)


def encode_event(event: Any, contract: Contract | None = None) -> bytes:
    """The event's canonical JSON row, without the trailing newline."""
    return (contract or active()).model.encode(event)
