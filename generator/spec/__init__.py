"""The spec: files read with line marks (`loader`, `files`, `schema_check`), built and cross-checked into the
frozen `model.Spec` (`wire_spec`, `build`, `*_check`, `contradictions`; `validate.load_spec` runs the passes),
and what the runtime runs derived from it (`tables`, `decoder`). Imports nothing of render/ or review/."""
