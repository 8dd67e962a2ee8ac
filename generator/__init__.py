"""resume-contract's generator: spec/*.yaml -> validated frozen model -> rendered files -> check or write.

The four stages live in four modules: `loader` (YAML with line marks), `spec_model` + `validate` (the frozen
model, or every error found), `render` (`{path: text}`, never the disk) and `outputs` (write all or nothing,
or check for drift). `cli` in the runtime package maps their exceptions to exit codes.
"""

# This directory is installed as `resume_contract_generator`; importing it as `generator` (from a checkout on
# sys.path) would give every module a second name and a second copy of its state.
if __name__ != "resume_contract_generator":
    raise ImportError(f"import this package as 'resume_contract_generator', not {__name__!r}")
