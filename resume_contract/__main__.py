"""`python -m resume_contract` is the `resume-contract` command."""

from resume_contract.cli import run

run()
