"""Learning-curve pictures, drawn from saved results only.

``plot_task`` draws one task on a given ``Axes``; ``figure1`` lays out many tasks in the
paper's 5 x 3 grid; ``render`` turns a figure into PNG, PDF or SVG bytes. Everything uses
matplotlib's explicit interface: a ``matplotlib.figure.Figure`` (Agg canvas, no pyplot, no
global state) and its axes.

Style (the paper's convention): the family decides the line style, NB solid and LR
dashed; the first model of each family is drawn plain in its family colour, every further
variant gets its own colour and a marker. Each curve has its 95% interval (``ci_low ..
ci_high`` of ``summary.csv``) as a light band of the same colour.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from nbvslr.analysis.crossovers import DEFAULT_N_BOOT, Crossovers, crossovers, task_crossovers
from nbvslr.analysis.fidelity import panel_order, paper_curve
from nbvslr.data.recipes import RECIPES
from nbvslr.errors import ConfigError, ResultsError
from nbvslr.results.read import TaskResults, model_order

LINESTYLES = {"nb": "-", "lr": "--"}
OTHER_LINESTYLE = ":"
FAMILY_COLORS = {"nb": "tab:blue", "lr": "tab:red"}
VARIANT_COLORS = ("tab:green", "tab:purple", "tab:orange", "tab:brown", "tab:pink",
                  "tab:olive", "tab:cyan", "tab:gray")
VARIANT_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")
BAND_ALPHA = 0.18
FORMATS = ("png", "pdf", "svg")
# Fixed metadata: the bytes of a figure depend only on the results (no dates, no version).
_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None},
             "svg": {"Date": None, "Creator": None}}
PANEL_SIZE = (4.0, 3.0)  # inches per panel (width, height)


# --------------------------------------------------------------------------------------
# One task
# --------------------------------------------------------------------------------------

def model_styles(models: Sequence[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Line properties for each ``(name, family)``, in order.

    The first model of the ``nb`` and ``lr`` families gets the family colour and no
    marker; every other model a colour and a marker of its own, in turn. The line style
    always follows the family (NB ``-``, LR ``--``, anything else ``:``).
    """
    styles: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    k = 0
    for name, family in models:
        style = {"linestyle": LINESTYLES.get(family, OTHER_LINESTYLE)}
        if family in FAMILY_COLORS and family not in seen:
            style.update(color=FAMILY_COLORS[family], marker=None)
        else:
            style.update(color=VARIANT_COLORS[k % len(VARIANT_COLORS)],
                         marker=VARIANT_MARKERS[k % len(VARIANT_MARKERS)], markersize=3.5)
            k += 1
        seen.add(family)
        styles[name] = style
    return styles


def task_title(run_info: Mapping[str, Any], default: str = "") -> str:
    """The panel title: for a built-in task the recipe's title of the target rule recorded
    in run.json (``task.recipe.target.rule``: it says what was computed), else run.json
    ``task.title``, else the task name, else ``default``."""
    task = run_info.get("task") or {}
    recipe = RECIPES.get(str(task.get("name")))
    target = (task.get("recipe") or {}).get("target") if recipe is not None else None
    rule = target.get("rule") if isinstance(target, Mapping) else None
    if recipe is not None and rule in recipe.targets:
        return recipe.panel_title(rule)
    return str(task.get("title") or task.get("name") or default)


def x_limits(run_info: Mapping[str, Any], sizes: Sequence[float]) -> tuple[float, float]:
    """The paper's x-axis range (run.json ``task.x_range``), else ``0 .. largest m``."""
    task = run_info.get("task") or {}
    rng = task.get("x_range")
    if rng is not None and len(rng) == 2:
        return float(rng[0]), float(rng[1])
    top = max((float(s) for s in sizes), default=1.0)
    return 0.0, top


