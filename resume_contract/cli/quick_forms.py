"""The plainest forms of the commands people wait on, read without argparse: `plan LEDGER`, `plan --json LEDGER`
(or `--json` after it) and `repair LEDGER`. An on-call engineer, a script or an audit's caller runs these by the
thousand, and argparse (imported with gettext and locale, every parser built) is a tenth of such a plan's time.

Each form gives exactly the arguments argparse gives it (tests/test_quick_forms.py holds them equal, attribute by
attribute); any other command line, a help, an abbreviation or a typo included, is argparse's to read and report.
"""

from __future__ import annotations

from types import SimpleNamespace

# What the plan and repair parsers (cli.ledger_commands and cli.repair_command) leave unset in these forms.
_LEDGER_DEFAULTS = {"root": None, "workspace": None, "session": None, "run": None}
_PLAN_DEFAULTS = {"expected_high_water": None, "jobs": None}


def quick_arguments(argv: list[str]) -> SimpleNamespace | None:
    """The parsed arguments of one of the plain forms, or None (argparse reads the command line)."""
    if len(argv) < 2 or argv[0] not in ("plan", "repair"):
        return None
    command, words = argv[0], argv[1:]
    json = command == "plan" and words.count("--json") == 1
    if json:
        words = [word for word in words if word != "--json"]
    if len(words) != 1 or not words[0] or words[0].startswith("-"):
        return None  # an option, an empty LEDGER (argparse's, then the command's, message) or more than one word
    if command == "repair":
        from .repair_command import cmd_repair

        return SimpleNamespace(**_LEDGER_DEFAULTS, command=command, ledger=words[0], handler=cmd_repair)
    from .ledger_commands import cmd_plan

    return SimpleNamespace(
        **_LEDGER_DEFAULTS, **_PLAN_DEFAULTS, command=command, ledger=words[0], format="json" if json else "text", handler=cmd_plan
    )
