"""Paired differences of every model against a reference model, per task and m.

    python studies/mixing/mixing_table.py RESULTS_DIR [--reference MODEL]

Reads ``RESULTS_DIR/<task>/splits.csv.gz`` (the models of one run see the same splits) and
prints, per (task, m), each model's mean error minus the reference's, with the standard error
of that paired difference. Used with ``mixing.yaml`` and ``mixing_panels.yaml``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--reference", default="lr", help="the model to subtract")
    args = parser.parse_args(argv)
    for path in sorted(args.results.glob("*/splits.csv.gz")):
        table = pd.read_csv(path).pivot_table(index=["m", "split"], columns="model",
                                              values="error")
        if args.reference not in table:
            raise SystemExit(f"error: {path}: no model '{args.reference}'; use --reference")
        print(f"{path.parent.name}:")
        for m, group in table.groupby(level=0):
            ref = group[args.reference]
            cells = [f"{args.reference}={ref.mean():.3f}"]
            for model in (c for c in group.columns if c != args.reference):
                diff = group[model] - ref
                cells.append(f"{model} {diff.mean():+.4f} ± {diff.std() / np.sqrt(len(diff)):.4f}")
            print(f"  m={m}: " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