def plot_task(
    ax: Axes,
    summary: pd.DataFrame,
    run_info: Mapping[str, Any],
    paired: pd.DataFrame | None = None,
    *,
    crossover: Crossovers | None = None,
    paper: pd.DataFrame | None = None,
    legend: bool = True,
    xlabel: str = "m",
    ylabel: str = "mean test error",
) -> Axes:
    """Draw one task's learning curves on ``ax``: error vs m, one line per model.

    Parameters
    ----------
    ax : matplotlib Axes
    summary : DataFrame
        ``summary.csv`` of one task: columns ``model, family, m, error_mean, ci_low,
        ci_high`` (one row per model and m).
    run_info : mapping
        ``run.json``: ``task.title`` (panel title), ``task.x_range`` (x-axis range, else
        0 .. largest m) and ``models`` (the legend order).
    paired : DataFrame, optional
        ``paired.csv`` (NB - LR per m). When given and the mean difference of its first pair
        changes sign, the first crossover is marked with a dotted grey vertical line and its m.
    crossover : mapping, optional
        The pair's crossovers (e.g. ``analysis.crossovers.task_crossovers``): used instead
        of ``paired``; its bootstrap ``interval``, when there is one, is shaded.
    paper : DataFrame, optional
        The paper's curves (``fidelity.paper_curve``: ``m, nb, lr``), drawn thin and black,
        NB solid and LR dashed, labelled "paper".
    legend : bool
        Draw the legend in the panel (a figure of many panels shares one instead).
    xlabel, ylabel : str
        Axis labels ("" for none).

    Returns ``ax``. A curve with a single split per m (no interval) is drawn without band.
    """
    if summary.empty:
        ax.set_title(task_title(run_info))
        ax.text(0.5, 0.5, "no results", ha="center", va="center", transform=ax.transAxes)
        return ax
    order = model_order(summary, run_info)
    family = dict(zip(summary["model"].astype(str), summary["family"].astype(str),
                      strict=False))
    styles = model_styles([(m, family[m]) for m in order])
    for name in order:
        rows = summary[summary["model"].astype(str) == name].sort_values("m", kind="stable")
        m = rows["m"].to_numpy(dtype=float)
        mean = rows["error_mean"].to_numpy(dtype=float)
        low = rows["ci_low"].to_numpy(dtype=float)
        high = rows["ci_high"].to_numpy(dtype=float)
        style = styles[name]
        ax.plot(m, mean, label=name, linewidth=1.4, **style)
        band = np.isfinite(low) & np.isfinite(high)
        if band.any():
            ax.fill_between(m, low, high, where=band, color=style["color"], alpha=BAND_ALPHA,
                            linewidth=0, interpolate=False)
    if paper is not None and not paper.empty:
        draw_paper(ax, paper)
    if crossover is None and paired is not None and not paired.empty:
        crossover = _crossover_of(paired)
    ax.set_xlim(*x_limits(run_info, summary["m"].tolist()))
    if crossover is not None and crossover.first_crossover is not None:
        _mark_crossover(ax, crossover.first_crossover, crossover.interval,
                        _pair_label(crossover))
    ax.set_title(task_title(run_info, str(summary["task"].iloc[0])), fontsize="medium")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend:
        ax.legend(fontsize="small", frameon=False)
    return ax


PAPER_STYLE = {"color": "black", "linewidth": 0.75}


def draw_paper(ax: Axes, paper: pd.DataFrame) -> None:
    """The paper's curves (``m, nb, lr``) on ``ax``: thin black lines over ours, NB solid,
    LR dashed, labelled "paper"."""
    rows = paper.sort_values("m")
    for family in ("nb", "lr"):
        ax.plot(rows["m"], rows[family], linestyle=LINESTYLES[family],
                label=f"paper: {family}", gid=f"paper-{family}", zorder=3,
                **PAPER_STYLE)


def _crossover_of(paired: pd.DataFrame) -> Crossovers | None:
    first = paired.iloc[0]  # the first task and pair
    rows = paired[(paired["task"] == first["task"]) & (paired["model_a"] == first["model_a"])
                  & (paired["model_b"] == first["model_b"])].dropna(subset=["diff_mean"])
    try:
        return crossovers(rows) if not rows.empty else None
    except ResultsError:  # a malformed paired table: draw the curves without the mark
        return None


CROSSOVER_COLOR = "0.4"


