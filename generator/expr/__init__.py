"""The contract language's expressions (docs/expressions.md): parse, type-check and compile to Python source.

    compiled = compile_at(text, environment, origin)   # Compiled(source, type), or SpecError at file:line:col

Layers, one direction: grammar -> parse -> types -> calls/compile -> this. The generator writes `source` into
generated/, where it runs against resume_contract.core.expressions (imported there as `_x`); nothing of this
package runs at run time.
"""

from __future__ import annotations

from ..errors import Mark, SpecError
from .compile import Compiled, ExpressionError, compile_condition, compile_text
from .parse import Origin
from .types import Environment, Type, declared


def compile_at(text: object, env: Environment, origin: Origin, condition: bool = False) -> Compiled | SpecError:
    """`text` compiled in `env`; or the error, at the spec file's line and column of the node that is wrong."""
    if not isinstance(text, str):
        return SpecError(Mark(origin.file, origin.line, origin.column), f"an expression is text, not {type(text).__name__}")
    try:
        return (compile_condition if condition else compile_text)(text, env)
    except ExpressionError as error:
        line, column = origin.place(error.at)
        return SpecError(Mark(origin.file, line, column), f"in `{_shown(text)}`: {error.message}")


def _shown(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= 60 else one_line[:57] + "..."


__all__ = ["Compiled", "Environment", "Origin", "Type", "compile_at", "declared"]
