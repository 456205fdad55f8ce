"""How well the learning-curve families extrapolate, on saved runs: fit the first half of
each task's grid, predict the second half.

    python studies/extrapolation/validate.py results/reference

Per task and model: each family's mean absolute error at the held-out larger sizes
(``nbvslr.analysis.extrapolate.holdout_scores``), and the error of the family that
``choose`` picks from the first half alone (nested: it never sees the second half). Per
task: whether the crossover of the chosen fits in the second half (or its absence) matches
the measured one, from the mean curves. Prints Markdown.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from nbvslr.analysis.crossovers import sign_changes
from nbvslr.analysis.extrapolate import FAMILIES, choose, fit, holdout_scores
from nbvslr.results import load_results


def _curve(summary, model):
    rows = summary[summary["model"] == model].sort_values("m", kind="stable")
    return (rows["m"].to_numpy(dtype=float), rows["error_mean"].to_numpy(dtype=float),
            rows["error_sem"].to_numpy(dtype=float))


def validate(task, pair=("nb", "lr")) -> dict | None:
    """One task's row, or None when its grid is too short to choose a family on half."""
    curves = {model: _curve(task.summary, model) for model in pair}
    m = curves[pair[0]][0]
    half = int(math.ceil(m.size / 2))
    out = {"task": task.name, "sizes": m.size, "fit_on": half}
    preds = {}
    for model in pair:
        _, y, sem = curves[model]
        scores = holdout_scores(m, y, sem, half)
        try:
            chosen = choose(m[:half], y[:half], sem[:half]).family
        except ValueError:
            return None
        out[model] = scores
        out[f"{model}_chosen"] = chosen
        preds[model] = fit(chosen, m[:half], y[:half], sem[:half]).predict(m)[0]
    d_meas = curves[pair[0]][1] - curves[pair[1]][1]
    d_pred = preds[pair[0]] - preds[pair[1]]
    tail = slice(half - 1, None)  # from the last fitted size on
    meas = sign_changes(m[tail], d_meas[tail])
    pred = sign_changes(m[tail], d_pred[tail])
    out["crossover_measured"] = meas[0][0] if meas else None
    out["crossover_predicted"] = pred[0][0] if pred else None
    return out


def _m(x):
    return "none" if x is None else f"{x:.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    args = parser.parse_args(argv)
    rows = [r for t in load_results(args.results) if (r := validate(t)) is not None]
    fams = list(FAMILIES)
    print("| task | sizes (fit on) | NB: " + " / ".join(fams) + " | NB chosen | LR: "
          + " / ".join(fams) + " | LR chosen | crossover in the 2nd half: measured | "
          "predicted |")
    print("|---|---|---|---|---|---|---|---|")
    totals = {f"{mo}:{f}": [] for mo in ("nb", "lr") for f in [*fams, "chosen"]}
    agree = 0
    for r in rows:
        cells = []
        for model in ("nb", "lr"):
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
              + f" | {_m(r['crossover_measured'])} | {_m(r['crossover_predicted'])}"
              + ("" if same else " **≠**") + " |")
    print()
    print("Mean absolute error at the held-out sizes, over the tasks:")
    print()
    print("| model | " + " | ".join(fams) + " | chosen on the first half |")
    print("|---|" + "---|" * (len(fams) + 1))
    for model in ("nb", "lr"):
        vals = [np.mean(totals[f"{model}:{f}"]) for f in [*fams, "chosen"]]
        print(f"| {model} | " + " | ".join(f"{v:.4f}" for v in vals) + " |")
    print()
    print(f"Crossover (or none) in the second half as measured: {agree} of {len(rows)} tasks.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
