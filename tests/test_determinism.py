"""The generator's output is byte-identical across runs and hash seeds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from resume_contract_generator.render.tree import render_all
from resume_contract_generator.spec.validate import load_spec

REPO = Path(__file__).resolve().parent.parent

_DUMP = """
import hashlib, sys
from pathlib import Path
from resume_contract_generator.render.tree import render_all
from resume_contract_generator.spec.validate import load_spec
for path, text in render_all(load_spec(Path(sys.argv[1]))).items():
    print(path, hashlib.sha256(text.encode()).hexdigest())
"""


def test_two_renders_in_one_process_are_identical() -> None:
    assert render_all(load_spec(REPO)) == render_all(load_spec(REPO))


def test_renders_under_two_hash_seeds_are_identical() -> None:
    outputs = []
    for seed in ("0", "1"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", _DUMP, str(REPO)], env=env, capture_output=True, text=True, check=True
        )
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\n") == len(render_all(load_spec(REPO)))


def test_the_committed_generated_files_are_the_golden_record_byte_for_byte() -> None:
    for relative, text in render_all(load_spec(REPO)).items():
        assert (REPO / relative).read_bytes() == text.encode("utf-8"), relative
