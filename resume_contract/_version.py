"""The version of resume-contract, written here once: pyproject.toml reads it (`[tool.setuptools.dynamic]`), so the
installed distribution's metadata says the same, and `--version` needs no `importlib.metadata` (~80 ms)."""

__version__ = "0.2.0"
