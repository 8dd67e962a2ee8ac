"""Turn loaded spec files into the frozen `Spec`, or raise `SpecInvalid` with every error found.

Three passes, each only when the one before found nothing, so one mistake is not reported five times:
schema (shape, names, allowed values; `spec_files`) -> references and machine structure (`build`) -> the
decision table run against the projector over the canonical ledger (`contradictions`), and the continuation
decision's situations run through its checks (`continuation_situations`).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SpecInvalid
from .build import SpecBuilder
from .continuation_situations import situation_errors
from .contradictions import check_decisions_against_projector
from .files import read_spec_files
from .model import Spec
from .wire_spec import build_wire_format


def load_spec(root: Path) -> Spec:
    """Load, check and freeze the spec under `root/spec`; raise SpecInvalid listing every problem."""
    files = read_spec_files(root)
    wire, errors = build_wire_format(files["runtime_event"])
    if errors:
        raise SpecInvalid(errors)

    spec = SpecBuilder(files, wire).build(root)
    contradictions = check_decisions_against_projector(spec) + situation_errors(spec)
    if contradictions:
        raise SpecInvalid(contradictions)
    return spec
