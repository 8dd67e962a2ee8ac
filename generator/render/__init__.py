"""Rendering: each generated file's template context (`contexts`, every value a literal), the tree as `{path:
text}` (`tree`), the header on each file (`headers`), the row schema (`row_schema`), and drift and the
all-or-nothing write (`outputs`). Reads the spec model; never the review."""
