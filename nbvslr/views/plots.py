"""Learning-curve pictures, drawn from saved results only.

``plot_task`` draws one task on a given ``Axes``; ``figure1`` lays out many tasks in the
paper's 5 x 3 grid; ``render`` turns a figure into PNG, PDF or SVG bytes. Everything uses
matplotlib's explicit interface: a ``matplotlib.figure.Figure`` (Agg canvas, no pyplot, no
global state) and its axes.

Style (the paper's convention, NB solid and LR dashed): a model's approach decides the line
style, a generative family's models (NB, LDA, QDA) solid and a discriminative family's (LR)
dashed; the first model of each approach is drawn plain in its approach's colour, every
further model gets its own colour and a marker. Each curve has its 95% interval (``ci_low ..
ci_high`` of ``summary.csv``) as a light band of the same colour. A value with no value
beside it (``isolated``), which neither a line nor a band can show, is a dot (its model's
marker, else a dot) on a vertical bar of its interval, drawn whole on the panel's edge.
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
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from nbvslr.analysis.crossovers import DEFAULT_N_BOOT, Crossovers, crossovers, task_crossovers
from nbvslr.analysis.fidelity import PAPER_PAIR, panel_order, paper_curve
from nbvslr.analysis.metrics import label as metric_label
from nbvslr.analysis.metrics import metric_of
from nbvslr.analysis.stats import task_paired
from nbvslr.data.recipes import RECIPES
from nbvslr.errors import ConfigError, ResultsError
from nbvslr.models.family import DISCRIMINATIVE, GENERATIVE
from nbvslr.models.registry import approach
from nbvslr.results.read import TaskResults, model_order
from nbvslr.views.naming import GENERIC, family_of, plain, shared_titles, title

LINESTYLES = {GENERATIVE: "-", DISCRIMINATIVE: "--"}
OTHER_LINESTYLE = ":"
APPROACH_COLORS = {GENERATIVE: "tab:blue", DISCRIMINATIVE: "tab:red"}
VARIANT_COLORS = ("tab:green", "tab:purple", "tab:orange", "tab:brown", "tab:pink",
                  "tab:olive", "tab:cyan", "tab:gray")
VARIANT_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")
BAND_ALPHA = 0.18
FORMATS = ("png", "pdf", "svg")
# Fixed metadata: the bytes of a figure depend only on the results (no dates, no version).
_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None},
             "svg": {"Date": None, "Creator": None}}
PANEL_SIZE = (4.0, 3.0)  # inches per panel (width, height)
NOTEBOOK_DPI = 100  # pixels per inch of the picture a notebook shows


class ShownFigure(Figure):
    """A ``Figure`` that a Jupyter notebook shows as a PNG when it is a cell's value, with no
    ``%matplotlib`` magic and without pyplot: it is not one of pyplot's figures, so the
    inline backend never shows it a second time (docs/api.md, "In a notebook")."""

    def _repr_png_(self) -> bytes:
        return render(self, "png", dpi=NOTEBOOK_DPI)


# --------------------------------------------------------------------------------------
# One task
# --------------------------------------------------------------------------------------

def family_color(family: str, default: str = "black") -> str:
    """The colour of a family's first model: its approach's (``APPROACH_COLORS``), else
    ``default`` (a family nbvslr does not know)."""
    return APPROACH_COLORS.get(approach(str(family)), default)


def model_styles(models: Sequence[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Line properties for each ``(name, family)``, in order.

    The first model of each approach (generative, discriminative: the family's, as the
    registry declares it) gets the approach's colour and no marker; every other model a
    colour and a marker of its own, in turn (past ``len(VARIANT_COLORS)`` models the
    markers shift by one a round, so no two models share a colour and a marker). The line
    style always follows the approach (generative ``-``, discriminative ``--``, a family
    nbvslr does not know ``:``).
    """
    styles: dict[str, dict[str, Any]] = {}
    seen: set[str | None] = set()
    k = 0
    for name, family in models:
        kind = approach(family)
        style = {"linestyle": LINESTYLES.get(kind, OTHER_LINESTYLE)}
        if kind in APPROACH_COLORS and kind not in seen:
            style.update(color=APPROACH_COLORS[kind], marker=None)
        else:
            turn = k // len(VARIANT_COLORS)
            style.update(color=VARIANT_COLORS[k % len(VARIANT_COLORS)],
                         marker=VARIANT_MARKERS[(k + turn) % len(VARIANT_MARKERS)],
                         markersize=3.5)
            k += 1
        seen.add(kind)
        styles[name] = style
    return styles


