"""A machine's first run compiles the numba loops once and says so in one line; the next
run, with the same cache, says nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_first_run_says_it_compiles_once_second_run_does_not(tmp_path):
    """An empty NUMBA_CACHE_DIR: one "compiling" line on the first run, none on the second."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    said = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "nbvslr", "run", "pima", "--splits", "2", "--jobs", "2",
             "--out", str(tmp_path / "out"), "--force"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        said.append(sum("compiling nbvslr's numerical loops" in line
                        for line in done.stderr.splitlines()))
    assert said == [1, 0]
    assert list((tmp_path / "numba").glob("nbvslr-kernels-*.compiled"))
