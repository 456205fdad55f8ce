"""CPU of softmax lr's unpenalised fit per split, detection included.

Usage::

    python benchmarks/separation_multi_cost.py TASK M SPLITS

The run's training sets of size M (seed 0, as ``nbvslr run`` draws them), the ``lr`` entry's
fit with ``separable: l2`` (so that the separable-set sampler's cost stays out), timed by
process CPU, the median of three. To set it against an older tree, run the same command with
``PYTHONPATH`` pointing at that tree's ``nbvslr`` (``git archive REV nbvslr | tar -x -C DIR``),
one BLAS thread each. Nothing here asserts.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from nbvslr.data import DataSettings, TaskSpec, load_task
from nbvslr.models import ModelSpec, resolve_options
from nbvslr.models.design import get_design
from nbvslr.models.registry import lookup
from nbvslr.splits import draw_train_sets, split_seeds


def main() -> None:
    task, m, S = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    data = load_task(TaskSpec(task), DataSettings())
    spec = ModelSpec("lr", "lr", resolve_options("lr", "lr", {"separable": "l2"}))
    entry = lookup("lr", data.kind, True)
    design = get_design(data, entry.design(data, spec.options))
    draw, seeds = split_seeds(0, data.name, m, range(S))
    idx = draw_train_sets(np.asarray(data.y), m, draw)
    times = []
    for _ in range(3):
        t = time.process_time()
        fit = entry.fit(data, design, idx, spec.options, seeds)
        times.append(time.process_time() - t)
    print(f"{task} m = {m}, {S} splits: {1e3 * np.median(times) / S:.2f} ms a split "
          f"(median of 3), {fit.n_iter.mean():.1f} Newton-CG steps a split")


if __name__ == "__main__":
    main()