def figure_styles(tasks: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """One style per model name over all the panels of a figure (``model_styles`` of every
    task's models, in panel order, each task's in its run's order, a name once, with the
    family it first has): the panels share one legend, so a name is drawn alike in every
    panel and two names never alike."""
    models: dict[str, str] = {}
    for task in tasks:
        summary = task.summary
        if summary.empty or "family" not in summary:
            continue
        family = dict(zip(summary["model"].astype(str), summary["family"].astype(str),
                          strict=False))
        for name in model_order(summary, task.run_info):
            models.setdefault(name, family[name])
    return model_styles(list(models.items()))


ISOLATED_MARKER = "o"
ISOLATED_MARKERSIZE = 4.5
"""The marker of a point that a line without markers leaves unseen (``isolated``)."""
LONE_BAND_ALPHA = 0.35
LONE_BAND_WIDTH = 3.0
"""The 95% interval of an ``isolated`` value, which a band cannot show: a vertical bar in
the band's colour, this opaque and this many points wide."""


def isolated(values: np.ndarray) -> np.ndarray:
    """Which values (shape (M,), a curve in m order) are finite with no finite neighbour:
    a line through the curve draws nothing there (a metric defined at one m only, a value
    between two undefined ones), so a curve drawn without markers marks them."""
    finite = np.isfinite(np.asarray(values, dtype=float))
    before = np.concatenate([[False], finite[:-1]])
    after = np.concatenate([finite[1:], [False]])
    return finite & ~before & ~after


def _unclip_isolated(ax: Axes) -> None:
    """Draw the dots and bars of ``isolated`` values whole where they sit on the panel's
    edge (a value at the largest m, the axis' end): those wholly inside the limits, never
    one that the axis leaves out (a start above it, ``y_limits``)."""
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())

    def inside(xy: np.ndarray) -> bool:
        x, y = xy[:, 0], xy[:, 1]
        return bool(((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)).all())

    for line in ax.get_lines():
        if line.get_gid() == "isolated" and inside(np.asarray(line.get_xydata(), float)):
            line.set_clip_on(False)
    for bars in ax.collections:
        if bars.get_gid() == "isolated-interval" and all(
                inside(np.asarray(seg, float)) for seg in bars.get_segments()):
            bars.set_clip_on(False)


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
    """The x-axis: from the paper's left end (run.json ``task.x_range``, else 0) to the
    largest m of the data, never past it (the paper's right end when that comes first)."""
    task = run_info.get("task") or {}
    rng = task.get("x_range")
    top = max((float(s) for s in sizes), default=None)
    if rng is not None and len(rng) == 2:
        return float(rng[0]), float(rng[1]) if top is None else min(float(rng[1]), top)
    return 0.0, 1.0 if top is None else top


def y_limits(curves: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float] | None:
    """The y-axis when the errors at the smallest m would squash the rest of the curves
    (sick: 0.5 at m = 2, 0.07 to 0.2 from m = 8 on), else None (matplotlib's own).

    ``curves`` are ``(m, error)`` pairs, every curve drawn. When the highest error beyond
    each curve's smallest m is below half of the highest error overall, the axis runs
    from the lowest error to 30% above that height: the starts leave the panel and are
    written at its top (``_note_clipped``).
    """
    rest = [e[m > m.min()] for m, e in curves if len(m) > 1]
    rest = [r[np.isfinite(r)] for r in rest]
    every = np.concatenate([e[np.isfinite(e)] for _, e in curves] or [np.zeros(0)])
    if not rest or every.size == 0 or not any(r.size for r in rest):
        return None
    high = max(float(r.max()) for r in rest if r.size)
    low = float(every.min())
    if high >= 0.5 * float(every.max()) or high - low < 1e-6:  # flat rest (all 0): as is
        return None
    pad = 0.3 * (high - low)
    return max(0.0, low - 0.1 * (high - low)), high + pad


def _note_clipped(ax: Axes, starts: Mapping[str, tuple[float, float]], top: float) -> None:
    """Write at the panel's top right the starts that run above it (``name: (m, error)``)."""
    above = [f"{name} {err:.2f}" for name, (_, err) in starts.items() if err > top]
    if not above:
        return
    m = min(m for m, _ in starts.values())
    ax.annotate(f"↑ m={m:g}: " + ", ".join(above), xy=(0.98, 0.98), xycoords="axes fraction",
                ha="right", va="top", fontsize="small", color="0.2", gid="clipped-start",
                bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.8})


