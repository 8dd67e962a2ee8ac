"""An expression of a spec file compiled where it stands: its errors at the file's line and column, and the compiled
source as a function for the situations the generator runs before it writes code (the generated modules hold the
same source, as a `def`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from resume_contract.core import expressions as runtime

from ..errors import SpecError
from ..expr import Environment, compile_at
from ..expr.types import Type
from .loader import LoadedFile, SpecPath


class Compiled(tuple[str, str, Type]):
    """(the expression's text, the Python it compiles to, its type)."""


def compiled(file: LoadedFile, path: SpecPath, env: Environment, errors: list[SpecError], *, condition: bool = False) -> Compiled | None:
    """The expression at `path`, compiled in `env`; None when it is wrong, with the error added to `errors`."""
    text = file.value(path)
    result = compile_at(text, env, file.origin(path), condition=condition)
    if isinstance(result, SpecError):
        errors.append(result)
        return None
    return Compiled((text, result.source, result.type))


def function_of(source: str, parameters: tuple[str, ...]) -> Callable[..., Any]:
    """The compiled source as a function of `parameters`. The source is the expression compiler's own output (it
    calls nothing but the `_x` helpers and `any`/`all`), never a spec's text."""
    namespace: dict[str, Any] = {"_x": runtime, "__builtins__": {"any": any, "all": all}}
    exec(f"def function({', '.join(parameters)}):\n    return {source}\n", namespace)  # the compiler's output, never spec text
    return namespace["function"]
