"""Start-up time of ``nbvslr --help``, ``--version``, ``configs``, ``datasets`` and ``import
nbvslr`` (the first four's target: 0.2 s each): this tree against a reference
tree (another checkout, e.g. ``git archive <commit> | tar -x -C /tmp/base``), measured in
the same run, interleaved, the median of ``--repeat`` runs each; prints the ratios.

    python benchmarks/startup.py --reference /tmp/base --repeat 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "nbvslr --help": ["-m", "nbvslr", "--help"],
    "nbvslr --version": ["-m", "nbvslr", "--version"],
    "nbvslr configs": ["-m", "nbvslr", "configs"],
    "nbvslr datasets": ["-m", "nbvslr", "datasets"],
    "import nbvslr": ["-c", "import nbvslr"],
}


def _seconds(tree: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=tree, env=env, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, required=True, help="the reference tree")
    ap.add_argument("--repeat", type=int, default=9)
    opts = ap.parse_args()
    for name, args in COMMANDS.items():
        ours, ref = [], []
        for _ in range(opts.repeat):
            ref.append(_seconds(opts.reference, args))
            ours.append(_seconds(ROOT, args))
        a, b = statistics.median(ours), statistics.median(ref)
        print(f"{name:17s} this tree {a * 1000:7.1f} ms   reference {b * 1000:7.1f} ms   "
              f"ratio {a / b:5.2f}")


if __name__ == "__main__":
    main()
