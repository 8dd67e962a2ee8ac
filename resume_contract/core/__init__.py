"""The pure core: the wire model, the projector table, the plan's types, the walk and the in-memory projection,
the operation store, plan summaries and JSON, exploration, the invariants and the independent oracle.

No files, no processes, and never the generated package: a table and a wire model are handed in. Imports
nothing of resume-contract but its errors; the generator imports this core and nothing else of the runtime.
"""
