"""A contract project: a repository holding its own `spec/` and `generated/` (and, by the spec's say, its run
loop and oracle). `locate` finds the project a command runs in and loads its contract, refusing one whose
generated/ has drifted from its spec; `init` makes a new project from the contract packaged with this
installation. Above the generator (a sync check renders the spec); below the command line."""
