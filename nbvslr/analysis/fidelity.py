"""How close a run comes to the paper: our curves against the published Figure 1.

The paper's curves ship with the package (``nbvslr/data/paper/figure1_digitized.csv``, read
from the vector drawing of the published PDF, about ±0.002; provenance in the README beside
it). For each built-in panel found in a results folder this module measures

- the mean |ours − paper| of each curve over the sizes m that both have;
- the model *ahead* at the smallest and at the largest of those m, for the paper and for
  us (``nbvslr.analysis.winner.ahead``: from the mean errors alone, since the paper's curves
  have no intervals; ``"nb"`` or ``"lr"`` when one is lower by more than ``tie``, 0.005,
  about twice the digitization error, else ``"tie"``). It is not the report's *winner*,
  which needs the paired interval of our splits;
- the crossovers of each pair of curves (every m where NB − LR changes sign, linearly
  interpolated, the rule of ``crossovers.sign_changes``, with the model ahead after it): the
  paper's on its grid, ours on every size of the run;

and a summary over the panels: how many are within ``tol`` (0.03) on both curves, and how
many agree with the paper on the model ahead at each end.

Public API: ``paper_curves``, ``paper_curve``, ``panel_order``, ``crossings``, ``compare_curves``
(two tables of ``m, nb, lr``: the core), ``our_curves``, ``compare_tasks``, ``compare_results``,
``summarize``, ``summary_line`` and ``markdown``.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd

from nbvslr.analysis.crossovers import sign_changes
from nbvslr.analysis.formatting import m_text, number
from nbvslr.analysis.winner import SLACK, TIE, ahead
from nbvslr.data.recipes import BUILTIN_TASKS
from nbvslr.errors import ConfigError, ResultsError
from nbvslr.results.read import load_results

PAPER_FILE = "figure1_digitized.csv"
TOL = 0.03  # a panel is "within" when both curves are at most this far on average
PAPER_PAIR = ("nb", "lr")
"""The paper's two models, a and b of every panel: the columns of its digitized curves, and
the families whose first models are set against them by default."""
CURVE_COLUMNS = ("m", *PAPER_PAIR)

PathLike = str | os.PathLike


# --------------------------------------------------------------------------------------
# The paper's curves
# --------------------------------------------------------------------------------------

@functools.cache
def _paper_table() -> pd.DataFrame:
    text = resources.files("nbvslr.data").joinpath("paper", PAPER_FILE).read_text("utf-8")
    table = pd.read_csv(io.StringIO(text))
    return table[["task", *CURVE_COLUMNS]]


def paper_curves() -> pd.DataFrame:
    """The paper's Figure 1: columns ``task, m, nb, lr``, one row per panel and m (a copy)."""
    return _paper_table().copy()


def panel_order(names: Sequence[str]) -> list[int]:
    """Indices of ``names`` in the paper's panel order: built-in tasks first, in Figure 1's
    order, then the others in the order given (the figure's and the report's order)."""
    builtin = {n: i for i, n in enumerate(BUILTIN_TASKS)}
    return sorted(range(len(names)),
                  key=lambda i: (0, builtin[names[i]], i) if names[i] in builtin
                  else (1, 0, i))


def paper_curve(task: str) -> pd.DataFrame | None:
    """The paper's ``m, nb, lr`` for one panel (increasing m), or None for a task not in it."""
    table = _paper_table()
    rows = table[table["task"] == task]
    if rows.empty:
        return None
    return rows[list(CURVE_COLUMNS)].sort_values("m").reset_index(drop=True)


