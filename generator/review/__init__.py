"""The review (`resume-contract diff`): the rules and their classes (`rules`), the collector that finds each
change (`collector`, with `projector`, `wire`, `renames`, `text`), the ledgers that moved (`evidence`), waivers
(`waivers`), a side read from git or a directory (`source`), and the report (`report`)."""
