"""How well the extrapolation's intervals hold, on saved runs (docs/extrapolation.md).

    python studies/extrapolation/validate.py half results/reference
    python studies/extrapolation/validate.py cut results/reference
    python studies/extrapolation/validate.py long results/reference results/long

    python studies/extrapolation/validate.py cut GRID --metric brier --pair nb lr-l2
    python studies/extrapolation/validate.py long GRID LONG --metric brier --pair nb lr-l2

``--metric`` (``error`` by default; ``brier``): the curves of that metric, read from the
splits (``analysis.metrics.for_metric``: the runs must keep them, as
studies/extrapolation/runs.py makes them), each model's floor its all-rows value of it
(``extrapolate.floors``). ``--pair``: the two models (``nb lr`` by default). A size where
either model has no mean (no split with a value) is left out of both curves.

``half``: the first half of each grid predicts the second: each family's mean absolute
error at the held-out larger half, that of the family chosen from the first half alone, and
whether the chosen fits cross in the second half where the measured curves do.

``cut``: the paper's grids cut short. Each task's curves are fitted on their first k sizes
only (k from 6 up to all but three) and the predictions at the sizes cut off are checked
against the measured means, binned by how far past the last fitted size they lie
(m / m_k). This is what the family weighting (``--ratio``, ``--n-sem``) and the reach were
chosen on; it never reads the long curves.

``long``: the extrapolation from the paper's grid alone (the first folder) against the
curves measured past it (the second): every long point, each model's limit and the
crossover, with the coverage of the 95% intervals. Prints Markdown.

A measured mean m̂ (with standard error s over its own splits) is *held* by an interval
[lo, hi] of the true mean when the two overlap within the measurement's noise:
lo - 1.96 s <= m̂ <= hi + 1.96 s.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from nbvslr.analysis import extrapolate as ex
from nbvslr.analysis.crossovers import sign_changes
from nbvslr.analysis.metrics import for_metric
from nbvslr.analysis.stats import task_paired, task_rng
from nbvslr.results import load_results

Z = 1.96
BINS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0, math.inf)


def _curve(summary, model):
    rows = summary[summary["model"] == model].sort_values("m", kind="stable")
    return (rows["m"].to_numpy(dtype=float), rows["error_mean"].to_numpy(dtype=float),
            rows["error_sem"].to_numpy(dtype=float))


def _curves(task, pair):
    """The pair's curves at the sizes where both have a finite mean."""
    curves = {mo: _curve(task.summary, mo) for mo in pair}
    common = None
    for m, y, _ in curves.values():
        ok = m[np.isfinite(y)]
        common = ok if common is None else np.intersect1d(common, ok)
    return {mo: tuple(x[np.isin(c[0], common)] for x in c) for mo, c in curves.items()}


def _complete(task, model):
    """The sizes (m,) where ``model`` has a value on every split of ``task``."""
    rows = task.summary[task.summary["model"] == model]
    splits = int(task.run_info.get("splits") or 0)
    return rows["m"].to_numpy(dtype=float)[rows["n_splits"].to_numpy() >= splits]


def _skip(task, pair):
    """Why ``task``'s curves of ``pair`` are not extrapolated (a model without a value on
    some split: ``extrapolate.check_complete``), or None."""
    if (task.run_info.get("metric") or "error") == "error":
        return None
    for mo in pair:
        try:
            ex.check_complete(task, mo, task.summary[task.summary["model"] == mo])
        except ex.ResultsError as err:
            return str(err).split(": ", 1)[-1]
    return None


def _usable(task, pair):
    """The models of ``pair`` whose curves may be extrapolated on ``task``."""
    return [mo for mo in pair if not _skip(task, (mo,))]


ALONE = " (alone)"  # the stand-in partner of a model whose partner is left out


def _alone(curves, mo):
    """The curves of a pair made of ``mo`` and a copy of it: each model's intervals are
    drawn and fitted from its own curve alone (``draw_means``: a's draws do not depend on
    b's), so a model whose partner is left out is still checked."""
    return {mo: curves[mo], mo + ALONE: curves[mo]}, (mo, mo + ALONE)


def _solo_extrapolation(task, mo, *, n_boot, seed, beyond=False):
    """``task_extrapolation`` of ``mo`` alone (``_alone``)."""
    curves, pair = _alone(_curves(task, (mo,)), mo)
    floor = {**ex.floors(task, (mo,))}
    floor[mo + ALONE] = floor[mo]
    rows = int((task.run_info.get("task") or {}).get("rows") or 0)
    m = curves[mo][0]
    return ex.extrapolate(curves, pair, rows or int(m[-1]) * 100,
                          rng=task_rng(seed, task.name), n_boot=n_boot, floor=floor,
                          beyond=beyond, upper=ex.upper_of(task.run_info.get("metric")
                                                           or "error", task.run_info))


