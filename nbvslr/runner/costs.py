"""What each size of a built-in task cost in the committed reference run: the ETA's prior.

``costs.csv`` (beside this module) holds, per task of the committed runs (``FOLDERS``:
the reference of Figure 1, the K-class and the text runs) and size m, the
worker seconds per split that run measured (``run.json``'s ``timings.fit_seconds_by_m``
over its splits). A task's smallest size is given its next size's cost: its first units
carried the compilation of the loops and the load of the data, which a run pays once, not
per size. ``nbvslr.runner.eta`` scales these relative costs by the speed it measures on the
units that finish, so the machine's speed and load come from the run itself.

    python -m nbvslr.runner.costs > nbvslr/runner/costs.csv

(the ``refresh-*`` targets of those runs write it again; tests/unit/test_eta.py checks it
against them).
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path

FOLDERS = ("results/reference", "results/multiclass", "results/text")
"""The committed runs whose timings make ``costs.csv``."""
Costs = Mapping[str, tuple[tuple[int, float], ...]]
"""Per task: (m, seconds per split) by increasing m."""


def costs_of(folder: Path) -> dict[str, tuple[tuple[int, float], ...]]:
    """The per-split costs of every task folder under ``folder`` (its run.json)."""
    out = {}
    for info_path in sorted(Path(folder).glob("*/run.json")):
        info = json.loads(info_path.read_text(encoding="utf-8"))
        by_m = (info.get("timings") or {}).get("fit_seconds_by_m") or {}
        splits = int(info.get("splits") or 0)
        if not by_m or splits <= 0:
            continue
        sizes = sorted((int(m), float(s) / splits) for m, s in by_m.items())
        if len(sizes) > 1:  # the first units' compile and load are not the size's cost
            sizes[0] = (sizes[0][0], sizes[1][1])
        out[str(info["task"]["name"])] = tuple(sizes)
    return out


def to_csv(costs: Costs) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["task", "m", "seconds_per_split"])
    for task, sizes in costs.items():
        for m, s in sizes:
            writer.writerow([task, m, f"{s:.6g}"])
    return buf.getvalue()


def parse_csv(text: str) -> dict[str, tuple[tuple[int, float], ...]]:
    rows: dict[str, list[tuple[int, float]]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        rows.setdefault(row["task"], []).append((int(row["m"]), float(row["seconds_per_split"])))
    return {task: tuple(sorted(sizes)) for task, sizes in rows.items()}


@cache
def reference_costs() -> Costs:
    """The shipped ``costs.csv`` (empty where it is missing)."""
    try:
        text = resources.files("nbvslr.runner").joinpath("costs.csv").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return {}
    return parse_csv(text)


def main(argv: list[str] | None = None) -> None:
    """The costs of every task folder under the given folders, as CSV on stdout."""
    args = (sys.argv[1:] if argv is None else argv) or list(FOLDERS)
    costs: dict[str, tuple[tuple[int, float], ...]] = {}
    for folder in args:
        costs.update(costs_of(Path(folder)))
    sys.stdout.write(to_csv(costs))


if __name__ == "__main__":
    main()
