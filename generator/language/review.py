"""`diff` of two contracts in the contract language: every construct that changed, and the ledgers whose decision
moved, each side deciding with the code its spec renders to (generator/language/render.py, run here as the
generated module runs after `generate`).

The ledgers are every prefix of both sides' scenarios (a scenario whose decision moves is a moved ledger, named by
its scenario and row), then every sequence, up to a depth, of rows from both sides' alphabets
(generator/language/alphabet.py: rows that look where the contracts' expressions look). How each ledger moved is
classed by resume_contract/core/moves.py, the one definition every review uses: toward proceeding (a refused
ledger decided, stop -> proceed, a row replayed that was withheld) weakens safety; a name given in place of
another, dropped or reordered, or a status, breaks; only toward stopping tightens.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any

import msgspec

from resume_contract.core.explore import deepest
from resume_contract.core.moves import CORRUPT, UNDECIDED, Outcome, move, refusal, strongest
from resume_contract.core.spec_layout import LANGUAGE_SPEC

from ..errors import Mark
from ..review import rules
from ..review.collector import Change, Review, report_order
from ..review.evidence import DEFAULT_DEPTH, LEDGER_BUDGET, LedgerEvidence, witness_text
from ..review.rules import BREAKING, BREAKING_AT_LEAST, BY_EVIDENCE, CLASSES, NEUTRAL, WEAKENS
from .alphabet import alphabet_of, id_style, rows_of
from .model import Expr, LanguageSpec
from .run import contract_module, judge


def review_language(base: LanguageSpec, head: LanguageSpec, depth: int | None = None) -> Review:
    changes = _changes(base, head)
    alphabet = alphabet_of(base, head, keys=2)  # (two items of one lifecycle, as verify: a key's change shows)
    depth = depth if depth is not None else deepest(alphabet, LEDGER_BUDGET, DEFAULT_DEPTH)
    sides = (contract_module(base), contract_module(head))
    ids = id_style(head)
    moved: list[LedgerEvidence] = []
    checked = 0
    ledgers: list[tuple[str, list[dict[str, Any]]]] = [(f"scenario {scenario.name} after row {index}", [row for row, _ in scenario.rows[:index]])
                                                      for spec in (base, head) for scenario in spec.scenarios for index in range(1, len(scenario.rows) + 1)]
    ledgers += [(" ".join(alphabet.letter(symbol).name for symbol in word), rows_of(alphabet, word, head.rows.id, ids)) for word in alphabet.words(depth) if word]
    seen: set[bytes] = set()
    for label, rows in ledgers:  # the scenarios' prefixes first (a reviewer knows them), then every explored ledger
        encoded = tuple(msgspec.json.encode(row) for row in rows)
        if b"\n".join(encoded) in seen:
            continue
        seen.add(b"\n".join(encoded))
        # Each once more reopened where the caller expected one more row (what the offset check reads).
        for expected, said in ((None, label), (len(rows) + 1, f"{label} with expected high-water {len(rows) + 1}")):
            checked += 1
            outcomes = [_outcome(module, rows, expected) for module in sides]
            found = move(*outcomes)
            if found.change_class != NEUTRAL:
                moved.append(LedgerEvidence(said, encoded, outcomes[0], outcomes[1], found.change_class, why=found.why))
    evidence_class = strongest(item.effect for item in moved)
    changes = [_classed(change, evidence_class, moved) for change in changes]
    changes.sort(key=report_order)
    return Review(tuple(changes), tuple(moved), checked, depth, alphabet, language=True)


def _outcome(module: types.ModuleType, rows: list[dict[str, Any]], expected_high_water: int | None = None) -> Outcome:
    """A ledger's decision as core.moves compares it: refused (corrupt, or undecided: an expression failed on it),
    or the decision's word, reasons, diagnostics, each item's status and the rows replayed."""
    judged = judge(module, rows, expected_high_water)
    if judged.decision is None:
        where = f" at row {judged.row + 1}" if judged.row is not None else ""
        why = f"{(judged.refused or '').partition(':')[0]}{where}"
        return refusal(UNDECIDED if why.startswith("an expression failed") else CORRUPT, why)
    decision = judged.decision
    return Outcome(decision.decision, decision.proceeds, tuple(decision.reasons), tuple(d.code for d in decision.diagnostics),
                   tuple(item.status for item in decision.items), tuple(decision.replay))


def _classed(change: Change, evidence_class: str, moved: list[LedgerEvidence]) -> Change:
    first = next((item for item in moved if item.effect == evidence_class), None)
    shown = f"the ledgers: {witness_text(first, 'items')}" if first is not None else "no explored ledger decides differently"
    others = [next(item for item in moved if item.effect == name) for name in CLASSES if name != evidence_class and any(i.effect == name for i in moved)]
    shown += "".join(f"; also {item.effect}: {witness_text(item, 'items')}" for item in others)
    if change.change_class == BY_EVIDENCE:
        return dataclasses.replace(change, change_class=evidence_class, why=shown)
    if change.change_class == BREAKING_AT_LEAST:
        final = WEAKENS if evidence_class == WEAKENS else BREAKING
        return dataclasses.replace(change, change_class=final, why=f"rule: {rules.RULES[change.rule].meaning}, so consumers matching the old name break; {shown}")
    return dataclasses.replace(change, why=f"rule: {rules.RULES[change.rule].meaning}")


def _changes(base: LanguageSpec, head: LanguageSpec) -> list[Change]:
    changes: list[Change] = []

    def add(rule: rules.Rule, message: str, old: Any = None, new: Any = None, at: tuple[str, ...] = ()) -> None:
        # The whole base and head values go into the finding's fingerprint: a waiver accepts exactly this change.
        # `at`: the keys of the changed construct in spec/contract.yaml, found on each side (or what holds it).
        changes.append(Change(rule.id, rule.change_class, message, _where(base, at), _where(head, at), values=[_plain(old), _plain(new)]))

    _row_changes(base, head, add)
    old_classes, new_classes = {c.name: c for c in base.classes}, {c.name: c for c in head.classes}
    for name in sorted(set(old_classes) | set(new_classes)):
        if old_classes.get(name) != new_classes.get(name):
            add(rules.LANGUAGE_CLASS_CHANGED, f"class '{name}' {_how(old_classes.get(name), new_classes.get(name))}", old_classes.get(name), new_classes.get(name), ("classes", name))
    old_items, new_items = {i.name: i for i in base.items}, {i.name: i for i in head.items}
    for name in sorted(set(old_items) | set(new_items)):
        old, new = old_items.get(name), new_items.get(name)
        if old != new:
            rule = rules.LANGUAGE_ITEM_CHANGED if old is None or new is None or _without_text(old) != _without_text(new) else rules.LANGUAGE_REWORDED
            add(rule, f"item '{name}' {_how(old, new)}" + (f": {_item_detail(old, new)}" if old is not None and new is not None else ""), old, new, ("items", name))
    old_checks, new_checks = [(e.text, code) for e, code in base.decision.checks], [(e.text, code) for e, code in head.decision.checks]
    if old_checks != new_checks:
        add(rules.LANGUAGE_CHECK_CHANGED, f"decision.checks: {len(old_checks)} -> {len(new_checks)}, {sum(c not in old_checks for c in new_checks)} new or changed", old_checks, new_checks, ("decision", "checks"))
    if base.exclusive != head.exclusive:
        add(rules.LANGUAGE_CLASS_CHANGED, "the exclusive groups of classes changed", base.exclusive, head.exclusive, ("exclusive",))
    if base.replay != head.replay:
        add(rules.LANGUAGE_REPLAY_CHANGED, "replay.when changed", base.replay, head.replay, ("replay",))
    reported = {(item, said) for item in new_items for said, _ in new_items[item].report}
    for owner, said in sorted({(item, said) for item in old_items for said, _ in old_items[item].report} - reported):
        add(rules.LANGUAGE_NAME_CHANGED, f"item '{owner}': report {said} removed or renamed (plan --json's items say it no more)", old_items[owner].report, None, ("items", owner, "report"))
    if base.decision.offset_mismatch != head.decision.offset_mismatch:
        add(rules.LANGUAGE_NAME_CHANGED, f"decision.offset_mismatch: {base.decision.offset_mismatch} -> {head.decision.offset_mismatch}", at=("decision", "offset_mismatch"))
    if (base.decision.proceed, base.decision.stop) != (head.decision.proceed, head.decision.stop):
        add(rules.LANGUAGE_WORDS_CHANGED, f"decision words {base.decision.proceed}/{base.decision.stop} -> {head.decision.proceed}/{head.decision.stop}", at=("decision", "proceed" if base.decision.proceed != head.decision.proceed else "stop"))
    _names(base, head, add)
    _scenarios(base, head, add)
    if base.summary != head.summary or base.name != head.name or base.phase != head.phase:
        add(rules.LANGUAGE_REWORDED, "the contract's name, phase or summary changed", (base.name, base.phase, base.summary), (head.name, head.phase, head.summary), ("summary",))
    return changes


def _row_changes(base: LanguageSpec, head: LanguageSpec, add: Any) -> None:
    if base.rows.unknown_keys == "reject" and head.rows.unknown_keys == "ignore":
        add(rules.LANGUAGE_UNKNOWN_KEYS_READ, "rows.unknown_keys: reject -> ignore", at=("rows", "unknown_keys"))
    if base.rows != head.rows:
        moved = [name for name in ("id", "run", "tag", "partial", "unknown_keys", "layout", "fields", "kinds") if getattr(base.rows, name) != getattr(head.rows, name)]
        add(rules.LANGUAGE_ROWS_CHANGED if _without_text(base.rows) != _without_text(head.rows) else rules.LANGUAGE_REWORDED, f"rows changed: {', '.join(moved)}", base.rows, head.rows, ("rows", *moved[:1]))
    if base.rows.layout != head.rows.layout:  # (no decision moves: where audits look for runs does)
        add(rules.LANGUAGE_NAME_CHANGED, f"rows.layout: {base.rows.layout} -> {head.rows.layout}", at=("rows", "layout"))
    if base.semantics != head.semantics:
        add(rules.SEMANTICS_CHANGED, f"semantics: {base.semantics} -> {head.semantics}", at=("semantics",))


def _names(base: LanguageSpec, head: LanguageSpec, add: Any) -> None:
    old = {code: (reason, message) for code, reason, message in base.decision.diagnostics}
    new = {code: (reason, message) for code, reason, message in head.decision.diagnostics}
    for code in sorted(set(old) | set(new)):
        if code not in new:
            add(rules.LANGUAGE_NAME_CHANGED, f"diagnostic '{code}' removed", old[code], None, ("decision", "diagnostics", code))
        elif code not in old:
            add(rules.LANGUAGE_NAME_ADDED, f"diagnostic '{code}' added (reason {new[code][0]})", None, new[code], ("decision", "diagnostics", code))
        elif old[code][0] != new[code][0]:
            add(rules.LANGUAGE_NAME_CHANGED, f"diagnostic '{code}': reason {old[code][0]} -> {new[code][0]}", old[code], new[code], ("decision", "diagnostics", code))
        elif old[code][1] != new[code][1]:
            add(rules.LANGUAGE_REWORDED, f"diagnostic '{code}': message reworded", old[code], new[code], ("decision", "diagnostics", code))
    old_reasons, new_reasons = dict(base.decision.reasons), dict(head.decision.reasons)
    for reason in sorted(set(old_reasons) | set(new_reasons)):
        if reason not in new_reasons:
            add(rules.LANGUAGE_NAME_CHANGED, f"reason '{reason}' removed", old_reasons[reason], None, ("decision", "reasons", reason))
        elif reason not in old_reasons:
            add(rules.LANGUAGE_NAME_ADDED, f"reason '{reason}' added", None, new_reasons[reason], ("decision", "reasons", reason))
        elif old_reasons[reason] != new_reasons[reason]:
            add(rules.LANGUAGE_REWORDED, f"reason '{reason}': meaning reworded", old_reasons[reason], new_reasons[reason], ("decision", "reasons", reason))
    if [r for r in old_reasons if r in new_reasons] != [r for r in new_reasons if r in old_reasons]:
        add(rules.REASONS_REORDERED, "reasons listed in another order", list(old_reasons), list(new_reasons), ("decision", "reasons"))


def _scenarios(base: LanguageSpec, head: LanguageSpec, add: Any) -> None:
    """A scenario added, removed, or whose rows or decisions changed: what it says after each row that moved."""
    old, new = {s.name: s for s in base.scenarios}, {s.name: s for s in head.scenarios}
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        if before == after or (before is not None and after is not None and _without_text(before) == _without_text(after)):
            continue
        if before is None or after is None:
            add(rules.LANGUAGE_SCENARIO_CHANGED, f"scenario '{name}' {_how(before, after)}", before, after, ("scenarios", name))
            continue
        said = [f"after row {index}: {_expect_text(then_before)} -> {_expect_text(then_after)}"
                for index, ((row_before, then_before), (row_after, then_after)) in enumerate(zip(before.rows, after.rows), 1)
                if row_before == row_after and then_before != then_after]
        if [row for row, _ in before.rows] != [row for row, _ in after.rows]:
            said.append(f"rows {len(before.rows)} -> {len(after.rows)}, some changed")
        add(rules.LANGUAGE_SCENARIO_CHANGED, f"scenario '{name}' says another decision: {'; '.join(said) or 'its start'}", before, after, ("scenarios", name))


def _expect_text(expect: Any) -> str:
    if expect.corrupt:
        return "corrupt"
    return expect.decision + (f" [{', '.join(expect.reasons)}]" if expect.reasons else "")


def _how(old: Any, new: Any) -> str:
    return "added" if old is None else "removed" if new is None else "changed"


def _item_detail(old: Any, new: Any) -> str:
    parts = []
    if old.key_texts != new.key_texts:
        parts.append(f"key `{' / '.join(old.key_texts)}` -> `{' / '.join(new.key_texts)}`")
    if old.initial != new.initial:
        parts.append(f"initial {old.initial} -> {new.initial}")
    old_states, new_states = {s.name for s in old.states}, {s.name for s in new.states}
    if new_states - old_states:
        parts.append(f"states added: {', '.join(sorted(new_states - old_states))}")
    if old_states - new_states:
        parts.append(f"states removed: {', '.join(sorted(old_states - new_states))}")
    old_by_name, new_by_name = {s.name: s for s in old.states}, {s.name: s for s in new.states}
    for name in sorted(old_states & new_states):
        moved = [f"{field} {getattr(old_by_name[name], field)} -> {getattr(new_by_name[name], field)}"
                 for field in ("status", "at_end", "replay_opener") if getattr(old_by_name[name], field) != getattr(new_by_name[name], field)]
        if moved:
            parts.append(f"state {name}: {', '.join(moved)}")
        elif old_by_name[name] != new_by_name[name]:
            parts.append(f"state {name} reworded")
    if not parts and [s.name for s in old.states] != [s.name for s in new.states]:
        parts.append("states listed in another order")
    if old.entries != new.entries:
        gone, came = [e for e in old.entries if e not in new.entries], [e for e in new.entries if e not in old.entries]
        listed = [f"- {_entry_text(e)}" for e in gone] + [f"+ {_entry_text(e)}" for e in came]
        shown = ", ".join(listed[:4]) + (f", and {len(listed) - 4} more" if len(listed) > 4 else "")
        parts.append(f"entries ({len(old.entries)} -> {len(new.entries)}): {shown}" if listed else "entries reordered")
    if [name for name, _ in old.report] != [name for name, _ in new.report] or old.report != new.report:
        parts.append(f"report [{', '.join(name for name, _ in old.report)}] -> [{', '.join(name for name, _ in new.report)}]")
    return "; ".join(parts) or "reworded"


def _entry_text(entry: Any) -> str:
    """An entry as a reviewer reads it: `observation from in_doubt when `row.error == null`: to succeeded`."""
    when = f" when `{entry.when.text}`" if entry.when is not None else ""
    said = (f"anomaly {entry.anomaly}" if entry.anomaly else "", f"to {entry.to}" if entry.to else "", f"corrupt ({entry.corrupt})" if entry.corrupt else "")
    outcome = ", ".join(part for part in said if part)
    return f"{entry.row_class} from {'/'.join(entry.sources)}{when}: {outcome}"


def _where(spec: LanguageSpec, at: tuple[str, ...]) -> Mark:
    """Where the keys `at` stand in the spec (the nearest of them there is; the file's first line at worst)."""
    marks = spec.key_marks or {}
    path = at
    while path and path not in marks:
        path = path[:-1]
    return marks.get(path) or Mark(LANGUAGE_SPEC, 1, 1)


def _plain(value: Any) -> Any:
    """A model value as plain JSON data, for a finding's fingerprint: the same on every run and machine (an
    expression by its text: what the generator compiles it to is the tool's, not the change's)."""
    if isinstance(value, Expr):
        return value.text
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    return value


def _without_text(value: Any) -> Any:
    """A model value with its descriptions blanked: what decides, not what explains."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _without_text(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if "description" in changes:
            changes["description"] = ""
        return dataclasses.replace(value, **changes)
    if isinstance(value, tuple):
        return tuple(_without_text(item) for item in value)
    return value
