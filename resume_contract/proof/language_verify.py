"""`verify` for a contract in the contract language: every ledger up to a depth over the contract's alphabet
(generator/language/alphabet.py, two values for each key so that two items of one lifecycle interleave), decided
by the contract and by the project's own oracle (`oracle:` in spec/contract.yaml: a Python file defining
`decide(rows)`, written from the contract's prose, not from its YAML). A ledger the two decide differently, or one
the oracle does not judge (it raises, or returns no decision), fails it, as does one the contract cannot judge (an
expression fails on it: `plan` would exit 2); the smallest is reported.

The oracle answers `{"decision": WORD, "reasons": [...]}` (and, if it wants them compared, `items` as
`item/key=status` and `replay` as event ids) or `{"corrupt": true}`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import msgspec

from ..errors import ResumeContractError


class NoOracle(ResumeContractError):
    """The contract names no oracle to verify it against."""


class Disagreement(msgspec.Struct, frozen=True):
    rows: list[dict[str, Any]]
    contract: dict[str, Any]
    oracle: Any


class LanguageVerified(msgspec.Struct):
    explored: int = 0
    disagreements: int = 0
    unjudged: int = 0
    first: Disagreement | None = None
    letters: list[str] = msgspec.field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return bool(self.disagreements or self.unjudged)


def verify_language(root: Path, module: Any, depth: int, on_start: Any = None) -> LanguageVerified:
    """Raises NoOracle, SpecInvalid, and what loading the oracle raises (ProjectFileRefused, OSError, SyntaxError).
    `on_start(letters, ledgers)` is told what will be explored before it is."""
    from resume_contract_generator.language import load_language
    from resume_contract_generator.language.alphabet import alphabet_of, id_style, rows_of
    from resume_contract_generator.language.run import judge
    from resume_contract_generator.spec.oracle_file import load_project_module

    from ..core.language import outcome

    spec = load_language(root)
    if spec.oracle is None:
        raise NoOracle("the contract names no oracle: add `oracle: oracle.py` to spec/contract.yaml, a file defining decide(rows) written from the contract's prose")
    if not (root / spec.oracle).is_file():
        raise NoOracle(f"spec/contract.yaml names the oracle {spec.oracle!r}, which is not a file of the project")
    try:
        oracle = load_project_module(root, spec.oracle, "oracle").decide
    except (Exception, SystemExit) as error:  # (an oracle that exits while it loads verifies nothing: refused)
        raise NoOracle(f"the oracle {spec.oracle} could not be loaded: {type(error).__name__}: {error}") from None
    alphabet = alphabet_of(spec, spec, keys=2)
    result = LanguageVerified(letters=[letter.name for letter in alphabet.letters])
    if on_start is not None:
        on_start(result.letters, alphabet.count(depth))
    started = time.perf_counter()
    ids = id_style(spec)  # (written as the contract's scenarios write them: an oracle reads ids as the runtime does)
    for word in alphabet.words(depth):
        rows = rows_of(alphabet, word, spec.rows.id, ids)
        judged = judge(module, rows)
        if judged.decision is not None:
            ours: dict[str, Any] = outcome(judged.decision) | {"replay": list(judged.decision.replay)}
        elif (judged.refused or "").startswith("an expression failed"):  # (no decision at all: `plan` exits 2)
            ours = {"undecided": judged.refused}
        else:
            ours = {"corrupt": True}
        result.explored += 1
        try:
            theirs = oracle([dict(row) for row in rows])
        except (Exception, SystemExit) as error:  # noqa: BLE001 - reported, as a ledger it did not judge (an exit too)
            theirs = f"raised {type(error).__name__}: {error}"
        if not _judged(theirs):
            result.unjudged += 1
        elif _agree(ours, theirs):
            continue
        else:
            result.disagreements += 1
        if result.first is None:
            result.first = Disagreement(rows, ours, theirs)
    result.seconds = time.perf_counter() - started
    return result


def _judged(answer: Any) -> bool:
    return isinstance(answer, dict) and (answer.get("corrupt") is True or isinstance(answer.get("decision"), str))


def _agree(ours: dict[str, Any], theirs: dict[str, Any]) -> bool:
    if "undecided" in ours:
        return False  # the contract cannot judge the ledger: whatever the oracle says, the contract is wrong
    if theirs.get("corrupt") is True or "corrupt" in ours:
        return theirs.get("corrupt") is True and "corrupt" in ours
    compared = ["decision", "reasons", *(key for key in ("items", "replay") if key in theirs)]
    return all(ours[key] == (list(theirs[key]) if isinstance(theirs.get(key), (list, tuple)) else theirs.get(key)) for key in compared)
