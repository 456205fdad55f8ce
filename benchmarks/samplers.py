"""The exact-HMC kernels of an earlier commit against the working tree's, side by side.

Usage::

    python benchmarks/samplers.py --base 357c894 [--splits 100] [--repeats 3]

Runs ``score_splits`` of model lr (the paper's rule: on a separable training set the error
averaged over sampled hyperplanes) on the run splits (seed 0) of the binary tasks the
Figure 1 run samples most (promoters, sonar, lymphography, ionosphere) and of
optdigits-10 (K = 10), and records the arguments of every call of the two compiled
samplers (``kernels.hmc.run_chains``, ``kernels.hmc_multi.run_cone_chains``). Then, in one
process with BLAS on one thread, it calls the kernels of ``--base`` (``git show``) and the
current ones on those same arguments, alternately, ``--repeats`` times (the first call of
each is a warm-up: numba compiles), and prints per (task, m) the bounces, the CPU seconds
of both, their ratio and whether their outputs -- the kept positions and the bounce counts
-- are bit-identical. The multi kernel is also run once without its Gram matrix (rows made
per bounce, as for m above ``cone_hmc.gram_rows``). Nothing here asserts a timing; the
script exits 1 if any output differs. A base from before the K-class sampler ran on the
weight matrices summing to 0 (no ``sum_zero.py`` in ``nbvslr/models/lr``, or in
``nbvslr/models`` before the models were grouped by family) takes other arguments and draws
from another law: its K-class kernel is left out (``benchmarks/cone_sampler.py`` compares
the two samplers).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: make ``nbvslr`` importable
    sys.path.insert(0, str(REPO))

import nbvslr.kernels.hmc as now_hmc  # noqa: E402
import nbvslr.kernels.hmc_multi as now_multi  # noqa: E402
from nbvslr.data import DataSettings, TaskSpec, load_task  # noqa: E402
from nbvslr.models import ModelSpec, resolve_options, score_splits  # noqa: E402
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

CLOCK = time.process_time
#: (task, sizes): separable at every split, so every split is sampled.
PLAN = (("promoters", (52, 97)), ("sonar", (102,)), ("lymphography", (72,)),
        ("ionosphere", (100,)), ("optdigits-10", (50, 200, 500)))


def load_kernels(commit: str, folder: Path) -> tuple[Any, Any]:
    """``kernels.hmc`` and ``kernels.hmc_multi`` as they were at ``commit``; the multi one
    imports the binary one of that commit (if it imports it at all)."""
    modules = []
    for path, name in (("nbvslr/kernels/hmc.py", "base_hmc"),
                       ("nbvslr/kernels/hmc_multi.py", "base_hmc_multi")):
        source = subprocess.run(["git", "-C", str(REPO), "show", f"{commit}:{path}"],
                                check=True, capture_output=True, text=True).stdout
        source = source.replace("from nbvslr.kernels.hmc import", "from base_hmc import")
        file = folder / f"{name}.py"
        file.write_text(source)
        spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        modules.append(module)
    return modules[0], modules[1]


def record_calls(n_splits: int) -> list[tuple[str, int, str, list[Any]]]:
    """``(task, m, kernel, arguments)`` of every sampler call of the plan's runs."""
    calls: list[tuple[str, int, str, list[Any]]] = []
    where: list[Any] = [None, None]

    def recorder(fn, kernel):
        def call(*args):
            calls.append((*where, kernel, [a.copy() if isinstance(a, np.ndarray) else a
                                           for a in args]))
            return fn(*args)
        return call

    saved = now_hmc.run_chains, now_multi.run_cone_chains
    now_hmc.run_chains = recorder(saved[0], "binary")
    now_multi.run_cone_chains = recorder(saved[1], "K-class")
    spec = ModelSpec("lr", "lr", resolve_options("lr", "lr", {}))
    try:
        for task, sizes in PLAN:
            data = load_task(TaskSpec(task), DataSettings())
            for m in sizes:
                where[:] = [task, m]
                draw, seeds = split_seeds(0, data.name, m, range(n_splits))
                idx = draw_train_sets(np.asarray(data.y), m, draw)
                score_splits(spec, data, idx, seeds)
    finally:
        now_hmc.run_chains, now_multi.run_cone_chains = saved
    return calls


