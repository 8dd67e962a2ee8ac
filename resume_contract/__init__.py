"""resume-contract's hand-written runtime: the RuntimeEvent model, the pure projection, the store and the CLI.

Every decision (codes, reasons, messages, transitions) comes from the generated package
`resume_contract_generated`; this package only interprets it.
"""
