"""run.json's machine.blas is the same list whatever the process did before: numpy's and
scipy's BLAS, in a fixed order (compiling the numba loops in the process used to reorder it,
so a machine's first run and its later runs differed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
from nbvslr.runner.bookkeeping import machine_info
if sys.argv[1] == "compiled":
    from nbvslr.runner.warm import compile_all
    compile_all()  # what a machine's first run does in the calling process
print(json.dumps(machine_info()["blas"]))
"""


def _blas(after: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-c", PROBE, after], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={"PYTHONPATH": str(ROOT),
                                                       "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_machine_blas_is_the_same_after_compiling_the_loops():
    plain, compiled = _blas("plain"), _blas("compiled")
    assert plain == compiled
    assert len(plain) >= 1 and all(lib["internal_api"] for lib in plain)
    assert plain == sorted(plain, key=lambda lib: json.dumps(lib, sort_keys=True))