# --------------------------------------------------------------------------------------
# One panel
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PanelFidelity:
    """One panel, ours against the paper.

    Attributes
    ----------
    task : str
    label : str
        How the panel is named in a table (the task, plus the models when not nb and lr).
    sizes : tuple of int
        The m's both have (the differences are averaged over these).
    diff_nb, diff_lr : float
        Mean |ours − paper| of the NB and the LR curve over ``sizes``.
    paper_ends, our_ends : tuple of str
        The model ahead (``ahead``: ``"nb"``, ``"lr"`` or ``"tie"``) at ``sizes[0]`` and
        ``sizes[-1]``.
    paper_crossings, our_crossings : tuple of (float, str)
        Every m where NB − LR changes sign, with the model ahead after it (``"nb"`` or
        ``"lr"``), in increasing m; empty when the curves do not cross in the range.
    """

    task: str
    label: str
    sizes: tuple[int, ...]
    diff_nb: float
    diff_lr: float
    paper_ends: tuple[str, str]
    our_ends: tuple[str, str]
    paper_crossings: tuple[tuple[float, str], ...]
    our_crossings: tuple[tuple[float, str], ...]

    @property
    def paper_crossover(self) -> float | None:
        """The paper's first crossover, None without one."""
        return self.paper_crossings[0][0] if self.paper_crossings else None

    @property
    def our_crossover(self) -> float | None:
        """Our first crossover, None without one."""
        return self.our_crossings[0][0] if self.our_crossings else None

    def within(self, tol: float = TOL) -> bool:
        """Both curves at most ``tol`` from the paper's on average."""
        return max(self.diff_nb, self.diff_lr) <= tol + SLACK

    def agrees_at(self, end: int) -> bool:
        """The same model ahead as the paper's at the smallest (``end=0``) or largest
        (``-1``) m."""
        return self.paper_ends[end] == self.our_ends[end]


def crossings(m: Sequence[float], nb: Sequence[float],
              lr: Sequence[float]) -> tuple[tuple[float, str], ...]:
    """Every m where ``nb - lr`` changes sign (``crossovers.sign_changes``), with the model ahead
    after it: ``((m, "lr" or "nb"), ...)``.

    m : increasing sizes of shape (M,); nb, lr : mean errors of shape (M,).
    """
    d = np.asarray(nb, dtype=float) - np.asarray(lr, dtype=float)  # (M,)
    a, b = PAPER_PAIR
    return tuple((loc, b if after > 0 else a)
                 for loc, after in sign_changes(np.asarray(m, dtype=float), d))


def _check_curves(curves: pd.DataFrame, what: str) -> pd.DataFrame:
    missing = [c for c in CURVE_COLUMNS if c not in curves.columns]
    if missing:
        raise ResultsError(f"{what}: missing column(s) {', '.join(missing)}; expected "
                           f"{', '.join(CURVE_COLUMNS)}")
    curves = curves[list(CURVE_COLUMNS)].dropna().sort_values("m", kind="stable")
    if curves["m"].duplicated().any():
        raise ResultsError(f"{what}: a size m appears more than once")
    return curves.reset_index(drop=True)


def compare_curves(task: str, ours: pd.DataFrame, paper: pd.DataFrame, *, tie: float = TIE,
                   label: str | None = None) -> PanelFidelity:
    """Compare one panel's curves with the paper's.

    Parameters
    ----------
    task : str
    ours, paper : DataFrame
        Columns ``m, nb, lr``: the mean test error of each model at each m (rows with a
        missing value are ignored).
    tie : float
        Mean errors closer than this are a tie (``ahead``).
    label : str, optional
        The panel's name in a table (default: ``task``).

    Raises ``ResultsError`` when the two tables have fewer than two sizes in common (the
    smallest and the largest m are the two ends compared).
    """
    ours = _check_curves(ours, f"{task}: our curves")
    paper = _check_curves(paper, f"{task}: the paper's curves")
    both = ours.merge(paper, on="m", suffixes=("_ours", "_paper"))  # increasing m
    if both.empty:
        raise ResultsError(
            f"{task}: no size m in common with the paper's grid "
            f"({paper['m'].min()}..{paper['m'].max()}); run with `sizes: paper`")
    if len(both) < 2:  # the smallest m would be the largest: one verdict counted twice
        raise ResultsError(
            f"{task}: only m = {int(both['m'].iloc[0])} in common with the paper's grid "
            f"({paper['m'].min()}..{paper['m'].max()}), and the comparison's two ends need "
            "two sizes; run with `sizes: paper`")
    ends = (0, len(both) - 1)
    return PanelFidelity(
        task=task,
        label=label or task,
        sizes=tuple(int(m) for m in both["m"]),
        diff_nb=float(np.mean(np.abs(both["nb_ours"] - both["nb_paper"]))),
        diff_lr=float(np.mean(np.abs(both["lr_ours"] - both["lr_paper"]))),
        paper_ends=tuple(ahead(both["nb_paper"][i], both["lr_paper"][i], PAPER_PAIR, tie)
                         for i in ends),
        our_ends=tuple(ahead(both["nb_ours"][i], both["lr_ours"][i], PAPER_PAIR, tie)
                       for i in ends),
        paper_crossings=crossings(paper["m"], *(paper[c] for c in PAPER_PAIR)),
        our_crossings=crossings(ours["m"], *(ours[c] for c in PAPER_PAIR)),
    )


