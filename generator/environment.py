"""The one Jinja environment every template renders through (strict, whitespace-exact, no autoescape)."""

from __future__ import annotations

import jinja2

ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("resume_contract_generator", "templates"),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)
