"""How fast nbvslr fits Figure 1, measured against the obvious per-split peer.

Usage::

    python benchmarks/bench.py            # full: every panel, 1000 splits, + a Figure-1 run
    python benchmarks/bench.py --quick    # CI smoke run (well under a minute)
    python benchmarks/bench.py --json out.json
    python benchmarks/bench.py --whole-only   # the whole-process runs alone (about 4 min)

For each (task, m) and model (nb, lr) it prints, per 1000 splits:

* ``ours``: one ``score_splits`` call on all splits (median of repeats);
* ``peer``: scikit-learn (GaussianNB / CategoricalNB, LogisticRegression) fitted and
  scored split by split, timed on the first splits within a budget and extrapolated
  (marked ``*``);
* ``loop``: our own core called one split at a time (S = 1), extrapolated the same way;
* the two speed-ups, the share of separable splits, the peak memory of the batched call
  (traced allocations), and how closely the peer's test errors agree with ours on the
  splits both ran (LR: non-separable splits only, where both fit the same maximum).

All per-panel timings run in one process with BLAS and OpenMP limited to one thread, peer
and core alike, and count this process's CPU time (``harness.CLOCK``: on a quiet machine the same as
wall time, on a shared one still the work done). Then the rate of LR's Newton steps on
adult-discrete (FLOPs counted from the shapes) against a one-thread matmul peak measured in
the same run; and, in full mode, a whole
Figure-1 run (all panels, 1000 splits, ``jobs = 2``) in a fresh process, with its wall time
and the peak resident memory of the process tree. The multiclass section
(``benchmarks/multiclass.py``): optdigits-10 and lymphography-4 against a per-split
scikit-learn loop (quick: one small line), and in full mode the whole
``configs/multiclass.yaml`` run at 1000 splits with ``jobs = 2``, its wall time and peak
memory. Then LDA and QDA against scikit-learn's per-split loop
(``benchmarks/discriminant.py``). Then the cost of measuring every metric (a run with
``metrics: [error, log_loss, brier, train_error]`` against ``[error]``,
``benchmarks/metrics.py``). Last, the text models on
sms-spam against a per-split scikit-learn loop (``benchmarks/text.py``, its quick mode in
quick).

Nothing here asserts a timing; a crash exits non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(REPO))

from benchmarks import discriminant, harness, multiclass, panels  # noqa: E402
from benchmarks import metrics as metrics_bench  # noqa: E402
from benchmarks import text as text_bench  # noqa: E402
from nbvslr.data.dataset import Dataset  # noqa: E402
from nbvslr.models import ModelSpec, resolve_options, score_splits  # noqa: E402
from nbvslr.models.budget import DEFAULT_BUDGET  # noqa: E402
from nbvslr.models.design import get_design  # noqa: E402
from nbvslr.models.lr.newton import fit_newton  # noqa: E402
from nbvslr.models.stacks import split_chunks  # noqa: E402
from nbvslr.splits import draw_train_sets, split_seeds  # noqa: E402

SEED = 0
#: Per-split loops (peer, our core at S = 1) stop after this many seconds per (task, m, model).
FULL_BUDGETS = {"peer": 2.0, "loop": 1.0}
QUICK_BUDGETS = {"peer": 5.0, "loop": 5.0}
#: Whole-process comparison: these tasks, this many splits per size (full mode).
WHOLE_TASKS = ("ionosphere", "adult-continuous")
WHOLE_SPLITS = 200


# --------------------------------------------------------------------------- what to measure
def model_specs() -> dict[str, ModelSpec]:
    """The paper's two models with default options (as ``configs/figure1.yaml``), and
    ``lr_l2``: LR with an L2 penalty (C = 1), the same work on both sides (no separable-set
    rule, a unique optimum), so its ratio is the speed of the batched fit itself."""
    specs = {
        f: ModelSpec(name=f, family=f, options=resolve_options(f, f, {})) for f in ("nb", "lr")
    }
    specs["lr_l2"] = ModelSpec(name="lr_l2", family="lr",
                               options=resolve_options("lr_l2", "lr", {"C": 1.0}))
    return specs


def representative_sizes(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The middle and the largest size of a panel's grid (the costly end of each curve)."""
    return tuple(sorted({sizes[len(sizes) // 2], sizes[-1]}))


def plan(quick: bool) -> list[tuple[str, tuple[int, ...]]]:
    """(task, sizes) pairs to measure."""
    if quick:
        return [("pima", (59,)), ("adult-discrete", (102,))]
    return [(p.name, representative_sizes(p.sizes)) for p in panels.PANELS]


def splits_of(data: Dataset, m: int, n_splits: int) -> tuple[np.ndarray, list]:
    """The run's training sets and model seeds for (task, m): ``(S, m)`` indices, S seeds."""
    draw, model = split_seeds(SEED, data.name, m, range(n_splits))
    return draw_train_sets(np.asarray(data.y), m, draw), model


# --------------------------------------------------------------------------- measurements
def agreement(
    ours: dict[str, np.ndarray], peer: list[float], family: str, penalised: bool = False
) -> dict[str, Any]:
    """Per-split test errors of the peer vs ours, on the splits the peer ran.

    Penalised LR (``penalised``) compares every split where our Newton converged. Plain LR
    compares only the splits that are not separable and where our Newton converged: there
    both fit the maximum likelihood (on separable ones we sample hyperplanes and the peer
    stops wherever its solver does). A quasi-separated split (a rare level seen in one
    class only) has no finite maximum either, and its test rows that combine two diverging
    weights can fall either way: expect differences there on the discrete tasks.
    """
    n = len(peer)
    mine = ours["error"][:n]
    keep = np.ones(n, dtype=bool)
    if family == "lr" and penalised:
        keep = ours["converged"][:n].copy()
    elif family == "lr":
        keep = ~ours["separable"][:n] & ours["converged"][:n]
    diff = np.abs(mine[keep] - np.asarray(peer)[keep])
    return {
        "compared": int(keep.sum()),
        "max_abs_diff": float(diff.max()) if diff.size else float("nan"),
        "mean_abs_diff": float(diff.mean()) if diff.size else float("nan"),
    }


def measure(
    data: Dataset, m: int, n_splits: int, spec: ModelSpec, *, peer_splits: int,
    loop_splits: int, budgets: dict[str, float], repeats: int,
) -> dict[str, Any]:
    """Time one model on one (task, m): ours, the peer loop, our per-split loop; memory."""
    idx, seeds = splits_of(data, m, n_splits)
    per_k = 1000.0 / n_splits
    score_splits(spec, data, idx[:2], seeds[:2])  # warm-up: builds and caches the design
    t_ours, times, out = harness.time_repeated(
        lambda: score_splits(spec, data, idx, seeds), repeats
    )
    loop = harness.time_loop(
        lambda i: score_splits(spec, data, idx[i : i + 1], seeds[i : i + 1])["error"][0],
        total=n_splits, budget=budgets["loop"], max_items=loop_splits,
    )
    nb_opts, lr_opts = (resolve_options(f, f, {}) for f in ("nb", "lr"))
    opts = dict(spec.options)
    if spec.family == "nb":
        nb_opts = opts
    else:
        lr_opts = opts
    peer_model = harness.PeerModel(
        data, spec.family, harness.PeerSettings.matching(nb_opts, lr_opts)
    )
    peer = harness.time_loop(
        lambda i: peer_model.error(idx[i]), total=n_splits, budget=budgets["peer"],
        max_items=peer_splits,
    )
    mem, _ = harness.traced_peak(lambda: score_splits(spec, data, idx, seeds))
    return {
        "task": data.name, "m": m, "model": spec.name, "splits": n_splits,
        "ours_s_per_1000": t_ours * per_k, "ours_times": times,
        "peer_s_per_1000": peer.seconds * per_k, "peer": peer.as_dict(),
        "loop_s_per_1000": loop.seconds * per_k, "loop": loop.as_dict(),
        "speedup_vs_peer": peer.seconds / t_ours, "speedup_vs_loop": loop.seconds / t_ours,
        "separable": float(out["separable"].mean()), "mean_n_iter": float(out["n_iter"].mean()),
        "mean_error": float(out["error"].mean()),
        "peer_mean_error": float(np.mean(peer.values)),
        "agreement": agreement(out, peer.values, spec.family,
                               penalised=spec.options.get("C") is not None),
        "peak_mib": mem,
    }


def newton_rate(data: Dataset, m: int, n_splits: int, peak: dict[str, float]) -> dict[str, Any]:
    """GFLOP/s of LR's batched Newton steps on (task, m), and its fraction of ``peak``.

    Times ``fit_newton`` on the same chunks of splits as ``score_splits`` (gathering the
    stacks included; the sampler and the test-set scoring excluded) and counts the FLOPs
    of the Newton steps each split took (``harness.newton_flops``, the cheaper of the
    primal and dual forms per step, so the rate is never flattered).
    """
    design = get_design(data, "onehot_ref" if data.kind == "discrete" else "x")
    idx, _ = splits_of(data, m, n_splits)
    P = design.n_params

    def run() -> np.ndarray:
        n_iter = np.empty(n_splits, dtype=np.int64)
        for sl in split_chunks(n_splits, 4 * 8.0 * m * P, DEFAULT_BUDGET.stacks):
            res = fit_newton(
                design.rows(idx[sl]), design.sign[idx[sl]], stop_when_separable=True
            )
            n_iter[sl] = res.n_iter
        return n_iter

    run()  # warm-up
    t, _, n_iter = harness.time_repeated(run, 3)
    flops = harness.newton_flops(m, P, n_iter)
    rate = flops["useful"] / t / 1e9
    return {
        "task": data.name, "m": m, "width": P, "splits": n_splits, "seconds": t,
        "mean_n_iter": float(n_iter.mean()), "gflop": flops["useful"] / 1e9,
        "gflops": rate, "peak_gflops": peak["peak"], "fraction": rate / peak["peak"],
    }


# --------------------------------------------------------------------------- the sampler
def sampler_cost(data: Dataset, m: int, n_splits: int, peak: dict[str, float]) -> dict[str, Any]:
    """Time per separable split of the HMC sampler alone, against its FLOP floor.

    The separable splits of (task, m) and their Newton separators come from ``fit_newton``
    (untimed); ``sample_separating_hmc`` with the default options is timed on them (median
    of 3), and its bounces are counted (``bounces=``). The floor is
    ``harness.hmc_floor_flops`` at the one-thread matmul peak ``peak``.
    """
    from nbvslr.models.lr.hmc import sample_separating_hmc

    design = get_design(data, "onehot_ref" if data.kind == "discrete" else "x")
    idx, seeds = splits_of(data, m, n_splits)
    Z1, sign = design.rows(idx), design.sign[idx]
    res = fit_newton(Z1, sign, stop_when_separable=True)
    sep = np.flatnonzero(res.separable)
    if not sep.size:
        return {}
    opts = resolve_options("lr", "lr", {})
    kw = {k: opts[f"mcmc_{k}"] for k in ("chains", "draws", "burn_in", "thin")}
    args = (Z1[sep], sign[sep], res.theta[sep], [seeds[i] for i in sep])
    sample_separating_hmc(*(a[:1] for a in args), **kw)  # warm-up: load the compiled kernel
    t, _, _ = harness.time_repeated(lambda: sample_separating_hmc(*args, **kw), 3)
    bounces: list[np.ndarray] = []
    sample_separating_hmc(*args, **kw, bounces=bounces)
    b = np.concatenate(bounces)  # (s, chains, n_iter)
    floor = harness.hmc_floor_flops(b, m, design.n_params) / (peak["peak"] * 1e9)
    s = len(sep)
    return {
        "task": data.name, "m": m, "P": design.n_params, "separable": s,
        "seconds": t, "us_per_split": 1e6 * t / s, "bounces_per_split": float(b.sum() / s),
        "floor_us_per_split": 1e6 * floor / s, "x_floor": t / floor,
    }


def compile_time() -> dict[str, Any]:
    """First-call time of the compiled loops in fresh processes: with an empty numba cache
    (they compile), then again with the cache that run wrote (they load). On tiny inputs, in
    this order: the training-set draw (``kernels.draws``, the first compiled loop a run meets,
    so its time includes numba's own start), the score counts (``kernels.steps``), the
    sampler (``kernels.hmc``) and the sparse Newton products (``kernels.sparse_gram``)."""
    code = (
        "import json, time\n"
        "import numpy as np\n"
        "from nbvslr.splits import draw_train_sets, split_seeds\n"
        "from nbvslr.models.design import get_design\n"
        "from nbvslr.models.evaluate import count_mistakes\n"
        "from nbvslr.data.dataset import Dataset\n"
        "from nbvslr.models.lr.hmc import sample_separating_hmc\n"
        "from nbvslr.models.lr.newton import fit_newton\n"
        "t0, c0 = time.perf_counter(), time.process_time()\n"
        "draw_train_sets(np.array([0, 1, 1, 0]), 2, split_seeds(0, 't', 2, range(3))[0])\n"
        "ta, ca = time.perf_counter(), time.process_time()\n"
        "d = Dataset(name='t', title='t', X=np.array([[0.0], [1.0]]), y=np.array([0, 1]),\n"
        "            kind='continuous')\n"
        "count_mistakes(get_design(d, 'x'), np.ones((2, 2)), np.array([[0], [1]]))\n"
        "t1, c1 = time.perf_counter(), time.process_time()\n"
        "Z1 = np.array([[[2.0, 1.0], [1.0, 1.0]]])\n"
        "sample_separating_hmc(Z1, np.array([[1.0, -1.0]]), np.array([[1.0, -1.5]]),\n"
        "                      [np.random.SeedSequence(0)])\n"
        "t2, c2 = time.perf_counter(), time.process_time()\n"
        "Z = np.zeros((1, 8, 9)); Z[0, np.arange(8), np.arange(8)] = 1.0; Z[0, :, 8] = 1.0\n"
        "fit_newton(Z, np.array([[1.0, -1.0] * 4]), C=1.0)\n"
        "t3, c3 = time.perf_counter(), time.process_time()\n"
        "print(json.dumps({'draw_s': ta - t0, 'draw_cpu_s': ca - c0,\n"
        "                  'count_s': t1 - ta, 'count_cpu_s': c1 - ca,\n"
        "                  'sampler_s': t2 - t1, 'sampler_cpu_s': c2 - c1,\n"
        "                  'newton_s': t3 - t2, 'newton_cpu_s': c3 - c2}))\n"
    )
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="nbvslr-numba-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache,
               "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
        for label in ("cold", "warm"):
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env=env, check=True)
            out[label] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


# --------------------------------------------------------------------------- whole process
def peer_child(task: str, n_splits: int) -> None:
    """In a fresh process: the plain per-split scikit-learn loop over a task's paper grid
    (naive Bayes and LR on every split, ``harness.PeerModel``), data loading included."""
    with tempfile.TemporaryDirectory(prefix="nbvslr-bench-cache-") as cache:
        data = panels.load_panel(task, Path(cache), False)
        nb_opts, lr_opts = (resolve_options(f, f, {}) for f in ("nb", "lr"))
        settings = harness.PeerSettings.matching(nb_opts, lr_opts)
        models = [harness.PeerModel(data, f, settings) for f in ("nb", "lr")]
        errors = 0.0
        for m in panels.panel_shape(task).sizes:
            idx, _ = splits_of(data, m, n_splits)
            for train in idx:
                errors += sum(model.error(train) for model in models)
    print(json.dumps({"mean_error": errors / (2 * n_splits * len(panels.panel_shape(task).sizes))}))


def whole_process(task: str, n_splits: int) -> dict[str, Any]:
    """Wall and CPU seconds of two fresh processes over the task's paper grid, ``n_splits``
    splits per size, one core: ``nbvslr run <task> --jobs 1`` (imports, data, fits, every
    output file) and ``peer_child`` (imports, data, the per-split loop)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    out: dict[str, Any] = {"task": task, "splits": n_splits}
    with tempfile.TemporaryDirectory(prefix="nbvslr-bench-") as tmp:
        cmds = {
            "ours": [sys.executable, "-m", "nbvslr", "run", task, "--splits", str(n_splits),
                     "--jobs", "1", "--out", str(Path(tmp) / "results"), "--force", "-q"],
            "peer": [sys.executable, str(Path(__file__).resolve()), "--peer-child", task,
                     "--splits", str(n_splits)],
        }
        for label, cmd in cmds.items():
            c0, t0 = harness.child_cpu_seconds(), time.perf_counter()
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            out[label] = {"wall_s": time.perf_counter() - t0,
                          "cpu_s": harness.child_cpu_seconds() - c0}
    out["x_wall"] = out["peer"]["wall_s"] / out["ours"]["wall_s"]
    out["x_cpu"] = out["peer"]["cpu_s"] / out["ours"]["cpu_s"]
    return out


# --------------------------------------------------------------------------- Figure-1 run
def figure1_config(quick: bool) -> dict[str, Any]:
    """The raw config of the timed run (as ``configs/figure1.yaml``; a tiny one in quick)."""
    if quick:
        return {"tasks": ["pima", "lenses"], "sizes": [2, 10, 20], "splits": 20, "seed": SEED,
                "models": {"nb": {}, "lr": {}}}
    return {"tasks": list(panels.PANEL_NAMES), "sizes": "paper", "splits": 1000,
            "seed": SEED, "models": {"nb": {}, "lr": {}}}


def figure1_child(out: Path, quick: bool, jobs: int) -> None:
    """In a fresh process: run the config into ``out`` (what ``make figures`` computes)."""
    from nbvslr.config import parse_config
    from nbvslr.data.dataset import DataSettings
    from nbvslr.runner import run_experiment

    settings = DataSettings(cache_dir=out / "cache", download=False)
    config = parse_config(figure1_config(quick), source="benchmark", data=settings,
                          out=out / "results", jobs=jobs)
    t0 = time.perf_counter()
    tables = run_experiment(config)
    seconds = time.perf_counter() - t0
    rows = sum(len(t) for t in tables.values())
    print(json.dumps({"run_seconds": seconds, "rows": rows, "tasks": len(tables)}))


def figure1_run(quick: bool, jobs: int) -> dict[str, Any]:
    """Time ``figure1_child`` in a subprocess; peak RSS of its process tree."""
    with tempfile.TemporaryDirectory(prefix="nbvslr-bench-") as tmp:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--figure1-child", tmp,
               "--jobs", str(jobs)] + (["--quick"] if quick else [])
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        with harness.TreeRSS(proc.pid) as mon:
            stdout, _ = proc.communicate()
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"the Figure-1 run failed (exit {proc.returncode})")
    child = json.loads(stdout.strip().splitlines()[-1])
    return {"config": figure1_config(quick), "jobs": jobs, "wall_seconds": wall, **child,
            "peak_rss_total_mib": mon.peak_total, "peak_rss_single_mib": mon.peak_single}


# --------------------------------------------------------------------------- printing
def fmt(x: float, digits: int = 2) -> str:
    if x != x:  # NaN
        return "-"
    return f"{x:.{digits}f}" if abs(x) < 1000 else f"{x:.0f}"


def table(rows: list[dict[str, Any]]) -> str:
    """The per-(task, m, model) table in Markdown."""
    head = ("| task | m | model | ours s/1000 | peer s/1000 | x peer | loop s/1000 | x loop "
            "| sep % | peak MiB | err ours / peer | max |err diff| (n) |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        star = "*" if r["peer"]["extrapolated"] else ""
        lstar = "*" if r["loop"]["extrapolated"] else ""
        a = r["agreement"]
        lines.append(
            f"| {r['task']} | {r['m']} | {r['model']} | {fmt(r['ours_s_per_1000'], 3)} "
            f"| {fmt(r['peer_s_per_1000'])}{star} ({r['peer']['done']}) "
            f"| {fmt(r['speedup_vs_peer'], 0)} "
            f"| {fmt(r['loop_s_per_1000'])}{lstar} ({r['loop']['done']}) "
            f"| {fmt(r['speedup_vs_loop'], 0)} | {100 * r['separable']:.0f} "
            f"| {fmt(r['peak_mib'], 0)} "
            f"| {r['mean_error']:.3f} / {r['peer_mean_error']:.3f} "
            f"| {fmt(a['max_abs_diff'], 4)} ({a['compared']}) |"
        )
    return "\n".join(lines)


def summary(rows: list[dict[str, Any]]) -> str:
    """Per model and for nb + lr per (task, m): ours vs the peer and vs our per-split loop."""

    def line(label: str, groups: list[list[dict[str, Any]]]) -> str:
        peer, loop = [], []
        for group in groups:
            ours = sum(r["ours_s_per_1000"] for r in group)
            peer.append(sum(r["peer_s_per_1000"] for r in group) / ours)
            loop.append(sum(r["loop_s_per_1000"] for r in group) / ours)
        return (f"{label}, {len(groups)} (task, m): speed-up vs peer min {min(peer):.0f}x, "
                f"median {np.median(peer):.0f}x; vs our per-split loop min {min(loop):.0f}x, "
                f"median {np.median(loop):.0f}x")

    by: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        if r["model"] in ("nb", "lr"):
            by.setdefault((r["task"], r["m"]), []).append(r)
    models = sorted({r["model"] for r in rows})
    lines = [line(model, [[r] for r in rows if r["model"] == model]) for model in models]
    lines.append(line("nb + lr", list(by.values())))
    return "\n".join(lines)


def targets(rows: list[dict[str, Any]]) -> str:
    """The paper's LR against the per-split loop at each panel's largest measured m."""
    largest: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["model"] == "lr" and r["m"] >= largest.get(r["task"], {"m": -1})["m"]:
            largest[r["task"]] = r
    if not largest:
        return ""
    worst = min(largest.values(), key=lambda r: r["speedup_vs_peer"])
    return (f"lr at each panel's largest m, x peer: min {worst['speedup_vs_peer']:.0f}x "
            f"({worst['task']} m={worst['m']}), median "
            f"{np.median([r['speedup_vs_peer'] for r in largest.values()]):.0f}x over "
            f"{len(largest)} panels")


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "platform": platform.platform(),
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}


# --------------------------------------------------------------------------- main
def print_whole(n_whole: int) -> list[dict[str, Any]]:
    """The whole-process runs of ``WHOLE_TASKS`` (``whole_process``), printed."""
    print(f"\n## Whole process, one core: `nbvslr run TASK --splits {n_whole} --jobs 1` vs a "
          "per-split scikit-learn loop (GaussianNB + LogisticRegression) over the same "
          "sizes and splits, each a fresh process (imports, data, fits)", flush=True)
    whole = [whole_process(task, n_whole) for task in WHOLE_TASKS]
    for w in whole:
        print(f"{w['task']}: ours {w['ours']['wall_s']:.1f} s wall ({w['ours']['cpu_s']:.1f} "
              f"s CPU), peer {w['peer']['wall_s']:.1f} s wall ({w['peer']['cpu_s']:.1f} s "
              f"CPU): x{w['x_wall']:.1f} wall, x{w['x_cpu']:.1f} CPU")
    return whole


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small CI smoke run")
    ap.add_argument("--json", type=Path, help="write every number to this JSON file")
    ap.add_argument("--splits", type=int, help="splits per (task, m) (1000; quick 50)")
    ap.add_argument("--synthetic", action="store_true", help="use synthetic panels")
    ap.add_argument("--no-figure1", action="store_true", help="skip the timed Figure-1 run")
    ap.add_argument("--jobs", type=int, default=2, help="workers of the Figure-1 run")
    ap.add_argument("--no-multiclass", action="store_true",
                    help="skip the multiclass section (benchmarks/multiclass.py)")
    ap.add_argument("--no-whole", action="store_true",
                    help="skip the whole-process runs against the scikit-learn loop")
    ap.add_argument("--whole-only", action="store_true",
                    help="only the whole-process runs against the scikit-learn loop")
    ap.add_argument("--figure1-child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--peer-child", metavar="TASK", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.figure1_child is not None:
        figure1_child(args.figure1_child, args.quick, args.jobs)
        return 0
    if args.peer_child is not None:
        peer_child(args.peer_child, args.splits or WHOLE_SPLITS)
        return 0
    quick = args.quick
    n_splits = args.splits or (50 if quick else 1000)
    budgets = QUICK_BUDGETS if quick else FULL_BUDGETS
    why_not_real = "--synthetic given" if args.synthetic else panels.real_data_available()
    synthetic = why_not_real is not None
    info = machine()
    print(f"# nbvslr benchmark ({'quick' if quick else 'full'}), {info['date']}")
    print(f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
          f"numpy {info['numpy']}")
    if synthetic:
        print(f"DATA: SYNTHETIC panels of the real shapes ({why_not_real})")
    else:
        print("data: the real tasks, from the UCI files shipped with nbvslr")
    report: dict[str, Any] = {"mode": "quick" if quick else "full", "machine": info,
                              "synthetic": synthetic, "splits": n_splits}

    if args.whole_only:
        report["whole"] = print_whole(args.splits or (20 if quick else WHOLE_SPLITS))
        if args.json:
            harness.write_json(args.json, report)
        return 0

    peak1 = harness.matmul_peak(1, n=1000 if quick else 2000)
    peak2 = harness.matmul_peak(2, n=1000 if quick else 2000)
    report["matmul_peak"] = {"1": peak1, "2": peak2}
    print(f"float64 matmul peak: {peak1['peak']:.1f} GFLOP/s on 1 thread, "
          f"{peak2['peak']:.1f} on 2 (BLAS {peak2['blas']:.1f}, "
          f"2 Python threads {peak2['python_threads']:.1f})")

    if not quick:
        compiled = compile_time()
        report["compile"] = compiled
        print("compiled loops, first call in a fresh process (imports apart): " + "; ".join(
            f"{k} numba cache: draws {v['draw_s']:.2f} s ({v['draw_cpu_s']:.2f} s CPU), "
            f"counts {v['count_s']:.2f} s ({v['count_cpu_s']:.2f} s CPU), "
            f"sampler {v['sampler_s']:.2f} s ({v['sampler_cpu_s']:.2f} s CPU), "
            f"sparse Newton {v['newton_s']:.2f} s ({v['newton_cpu_s']:.2f} s CPU)"
            for k, v in compiled.items()), flush=True)

    specs = model_specs()
    rows: list[dict[str, Any]] = []
    flops: list[dict[str, Any]] = []
    sampler: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    # one core for everything: BLAS and OpenMP alike (OMP_NUM_THREADS=1, see the end)
    with (threadpool_limits(limits=1),
          tempfile.TemporaryDirectory(prefix="nbvslr-bench-cache-") as cache):
        for task, sizes in plan(quick):
            data = panels.load_panel(task, Path(cache), synthetic)
            for m in sizes:
                for spec in specs.values():
                    row = measure(
                        data, m, n_splits, spec, peer_splits=10 if quick else n_splits,
                        loop_splits=10 if quick else n_splits, budgets=budgets,
                        repeats=1 if quick else 3,
                    )
                    rows.append(row)
                    print(f"  {task} m={m} {spec.name}: ours {row['ours_s_per_1000']:.3f} s/1000,"
                          f" x{row['speedup_vs_peer']:.0f} vs peer, "
                          f"x{row['speedup_vs_loop']:.0f} vs loop", flush=True)
                    if spec.name == "lr" and row["separable"] > 0:
                        sampler.append(sampler_cost(data, m, n_splits, peak1))
                if task == "adult-discrete":
                    flops.append(newton_rate(data, m, n_splits, peak1))
    report["rows"] = rows
    report["newton"] = flops
    report["sampler"] = sampler
    report["panel_seconds"] = time.perf_counter() - t_start

    print()
    print(f"## Per (task, m, model): CPU seconds per 1000 splits, 1 core (BLAS 1 thread)"
          f"{' -- SYNTHETIC DATA' if synthetic else ''}")
    print("peer/loop: * = extrapolated from the first (n) splits; sep = separable splits; "
          "err diff over the (n) splits compared (LR: non-separable only)")
    print()
    print(table(rows))
    print()
    print(summary(rows))
    print()
    print(targets(rows))
    print()
    print("## The HMC sampler alone: time per separable split vs its FLOP floor at the "
          "1-thread matmul peak")
    print("floor: per iteration 4 m P, per bounce 3 m (harness.hmc_floor_flops)")
    print()
    print("| task | m | P | separable | us / split | bounces / split | floor us / split "
          "| x floor |")
    print("|---|---|---|---|---|---|---|---|")
    for c in sampler:
        print(f"| {c['task']} | {c['m']} | {c['P']} | {c['separable']} "
              f"| {c['us_per_split']:.0f} | {c['bounces_per_split']:.0f} "
              f"| {c['floor_us_per_split']:.1f} | {c['x_floor']:.0f} |")
    print()
    print("## LR Newton steps on adult-discrete (1 BLAS thread vs the 1-thread matmul peak)")
    print("FLOPs counted as the dense products' (harness.newton_flops); the one-hot design's "
          "Hessian is formed from its non-zeros (sparse_gram), so above 100% means fewer FLOPs")
    for f in flops:
        print(f"m={f['m']}: width {f['width']}, {f['splits']} splits, mean {f['mean_n_iter']:.1f} "
              f"steps, {f['gflop']:.1f} GFLOP in {f['seconds']:.3f} s = {f['gflops']:.1f} "
              f"GFLOP/s = {100 * f['fraction']:.0f}% of {f['peak_gflops']:.1f}")

    if args.no_figure1:
        print("\nFigure-1 run: skipped (--no-figure1)")
    elif synthetic:
        print(f"\nFigure-1 run: skipped, it needs the real tasks ({why_not_real})")
    else:
        fig = figure1_run(quick, args.jobs)
        report["figure1"] = fig
        what = "tiny smoke config" if quick else "all 15 panels, paper grids, 1000 splits"
        print(f"\n## Figure-1 run ({what}, jobs={args.jobs}, fresh process, cold data cache)")
        print(f"wall {fig['wall_seconds']:.1f} s (run_experiment {fig['run_seconds']:.1f} s), "
              f"{fig['rows']} result rows; peak RSS of the process tree "
              f"{fig['peak_rss_total_mib']:.0f} MiB (largest process "
              f"{fig['peak_rss_single_mib']:.0f} MiB)")
    if args.no_multiclass or synthetic:
        print("\nmulticlass section: skipped")
    else:
        # optdigits-10 (and lymphography-4) against scikit-learn's per-split loop; in full
        # mode the whole configs/multiclass.yaml run with its peak memory
        report["multiclass"] = multiclass.main_section(quick, args.splits, args.jobs,
                                                       run=not args.no_figure1)
    if synthetic:
        print("\nLDA and QDA section: skipped")
    else:
        # lda and qda on four tasks against scikit-learn's per-split loop
        report["discriminant"] = discriminant.main_section(quick, args.splits)
    if not synthetic:
        # a run with every metric against the same run with [error] (benchmarks/metrics.py)
        report["metrics"] = metrics_bench.main_section(quick)
    if args.no_whole or synthetic:
        print("\nwhole-process runs: skipped")
    else:
        report["whole"] = print_whole(args.splits or (20 if quick else WHOLE_SPLITS))
    # the text models on sms-spam against a per-split scikit-learn loop (benchmarks/text.py;
    # quick: 2 sizes, 50 splits, no whole run)
    report["text"] = text_bench.run(quick, whole=not args.no_whole)
    print(f"\nthis process: peak RSS {harness.max_rss_mib():.0f} MiB")
    if args.json:
        harness.write_json(args.json, report)
    return 0


if __name__ == "__main__":
    harness.one_openmp_thread()
    sys.exit(main())
