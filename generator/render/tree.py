"""Render the validated Spec into `{relative path: text}`, in memory. Nothing here touches the disk.

Each output has one template and a context (`contexts.py`), every value already a literal (`literals.py`),
so templates only place text. Headers are added last, over the finished body.
"""

from __future__ import annotations

import ast
import json

from ..environment import ENVIRONMENT as _ENVIRONMENT
from ..spec.model import Spec
from ..spec.schema_check import check_schema
from .contexts import template_contexts
from .headers import with_header

GENERATED_DIR = "generated"


def render_all(spec: Spec) -> dict[str, str]:
    """Every generated file, keyed by its path relative to the project root, each already proven to parse."""
    outputs: dict[str, str] = {}
    for relative, template, context in template_contexts(spec):
        body = _ENVIRONMENT.get_template(template).render(**context)
        text = with_header(relative, body, spec)
        if relative.endswith(".py"):
            ast.parse(text, filename=relative)
        elif relative.endswith(".json"):
            check_schema(json.loads(text))
        outputs[f"{GENERATED_DIR}/{relative}"] = text
    return dict(sorted(outputs.items()))