def _pair_label(crossover: Crossovers) -> str:
    """"" for the crossover of nb and lr (what the caption names); " (a vs b)" for the
    first pair of a run that compared other models."""
    pair = (str(crossover.model_a), str(crossover.model_b))
    return "" if pair == ("nb", "lr") else f" ({pair[0]} vs {pair[1]})"


def _mark_crossover(ax: Axes, loc: float, interval: Sequence[float] | None,
                    pair: str = "") -> None:
    """A dotted line at the first crossover, its m written beside it at the top of the
    panel (readable even against the axis), and its interval shaded (clipped to the axes).
    ``pair`` follows "crossover" in the legend (" (nb vs lr_l2)")."""
    ax.axvline(loc, color=CROSSOVER_COLOR, linewidth=1.0, linestyle=":",
               label=f"crossover{pair}", gid="crossover")
    if interval is not None:
        lo, hi = ax.get_xlim()
        low, high = max(interval[0], lo), min(interval[1], hi)
        if high > low:
            ax.axvspan(low, high, color=CROSSOVER_COLOR, alpha=0.12, linewidth=0,
                       label=f"crossover{pair}, 95% interval", gid="crossover-interval")
    lo, hi = ax.get_xlim()
    right = loc < lo + 0.6 * (hi - lo)  # the label on the side with more room
    ax.annotate(f"m ≈ {loc:.1f}",
                xy=(loc, 1.0), xycoords=("data", "axes fraction"),
                xytext=(3 if right else -3, -3), textcoords="offset points",
                ha="left" if right else "right", va="top", fontsize="x-small",
                color="0.25", gid="crossover-label")


# --------------------------------------------------------------------------------------
# Many tasks
# --------------------------------------------------------------------------------------

def _crossover_of_task(task: Any, n_boot: int, seed: int) -> Crossovers | None:
    """The task's crossovers with the report's bootstrap interval when the folder has
    ``splits.csv.gz``; from ``paired.csv`` alone otherwise; None without either."""
    if not isinstance(task, TaskResults):
        getter = getattr(task, "saved_paired", None)
        paired = getter() if callable(getter) else None
        return _crossover_of(paired) if paired is not None and not paired.empty else None
    try:
        return task_crossovers(task, n_boot=n_boot, seed=seed)[1]
    except ResultsError:  # no paired table and no splits: the curves without the mark
        return None


def draw_task(ax: Axes, task: Any, *, paper: bool = False, n_boot: int = DEFAULT_N_BOOT,
              seed: int = 0, legend: bool = True) -> Axes:
    """One task's panel on ``ax``, as a panel of ``figure_of_tasks`` (the crossover and its
    bootstrap interval, the paper's curves when ``paper`` and the task is a panel of
    Figure 1), with its own legend."""
    return plot_task(ax, task.summary, task.run_info,
                     crossover=_crossover_of_task(task, n_boot, seed),
                     paper=_paper_of(task) if paper else None, legend=legend)


def _paper_of(task: Any) -> pd.DataFrame | None:
    return paper_curve(str(task.name))


def _shared_legend(fig: Figure, axes: Sequence[Axes]) -> None:
    """One legend for all panels, above them: every label once, in the order first seen,
    our models first, then the paper's curves, then the crossover marks."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    def rank(label: str) -> int:
        return 2 if label.startswith("crossover") else 1 if label.startswith("paper: ") else 0

    labels = sorted(seen, key=rank)
    fig.legend([seen[lab] for lab in labels], labels, loc="outside upper center",
               ncols=min(len(labels), 6), frameon=False, fontsize="medium")


def caption(tasks: Sequence[Any], *, paper: bool, intervals: bool = True) -> str:
    """What the figure shows, in one or two lines: splits, bands, the crossover (and its
    shaded interval when ``intervals``), the paper's curves when ``paper``."""
    counts = {int(n) for t in tasks for n in t.summary.get("n_splits", [])}
    splits = (f"{counts.pop()} random train/test splits" if len(counts) == 1
              else "the random train/test splits")
    text = (f"Mean test error over {splits} at each training-set size m; NB solid, LR "
            f"dashed; bands: 95% confidence interval of the mean. Dotted line: first "
            f"crossover of NB and LR (m written beside it)")
    text += ", shaded: its 95% bootstrap interval." if intervals else "."
    if paper:
        text += " Thin black: the paper's curves (Ng & Jordan 2001, Figure 1)."
    return text