def _load(paths, metric):
    return [for_metric(t, metric) for t in load_results(paths)]


def _diff_sem(task, pair, m):
    paired = task_paired(task)
    rows = paired[(paired["model_a"] == pair[0]) & (paired["model_b"] == pair[1])]
    by_m = dict(zip(rows["m"].to_numpy(dtype=float), rows["diff_sem"].to_numpy(dtype=float),
                    strict=True))
    return np.array([by_m.get(x, np.nan) for x in m])


def _floors(task, pair):
    rows = int((task.run_info.get("task") or {}).get("rows") or 0)
    return ex.floors(task, pair), rows


def held(lo, hi, value, sem):
    """The measured ``value`` (standard error ``sem``) lies in [lo, hi] within its noise."""
    return bool(lo - Z * sem <= value <= hi + Z * sem)


def cut_points(task, *, ratio, n_sem, shape, n_boot, seed=0, pair=("nb", "lr")):
    """Rows (model, k, ratio m / m_k, covered, width) for every cut k and size past it; a
    model whose partner is left out is checked alone (``_alone``)."""
    models = _usable(task, pair)
    if not models:
        return []
    curves = _curves(task, models)
    floor, rows = _floors(task, models)
    if len(models) == 1:
        curves, pair = _alone(curves, models[0])
        floor[pair[1]] = floor[pair[0]]
    m = curves[pair[0]][0]
    dsem = _diff_sem(task, pair, m)
    upper = ex.upper_of(task.run_info.get("metric") or "error", task.run_info)
    out = []
    for k in range(6, m.size - 2):
        cut = {mo: tuple(x[:k] for x in curves[mo]) for mo in pair}
        saved = ex.ACCEPT_RATIO, ex.ACCEPT_SEM, ex.SHAPE_K
        ex.ACCEPT_RATIO, ex.ACCEPT_SEM, ex.SHAPE_K = ratio, n_sem, shape
        try:
            e = ex.extrapolate(cut, pair, rows or int(m[-1]) * 100,
                               rng=task_rng(seed, f"{task.name}:{k}"), n_boot=n_boot,
                               diff_sem=dsem[:k], floor=floor, upper=upper)
        except ValueError:
            continue
        finally:
            ex.ACCEPT_RATIO, ex.ACCEPT_SEM, ex.SHAPE_K = saved
        for mo in models:
            p = e.predict(mo, m[k:], beyond=True)
            for j, size in enumerate(m[k:]):
                y, s = curves[mo][1][k + j], curves[mo][2][k + j]
                out.append((mo, k, size / m[k - 1],
                            held(p["low"][j], p["high"][j], y, s),
                            p["high"][j] - p["low"][j]))
    return out


def cut_main(args) -> int:
    tasks = _load(args.results, args.metric)
    pair = tuple(args.pair)
    for t in tasks:
        for mo in pair:
            if why := _skip(t, (mo,)):
                print(f"- {t.name}, {mo}: left out: {why}")
    for mo in pair:
        used = [t.name for t in tasks if mo in _usable(t, pair)]
        print(f"\n{mo}: {', '.join(used)} ({len(used)} tasks).")
    print()
    settings = [(r, s, k) for r in args.ratio for s in args.n_sem for k in args.shape]
    print("| ratio, n_sem, shape | model | " + " | ".join(
        f"{lo:g}-{hi:g}×" for lo, hi in zip(BINS[:-1], BINS[1:], strict=True))
        + " | all | mean width |")
    print("|---|---|" + "---|" * (len(BINS) + 1))
    for ratio, n_sem, shape in settings:
        pts = [p for t in tasks for p in cut_points(t, ratio=ratio, n_sem=n_sem, shape=shape,
                                                    n_boot=args.n_boot, pair=pair)]
        for mo in pair:
            cells = []
            for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
                sel = [p[3] for p in pts if p[0] == mo and lo < p[2] <= hi]
                cells.append(f"{np.mean(sel):.0%} of {len(sel)}" if sel else "–")
            allp = [p[3] for p in pts if p[0] == mo]
            width = np.mean([p[4] for p in pts if p[0] == mo])
            print(f"| {ratio:g}, {n_sem:g}, {shape:g} | {mo} | " + " | ".join(cells)
                  + f" | {np.mean(allp):.0%} of {len(allp)} | {width:.3f} |", flush=True)
    return 0