#: A grid whose largest m is at least this many times its smallest, and not evenly spaced,
#: is drawn on a logarithmic m axis unless told otherwise (``log_axis``).
LOG_SPAN = 20.0


#: A panel's own legend of more entries than this is drawn beside the panel, where it hides
#: no curve and no label (a run of several models and pairs).
LEGEND_INSIDE = 4
LABEL_CHARS = 40
"""The longest model name a legend shows whole; a longer one is shortened in the middle
(``short_name``), so a long name never pushes the panels out of the figure."""


def log_axis(sizes: Sequence[float]) -> bool:
    """Whether a grid of m is drawn on a logarithmic axis by default: sizes spaced by
    ratios (not by one step) over a wide range (``LOG_SPAN``), as the text and K-class grids
    (10, 15, 20, 30, 50, ...). The paper's grids are evenly spaced: a linear axis."""
    m = np.unique(np.asarray(sizes, dtype=float))
    if m.size < 3 or m[0] <= 0 or m[-1] / m[0] < LOG_SPAN:
        return False
    steps = np.diff(m)
    return bool(steps.max() > 1.5 * steps.min())


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
    log_m: bool | None = False,
    pair_named: bool = True,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
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
        ``paired.csv`` (a - b per m). When given and the mean difference of its first pair
        changes sign, the first crossover is marked with a dotted grey vertical line and its m.
    crossover : mapping, optional
        The pair's crossovers (e.g. ``analysis.crossovers.task_crossovers``): used instead
        of ``paired``; its bootstrap ``interval``, when there is one, is shaded.
    paper : DataFrame, optional
        The paper's curves (``fidelity.paper_curve``: ``m, nb, lr``), drawn thin and black,
        NB solid and LR dashed, labelled "paper".
    pair_named : bool
        Whether the caption names the families of the crossover's pair: the crossover's
        legend then names its pair only when its models are not the families' plain models
        (``naming.plain``); else always.
    legend : bool
        Draw the legend in the panel (a figure of many panels shares one instead).
    xlabel, ylabel : str
        Axis labels ("" for none).
    log_m : bool or None
        A logarithmic m axis (from the smallest m to the largest); None: by the grid
        (``log_axis``).
    styles : mapping, optional
        Each model's line properties (``figure_styles`` of a figure's panels: every model
        of this panel); by default ``model_styles`` of this panel's models.

    Returns ``ax``. A curve with a single split per m (no interval) is drawn without band.
    """
    if summary.empty:
        ax.set_title(task_title(run_info))
        ax.text(0.5, 0.5, "no results", ha="center", va="center", transform=ax.transAxes)
        return ax
    order = model_order(summary, run_info)
    family = dict(zip(summary["model"].astype(str), summary["family"].astype(str),
                      strict=False))
    if styles is None:
        styles = model_styles([(m, family[m]) for m in order])
    drawn: list[tuple[np.ndarray, np.ndarray]] = []
    starts: dict[str, tuple[float, float]] = {}
    for name in order:
        rows = summary[summary["model"].astype(str) == name].sort_values("m", kind="stable")
        m = rows["m"].to_numpy(dtype=float)
        mean = rows["error_mean"].to_numpy(dtype=float)
        low = rows["ci_low"].to_numpy(dtype=float)
        high = rows["ci_high"].to_numpy(dtype=float)
        style = styles[name]
        # ours above the paper's thin black lines, which show where they differ
        ax.plot(m, mean, label=short_name(name), linewidth=1.4, zorder=4, **style)
        lone = isolated(mean)
        if lone.any():  # a line draws nothing there: a dot (whole on the panel's edge)
            bare = style.get("marker") is None
            ax.plot(m[lone], mean[lone], linestyle="none", color=style["color"],
                    marker=ISOLATED_MARKER if bare else style["marker"],
                    markersize=ISOLATED_MARKERSIZE if bare else style.get("markersize"),
                    zorder=4, label=f"_{name} alone", gid="isolated")
        drawn.append((m, mean))
        if len(m):
            starts[name] = (float(m[0]), float(mean[0]))
        band = np.isfinite(low) & np.isfinite(high)
        if band.any():
            ax.fill_between(m, low, high, where=band, color=style["color"], alpha=BAND_ALPHA,
                            linewidth=0, interpolate=False)
        if (band & lone).any():  # a band of one m has no width: its interval as a bar
            ax.vlines(m[band & lone], low[band & lone], high[band & lone],
                      color=style["color"], alpha=LONE_BAND_ALPHA, linewidth=LONE_BAND_WIDTH,
                      gid="isolated-interval")
    if paper is not None and not paper.empty:
        draw_paper(ax, paper)
        rows = paper.sort_values("m")
        drawn += [(rows["m"].to_numpy(float), rows[f].to_numpy(float)) for f in PAPER_PAIR]
    if crossover is None and paired is not None and not paired.empty:
        crossover = _crossover_of(paired)
    sizes = summary["m"].tolist()
    if log_m is None:
        log_m = log_axis(sizes)
    if log_m:
        ax.set_xscale("log")
        ax.set_xlim(min(float(v) for v in sizes), max(float(v) for v in sizes))
        # ticks at 1, 2, 5 times a power of ten, written as plain numbers (20, not 2x10^1)
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_xlim(*x_limits(run_info, sizes))
    ylim = y_limits(drawn)
    if ylim is not None:
        ax.set_ylim(*ylim)
        _note_clipped(ax, starts, ylim[1])
    _unclip_isolated(ax)
    if crossover is not None and crossover.first_crossover is not None:
        pair = (str(crossover.model_a), str(crossover.model_b))
        families = (family.get(pair[0], pair[0]), family.get(pair[1], pair[1]))
        after = crossover.better_after[0] if crossover.better_after else None
        named = pair_named and plain(pair, families)
        _mark_crossover(ax, crossover.first_crossover, crossover.interval,
                        "" if named else f" ({short_name(pair[0])} vs {short_name(pair[1])})",
                        a_ahead=title(families[0]) if after == pair[0] else None)
    ax.set_title(task_title(run_info, str(summary["task"].iloc[0])), fontsize="medium")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend:
        if len(ax.get_legend_handles_labels()[1]) > LEGEND_INSIDE:  # beside the panel
            ax.legend(fontsize="small", frameon=False, loc="upper left",
                      bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        else:
            placed = ax.legend(fontsize="small", frameon=False)
            notes = [t for t in ax.texts if t.get_gid() in TOP_NOTES]
            if notes:
                ax.add_artist(_LegendOffNotes(placed, notes))
    return ax


#: The notes written at the top of a panel, which its legend must not cover: the crossover's
#: m and the starts that run above the panel.
TOP_NOTES = ("crossover-label", "clipped-start")


class _LegendOffNotes(Artist):
    """Draws nothing: drawn just before the panel's legend (its zorder is just below), it
    looks where ``loc="best"`` puts the legend and, when that covers one of the ``notes`` at
    the top of the panel, has it placed, again by "best", in the part of the panel below
    them (if it fits there). matplotlib's "best" counts a covered text as one point of
    badness, as little as one point of a curve, so on a short log axis, where the bands
    fill the panel, it would rather cover the crossover's m than a band. Every draw decides
    afresh (another size or dpi); a legend that covers no note is left as it was."""

    def __init__(self, legend: Legend, notes: Sequence[Text]) -> None:
        super().__init__()
        self.legend, self.notes = legend, list(notes)
        self.set_zorder(legend.get_zorder() - 0.01)
        self.set_in_layout(False)

    def draw(self, renderer: Any) -> None:
        legend, panel = self.legend, self.axes.bbox
        legend.set_bbox_to_anchor(None)  # the whole panel, as ax.legend placed it
        box = legend.get_window_extent(renderer)
        covered = [b for b in (t.get_window_extent(renderer) for t in self.notes
                               if t.get_visible()) if b.overlaps(box)]
        if not covered:
            return
        # below the notes (and their white ground); the legend keeps its own pad inside
        top = min(b.y0 for b in covered) - renderer.points_to_pixels(2.0)
        if top - panel.y0 >= box.height:  # (left, bottom, width, height) of the panel
            legend.set_bbox_to_anchor((0.0, 0.0, 1.0, (top - panel.y0) / panel.height))


PAPER_STYLE = {"color": "black", "linewidth": 0.75}


def draw_paper(ax: Axes, paper: pd.DataFrame) -> None:
    """The paper's curves (``m, nb, lr``) on ``ax``: thin black lines under ours (drawn at
    ``zorder`` 4: where the two coincide, ours shows), NB solid, LR dashed (their
    approaches' styles), labelled "paper"."""
    rows = paper.sort_values("m")
    for family in PAPER_PAIR:
        ax.plot(rows["m"], rows[family], linestyle=LINESTYLES[approach(family)],
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
A_AHEAD_COLOR = APPROACH_COLORS[GENERATIVE]
CROSSOVER_STYLES = {"b": ":", "a": "-."}
"""The crossover's line: dotted grey where b goes ahead (the paper's story: LR), dash-dotted
blue where a does (sick: LR ahead at m = 2, NB from m ≈ 2.6)."""


def short_name(name: str, limit: int = LABEL_CHARS) -> str:
    """``name`` as a legend shows it: whole up to ``limit`` characters, else its start and
    its end around an ellipsis (two names differing only in the middle stay apart when
    their ends differ)."""
    if len(name) <= limit:
        return name
    tail = (limit - 1) // 3
    return f"{name[: limit - 1 - tail]}\u2026{name[-tail:]}"


def _mark_crossover(ax: Axes, loc: float, interval: Sequence[float] | None,
                    pair: str = "", a_ahead: str | None = None) -> None:
    """A vertical line at the first crossover, its m written beside it at the top of the
    panel (on a white ground, readable over the curves), and its interval shaded (clipped
    to the axes). ``a_ahead`` is the heading of model a (``NB``) when a is ahead after it:
    then dash-dotted blue, and "NB ahead after" in the legend and the label; else (b ahead
    or unknown) dotted grey. ``pair`` follows "crossover" in the legend (" (nb vs lr_l2)")."""
    color = A_AHEAD_COLOR if a_ahead else CROSSOVER_COLOR
    ahead_text = f", {a_ahead} ahead after" if a_ahead else ""
    legend = f"crossover{pair}" + ahead_text
    ax.axvline(loc, color=color, linewidth=1.1,
               linestyle=CROSSOVER_STYLES["a" if a_ahead else "b"],
               label=legend, gid="crossover")
    if interval is not None:
        lo, hi = ax.get_xlim()
        low, high = max(interval[0], lo), min(interval[1], hi)
        if high > low:
            ax.axvspan(low, high, color=color, alpha=0.12, linewidth=0,
                       label=f"crossover{pair}, 95% interval", gid="crossover-interval")
    lo, hi = ax.get_xlim()
    if ax.get_xscale() == "log":
        lo, hi, at = math.log(lo), math.log(hi), math.log(max(loc, 1e-9))
    else:
        at = loc
    right = at < lo + 0.6 * (hi - lo)  # the label on the side with more room
    ax.annotate(f"m ≈ {loc:.1f}" + ahead_text,
                xy=(loc, 1.0), xycoords=("data", "axes fraction"),
                xytext=(3 if right else -3, -3), textcoords="offset points",
                ha="left" if right else "right", va="top", fontsize="small",
                color="0.1", gid="crossover-label", zorder=6,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none",
                      "alpha": 0.85})


# --------------------------------------------------------------------------------------
# Many tasks
# --------------------------------------------------------------------------------------

def _crossover_of_task(task: Any, n_boot: int, seed: int,
                       pair: tuple[str, str] | None = None) -> Crossovers | None:
    """The task's crossovers (of ``pair``, by default its first) with the report's
    bootstrap interval when the folder has ``splits.csv.gz``; from ``paired.csv`` alone
    otherwise; None without either."""
    if not isinstance(task, TaskResults):
        getter = getattr(task, "saved_paired", None)
        paired = getter() if callable(getter) else None
        return _crossover_of(paired) if paired is not None and not paired.empty else None
    # a damaged or malformed table is refused (ResultsError), never drawn without its mark
    paired = task.saved_paired()
    if task.has_splits():
        task.splits()
    elif paired is None:
        return None  # no paired table and no splits: the curves without the mark
    try:
        return task_crossovers(task, pair, n_boot=n_boot, seed=seed)[1]
    except ResultsError:  # nothing to compare (one model family): the curves without the mark
        return None


def draw_task(ax: Axes, task: Any, *, paper: bool = False, n_boot: int = DEFAULT_N_BOOT,
              seed: int = 0, legend: bool = True) -> Axes:
    """One task's panel on ``ax``, as a panel of ``figure_of_tasks`` (the crossover and its
    bootstrap interval, the paper's curves when ``paper`` and the task is a panel of
    Figure 1), with its own legend."""
    return plot_task(ax, task.summary, task.run_info,
                     crossover=_crossover_of_task(task, n_boot, seed),
                     paper=_paper_of(task) if paper else None, legend=legend,
                     ylabel=f"mean {metric_label(task)}")


def _paper_of(task: Any) -> pd.DataFrame | None:
    """The paper's curves of a panel of Figure 1 (None for another task, or a metric other
    than the test error: the paper plots that alone)."""
    if metric_of(task) != "error":
        return None
    return paper_curve(str(task.name))


def _shared_legend(fig: Figure, axes: Sequence[Axes], ncols: int = 6) -> Legend:
    """One legend for all panels, above them: every label once, in the order first seen,
    our models first, then the paper's curves, then the crossover marks; ``ncols`` entries
    a row at most, fewer when those rows would be wider than the figure (long names, long
    crossover labels), measured with the figure's fonts at its dpi."""
    seen: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    def rank(label: str) -> int:
        return 2 if label.startswith("crossover") else 1 if label.startswith("paper: ") else 0

    labels = sorted(seen, key=rank)
    full = fig.bbox.width
    renderer = RendererAgg(int(full), int(fig.bbox.height), fig.dpi)
    cols = max(1, min(len(labels), ncols))
    while True:
        legend = fig.legend([seen[lab] for lab in labels], labels, loc="outside upper center",
                            ncols=cols, frameon=False, fontsize="medium")
        if cols == 1 or legend.get_window_extent(renderer).width <= full * (1 - 2 * FIT_MARGIN):
            return legend
        legend.remove()
        cols -= 1


def _line_styles(tasks: Sequence[Any]) -> str:
    """The caption's words for the line styles: the families of the tasks' models by
    approach, in their order ("NB solid, LR dashed"; "NB, LDA solid, LR dashed")."""
    families = []
    for t in tasks:  # in each run's model order (run.json), as the legend lists them
        if "family" not in t.summary:
            continue
        family = dict(zip(t.summary["model"].astype(str), t.summary["family"].astype(str),
                          strict=False))
        families += [family[m] for m in model_order(t.summary, t.run_info) if m in family]
    by_style: dict[str, list[str]] = {}
    for fam in dict.fromkeys(families):
        by_style.setdefault(LINESTYLES.get(approach(fam), OTHER_LINESTYLE), []).append(title(fam))
    words = {"-": "solid", "--": "dashed", OTHER_LINESTYLE: "dotted"}
    parts = [f"{', '.join(by_style[style])} {word}" for style, word in words.items()
             if style in by_style]
    return "; ".join([", ".join(parts)] if parts else [])


def caption(tasks: Sequence[Any], *, paper: bool, intervals: bool = True,
            a_ahead: bool = False, clipped: bool = False, short: bool = False,
            b_ahead: bool = True, names: tuple[str, str] | None = None,
            what: str | None = None) -> str:
    """What the figure shows, in one or two lines: splits, line styles, bands, the crossover
    after which b is ahead when ``b_ahead`` (and its shaded interval when ``intervals``),
    the dash-dotted one after which a is when ``a_ahead``, the starts written at the top
    when ``clipped``, the paper's curves when ``paper``; ``short`` for a single panel.
    ``names``: the headings of the crossovers' pair when every panel's pair has the same
    two families (``naming.shared_titles``: ``("NB", "LR")``), else None (each panel's pair
    is named in the legend). ``what``: the words after "Mean" (by default the first
    task's metric)."""
    counts = {int(n) for t in tasks for n in t.summary.get("n_splits", [])}
    n = counts.pop() if len(counts) == 1 else None
    A, B = names or GENERIC
    if what is None:
        what = metric_label(tasks[0]) if tasks else "test error"
    if short:
        parts = [f"Mean {what} over {n or 'the'} splits per m, 95% bands"]
        if b_ahead:
            parts.append(f"dotted: first crossover, {B} ahead after")
        if intervals:
            parts.append("shaded: the crossover's 95% interval")
        if a_ahead:
            parts.append(f"dash-dotted blue: {A} ahead after")
        if clipped:
            parts.append("↑: errors at the smallest m, above the axis")
        if paper:
            parts.append("thin black: the paper's curves")
        return "; ".join(parts) + "."
    splits = f"{n} random train/test splits" if n else "the random train/test splits"
    styles = _line_styles(tasks)
    text = (f"Mean {what} over {splits} at each training-set size m; "
            + (f"{styles}; " if styles else "")
            + "bands: 95% confidence interval of the mean.")
    pair = (f"of {A} and {B}" if names is not None
            else "of each panel's pair a and b (named in its legend)")
    if b_ahead:
        text += f" Dotted line: first crossover {pair}, {B} ahead after it (m written beside it)"
        text += ", shaded: its 95% bootstrap interval." if intervals else "."
    if a_ahead:
        text += f" Dash-dotted blue: a first crossover after which {A} is ahead."
    if clipped:
        text += " ↑: errors at the smallest m, above the axis."
    if paper:
        text += " Thin black: the paper's curves (Ng & Jordan 2001, Figure 1)."
    return text


def figure_of_tasks(tasks: Sequence[Any], *, ncols: int | None = None, suptitle: str | None = None,
                    panel_size: tuple[float, float] = PANEL_SIZE, paper: bool = False,
                    n_boot: int = DEFAULT_N_BOOT, seed: int = 0, log_m: bool | None = None,
                    titles: Sequence[str] | None = None, what: str | None = None,
                    legend_cols: int = 6, pair: tuple[str, str] | None = None) -> Figure:
    """One panel per task, in the given order, ``ncols`` panels a row (default 3, or 2 for
    four panels: two rows of two, no empty places).

    ``tasks`` are objects with ``name``, ``summary`` and ``run_info`` (e.g.
    ``nbvslr.results.TaskResults``); a ``saved_paired()`` method, when present, supplies the
    crossover mark, and a task folder with ``splits.csv.gz`` its bootstrap interval (``n_boot``
    resamples, seeded as in the report by ``seed``). ``paper`` overlays the paper's curves
    on the panels of Figure 1; ``log_m`` draws m on a log scale (None: each panel by its
    grid, ``log_axis``; False: linear). Several panels share one
    legend; every figure has a caption below its panels; it names the crossovers' pair
    when every panel's has the same two families. ``titles``: each panel's title instead
    of its task's, and an axis label on every panel (panels of one task's metrics,
    ``figure_of_metrics``); ``what``: the caption's words for what is drawn;
    ``legend_cols``: the most entries a row of the shared legend (fewer where they would
    not fit the figure); ``pair``: the pair whose
    crossover every panel marks (by default each task's first).
    """
    n = len(tasks)
    if n == 0:
        raise ValueError("figure_of_tasks: no tasks to draw")
    if ncols is None:
        ncols = 2 if n == 4 else 3
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    shared = n > 1
    # a caption of a few lines below the panels: room for it
    fig = ShownFigure(figsize=(panel_size[0] * ncols,
                               panel_size[1] * nrows + (0.9 if shared else 0.8)),
                      dpi=100, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    crosses = [_crossover_of_task(task, n_boot, seed, pair) for task in tasks]
    styles = figure_styles(tasks)  # one name, one style, in every panel and the legend
    crossed = [c for c in crosses if c is not None and c.first_crossover is not None]
    names = shared_titles(
        (family_of(t, c.model_a), family_of(t, c.model_b))
        for t, c in zip(tasks, crosses, strict=True)
        if c is not None and c.first_crossover is not None)
    intervals = drawn_paper = False  # what the caption has to explain
    a_ahead = b_ahead = False
    for cross in crossed:
        intervals |= cross.interval is not None
        a_first = bool(cross.better_after and cross.better_after[0] == cross.model_a)
        a_ahead |= a_first
        b_ahead |= not a_first
    for k, (ax, task, cross) in enumerate(zip(axes, tasks, crosses, strict=False)):
        curves = _paper_of(task) if paper else None
        drawn_paper |= curves is not None
        plot_task(ax, task.summary, task.run_info, crossover=cross, paper=curves,
                  legend=not shared, log_m=log_m, pair_named=names is not None,
                  styles=styles,
                  ylabel=f"mean {metric_label(task)}"
                  if k % ncols == 0 or not shared or titles is not None else "")
        if titles is not None:
            ax.set_title(titles[k], fontsize="medium")
    for ax in axes[n:]:
        fig.delaxes(ax)
    if not shared and len(axes[0].get_legend_handles_labels()[1]) > LEGEND_INSIDE:
        fig.set_figwidth(panel_size[0] * 1.7)  # room for the legend beside the panel
    if shared:
        _shared_legend(fig, axes[:n], ncols=legend_cols)
    clipped = any(t.get_gid() == "clipped-start" for ax in axes[:n] for t in ax.texts)
    text = caption(tasks, paper=drawn_paper, intervals=intervals, a_ahead=a_ahead,
                   clipped=clipped, short=not shared, b_ahead=b_ahead, names=names,
                   what=what)
    per_inch = 14 if shared else 17  # characters of the caption's font per inch
    width = fig.get_figwidth()
    label = fig.supxlabel("\n".join(textwrap.wrap(text, width=int(per_inch * width))),
                          fontsize="medium" if shared else "small", ha="left", x=0.01)
    if suptitle:
        fig.suptitle(suptitle)
    fit_texts(fig, axes[:n], ncols, label, text)
    return fig


FIT_MARGIN = 0.01
"""Share of the figure's width kept clear at its right edge by the caption and the titles."""


TITLE_CHECKED = 0.75
"""A title narrower than this share of its column fits wherever the layout centres it; a
wider one is measured on the laid-out figure."""


def _fits(text: Text, left: float, right: float, renderer: Any) -> bool:
    box = text.get_window_extent(renderer)
    return box.x0 >= left and box.x1 <= right


def _wrap_to_fit(text: Text, words: str, left: float, right: float, renderer: Any) -> None:
    """Rewrap ``text`` (the string ``words``) a few characters a line narrower at a time
    until it lies between ``left`` and ``right`` (pixels)."""
    chars = max(len(line) for line in text.get_text().split("\n"))
    while not _fits(text, left, right, renderer) and chars > 10:
        chars -= 2
        text.set_text("\n".join(textwrap.wrap(words, width=chars)))


def fit_to_width(fig: Figure, text: Text, words: str) -> None:
    """Wrap a text of the figure (its suptitle; ``words``: the text unwrapped) until it lies
    inside the figure's width, ``FIT_MARGIN`` clear of each edge, measured with the
    figure's fonts at its dpi: a title wider than a figure of one or two panels is cut at
    both edges."""
    full = fig.bbox.width
    renderer = RendererAgg(int(full), int(fig.bbox.height), fig.dpi)
    _wrap_to_fit(text, words, FIT_MARGIN * full, full * (1 - FIT_MARGIN), renderer)


def fit_texts(fig: Figure, axes: Sequence[Axes], ncols: int, caption_text: Text,
              words: str) -> None:
    """Keep the caption inside the figure and every panel's title inside its column,
    wrapping them where they would stick out: the caption's characters per inch are only
    a first guess, and a long title centred over its axes can pass the figure's edge.
    Measured with the figure's fonts at its dpi; the layout is computed for it only when a
    title is wide enough to need it (``TITLE_CHECKED``)."""
    full = fig.bbox.width
    renderer = RendererAgg(int(full), int(fig.bbox.height), fig.dpi)
    _wrap_to_fit(caption_text, words, 0.0, full * (1 - FIT_MARGIN), renderer)
    column = full / max(1, ncols)
    wide = [(k, ax) for k, ax in enumerate(axes) if ax.title.get_text()
            and ax.title.get_window_extent(renderer).width > TITLE_CHECKED * column]
    if not wide:
        return
    fig.draw_without_rendering()  # the layout places the titles
    for k, ax in wide:
        left = (k % ncols) * column
        right = left + column - FIT_MARGIN * full
        _wrap_to_fit(ax.title, ax.title.get_text(), left, right, renderer)


def figure_of_metrics(views: Sequence[Any], *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
                      panel_size: tuple[float, float] = PANEL_SIZE) -> Figure:
    """One task's learning curves of several metrics, a panel per metric (``views``: the
    task seen through each, ``analysis.metrics.for_metric``; each panel ``nbvslr plot
    --metric``'s), titled by its metric, two panels a row for four, one legend above them
    (the page's heading names the task). Every panel marks the crossover of one pair: the
    first that every metric compares (a metric without class probabilities on some model
    compares fewer pairs), so that the panels' marks can be set against each other."""
    n = len(views)
    pairs = [list(dict.fromkeys(zip(p["model_a"].astype(str), p["model_b"].astype(str),
                                    strict=True)))
             for p in (task_paired(v) for v in views)]
    pair = next((q for q in pairs[0] if all(q in other for other in pairs[1:])), None)
    return figure_of_tasks(views, ncols=2 if n == 4 else 3, panel_size=panel_size,
                           n_boot=n_boot, seed=seed,
                           titles=[metric_label(v)[0].upper() + metric_label(v)[1:]
                                   for v in views],
                           what="value of each panel's metric",
                           legend_cols=3 if n == 4 else 6,  # as wide as two panels
                           pair=pair)


def figure1(tasks: Sequence[Any], *, suptitle: str | None = None,
            panel_size: tuple[float, float] = PANEL_SIZE, paper: bool = True,
            n_boot: int = DEFAULT_N_BOOT, seed: int = 0, log_m: bool = False) -> Figure:
    """The paper's Figure 1: every given task, 3 panels a row (5 x 3 for the 15 tasks),
    built-in tasks in the paper's panel order, other tasks after them; the paper's own
    curves overlaid on its panels unless ``paper`` is False."""
    names = [str(t.name) for t in tasks]
    ordered = [tasks[i] for i in panel_order(names)]
    return figure_of_tasks(ordered, ncols=3, suptitle=suptitle, panel_size=panel_size,
                           paper=paper, n_boot=n_boot, seed=seed, log_m=log_m)


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