def figure_of_tasks(tasks: Sequence[Any], *, ncols: int = 3, suptitle: str | None = None,
                    panel_size: tuple[float, float] = PANEL_SIZE, paper: bool = False,
                    n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> Figure:
    """One panel per task, in the given order, ``ncols`` panels a row.

    ``tasks`` are objects with ``name``, ``summary`` and ``run_info`` (e.g.
    ``nbvslr.results.TaskResults``); a ``saved_paired()`` method, when present, supplies the
    crossover mark, and a task folder with ``splits.csv.gz`` its bootstrap interval (``n_boot``
    resamples, seeded as in the report by ``seed``). ``paper`` overlays the paper's curves
    on the panels of Figure 1. Several panels share one legend and a caption below them.
    """
    n = len(tasks)
    if n == 0:
        raise ValueError("figure_of_tasks: no tasks to draw")
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    shared = n > 1
    fig = Figure(figsize=(panel_size[0] * ncols, panel_size[1] * nrows + (0.9 if shared else 0)),
                 dpi=100, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    intervals = drawn_paper = False  # what the caption has to explain
    for k, (ax, task) in enumerate(zip(axes, tasks, strict=False)):
        cross = _crossover_of_task(task, n_boot, seed)
        intervals |= bool(cross is not None and cross.first_crossover is not None
                          and cross.interval is not None)
        curves = _paper_of(task) if paper else None
        drawn_paper |= curves is not None
        plot_task(ax, task.summary, task.run_info, crossover=cross, paper=curves,
                  legend=not shared,
                  ylabel="mean test error" if k % ncols == 0 or not shared else "")
    for ax in axes[n:]:
        fig.delaxes(ax)
    if shared:
        _shared_legend(fig, axes[:n])
        text = caption(tasks, paper=drawn_paper, intervals=intervals)
        fig.supxlabel("\n".join(textwrap.wrap(text, width=int(14 * panel_size[0] * ncols))),
                      fontsize="medium", ha="left", x=0.01)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def figure1(tasks: Sequence[Any], *, suptitle: str | None = None,
            panel_size: tuple[float, float] = PANEL_SIZE, paper: bool = True,
            n_boot: int = DEFAULT_N_BOOT, seed: int = 0) -> Figure:
    """The paper's Figure 1: every given task, 3 panels a row (5 x 3 for the 15 tasks),
    built-in tasks in the paper's panel order, other tasks after them; the paper's own
    curves overlaid on its panels unless ``paper`` is False."""
    names = [str(t.name) for t in tasks]
    ordered = [tasks[i] for i in panel_order(names)]
    return figure_of_tasks(ordered, ncols=3, suptitle=suptitle, panel_size=panel_size,
                           paper=paper, n_boot=n_boot, seed=seed)


# --------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------

def format_for(path: Any) -> str:
    """``png``, ``pdf`` or ``svg`` from a file name; ConfigError for anything else."""
    suffix = str(path).rsplit(".", 1)[-1].lower() if "." in str(path) else ""
    if suffix not in FORMATS:
        raise ConfigError(
            f"output {path}: unknown figure format '{suffix or '(none)'}'; "
            f"end the file name in .png, .pdf or .svg"
        )
    return suffix


def render(fig: Figure, fmt: str, dpi: int = 150) -> bytes:
    """The figure as ``fmt`` bytes, with fixed metadata (same results, same bytes)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown figure format '{fmt}'; use one of {', '.join(FORMATS)}")
    buf = io.BytesIO()
    # SVG element ids are random unless salted: a fixed salt gives the same bytes each time
    with matplotlib.rc_context({"svg.hashsalt": "nbvslr"}):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=_METADATA[fmt])
    return buf.getvalue()
