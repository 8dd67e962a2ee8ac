"""A large ledger planned in parts on several cores (`parts`), their walks handed back through a spill file
(`spill`). Opt-in (`plan --jobs N`): it forks, and it only changes how long a plan takes, never what it says."""