def half_row(task, pair=("nb", "lr")) -> dict | None:
    """One task's row, or None when its grid is too short to choose a family on half."""
    curves = _curves(task, pair)
    floor, _ = _floors(task, pair)
    m = curves[pair[0]][0]
    half = int(math.ceil(m.size / 2))
    out = {"task": task.name, "sizes": m.size, "fit_on": half}
    preds = {}
    for model in pair:
        _, y, sem = curves[model]
        scores = ex.holdout_scores(m, y, sem, half, floor=floor[model])
        try:
            chosen = ex.choose(m[:half], y[:half], sem[:half], floor=floor[model]).family
        except ValueError:
            return None
        out[model] = scores
        out[f"{model}_chosen"] = chosen
        preds[model] = ex.fit(chosen, m[:half], y[:half], sem[:half],
                              floor[model]).predict(m)[0]
    d_meas = curves[pair[0]][1] - curves[pair[1]][1]
    d_pred = preds[pair[0]] - preds[pair[1]]
    tail = slice(half - 1, None)  # from the last fitted size on
    meas = sign_changes(m[tail], d_meas[tail])
    pred = sign_changes(m[tail], d_pred[tail])
    out["crossover_measured"] = meas[0][0] if meas else None
    out["crossover_predicted"] = pred[0][0] if pred else None
    return out


def _hm(x):
    return "none" if x is None else f"{x:.0f}"


def half_main(args) -> int:
    pair = tuple(args.pair)
    rows = [r for t in _load(args.results, args.metric)
            if (r := half_row(t, pair)) is not None]
    fams = list(ex.FAMILIES)
    A, B = (p.upper() for p in pair)
    print(f"| task | sizes (fit on) | {A}: " + " / ".join(fams) + f" | {A} chosen | {B}: "
          + " / ".join(fams) + f" | {B} chosen | crossover in the 2nd half: measured | "
          "predicted |")
    print("|---|---|---|---|---|---|---|---|")
    totals = {f"{mo}:{f}": [] for mo in pair for f in [*fams, "chosen"]}
    agree = 0
    for r in rows:
        cells = []
        for model in pair:
            sc = r[model]
            chosen = r[f"{model}_chosen"]
            cells.append(" / ".join(f"{sc[f]:.3f}" if f in sc else "–" for f in fams))
            cells.append(f"{chosen} {sc[chosen]:.3f}")
            for f in fams:
                if f in sc:
                    totals[f"{model}:{f}"].append(sc[f])
            totals[f"{model}:chosen"].append(sc[chosen])
        same = (r["crossover_measured"] is None) == (r["crossover_predicted"] is None)
        agree += same
        print(f"| {r['task']} | {r['sizes']} ({r['fit_on']}) | " + " | ".join(cells)
              + f" | {_hm(r['crossover_measured'])} | {_hm(r['crossover_predicted'])}"
              + ("" if same else " **≠**") + " |")
    print()
    print("Mean absolute error at the held-out sizes, over the tasks:")
    print()
    print("| model | " + " | ".join(fams) + " | chosen on the first half |")
    print("|---|" + "---|" * (len(fams) + 1))
    for model in pair:
        vals = [np.mean(totals[f"{model}:{f}"]) for f in [*fams, "chosen"]]
        print(f"| {model} | " + " | ".join(f"{v:.4f}" for v in vals) + " |")
    print()
    print(f"Crossover (or none) in the second half as measured: {agree} of {len(rows)} tasks.")
    return 0


def _measured_crossover(m, d, sd):
    """The first m where the measured difference a - b changes sign (interpolated), and the
    sizes bracketing it where the difference's 95% interval holds 0; None if none."""
    s = np.sign(d)
    for i in range(1, m.size):
        if s[i] != s[0] and s[i] != 0:
            x = m[i - 1] + (m[i] - m[i - 1]) * d[i - 1] / (d[i - 1] - d[i])
            tie = np.flatnonzero(np.abs(d) <= Z * sd)
            lo = m[i - 1] if not tie.size else min(m[i - 1], m[tie].min())
            hi = m[i] if not tie.size else max(m[i], m[tie].max())
            return x, (float(lo), float(hi))
    return None, None


