"""The peak memory of one work unit against the memory plan's estimate.

Usage::

    python benchmarks/memory_units.py

For a synthetic task (20 000 rows, 10 continuous features and, second, 10 discrete features
of 5 levels) and each model, it runs single units of S splits at size m, records the peak of
the traced allocations (``tracemalloc``, which sees numpy's arrays), and prints it as a
multiple of one ``(S, m, P)`` float64 stack and against ``nbvslr.runner.memory``'s estimate
of the unit (``unit_bytes``). The estimate must stay above every peak.
"""

from __future__ import annotations

import tracemalloc

from nbvslr.config import parse_config
from nbvslr.runner import memory
from nbvslr.runner.units import Unit, dataset_for, portable, run_unit


def main() -> None:
    print(f"{'data':<9} {'model':<5} {'m':>5} {'S':>4} {'peak MiB':>9} {'stacks':>7} "
          f"{'estimate MiB':>13}")
    for kind, extra in (("continuous", {}), ("discrete", {"kind": "discrete", "levels": 5})):
        raw = {"tasks": [{"name": "t", "source": {"synthetic": {
            "generator": "nb", "rows": 20_000, "features": 10, "seed": 0, **extra}}}],
            "sizes": [2], "splits": 10, "models": {"nb": {}, "lr": {}}}
        config = parse_config(raw)
        spec, settings = portable(config.tasks[0], config.data)
        data = dataset_for(spec, settings)
        shape = memory.task_shape("t", data, [2], config.models)
        for model in config.models:
            # the designs are built by the first unit and kept (loaded_bytes counts them)
            run_unit(Unit(task=spec, data=settings, models=(model,), seed=0, m=10, stop=2))
            for m in (100, 1000, 4000):
                for S in (20, 40):
                    unit = Unit(task=spec, data=settings, models=(model,), seed=0, m=m,
                                start=0, stop=S)
                    tracemalloc.start()
                    run_unit(unit)
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                    stack = 8.0 * S * m * shape.width
                    print(f"{kind:<9} {model.name:<5} {m:>5} {S:>4} {peak / 2**20:>9.1f} "
                          f"{peak / stack:>7.2f} {memory.unit_bytes(shape, m, S) / 2**20:>13.1f}")


if __name__ == "__main__":
    main()