def run(fn, args: list[Any]) -> tuple[float, np.ndarray, np.ndarray]:
    """CPU seconds of one kernel call on fresh copies of its arguments (the K-class kernel
    sorts its Gram matrices in place), and its outputs."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    args[-2] = np.full_like(args[-2], np.nan)  # kept
    args[-1] = np.zeros_like(args[-1])  # events
    t0 = CLOCK()
    fn(*args)
    return CLOCK() - t0, args[-2], args[-1]


def compare(base_fn, now_fn, args: list[Any], repeats: int) -> tuple[float, float, bool, int]:
    """Both kernels on the same arguments, alternately: CPU seconds of each (warm-up call
    left out), whether every output was identical, the bounces."""
    t_base = t_now = 0.0
    same = True
    bounces = 0
    for rep in range(max(2, repeats)):
        order = ((0, base_fn), (1, now_fn)) if rep % 2 == 0 else ((1, now_fn), (0, base_fn))
        out = {}
        for which, fn in order:
            out[which] = run(fn, args)
        if rep > 0:
            t_base += out[0][0]
            t_now += out[1][0]
        same &= np.array_equal(out[0][1], out[1][1]) and np.array_equal(out[0][2], out[1][2])
        bounces = int(out[0][2].sum())
    return t_base, t_now, same, bounces


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the earlier commit")
    ap.add_argument("--splits", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3, help="calls of each kernel (>= 2)")
    args = ap.parse_args()
    sum_zero = any(subprocess.run(["git", "-C", str(REPO), "cat-file", "-e",
                                   f"{args.base}:nbvslr/models/{path}"],
                                  capture_output=True).returncode == 0
                   for path in ("lr/sum_zero.py", "sum_zero.py"))  # by family, or flat
    with threadpool_limits(1), tempfile.TemporaryDirectory() as tmp:
        base_hmc, base_multi = load_kernels(args.base, Path(tmp))
        calls = record_calls(args.splits)
        rows: dict[tuple[str, int, str], list[float]] = {}
        all_same = True
        for task, m, kernel, call_args in calls:
            if kernel == "binary":
                fns = base_hmc.run_chains, now_hmc.run_chains
            elif not sum_zero:
                continue
            else:
                fns = base_multi.run_cone_chains, now_multi.run_cone_chains
            variants = [("", call_args)]
            if kernel == "K-class" and m == 200:
                no_gram = list(call_args)
                no_gram[3] = np.empty((call_args[0].shape[0], 0, 0))
                variants.append((" (no Gram)", no_gram))
            for label, a in variants:
                t_base, t_now, same, bounces = compare(*fns, a, args.repeats)
                row = rows.setdefault((task, m, kernel + label), [0.0, 0.0, 0, True])
                row[0] += t_base
                row[1] += t_now
                row[2] += bounces
                row[3] = row[3] and same
                all_same &= same
    n = max(2, args.repeats) - 1
    print(f"kernels of {args.base} (base) against the working tree (now); {args.splits} "
          f"splits; CPU seconds summed over {n} call(s) of each")
    print(f"{'task':14s} {'m':>4s} {'kernel':18s} {'bounces':>9s} {'base s':>8s} "
          f"{'now s':>8s} {'now/base':>8s}  identical")
    totals: dict[str, list[float]] = {}
    for (task, m, kernel), (tb, tn, bounces, same) in rows.items():
        print(f"{task:14s} {m:4d} {kernel:18s} {int(bounces):9d} {tb:8.3f} {tn:8.3f} "
              f"{tn / max(tb, 1e-12):8.3f}  {same}")
        if "no Gram" not in kernel:
            total = totals.setdefault(kernel, [0.0, 0.0])
            total[0] += tb
            total[1] += tn
    for kernel, (tb, tn) in totals.items():
        print(f"{'all':14s} {'':4s} {kernel:18s} {'':9s} {tb:8.3f} {tn:8.3f} "
              f"{tn / max(tb, 1e-12):8.3f}")
    if not sum_zero:
        print(f"K-class kernel left out: {args.base} samples the reference-class form "
              "(benchmarks/cone_sampler.py compares the samplers)")
    print("outputs bit-identical:", all_same)
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
