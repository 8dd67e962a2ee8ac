"""spec/ledger.yaml as a model: the canonical ledger's events, each decoded by the spec's own decoding model,
and the committed prefixes that end at them."""

from __future__ import annotations

import json
from typing import Any

from resume_contract.core.wire import WireModel
from resume_contract.errors import RowRefused

from ..errors import Mark, SpecError
from .loader import LoadedFile
from .model import CanonicalLedger, LedgerEvent, Prefix

_Path = tuple[str | int, ...]


def build_ledger(file: LoadedFile, model: WireModel) -> tuple[CanonicalLedger, list[SpecError]]:
    """The canonical ledger, and every error found building it."""
    checks = _LedgerChecks(file, model)
    return checks.ledger(), checks.errors


class _LedgerChecks:
    def __init__(self, file: LoadedFile, model: WireModel) -> None:
        self.file = file
        self.data = file.data
        self.model = model
        self.outcome_names = [name for name, _ in self.data["outcomes"].items()]
        self.errors: list[SpecError] = []
        self.seen_names: dict[str, Mark] = {}
        self.seen_ids: dict[tuple[str, str], Mark] = {}

    def error(self, mark: Mark, message: str) -> None:
        self.errors.append(SpecError(mark, message))

    def ledger(self) -> CanonicalLedger:
        data = self.data
        events = [event for index, item in enumerate(data["events"]) if (event := self._event(index, item)) is not None]
        prefixes = self._prefixes([event.name for event in events])
        longest = max((prefix.length for prefix in prefixes), default=0)
        for event in events[longest:]:
            self.error(event.mark, f"event '{event.name}' is in no prefix")
        return CanonicalLedger(
            session_id=data["session_id"],
            run_id=data["run_id"],
            outcomes=tuple(data["outcomes"].items()),
            events=tuple(events),
            prefixes=tuple(prefixes),
        )

    # -- events ---------------------------------------------------------------------------------------------
    def _event(self, index: int, item: dict[str, Any]) -> LedgerEvent | None:
        """One event with its row for every outcome; None if it does not say what its rows are."""
        path = ("events", index)
        mark = self.file.mark(path)
        name = item["name"]
        if name in self.seen_names:
            self.error(self.file.mark(path + ("name",)), f"duplicate event name '{name}' (first defined at {self.seen_names[name]})")
        self.seen_names.setdefault(name, mark)
        fields_by_outcome = self._fields_by_outcome(path, mark, name, item)
        if fields_by_outcome is None:
            return None
        wires = [
            row
            for outcome, (fields, field_path) in fields_by_outcome.items()
            if (row := self._row(name, outcome, fields, field_path)) is not None
        ]
        return LedgerEvent(name=name, wire_by_outcome=tuple(wires), mark=mark)

    def _fields_by_outcome(self, path: _Path, mark: Mark, name: str, item: dict[str, Any]) -> dict[str, tuple[dict, _Path]] | None:
        """Outcome -> (the event's own fields, where they are written): one `event` for all, or one per outcome."""
        if ("event" in item) == ("by_outcome" in item):
            self.error(mark, f"event '{name}' needs exactly one of 'event' or 'by_outcome'")
            return None
        if "event" in item:
            return {outcome: (item["event"], path + ("event",)) for outcome in self.outcome_names}
        given = list(item["by_outcome"])
        if sorted(given) != sorted(self.outcome_names):
            self.error(
                self.file.mark(path + ("by_outcome",)),
                f"event '{name}' gives outcomes [{', '.join(given)}]; the outcomes are [{', '.join(self.outcome_names)}]",
            )
            return None
        return {outcome: (item["by_outcome"][outcome], path + ("by_outcome", outcome)) for outcome in self.outcome_names}

    def _row(self, name: str, outcome: str, fields: dict, field_path: _Path) -> tuple[str, str] | None:
        """(outcome, the row as written to a ledger), if the decoding model reads it as an event of this run."""
        data = self.data
        wire = {**data["common"], **fields}
        mark = self.file.mark(field_path)
        try:
            event = self.model.event_from_wire(wire)
        except RowRefused as error:
            self.error(mark, f"event '{name}' is not a valid RuntimeEvent (spec/runtime_event.yaml): {error.detail}")
            return None
        if event.session_id != data["session_id"] or event.run_id != data["run_id"]:
            self.error(mark, f"event '{name}' must carry sessionId '{data['session_id']}' and runId '{data['run_id']}'")
        if (outcome, event.id) in self.seen_ids:
            self.error(mark, f"event id '{event.id}' is used twice (first at {self.seen_ids[(outcome, event.id)]})")
        self.seen_ids.setdefault((outcome, event.id), mark)
        return outcome, json.dumps(wire, ensure_ascii=False, separators=(",", ":"))

    # -- prefixes -------------------------------------------------------------------------------------------
    def _prefixes(self, names: list[str]) -> list[Prefix]:
        file = self.file
        prefixes = []
        for prefix_name, prefix_data in self.data["prefixes"].items():
            through = prefix_data["through"]
            if through is not None and through not in names:
                self.error(file.mark(("prefixes", prefix_name, "through")), f"prefix '{prefix_name}' ends at unknown event '{through}'; the events are [{', '.join(names)}]")
                continue
            length = 0 if through is None else names.index(through) + 1
            prefixes.append(Prefix(name=prefix_name, through=through, length=length, mark=file.key_mark(("prefixes", prefix_name))))
        return prefixes
