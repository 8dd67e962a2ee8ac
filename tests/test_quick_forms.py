"""The plain forms of `plan` and `repair` read without argparse give exactly the arguments argparse gives them,
and every other command line is left to argparse. Tool tests: no ledger is read."""

from __future__ import annotations

import pytest

from resume_contract.cli.parser import build_parser
from resume_contract.cli.quick_forms import quick_arguments

QUICK = [
    ["plan", "runtime-events.jsonl"],
    ["plan", "--json", "runtime-events.jsonl"],
    ["plan", "runtime-events.jsonl", "--json"],
    ["plan", "a dir/with spaces=and?.jsonl"],
    ["plan", "--json", "plan"],  # a ledger named like the command
    ["repair", "runtime-events.jsonl"],
    ["repair", "repair"],
]


@pytest.mark.parametrize("argv", QUICK, ids=" ".join)
def test_a_plain_form_is_read_as_argparse_reads_it(argv: list[str]) -> None:
    quick = quick_arguments(argv)
    assert quick is not None
    assert vars(quick) == vars(build_parser(argv).parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["plan"],
        ["plan", ""],  # empty: argparse takes it, and the command says why it is refused
        ["plan", "-"],
        ["plan", "--js", "x"],  # argparse's abbreviation of --json
        ["plan", "--json", "--json", "x"],
        ["plan", "--format", "json", "x"],
        ["plan", "--jobs", "2", "x"],
        ["plan", "x", "y"],
        ["plan", "--", "x"],
        ["plan", "-h"],
        ["plan", "--workspace", "w"],
        ["repair", "--json", "x"],  # repair has no --json: argparse's usage error
        ["repair", "x", "--json"],
        ["--root", "d", "plan", "x"],
        ["check"],
        ["planx", "x"],
    ],
    ids=repr,
)
def test_any_other_command_line_is_left_to_argparse(argv: list[str]) -> None:
    assert quick_arguments(argv) is None
