"""``nbvslr compare``, the curve guard: compare a new run's curves with a committed reference.

``compare(reference, new)`` reads two sets of results (folders ``<out>/<task>/summary.csv``
and ``paired.csv``, or the tables themselves) and returns a ``Report`` whose ``ok`` is
False when a curve moved by more than its noise. ``Report.table()`` lists what moved.
A deliberate change is reviewed with that table, then committed with a new reference.

Only summaries are used (``splits.csv.gz`` is not committed), so every check works from
the means, the standard errors (sem) and the split counts of both runs. The new run may
have far fewer splits than the reference; its sems are then larger and every tolerance
grows with them.

The rules (points, ends, new crossovers, crossovers, missing sizes) and how their
thresholds keep the chance of any false alarm at ``alpha``: docs/guard.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from nbvslr.analysis.crossovers import Crossovers, crossing_from, crossovers
from nbvslr.analysis.formatting import m_text, number, signed
from nbvslr.analysis.stats import normal_quantile, t_quantile, task_rng
from nbvslr.analysis.winner import NEITHER, winner
from nbvslr.errors import ResultsError
from nbvslr.results.layout import PAIRED_COLUMNS, SUMMARY_COLUMNS
from nbvslr.results.read import Tables, load_tables

DEFAULT_ALPHA = 0.01
"""Chance of any false alarm over the whole comparison."""

DEFAULT_FLOOR = 0.002
"""Added to every tolerance (error units): a fifth of a percentage point."""

CROSS_DRAWS = (20_000, 200_000)
"""Fewest and most simulated curves per crossover check (about 40 beyond each end)."""

_CHUNK = 50_000  # simulated curves per batch (memory: _CHUNK x sizes floats)
KINDS = ("missing", "point", "end", "sign", "crossover")


# --------------------------------------------------------------------------- inputs


def _as_tables(run: Tables | str | Path | tuple, what: str) -> Tables:
    if isinstance(run, Tables):
        tables = run
    elif isinstance(run, str | Path):
        tables = load_tables(run)
    elif isinstance(run, tuple) and len(run) == 2:
        tables = Tables(run[0], run[1] if run[1] is not None
                        else pd.DataFrame(columns=list(PAIRED_COLUMNS)))
    else:
        raise TypeError(f"{what}: expected a folder, Tables or (summary, paired), got "
                        f"{type(run).__name__}")
    for df, columns, name in ((tables.summary, SUMMARY_COLUMNS, "summary"),
                              (tables.paired, PAIRED_COLUMNS, "paired")):
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise ResultsError(f"{what} {name} table: missing column(s) {', '.join(missing)}")
    return tables


# --------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Check:
    """One comparison between the reference and the new run.

    ``kind`` is one of ``KINDS``. ``model`` is a model name, or ``"a-b"`` for the paired
    checks. ``reference`` and ``new`` are the compared values (mean error, mean paired
    difference, or crossover location; NaN when absent); ``tolerance`` the allowed
    ``|new - reference|`` (NaN for crossovers, whose accepted range is ``interval``).
    """

    task: str
    kind: str
    model: str
    m: float
    reference: float
    new: float
    tolerance: float
    passed: bool
    detail: str
    interval: tuple[float, float] | None = None

    @property
    def change(self) -> float:
        """``new - reference``."""
        return self.new - self.reference

    @property
    def ratio(self) -> float:
        """``|new - reference| / tolerance`` (above 1 on a failed point; NaN if undefined)."""
        if not self.tolerance > 0 or not math.isfinite(self.change):
            return math.nan
        return abs(self.change) / self.tolerance

    def message(self) -> str:
        """One line naming the task, model and m, and what moved."""
        return f"{self.task}: {self.model} at m = {m_text(self.m)}: {self.detail}"


@dataclass(frozen=True)
class Report:
    """Every check of one comparison, and the thresholds that were used."""

    checks: tuple[Check, ...]
    z: float
    z_sign: float
    floor: float
    alpha: float
    cross_tail: float
    tasks: tuple[str, ...]
    not_compared: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when no check failed."""
        return all(c.passed for c in self.checks)

    @property
    def violations(self) -> list[Check]:
        """The failed checks, in task order."""
        return [c for c in self.checks if not c.passed]

    def only(self, task: str) -> Report:
        """The checks of one task (thresholds unchanged: still those of the whole run)."""
        return replace(self, checks=tuple(c for c in self.checks if c.task == task),
                       tasks=(task,), not_compared=())

    def messages(self) -> list[str]:
        """One line per violation."""
        return [c.message() for c in self.violations]

    def counts(self) -> dict[str, int]:
        """Number of checks of each kind."""
        return {k: sum(c.kind == k for c in self.checks) for k in KINDS}

    def table(self, largest: int = 10) -> str:
        """A readable table of what moved: every violation, then the ``largest`` other
        checks ranked by ``|change| / tolerance`` (so a reviewer sees the drift that is
        still within the noise)."""
        counts = self.counts()
        head = [
            f"curve guard: {len(self.tasks)} task(s); {counts['point']} points, "
            f"{counts['end'] + counts['sign']} sign checks, {counts['crossover']} "
            f"crossovers; z = {self.z:.2f} (points), {self.z_sign:.2f} (signs), "
            f"floor = {self.floor:g}, alpha = {self.alpha:g}",
        ]
        bad = self.violations
        head.append(f"FAILED: {len(bad)} of {len(self.checks)} checks" if bad
                    else f"OK: all {len(self.checks)} checks within the noise")
        if self.not_compared:
            head.append(f"not in the new run (not compared): {', '.join(self.not_compared)}")
        passed = [c for c in self.checks if c.passed and math.isfinite(c.ratio)]
        passed.sort(key=lambda c: -c.ratio)
        rows = [*bad, *passed[:largest]]
        if not rows:
            return "\n".join(head)
        cols = ["task", "check", "model", "m", "reference", "new", "change", "allowed",
                "moved", "status"]
        cells = [[c.task, c.kind, c.model, m_text(c.m), _num(c.reference), _num(c.new),
                  signed(c.change), _allowed(c), number(c.ratio, 2),
                  "ok" if c.passed else "FAIL"] for c in rows]
        widths = [max(len(col), *(len(r[i]) for r in cells)) for i, col in enumerate(cols)]
        line = "  ".join(col.ljust(w) for col, w in zip(cols, widths, strict=True))
        out = [*head, "", line, "  ".join("-" * w for w in widths)]
        for i, r in enumerate(cells):
            if i == len(bad) and bad:
                out.append("  ".join("." * w for w in widths))
            out.append("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
        notes = [c.message() for c in bad if c.kind != "point"]
        if notes:
            out += ["", "shape:"] + [f"  {m}" for m in notes]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()


def _num(x: float) -> str:
    """A compared value: an error to 4 decimals; a crossover beyond the range (infinite)
    ``none`` (after it) or ``before``."""
    if isinstance(x, float) and math.isinf(x):
        return "none" if x > 0 else "before"
    return number(x, 4)


def _allowed(c: Check) -> str:
    if c.interval is not None:
        return f"[{m_text(c.interval[0]) if math.isfinite(c.interval[0]) else 'before'}, " \
               f"{m_text(c.interval[1]) if math.isfinite(c.interval[1]) else 'none'}]"
    return number(c.tolerance, 4)


# --------------------------------------------------------------------------- thresholds


def bonferroni_z(alpha: float, n_tests: int, n_splits: int | None = None) -> float:
    """Two-sided multiplier for ``n_tests`` tests with a family-wise error ``alpha``.

    ``t_{1 - alpha / (2 n_tests), n_splits - 1}`` (Student t), or the normal quantile when
    ``n_splits`` is None.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    p = 1.0 - alpha / (2.0 * max(int(n_tests), 1))
    if n_splits is None:
        return normal_quantile(p)
    if n_splits < 2:
        raise ResultsError(f"a run with {n_splits} split(s) per size has no standard error; "
                           "use at least 2 splits")
    return t_quantile(p, int(n_splits) - 1)


def _combined_sem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sqrt(np.asarray(a, dtype=float) ** 2 + np.asarray(b, dtype=float) ** 2)


# --------------------------------------------------------------------------- checks


def _point_frames(ref: pd.DataFrame, new: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Both runs' points side by side (``_ref``/``_new`` columns), one frame per task."""
    keys = ["task", "model", "m"]
    cols = [*keys, "n_splits", "error_mean", "error_sem"]
    both = ref.loc[:, cols].merge(new.loc[:, cols], on=keys, how="outer",
                                  suffixes=("_ref", "_new"), indicator=True)
    both["task"] = both["task"].astype(str)
    return {task: g.sort_values(keys, kind="stable").reset_index(drop=True)
            for task, g in both.groupby("task", sort=False)}


def _by_task(paired: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each task's rows of its first pair (the first of ``paired.csv``), by increasing m."""
    out = {}
    for task, g in paired.groupby("task", sort=False):
        first = g.iloc[0]
        g = g[(g["model_a"] == first["model_a"]) & (g["model_b"] == first["model_b"])]
        out[str(task)] = g.sort_values("m", kind="stable").reset_index(drop=True)
    return out


def _missing_check(task: str, model: str, m: float, side: str) -> Check:
    where = ("the reference but not the new run" if side == "left_only"
             else "the new run but not the reference")
    return Check(task, "missing", model, float(m), math.nan, math.nan, math.nan, False,
                 f"in {where}: the grid or the models changed; run the reference again with "
                 f"them (the committed one: make refresh-reference)")


def _check_sems(df: pd.DataFrame, columns: Sequence[str], task: str) -> None:
    for col in columns:
        if df[col].isna().any():
            raise ResultsError(f"{task}: a size has no standard error (one split); compare "
                               f"runs with at least 2 splits per size")


def _call_text(call: str) -> str:
    """A call of ``winner`` (a model's name, or ``NEITHER``) in words."""
    return "a tie" if call == NEITHER else f"{call} better"


def _start_sign(d: np.ndarray) -> float:
    nz = d[d != 0]
    return float(np.sign(nz[0])) if nz.size else 0.0


def _entries(ms: np.ndarray, D: np.ndarray, start: float) -> np.ndarray:
    """First crossover of each curve, measured from the reference's starting sign.

    ms : ndarray of shape (M,). D : ndarray of shape (B, M). Returns ndarray of shape (B,):
    ``crossovers.crossing_from`` (the first sign change of a curve that starts with sign
    ``start``; ``-inf`` for curves that start with the other sign, they crossed before the
    range; ``+inf`` for curves that never leave ``start``'s side), and ``+inf`` for a
    curve of exact zeros.
    """
    out = crossing_from(ms, D, start)
    return np.where(np.isnan(out), np.inf, out)


def _simulated_entries(ms, d_ref, s, start, n_draws, rng) -> np.ndarray:
    """First crossovers of ``n_draws`` curves ``d_ref + s * Z`` (Z of shape (B, M))."""
    out = []
    for lo in range(0, n_draws, _CHUNK):
        b = min(_CHUNK, n_draws - lo)
        D = d_ref[None, :] + s[None, :] * rng.standard_normal((b, ms.size))  # (B, M)
        out.append(_entries(ms, D, start))
    return np.concatenate(out)


@dataclass
class _Plan:
    """What is compared in one task, gathered before the thresholds are known."""

    task: str
    points: pd.DataFrame
    pair: tuple[str, str] | None = None
    paired: pd.DataFrame | None = None  # merged ref/new rows, sorted by m
    crossover: Crossovers | None = None  # the reference's crossovers
    sign_rows: list[int] = field(default_factory=list)  # rows of ``paired`` to sign-check
    checks: list[Check] = field(default_factory=list)


def _plan_task(task: str, both: pd.DataFrame, p_ref: pd.DataFrame | None,
               p_new: pd.DataFrame | None) -> _Plan:
    """Gather one task's checks: ``both`` from ``_point_frames``, paired rows by m."""
    plan = _Plan(task, both.loc[both["_merge"] == "both"].reset_index(drop=True))
    for _, row in both.loc[both["_merge"] != "both"].iterrows():
        plan.checks.append(_missing_check(task, str(row["model"]), row["m"], row["_merge"]))
    _check_sems(plan.points, ["error_sem_ref", "error_sem_new"], task)
    if p_ref is None or p_new is None or p_ref.empty or p_new.empty:
        return plan
    pair = (str(p_ref["model_a"].iloc[0]), str(p_ref["model_b"].iloc[0]))
    new_pair = (str(p_new["model_a"].iloc[0]), str(p_new["model_b"].iloc[0]))
    if new_pair != pair:
        plan.checks.append(Check(
            task, "missing", f"{pair[0]}-{pair[1]}", math.nan, math.nan, math.nan, math.nan,
            False, f"the new run pairs {new_pair[0]}-{new_pair[1]}; regenerate the reference"))
        return plan
    cols = ["m", "n_splits", "diff_mean", "diff_sem", "ci_low", "ci_high"]
    merged = p_ref[cols].merge(p_new[cols], on="m", suffixes=("_ref", "_new"))
    merged = merged.sort_values("m", kind="stable").reset_index(drop=True)
    if merged.empty:
        return plan
    _check_sems(merged, ["diff_sem_ref", "diff_sem_new"], task)
    plan.pair, plan.paired = pair, merged
    # the reference's crossovers, on the sizes both runs have
    ref_rows = p_ref.loc[p_ref["m"].isin(merged["m"])]
    plan.crossover = crossovers(ref_rows)
    last = len(merged) - 1
    for i in sorted({0, last}):
        if winner(_side(merged.iloc[i], "ref", pair)) != NEITHER:
            plan.sign_rows.append(i)
    if not plan.crossover.crossings:
        plan.sign_rows += [i for i in range(1, last)]
    return plan


def _side(row: pd.Series, side: str, pair: tuple[str, str]) -> dict:
    """One run's paired interval at one m, with its pair (``winner``'s row)."""
    return {"ci_low": row[f"ci_low_{side}"], "ci_high": row[f"ci_high_{side}"],
            "model_a": pair[0], "model_b": pair[1]}


def _point_checks(plan: _Plan, z: float, floor: float) -> list[Check]:
    df = plan.points
    s = _combined_sem(df["error_sem_ref"], df["error_sem_new"])
    tol = z * s + floor
    ref, new = df["error_mean_ref"].to_numpy(float), df["error_mean_new"].to_numpy(float)
    out = []
    for i in range(len(df)):
        change = new[i] - ref[i]
        passed = bool(abs(change) <= tol[i])
        detail = (f"mean error {ref[i]:.4f} -> {new[i]:.4f} ({change:+.4f}), "
                  f"{'within' if passed else 'beyond'} the allowed {tol[i]:.4f} "
                  f"(z = {z:.2f} x combined sem {s[i]:.4f} + floor {floor:g})")
        out.append(Check(plan.task, "point", str(df["model"].iloc[i]), float(df["m"].iloc[i]),
                         float(ref[i]), float(new[i]), float(tol[i]), passed, detail))
    return out


def _sign_checks(plan: _Plan, z_sign: float, floor: float) -> list[Check]:
    df, pair = plan.paired, plan.pair
    label = f"{pair[0]}-{pair[1]}"
    ref_sign = _start_sign(df["diff_mean_ref"].to_numpy(float))
    last = len(df) - 1
    out = []
    for i in plan.sign_rows:
        row = df.iloc[i]
        c_ref, c_new = winner(_side(row, "ref", pair)), winner(_side(row, "new", pair))
        d_ref, d_new = float(row["diff_mean_ref"]), float(row["diff_mean_new"])
        s = float(_combined_sem(row["diff_sem_ref"], row["diff_sem_new"]))
        tol = z_sign * s + floor
        moved = abs(d_new - d_ref) > tol
        if i in (0, last) and c_ref != NEITHER:
            kind = "end"
            disagree = c_new != c_ref
        else:
            kind = "sign"
            other = {1.0: pair[0], -1.0: pair[1]}.get(ref_sign)  # opposite ref's side
            disagree = c_new != NEITHER and (other is None or c_new == other)
        passed = not (disagree and moved)
        what = (f"reference says {_call_text(c_ref)} ({pair[0]} - {pair[1]} = "
                f"{d_ref:+.4f}), new run says {_call_text(c_new)} ({d_new:+.4f})")
        if passed:
            detail = what + ("" if not disagree else
                             f"; within the allowed {tol:.4f}, so accepted as noise")
        elif kind == "end":
            detail = what + f"; moved {abs(d_new - d_ref):.4f} > allowed {tol:.4f}"
        else:
            detail = (what + f": a crossover the reference does not have; moved "
                      f"{abs(d_new - d_ref):.4f} > allowed {tol:.4f}")
        out.append(Check(plan.task, kind, label, float(row["m"]), d_ref, d_new, tol,
                         passed, detail))
    return out


def _crossover_check(plan: _Plan, tail: float, rng: np.random.Generator) -> Check:
    df, pair = plan.paired, plan.pair
    ms = df["m"].to_numpy(float)
    d_ref, d_new = df["diff_mean_ref"].to_numpy(float), df["diff_mean_new"].to_numpy(float)
    s = _combined_sem(df["diff_sem_ref"], df["diff_sem_new"])
    start = _start_sign(d_ref)
    x_ref = float(plan.crossover.first_crossover)
    x_new = float(_entries(ms, d_new[None, :], start)[0])
    n_draws = int(np.clip(math.ceil(40.0 / tail), *CROSS_DRAWS))
    sims = _simulated_entries(ms, d_ref, s, start, n_draws, rng)
    below, above = float(np.mean(sims <= x_new)), float(np.mean(sims >= x_new))
    passed = min(below, above) >= tail
    low = float(np.quantile(sims, tail, method="inverted_cdf"))
    high = float(np.quantile(sims, 1.0 - tail, method="inverted_cdf"))
    after = pair[1] if start < 0 else pair[0]
    where = (f"no crossover in {m_text(ms[0])}..{m_text(ms[-1])}" if x_new == math.inf
             else f"{_call_text(after)} already at m = {m_text(ms[0])}"
             if x_new == -math.inf else f"crossover at m = {m_text(x_new)}")
    detail = (f"reference crossover at m = {m_text(x_ref)} ({_call_text(after)} "
              f"after it); new run: {where}; accepted m in [{_num_m(low)}, {_num_m(high)}] "
              f"(reference widened by the new run's noise)")
    return Check(plan.task, "crossover", f"{pair[0]}-{pair[1]}", x_ref, x_ref, x_new,
                 math.nan, passed, detail, interval=(low, high))


def _num_m(x: float) -> str:
    if math.isinf(x):
        return "before the range" if x < 0 else "none in the range"
    return m_text(x)


# --------------------------------------------------------------------------- entry point


def compare(
    reference: Tables | str | Path | tuple,
    new: Tables | str | Path | tuple,
    *,
    z: float | None = None,
    floor: float = DEFAULT_FLOOR,
    alpha: float = DEFAULT_ALPHA,
    tasks: Iterable[str] | None = None,
    seed: int = 0,
) -> Report:
    """Compare a new run's curves with a reference; see the module docstring for the rules.

    Parameters
    ----------
    reference, new : folder, Tables or (summary, paired)
        A results folder (``<folder>/<task>/summary.csv`` and ``paired.csv``) or the tables.
    z : float, optional
        Multiplier of the combined sem for points and sign checks; default: Bonferroni over
        the checks of this comparison at family-wise level ``alpha`` (module docstring).
    floor : float
        Added to every tolerance, in error units.
    alpha : float
        Chance of any false alarm in the whole comparison when only noise differs.
    tasks : iterable of str, optional
        Tasks to compare; default every task of the new run. A task of the new run missing
        from the reference is a violation; reference tasks absent from the new run are
        listed in ``Report.not_compared``.
    seed : int
        Seed of the crossover simulation (the report is deterministic).

    Returns
    -------
    Report
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if floor < 0:
        raise ValueError(f"floor must be >= 0, got {floor}")
    ref, run = _as_tables(reference, "reference"), _as_tables(new, "new run")
    ref_tasks = list(pd.unique(ref.summary["task"].astype(str)))
    points = _point_frames(ref.summary, run.summary)
    paired_ref, paired_new = _by_task(ref.paired), _by_task(run.paired)
    names = list(tasks) if tasks is not None else list(pd.unique(run.summary["task"].astype(str)))
    plans, checks = [], []
    for task in names:
        if task not in ref_tasks:
            checks.append(Check(task, "missing", "-", math.nan, math.nan, math.nan, math.nan,
                                False, "no reference for this task; run it into the reference "
                                "folder too (the committed one: make refresh-reference)"))
            continue
        plans.append(_plan_task(task, points[task], paired_ref.get(task),
                                paired_new.get(task)))
    k_points = sum(len(p.points) for p in plans)
    k_sign = sum(len(p.sign_rows) for p in plans)
    crossing = [p for p in plans if p.paired is not None and p.crossover.crossings]
    share = alpha / 3.0
    n_new = [int(p.points["n_splits_new"].min()) for p in plans if len(p.points)]
    n_pair = [int(p.paired["n_splits_new"].min()) for p in plans if p.paired is not None]
    z_points = z if z is not None else bonferroni_z(share, k_points, min(n_new, default=None))
    z_sign = z if z is not None else bonferroni_z(share, k_sign, min(n_pair, default=None))
    tail = share / max(len(crossing), 1) / 2.0
    for plan in plans:
        checks += plan.checks
        checks += _point_checks(plan, z_points, floor)
        if plan.paired is not None:
            checks += _sign_checks(plan, z_sign, floor)
            if plan.crossover.crossings:
                rng = task_rng(seed, plan.task)
                checks.append(_crossover_check(plan, tail, rng))
    not_compared = tuple(t for t in ref_tasks if t not in names)
    return Report(tuple(checks), float(z_points), float(z_sign), float(floor), float(alpha),
                  float(tail), tuple(names), not_compared)