# --------------------------------------------------------------------------------------
# Results folders
# --------------------------------------------------------------------------------------

def _first_of_family(task, family: str) -> str | None:
    fam = dict(zip(task.summary["model"].astype(str), task.summary["family"].astype(str),
                   strict=False))
    return next((m for m in task.model_order() if fam.get(m) == family), None)


def our_curves(task, nb: str | None = None, lr: str | None = None) -> pd.DataFrame:
    """A task's mean errors as ``m, nb, lr`` (the sizes where both models have results).

    task : ``results.TaskResults`` (``summary``, ``model_order()``). ``nb``, ``lr``: the
    models to compare (default: the first model of each family, in config order).
    """
    names = {fam: chosen or _first_of_family(task, fam)
             for fam, chosen in zip(PAPER_PAIR, (nb, lr), strict=True)}
    present = sorted(set(task.summary["model"].astype(str)))
    fam = dict(zip(task.summary["model"].astype(str), task.summary["family"].astype(str),
                   strict=False))
    for role, name in names.items():
        if name is None or name not in present:
            raise ConfigError(
                f"{task.name}: no {role.upper()} model "
                f"{f'named {name!r} ' if name else ''}in {task.folder}; models there: "
                f"{', '.join(present)} (choose one with --{role} NAME)")
        if fam.get(name) != role:  # the paper's pair: a naive Bayes and an LR model
            of_role = [m for m in present if fam.get(m) == role]
            raise ConfigError(
                f"{task.name}: {name!r} is a model of family {fam.get(name)!r}, not {role!r}; "
                f"--{role} names one of the {role} family"
                + (f" ({', '.join(of_role)})" if of_role else f" (none in {task.folder})"))
    wide = task.summary.pivot_table(index="m", columns="model", values="error_mean",
                                    aggfunc="first")
    out = pd.DataFrame({"m": wide.index.astype(int),
                        **{fam: wide[names[fam]].to_numpy(dtype=float)
                           for fam in PAPER_PAIR}})
    return out.dropna().reset_index(drop=True)


def compare_tasks(tasks: Iterable, *, nb: str | None = None, lr: str | None = None,
                  tie: float = TIE, strict: bool = True) -> list[PanelFidelity]:
    """``compare_curves`` of every task that is a panel of the paper, in the paper's order.

    tasks : ``results.TaskResults`` objects (others, e.g. synthetic tasks, are skipped).
    strict : when False, a panel that cannot be compared (no NB or no LR model, no size in
    common with the paper) is left out instead of raising.
    """
    order = {t: i for i, t in enumerate(pd.unique(_paper_table()["task"]))}
    panels = [t for t in tasks if t.name in order]
    panels.sort(key=lambda t: order[t.name])
    names = [t.name for t in panels]
    out = []
    for task in panels:
        label = task.name
        if nb or lr:
            label += f" ({nb or PAPER_PAIR[0]} vs {lr or PAPER_PAIR[1]})"
        if names.count(task.name) > 1:
            label += f" ({task.folder})"
        try:
            out.append(compare_curves(task.name, our_curves(task, nb, lr),
                                      paper_curve(task.name), tie=tie, label=label))
        except (ConfigError, ResultsError):
            if strict:
                raise
    return out