def _fmt(v, lo, hi, digits=3):
    if v is None or not math.isfinite(v):
        return "–"
    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def long_main(args) -> int:
    grid = {t.name: t for t in _load([args.grid], args.metric)}
    long = {t.name: t for t in _load([args.long], args.metric)}
    names = [n for n in grid if n in long]
    pair = tuple(args.pair)
    pts_rows, limit_rows, cross_rows = [], [], []
    tally = {pair[0]: [0, 0, 0], pair[1]: [0, 0, 0], "beyond": [0, 0, 0]}
    for name in names:
        g, lg = grid[name], long[name]
        models = _usable(g, pair)
        if len(models) < 2:
            for mo in pair:
                if why := _skip(g, (mo,)):
                    print(f"- {name}, {mo}: left out: {why}")
        if not models:
            continue
        if len(models) == 2:
            e = ex.task_extrapolation(g, pair, n_boot=args.n_boot, seed=args.seed)
            exs = {mo: e for mo in pair}
        else:
            exs = {models[0]: _solo_extrapolation(g, models[0], n_boot=args.n_boot,
                                                  seed=args.seed)}
        lcurves = _curves(lg, models)
        lm = lcurves[models[0]][0]
        for mo in models:
            e = exs[mo]
            p = e.predict(mo, lm, beyond=True)
            full = _complete(lg, mo)
            for j, size in enumerate(lm):
                y, s = lcurves[mo][1][j], lcurves[mo][2][j]
                ok = held(p["low"][j], p["high"][j], y, s)
                within = bool(p["within_reach"][j])
                if size not in full:  # a mean over a subset of the splits: not a check
                    ok = None
                else:
                    key = mo if within else "beyond"
                    tally[key][0] += ok
                    tally[key][1] += 1
                    tally[key][2] += bool(p["low"][j] <= y <= p["high"][j])
                pts_rows.append((name, mo, int(size), size / e.last_m, within,
                                 p["predicted"][j], p["low"][j], p["high"][j], y, s, ok))
            # the limit: between the floor and the error at the largest long m
            lo, hi = e.asymptote_interval[mo] or (math.nan, math.nan)
            last = np.flatnonzero(np.isin(lm, full))  # the largest m with every split
            if not last.size:
                continue
            j = last[-1]
            y_end, s_end = lcurves[mo][1][j], lcurves[mo][2][j]
            ok = lo <= y_end + Z * s_end
            limit_rows.append((name, mo, e.asymptote[mo], lo, hi, e.floor[mo], int(lm[j]),
                               y_end, s_end, ok))
        if len(models) < 2:
            continue
        # the crossover: the grid's last size, then the long curve (at the sizes where
        # both models have a value on every split)
        gm = _curves(g, pair)[pair[0]][0]
        paired = _pair_rows(lg, pair)
        both = np.intersect1d(_complete(lg, pair[0]), _complete(lg, pair[1]))
        rows = paired[np.isin(paired["m"].to_numpy(dtype=float), both)].sort_values("m")
        gp = _pair_rows(g, pair)
        gp = gp[np.isin(gp["m"].to_numpy(dtype=float), gm)].sort_values("m")
        lm = np.concatenate([gm[-1:], both])
        m_all = np.concatenate([[gm[-1]], rows["m"].to_numpy(dtype=float)])
        d_all = np.concatenate([[gp["diff_mean"].iloc[-1]], rows["diff_mean"].to_numpy()])
        s_all = np.concatenate([[gp["diff_sem"].iloc[-1]], rows["diff_sem"].to_numpy()])
        meas, bracket = _measured_crossover(m_all, d_all, s_all)
        e_far = ex.task_extrapolation(g, pair, n_boot=args.n_boot, seed=args.seed,
                                      beyond=True)
        civ = e.crossover_interval
        far_iv = e_far.crossover_interval
        if meas is None:
            verdict = ("holds" if civ is None or civ[1] == math.inf or civ[1] >= lm[-1]
                       else "misses")
        elif meas > e.reach_m:
            verdict = "beyond reach"
        else:
            verdict = ("holds" if civ is not None and civ[0] <= bracket[1]
                       and civ[1] >= bracket[0] else "misses")
        cross_rows.append((name, meas, bracket, e.crossover, civ, e_far.crossover, far_iv,
                           e.search_to, int(lm[-1]), verdict))
    _print_long(pts_rows, limit_rows, cross_rows, tally, pair)
    return 0


def _pair_rows(task, pair):
    """The paired rows of ``pair`` on ``task`` (the run must have compared them: the
    configs of runs.py compare nb with lr and with lr-l2)."""
    paired = task_paired(task)
    return paired[(paired["model_a"] == pair[0]) & (paired["model_b"] == pair[1])]


def _m(x):
    return "none" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:.0f}"


def _iv(iv):
    if iv is None:
        return ""
    return f" [{_m(iv[0])}, {_m(iv[1])}]"


