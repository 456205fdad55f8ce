"""The runs the extrapolation's checks read for a metric other than the test error
(docs/extrapolation.md, "The Brier score"): a committed config run again with that metric
measured, the splits kept, and a model beside the paper's LR that has probabilities on
every training set.

    python studies/extrapolation/runs.py grid OUT [--metric brier] [--splits N]
    python studies/extrapolation/runs.py long OUT [--metric brier] [--splits N]

``grid``: the paper's grids, ``configs/figure1.yaml`` and ``configs/synthetic.yaml`` (the
tasks of ``results/reference``, 1000 splits), into OUT (the cut grids' check and the grid
side of the long check). ``long``: every ``configs/long/*.yaml`` (200 splits) into OUT.

Each config keeps its tasks, sizes, splits and seed; its models become ``nb``, ``lr`` (the
paper's rule: no probabilities on a separable training set) and ``lr-l2`` (``separable:
l2``, as ``configs/metrics.yaml``), compared as ``nb - lr`` and ``nb - lr-l2``, and its
metrics ``[error, METRIC]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

import nbvslr

ROOT = Path(__file__).resolve().parents[2]
GRID = ("configs/figure1.yaml", "configs/synthetic.yaml")
MODELS = {"nb": {}, "lr": {}, "lr-l2": {"model": "lr", "separable": "l2"}}


def config_for(path: Path, metric: str) -> dict:
    """The config at ``path`` with ``MODELS`` and the metrics ``[error, metric]``."""
    config = yaml.safe_load(path.read_text())
    config["models"] = dict(MODELS)
    config["metrics"] = ["error", metric]
    config["compare"] = [["nb", "lr"], ["nb", "lr-l2"]]
    return config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("grid", "long"))
    parser.add_argument("out")
    parser.add_argument("--metric", default="brier")
    parser.add_argument("--splits", type=int, default=None,
                        help="override the configs' splits per size")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    paths = ([ROOT / p for p in GRID] if args.what == "grid"
             else sorted((ROOT / "configs" / "long").glob("*.yaml")))
    for path in paths:
        print(f"{path.relative_to(ROOT)} -> {args.out}", flush=True)
        nbvslr.run(config_for(path, args.metric), out=args.out, jobs=args.jobs,
                   splits=args.splits, progress=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
