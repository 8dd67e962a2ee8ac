"""resume-contract's generator: spec/*.yaml -> validated frozen model -> rendered files -> check or write.

    spec/      load (YAML with line marks), validate in three passes, freeze into `Spec` (with the projector
               table and the decoding model built from it once)
    render/    `{path: text}` in memory (contexts, literals, headers), then drift or an all-or-nothing write
    review/    `diff`: every semantic change between two specs, classified by safety, with ledger evidence
    pipeline   the whole job, one entry point per command (`load_checked`, `check`, `generate`, `review_change`)

One direction of dependency: pipeline -> review -> render -> spec -> (errors, environment, literals, hooks,
annotations). Of the runtime it imports only the pure core (`resume_contract.core`, and `resume_contract.errors`):
never the ledger, the crash harness, the command line or the generated package, so a broken generated/ never
stops `generate` from replacing it. The command line (`resume_contract.cli`) only parses, calls the pipeline,
prints and maps errors to exit codes.
"""

# This directory is installed as `resume_contract_generator`; importing it as `generator` (from a checkout on
# sys.path) would give every module a second name and a second copy of its state.
if __name__ != "resume_contract_generator":
    raise ImportError(f"import this package as 'resume_contract_generator', not {__name__!r}")
