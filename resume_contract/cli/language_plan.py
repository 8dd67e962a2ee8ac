"""`plan LEDGER` under a contract written in the contract language: its exit codes are the language's (0 the
contract's `proceed` word, 1 its `stop` word, 3 corruption, 2 usage)."""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from .errors import EXIT_FAIL, EXIT_OK, UsageError


def plan_language(args: argparse.Namespace, contract: Any, out: TextIO) -> int:
    if args.ledger is None:
        raise UsageError("a contract in the contract language plans a LEDGER file (its workspace layout is not declared yet)")
    if args.expected_high_water is not None:
        raise UsageError("--expected-high-water: this contract declares no offset check")
    from ..ledger.language_reader import plan_file

    path = args.ledger
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{path}: not a file")
    try:
        decision = plan_file(path, contract.module)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such ledger") from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    if args.json:
        import msgspec

        body = msgspec.to_builtins(decision)
        body["contract"] = contract.identity.as_json()
        out.write(msgspec.json.encode(body).decode() + "\n")
    else:
        from ..output.language_text import decision_text

        out.write(decision_text(path, decision, dict(contract.module.REASONS)))
        out.write(f"contract:      {contract.identity}; {contract.origin}\n")
    return EXIT_OK if decision.proceeds else EXIT_FAIL
