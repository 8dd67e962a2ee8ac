"""The contract language (docs/language.md): a contract written in one file, `spec/contract.yaml`, for any
runtime's rows. Load and check it into the frozen `LanguageSpec` (`load_language`), render it to generated/
(`render_language`). A project holding spec/contract.yaml is a language contract; one holding spec/projector.yaml
and its siblings is the packaged catalogue's (generator/spec/).
"""

from __future__ import annotations

from .build import LANGUAGE_FILE, is_language_project, load_language
from .model import LanguageSpec
from .render import render_language

__all__ = ["LANGUAGE_FILE", "LanguageSpec", "is_language_project", "load_language", "render_language"]