def compare_results(results_dirs: PathLike | Iterable[PathLike], *, nb: str | None = None,
                    lr: str | None = None, tie: float = TIE) -> list[PanelFidelity]:
    """``compare_tasks`` of the results folders (a task folder or a root of task folders).

    Raises ``ResultsError`` when a folder does not exist or holds no panel of the paper.
    """
    if isinstance(results_dirs, str | os.PathLike):
        results_dirs = [results_dirs]
    results_dirs = [str(p) for p in results_dirs]
    panels = compare_tasks(load_results(results_dirs), nb=nb, lr=lr, tie=tie)
    if not panels:
        raise ResultsError(
            f"{', '.join(results_dirs)}: no panel of the paper's Figure 1 to compare with "
            f"(it has the built-in tasks only: "
            f"{', '.join(pd.unique(_paper_table()['task']))})")
    return panels


# --------------------------------------------------------------------------------------
# Summary and table
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Summary:
    """Counts over the compared panels (``n`` of them)."""

    n: int
    within: int
    agree_smallest: int
    agree_largest: int
    tol: float


def summarize(panels: Sequence[PanelFidelity], tol: float = TOL) -> Summary:
    """How many panels are within ``tol`` on both curves, and agree on the model ahead at
    each end."""
    return Summary(
        n=len(panels),
        within=sum(p.within(tol) for p in panels),
        agree_smallest=sum(p.agrees_at(0) for p in panels),
        agree_largest=sum(p.agrees_at(-1) for p in panels),
        tol=tol,
    )


def summary_line(panels: Sequence[PanelFidelity], tol: float = TOL) -> str:
    """One sentence: panels within ``tol`` on both curves, and ends where the same model is
    ahead."""
    s = summarize(panels, tol)
    return (f"{s.within} of {s.n} panels within {tol:g} of the paper on both curves "
            f"(mean |Δ|); the model ahead is the paper's at the smallest m on "
            f"{s.agree_smallest} of {s.n}, at the largest m on {s.agree_largest} of {s.n}.")


def _diff(x: float, tol: float) -> str:
    text = number(x)
    return f"**{text}**" if x > tol + SLACK else text


def _crossings(cross: tuple[tuple[float, str], ...]) -> str:
    return ", ".join(f"{m_text(m)} → {after}" for m, after in cross) or "none"


def _ends(ends: tuple[str, str], paper: tuple[str, str]) -> str:
    return ", ".join(e if e == p else f"**{e}**" for e, p in zip(ends, paper, strict=True))


HEADER = ("panel", "m", "mean abs. diff. NB", "mean abs. diff. LR", "ahead at ends, paper",
          "ahead at ends, ours", "crossovers, paper", "crossovers, ours")

NOTES = """\
- Against the paper's Figure 1 as published (digitized from the PDF's vector drawing,
  ±0.002; `nbvslr/data/paper/`). mean abs. diff.: the mean |ours − paper| of the curve over
  the sizes m both have; **bold** when above {tol:g}.
- ahead at ends: the model with the lower mean error at the smallest and the largest of
  those m, `tie` when NB and LR are within {tie:g} (the paper's curves have no intervals:
  this is not the report's winner, which needs the paired interval of the splits); ours in
  **bold** where it differs from the paper's.
- crossovers: every m where NB − LR changes sign, linearly interpolated, and the model
  ahead after it (the paper's on its grid, ours on every size of the run); `none`: the
  curves do not cross in the range."""


def markdown(panels: Sequence[PanelFidelity], *, tol: float = TOL, tie: float = TIE,
             notes: bool = True) -> str:
    """The comparison as a Markdown table, then the summary line (and the definitions)."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for p in panels:
        cells = [p.label, f"{p.sizes[0]}–{p.sizes[-1]}", _diff(p.diff_nb, tol),
                 _diff(p.diff_lr, tol), ", ".join(p.paper_ends),
                 _ends(p.our_ends, p.paper_ends), _crossings(p.paper_crossings),
                 _crossings(p.our_crossings)]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    text = "\n".join(lines) + "\n\n" + summary_line(panels, tol) + "\n"
    if notes:
        text += "\n" + NOTES.format(tol=tol, tie=tie) + "\n"
    return text
