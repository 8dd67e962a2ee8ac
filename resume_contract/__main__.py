"""`python -m resume_contract` is the `resume-contract` command."""

import sys

from resume_contract.cli import main, run

if globals() is vars(sys.modules["__main__"]):  # `python -m`: the process's own program
    run()
raise SystemExit(main())  # run by runpy from another program, which may go on once it is done
