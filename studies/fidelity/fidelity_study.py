"""The fidelity study's tables: every model variant of a run against the paper's curves.

    python studies/fidelity/fidelity_study.py [NAME=]RESULTS_DIR...

Reads ``<dir>/<task>/splits.csv.gz`` (all models of one run see the same splits; folders
given the same NAME are joined by (task, m, split), which is the same training set in runs
with the same seed) and the
paper's curves (``nbvslr.analysis.fidelity``). For each task and model it prints:

- ``mean abs. diff.``: the mean absolute difference to the paper's curve of the model's family,
  over the paper's grid;
- ``shift``: the model's mean error minus that of the family's stated model (``nb`` or
  ``lr``), averaged over the grid, with a 95% interval from the paired per-split averages
  (each split index holds one training set per m, drawn independently);
- ``end``: the model ahead at the largest m against the other family's stated model, beside
  the paper's (``nbvslr.analysis.winner.ahead``: the lower mean error, ``tie`` within 0.005).

Then, for every pair (NB variant, LR variant) present in all the tasks of a run, the number of
panels within 0.03 of the paper on both curves and with the paper's model ahead at the
largest m.
"""

from __future__ import annotations

import argparse
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from nbvslr.analysis.fidelity import PAPER_PAIR, TOL, paper_curve
from nbvslr.analysis.winner import ahead

T95 = 1.96


def load(folders: list[Path]) -> tuple[pd.DataFrame, dict[str, str]]:
    """The runs' splits as one table indexed by (m, split), one column per model, and each
    model's family (stated models first)."""
    splits = pd.concat([pd.read_csv(f / "splits.csv.gz") for f in folders])
    splits = splits.drop_duplicates(["model", "m", "split"])
    table = splits.pivot_table(index=["m", "split"], columns="model", values="error")
    fam = dict(splits[["model", "family"]].drop_duplicates().itertuples(index=False, name=None))
    order = sorted(fam, key=lambda m: (m not in ("nb", "lr"), fam[m] != "nb", m))
    return table.dropna(), {m: fam[m] for m in order}


def task_rows(table: pd.DataFrame, fam: dict[str, str], paper: pd.DataFrame) -> list[dict]:
    """One row per model: distance to the paper, shift against the stated model, model ahead at
    the end."""
    grid = sorted(set(table.index.get_level_values(0)) & set(paper.index))
    table = table.loc[grid]
    m_max = grid[-1]
    rows = []
    for model, family in fam.items():
        curve = table[model].groupby(level=0).mean()
        dist = float((curve - paper.loc[grid, family]).abs().mean())
        per_split = (table[model] - table[family]).groupby(level=1).mean()  # (splits,)
        shift = float(per_split.mean())
        half = T95 * float(per_split.std(ddof=1)) / np.sqrt(per_split.size)
        other = "lr" if family == "nb" else "nb"
        at_max = table.loc[m_max].mean()
        nb_model, lr_model = (model, other) if family == "nb" else (other, model)
        rows.append(dict(
            model=model, family=family, dist=dist, shift=shift, half=half,
            at_max=float(curve.loc[m_max]), paper_max=float(paper.loc[m_max, family]),
            end=ahead(at_max[nb_model], at_max[lr_model], PAPER_PAIR),
            paper_end=ahead(paper.loc[m_max, "nb"], paper.loc[m_max, "lr"], PAPER_PAIR),
        ))
    return rows


def pair_summary(table: pd.DataFrame, nb: str, lr: str, paper: pd.DataFrame) -> tuple:
    """(|Δ| NB, |Δ| LR, our model ahead at the end, the paper's) of one (NB, LR) pair."""
    grid = sorted(set(table.index.get_level_values(0)) & set(paper.index))
    table = table.loc[grid]
    d_nb = float((table[nb].groupby(level=0).mean() - paper.loc[grid, "nb"]).abs().mean())
    d_lr = float((table[lr].groupby(level=0).mean() - paper.loc[grid, "lr"]).abs().mean())
    at_max = table.loc[grid[-1]].mean()
    ours = ahead(at_max[nb], at_max[lr], PAPER_PAIR)
    theirs = ahead(paper.loc[grid[-1], "nb"], paper.loc[grid[-1], "lr"], PAPER_PAIR)
    return d_nb, d_lr, ours, theirs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results folders (or NAME=DIR)")
    args = parser.parse_args(argv)
    runs: dict[str, dict[str, list[Path]]] = {}
    for item in args.results:
        label, _, path = item.rpartition("=")
        root = Path(path)
        folders = sorted(p.parent for p in root.glob("*/splits.csv.gz"))
        if not folders:
            raise SystemExit(f"error: {root}: no <task>/splits.csv.gz; run the config first")
        for folder in folders:
            runs.setdefault(label, {}).setdefault(folder.name, []).append(folder)
    for label, tasks in runs.items():
        pairs: dict[tuple[str, str], list] = {}
        for task, folders in sorted(tasks.items()):
            paper = paper_curve(task)
            if paper is None:
                continue
            paper = paper.set_index("m")
            table, fam = load(folders)
            name = f"{task} ({label})" if label else task
            print(f"\n#### {name}\n")
            print("| model | mean abs. diff. to paper | shift vs stated [95% CI] "
                  "| at largest m (paper) | ahead at largest m (paper) |")
            print("|---|---|---|---|---|")
            for r in task_rows(table, fam, paper):
                shift = ("—" if r["model"] == r["family"] else
                         f"{r['shift']:+.3f} [{r['shift'] - r['half']:+.3f}, "
                         f"{r['shift'] + r['half']:+.3f}]")
                print(f"| {r['model']} | {r['dist']:.3f} | {shift} | {r['at_max']:.3f} "
                      f"({r['paper_max']:.3f}) | {r['end']} ({r['paper_end']}) |")
            nbs = [m for m, f in fam.items() if f == "nb"]
            lrs = [m for m, f in fam.items() if f == "lr"]
            for nb, lr in product(nbs, lrs):
                pairs.setdefault((nb, lr), []).append((task, *pair_summary(table, nb, lr, paper)))
        print(f"\n#### pairs over the tasks of {label or 'the run'}\n")
        print("| NB | LR | tasks | within 0.03 on both | ahead at largest m as paper | off |")
        print("|---|---|---|---|---|---|")
        for (nb, lr), got in pairs.items():
            if len(got) < len(tasks):
                continue
            close = sum(d_nb <= TOL and d_lr <= TOL for _, d_nb, d_lr, _, _ in got)
            same = sum(o == t for *_, o, t in got)
            off = [f"{t} ({d_nb:.3f}/{d_lr:.3f}, {o} vs {p})" for t, d_nb, d_lr, o, p in got
                   if d_nb > TOL or d_lr > TOL or o != p]
            print(f"| {nb} | {lr} | {len(got)} | {close} | {same} | {'; '.join(off) or '—'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
