"""Proving the generated projector: `verify` (bounded model checking over every small ledger, on all cores) and
`reference` (the plan computed by the generated python-statemachine class itself)."""
