"""The sample-complexity study: m* of NB and LR as the number of features n grows.

A study file is a run config (``nbvslr.config``) plus a ``study:`` section::

    tasks:                          # synthetic tasks, usually swept over features
      - name: continuous-bayes
        source: {synthetic: {generator: symmetric, kind: continuous, rows: 25000,
                             bayes_error: 0.1}}
        sweep: {features: [4, 8, 16]}
    sizes: [4, 6, 8, 11, 16]        # a geometric grid
    splits: 50
    models: {nb: {}, lr: {}}
    study:
      deltas: [0.02, 0.05]          # m* is within delta of the asymptotic error
      bootstrap: 1000               # resamples of the splits for each interval
      level: 0.95
      seed: 0                       # the bootstrap's seed

``run_study`` runs the config into ``<out>/runs/<task>/`` (the runner's files and
checkpoints, so an interrupted study resumes) and then ``analyse`` reads those saved results
only and writes, in ``<out>/``:

- ``m_star.csv`` (tasks holding the Bayes error fixed) and ``m_star_fixed_separation.csv``
  (tasks holding each feature's separation fixed), columns ``M_STAR_COLUMNS``;
- ``fits.csv``: the least-squares fits of m* against log n and n (``nbvslr.studies.mstar``);
- ``tasks.csv``: each task's Bayes error and the asymptotic errors used, computed from the
  generating model, beside the errors of each model fitted on all rows (an estimate);
- ``m_star.png``: the figure; ``study.json``: the settings and what the study took.

Every task must be ``generator: symmetric`` (``nbvslr.data.symmetric``), whose notes
(``run.json``, ``task.recipe``) give the asymptotic errors of both models exactly
(``nb_limit_error``, ``lr_limit_error``), with ``kind`` and ``features``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import resource
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nbvslr import results
from nbvslr.config import Config, parse_config, read_yaml
from nbvslr.errors import ResultsError, check_known_keys, setting_error
from nbvslr.runner.progress import NoProgress, Progress
from nbvslr.studies.mstar import bootstrap_m_star, fit_growth
from nbvslr.version import __version__
from nbvslr.views import plots

STUDY_KEYS = ("deltas", "bootstrap", "level", "seed")
STUDY_DEFAULTS: Mapping[str, Any] = {"deltas": [0.02, 0.05], "bootstrap": 1000, "level": 0.95,
                                     "seed": 0}
M_STAR_COLUMNS = ("family", "model", "n_features", "delta", "m_star", "ci_low", "ci_high")
FITS_COLUMNS = ("variant", "family", "model", "delta", "points", "log_a", "log_b", "log_rss",
                "lin_a", "lin_b", "lin_rss", "better", "power_beta")
TASK_COLUMNS = ("task", "variant", "family", "n_features", "rows", "bayes_error",
                "nb_asymptotic", "lr_asymptotic", "nb_all_rows", "lr_all_rows")
# What a task holds fixed as n grows (its data notes' "held"), and the file of its m*.
VARIANTS = {"bayes_error": "bayes-error-fixed", "feature_error": "separation-fixed"}
FILES = {"bayes-error-fixed": "m_star.csv", "separation-fixed": "m_star_fixed_separation.csv"}
RUNS = "runs"
FAMILIES = ("continuous", "discrete")


@dataclass(frozen=True)
class Study:
    """A validated study: the run config and the m* settings."""

    config: Config
    deltas: tuple[float, ...] = (0.02, 0.05)
    n_boot: int = 1000
    level: float = 0.95
    seed: int = 0


def parse_study(raw: Any, *, source: str = "<study>", out: str | Path = "results",
                base_dir: str | Path | None = None, **settings: Any) -> Study:
    """Validate a parsed study file; ``settings`` go to ``parse_config`` (splits, jobs...).

    The runs go to ``<out>/runs``; the study's tables and figure to ``out``.
    """
    if not isinstance(raw, Mapping):
        raise setting_error("file", "the top level must be a mapping of keys",
                            type(raw).__name__, "write tasks:, sizes:, ... and study:", source)
    raw = dict(raw)
    section = raw.pop("study", None) or {}
    if not isinstance(section, Mapping):
        raise setting_error("study", "must be a mapping", section,
                            "write study: {deltas: [0.02, 0.05]}", source)
    check_known_keys("study", section, STUDY_KEYS, source)
    value = {**STUDY_DEFAULTS, **section}
    deltas = value["deltas"]
    if not isinstance(deltas, list) or not deltas or not all(
            isinstance(d, int | float) and not isinstance(d, bool) and 0 < d < 1
            for d in deltas):
        raise setting_error("study.deltas", "must be a non-empty list of numbers in (0, 1)",
                            deltas, "e.g. deltas: [0.02, 0.05]", source)
    if len(set(deltas)) != len(deltas):
        raise setting_error("study.deltas", "lists a value twice", deltas,
                            "list each delta once", source)
    n_boot = value["bootstrap"]
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise setting_error("study.bootstrap", "not an integer >= 1", n_boot,
                            "e.g. bootstrap: 1000", source)
    level = value["level"]
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise setting_error("study.level", "must be in (0, 1)", level, "e.g. level: 0.95",
                            source)
    seed = value["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise setting_error("study.seed", "not an integer >= 0", seed, "e.g. seed: 0", source)
    config = parse_config(raw, source=source, base_dir=base_dir, out=Path(out) / RUNS,
                          **settings)
    for spec in config.tasks:
        generator = ((spec.source or {}).get("synthetic") or {}).get("generator")
        if generator != "symmetric":
            raise setting_error(
                "tasks", f"{spec.name} is not a synthetic task with known asymptotic errors",
                generator or "no synthetic source",
                "use source: {synthetic: {generator: symmetric, ...}}", source)
    return Study(config, tuple(float(d) for d in deltas), int(n_boot), float(level), int(seed))


def load_study(path: str | Path, **settings: Any) -> Study:
    """Read and validate a study file (see the module docstring)."""
    return parse_study(read_yaml(path), source=str(path), base_dir=Path(path).parent,
                       **settings)


# --------------------------------------------------------------------------- reading runs


def _task_info(folder: Path) -> dict[str, Any]:
    path = folder / "run.json"
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: unreadable ({exc}); rerun the study") from None
    notes = info.get("task", {}).get("recipe", {})
    missing = [k for k in ("kind", "features", "nb_limit_error", "lr_limit_error")
               if notes.get(k) is None]
    if missing:
        raise ResultsError(
            f"{path}: the task's data notes lack {', '.join(missing)}; the study needs "
            "synthetic tasks whose asymptotic errors are known (generator: symmetric)")
    return info


def task_table(run_dirs: Sequence[Path]) -> pd.DataFrame:
    """One row per task: what it holds fixed, its Bayes error and asymptotic errors."""
    rows = []
    for folder in run_dirs:
        info = _task_info(folder)
        notes = info["task"]["recipe"]
        full = info.get("asymptotic_error") or {}
        fam = {m["name"]: m["family"] for m in info.get("models", [])}
        by_family = {f: next((full.get(n) for n, g in fam.items() if g == f), None)
                     for f in ("nb", "lr")}
        rows.append({
            "task": info["task"]["name"],
            "variant": VARIANTS.get(notes.get("held"), str(notes.get("held"))),
            "family": notes["kind"],
            "n_features": int(notes["features"]),
            "rows": int(info["task"]["rows"]),
            "bayes_error": float(notes["bayes_error"]),
            "nb_asymptotic": float(notes["nb_limit_error"]),
            "lr_asymptotic": float(notes["lr_limit_error"]),
            "nb_all_rows": by_family["nb"],
            "lr_all_rows": by_family["lr"],
        })
    out = pd.DataFrame(rows, columns=list(TASK_COLUMNS))
    return out.sort_values(["variant", "family", "n_features"], kind="stable",
                           ignore_index=True)


def m_star_table(run_dirs: Sequence[Path], deltas: Sequence[float], *, n_boot: int = 1000,
                 level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """m* with its bootstrap interval for every task, model and delta.

    Returns a DataFrame with ``variant``, ``task``, the ``M_STAR_COLUMNS`` and
    ``model_family`` (``nb`` or ``lr``, the model's), sorted by
    variant, family, model, delta, n. Each (task, model, delta) gets its own generator
    from ``SeedSequence([seed, task index, model index, delta index])``.
    """
    tasks = task_table(run_dirs).set_index("task")
    rows = []
    for t_i, folder in enumerate(run_dirs):
        info = _task_info(folder)
        name = info["task"]["name"]
        task = tasks.loc[name]
        if not (folder / results.SPLITS_FILE).is_file():  # m*'s interval resamples splits
            raise ResultsError(
                f"{folder / results.SPLITS_FILE}: missing (a committed study keeps only the "
                f"summaries); run the study, without --draw-only, to make it")
        splits = results.load_task(folder).splits()  # checked against files.sha256
        for m_i, spec in enumerate(info["models"]):
            asymptotic = float(task[f"{spec['family']}_asymptotic"])
            part = splits[splits["model"] == spec["name"]].dropna(subset=["error"])
            by_m = {int(m): g["error"].to_numpy(dtype=float) for m, g in part.groupby("m")}
            ms = sorted(by_m)
            for d_i, delta in enumerate(deltas):
                rng = np.random.default_rng(np.random.SeedSequence([seed, t_i, m_i, d_i]))
                point, low, high = bootstrap_m_star(
                    ms, [by_m[m] for m in ms], asymptotic + delta, rng, n_boot, level)
                rows.append({"variant": task["variant"], "task": name,
                             "family": task["family"], "model": spec["name"],
                             "model_family": spec["family"],
                             "n_features": int(task["n_features"]), "delta": delta,
                             "m_star": point, "ci_low": low, "ci_high": high})
    out = pd.DataFrame(rows, columns=["variant", "task", *M_STAR_COLUMNS, "model_family"])
    return out.sort_values(["variant", "family", "model", "delta", "n_features"],
                           kind="stable", ignore_index=True)


def fits_table(m_stars: pd.DataFrame) -> pd.DataFrame:
    """``fit_growth`` of m* against n for every variant, family, model and delta."""
    rows = []
    keys = ["variant", "family", "model", "delta"]
    for key, group in m_stars.groupby(keys, sort=True):
        fit = fit_growth(group["n_features"], group["m_star"])
        rows.append({**dict(zip(keys, key, strict=True)), **fit})
    return pd.DataFrame(rows, columns=list(FITS_COLUMNS))


# --------------------------------------------------------------------------- the figure


def plot_m_star(ax, m_stars: pd.DataFrame, fits: pd.DataFrame, delta: float,
                other_deltas: Sequence[float] = ()) -> None:
    """m* of one model (one variant, one family) against n on ``ax``: log n axis.

    Filled points with bootstrap intervals at ``delta``, its two fits (``a + b log n``
    dotted, ``a + b n`` dash-dot, the better one thicker), open points at other deltas.
    A censored or unreached m* (an interval end at infinity) is drawn at the grid's end.
    """
    model = str(m_stars["model"].iloc[0])
    color = plots.family_color(str(m_stars["model_family"].iloc[0]))
    for d in (delta, *other_deltas):
        part = m_stars[np.isclose(m_stars["delta"], d)].sort_values("n_features")
        if part.empty:
            continue
        n = part["n_features"].to_numpy(dtype=float)
        y = part["m_star"].to_numpy(dtype=float)
        top = np.nanmax(np.where(np.isfinite(part["ci_high"]), part["ci_high"], np.nan))
        hi = np.where(np.isfinite(part["ci_high"]), part["ci_high"], top)
        err = np.vstack([np.maximum(y - part["ci_low"], 0), np.maximum(hi - y, 0)])
        main = d == delta
        ax.errorbar(n, y, yerr=err, fmt="o", ms=4 if main else 3.5, capsize=2,
                    color=color, mfc=color if main else "white", alpha=1 if main else 0.6,
                    label=f"{model}, δ = {d:g}", zorder=3 if main else 2)
    fit = fits[np.isclose(fits["delta"], delta)]
    if not fit.empty and fit["points"].iloc[0] >= 3:
        f = fit.iloc[0]
        part = m_stars[np.isclose(m_stars["delta"], delta)]
        grid = np.geomspace(part["n_features"].min(), part["n_features"].max(), 200)
        for name, x, style, term in (("log", np.log(grid), ":", "log n"),
                                     ("lin", grid, "-.", "n")):
            better = f["better"] == term
            a, b = f[f"{name}_a"], f[f"{name}_b"]
            ax.plot(grid, a + b * x, style, color=color, lw=1.6 if better else 0.9,
                    label=f"{a:.0f} {'+' if b >= 0 else '-'} {_short(abs(b))} {term}"
                          f"{' (better)' if better else ''}")
    ax.set_xscale("log", base=2)
    ticks = sorted(m_stars["n_features"].unique())
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    # headroom above the highest interval for the legend (upper left)
    high = m_stars["ci_high"].to_numpy(dtype=float)
    high = high[np.isfinite(high)]
    top = float(high.max()) if high.size else float(np.nanmax(m_stars["m_star"]))
    ax.set_ylim(0, 1.45 * top)
    ax.set_xlabel("n (features)")
    ax.set_ylabel("m*")
    ax.legend(fontsize=6.5, loc="upper left")


def _short(x: float) -> str:
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def figure(m_stars: pd.DataFrame, fits: pd.DataFrame, deltas: Sequence[float]):
    """The study's figure: a column per (variant, family), a row per model."""
    from matplotlib.figure import Figure

    columns = [(v, f) for v in VARIANTS.values() for f in FAMILIES
               if ((m_stars["variant"] == v) & (m_stars["family"] == f)).any()]
    # NB first, then LR, each family in the runs' order
    first = m_stars.drop_duplicates("model")
    models = [m for fam in ("nb", "lr") for m in first["model"][first["model_family"] == fam]]
    models += [m for m in first["model"] if m not in models]
    fig = Figure(figsize=(3.4 * max(len(columns), 1), 2.9 * max(len(models), 1)),
                 layout="constrained")
    axes = fig.subplots(len(models), max(len(columns), 1), squeeze=False)
    for c, (variant, family) in enumerate(columns):
        for r, model in enumerate(models):
            ax = axes[r, c]
            pick = ((m_stars["variant"] == variant) & (m_stars["family"] == family)
                    & (m_stars["model"] == model))
            fpick = ((fits["variant"] == variant) & (fits["family"] == family)
                     & (fits["model"] == model))
            plot_m_star(ax, m_stars[pick], fits[fpick], deltas[0], deltas[1:])
            held = "Bayes error fixed" if variant == VARIANTS["bayes_error"] else (
                "separation per feature fixed")
            ax.set_title(f"{model}, {family}\n{held}", fontsize=9)
    words = "m*: training-set size within δ of the asymptotic error (95% bootstrap intervals)"
    plots.fit_to_width(fig, fig.suptitle(words, fontsize=10), words)  # one column: wrapped
    return fig


# --------------------------------------------------------------------------- the study


def analyse(out: str | Path, task_names: Sequence[str], deltas: Sequence[float], *,
            n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Read ``<out>/runs/<task>`` and write the study's tables and figure into ``out``."""
    out = Path(out)
    run_dirs = [results.task_dir(out / RUNS, name) for name in task_names]
    tasks = task_table(run_dirs)
    m_stars = m_star_table(run_dirs, deltas, n_boot=n_boot, level=level, seed=seed)
    fits = fits_table(m_stars)
    for variant, file in FILES.items():
        part = m_stars[m_stars["variant"] == variant]
        if not part.empty:
            results.atomic_write_bytes(out / file, _csv(part.loc[:, list(M_STAR_COLUMNS)]))
    results.atomic_write_bytes(out / "fits.csv", _csv(fits))
    results.atomic_write_bytes(out / "tasks.csv", _csv(tasks))
    fig = figure(m_stars, fits, list(deltas))
    results.atomic_write_bytes(out / "m_star.png", plots.render(fig, "png"))
    return {"m_star": m_stars, "fits": fits, "tasks": tasks}


def _csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False, float_format="%.6g", lineterminator="\n").encode()


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _sizes_resumed(runs: Path, names: Sequence[str]) -> int:
    """Sizes taken from checkpoints of an earlier run, over all tasks (their run.json)."""
    return sum(len(_task_info(results.task_dir(runs, n))["timings"]["resumed_sizes"])
               for n in names)


def run_study(study: Study, progress: Progress | None = None) -> dict[str, pd.DataFrame]:
    """Run the study's tasks (resuming finished sizes), then ``analyse``; files written.

    ``study.json`` records the settings, the wall time and the CPU time of this process and
    its finished worker processes (a worker still alive when the study ends is not counted),
    and how many sizes came from checkpoints instead of being computed.
    """
    from nbvslr.runner import run_experiment

    started, cpu0 = time.perf_counter(), _cpu_seconds()
    config = study.config
    run_experiment(config, progress=progress if progress is not None else NoProgress())
    ran = time.perf_counter() - started
    out = config.out.parent
    names = [t.name for t in config.tasks]
    tables = analyse(out, names, study.deltas, n_boot=study.n_boot, level=study.level,
                     seed=study.seed)
    results.write_json(out / "study.json", {
        "config": config.to_dict(),
        "study": {"deltas": list(study.deltas), "bootstrap": study.n_boot,
                  "level": study.level, "seed": study.seed},
        "execution": {"jobs": config.jobs, "backend": config.backend},
        "timings": {"run_wall_seconds": round(ran, 1),
                    "total_wall_seconds": round(time.perf_counter() - started, 1),
                    "cpu_seconds": round(_cpu_seconds() - cpu0, 1),
                    "force": config.force,
                    "sizes_resumed": _sizes_resumed(out / RUNS, names)},
        "versions": {"nbvslr": __version__, "numpy": np.__version__, "pandas": pd.__version__},
        "machine": {"platform": platform.platform(), "python": sys.version.split()[0],
                    "cpu_count": os.cpu_count()},
    })
    return tables


def describe(tables: Mapping[str, pd.DataFrame], delta: float) -> str:
    """A few lines for the terminal: which fit is better for each model, at ``delta``."""
    fits = tables["fits"]
    lines = []
    for _, f in fits[np.isclose(fits["delta"], delta)].iterrows():
        name = f"{f['variant']}, {f['family']}, {f['model']}"
        if not f["better"]:
            lines.append(f"{name}: no fit ({f['points']} n with a finite m*; 3 needed)")
            continue
        beta = "" if math.isnan(f["power_beta"]) else f", m* ~ n^{f['power_beta']:.2f}"
        lines.append(f"{name}: better fit a + b {f['better']}{beta}")
    return "\n".join(lines)