def _print_long(pts_rows, limit_rows, cross_rows, tally, pair):
    print("| task | model | m | × grid end | predicted [95%] | measured ± sem | held |")
    print("|---|---|---|---|---|---|---|")
    for (name, mo, size, r, within, pred, lo, hi, y, s, ok) in pts_rows:
        mark = "" if within else " (beyond reach)"
        verdict = ("not counted (some splits without a value)" if ok is None
                   else "yes" if ok else "**no**")
        print(f"| {name} | {mo} | {size} | {r:.1f}{mark} | {_fmt(pred, lo, hi)} | "
              f"{y:.3f} ± {s:.3f} | {verdict} |")
    print()
    for key, label in ((pair[0], f"{pair[0]}, within reach"),
                       (pair[1], f"{pair[1]}, within reach"),
                       ("beyond", "both, beyond reach (asked for)")):
        k, n, strict = tally[key]
        if n:
            print(f"- {label}: {k} of {n} held ({k / n:.0%}); the measured mean itself inside "
                  f"the interval: {strict} of {n} ({strict / n:.0%})")
    print()
    print("By distance past the grid's end (m / largest m of the grid), held of counted:")
    print()
    print("| model | " + " | ".join(f"{lo:g}-{hi:g}×" for lo, hi in zip(BINS[:-1], BINS[1:],
                                                                    strict=True))
          + " | all | mean width within reach |")
    print("|---|" + "---|" * (len(BINS) + 1))
    for mo in pair:
        pts = [r for r in pts_rows if r[1] == mo and r[10] is not None]
        cells = []
        for lo, hi in zip(BINS[:-1], BINS[1:], strict=True):
            sel = [r[10] for r in pts if lo < r[3] <= hi]
            cells.append(f"{sum(sel)} of {len(sel)}" if sel else "–")
        width = [r[7] - r[6] for r in pts if r[4]]
        print(f"| {mo} | " + " | ".join(cells) + f" | {sum(r[10] for r in pts)} of "
              f"{len(pts)} | {np.mean(width) if width else math.nan:.3f} |")
    print()
    print("| task | model | limit [95%] | floor | measured at the largest m | "
          "interval reaches it |")
    print("|---|---|---|---|---|---|")
    for (name, mo, a, lo, hi, fl, mmax, y, s, ok) in limit_rows:
        print(f"| {name} | {mo} | {_fmt(a, lo, hi)} | {fl:.3f} | {y:.3f} ± {s:.3f} "
              f"(m = {mmax}) | {'yes' if ok else '**no**'} |")
    print()
    print(f"| task | measured crossover [sizes where {pair[0]} − {pair[1]}'s interval "
          "holds 0] | "
          "predicted, within reach | looked for up to | asked for, up to the rows | verdict |")
    print("|---|---|---|---|---|---|")
    for (name, meas, br, c, civ, cf, fiv, search_to, mmax, verdict) in cross_rows:
        mtext = (f"none before {mmax}" if meas is None
                 else f"{meas:.0f} [{br[0]:.0f}, {br[1]:.0f}]")
        ptext = (_m(c) if c is not None else f"none before {search_to}") + _iv(civ)
        ftext = _m(cf) + _iv(fiv)
        print(f"| {name} | {mtext} | {ptext} | {search_to} | {ftext} | {verdict} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    cut = sub.add_parser("cut", help="the paper's grids cut short")
    cut.add_argument("results", nargs="+")
    cut.add_argument("--ratio", type=float, nargs="+", default=[ex.ACCEPT_RATIO])
    cut.add_argument("--n-sem", type=float, nargs="+", default=[ex.ACCEPT_SEM])
    cut.add_argument("--shape", type=float, nargs="+", default=[ex.SHAPE_K])
    cut.add_argument("--n-boot", type=int, default=ex.DEFAULT_N_BOOT)
    long = sub.add_parser("long", help="the paper's grid against the long curves")
    long.add_argument("grid")
    long.add_argument("long")
    long.add_argument("--n-boot", type=int, default=ex.DEFAULT_N_BOOT)
    long.add_argument("--seed", type=int, default=0)
    half = sub.add_parser("half", help="the first half of each grid predicts the second")
    half.add_argument("results", nargs="+")
    for p in (cut, long, half):
        p.add_argument("--metric", default="error", choices=ex.EXTRAPOLATED)
        p.add_argument("--pair", nargs=2, default=["nb", "lr"])
    args = parser.parse_args(argv)
    return {"cut": cut_main, "long": long_main, "half": half_main}[args.what](args)


if __name__ == "__main__":
    raise SystemExit(main())
