"""Holding any implementation to the contract: the protocol an adapter follows (`protocol`), the language-neutral
vectors made from a spec (`vectors`), and `conform`, which runs an implementation on each."""
