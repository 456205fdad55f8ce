"""How many images a Jupyter cell shows for ``Results.plot``: the figure showing itself as a
cell's value (``_repr_png_``, what nbvslr does) against a figure made through pyplot (the
inline backend shows every pyplot figure at the end of a cell). Each approach runs the same
cells in a fresh kernel (nbclient, ipykernel: ``pip install -e '.[test]'``); prints, per
cell, the image outputs and the seconds the cell took.

    python benchmarks/notebook_display.py
"""

from __future__ import annotations

import datetime as dt

import nbformat
from nbclient import NotebookClient

SETUP = """\
import numpy as np, pandas as pd, nbvslr
rng = np.random.default_rng(0)
df = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
df["y"] = np.where(df["a"] + rng.normal(size=200) > 0, "s", "w")
task = nbvslr.Task.from_frame(df, target="y", name="clinic")
res = nbvslr.run({"tasks": [task], "sizes": [4, 8, 16], "splits": 20}, progress=False)
"""
# The other approach: every figure of nbvslr made by pyplot (registered with its figure
# manager, as plt.figure makes them).
PYPLOT = """\
import matplotlib.pyplot as plt
from nbvslr.views import plots
plots.ShownFigure = lambda **kw: plt.figure(**kw)
"""
CELLS = {
    "res.plot()": "res.plot()",
    "fig = res.plot()": "fig = res.plot()",
    "plt.subplots; plot(ax=ax)": "import matplotlib.pyplot as plt\n"
                                 "fig, ax = plt.subplots()\nres.plot(ax=ax)",
    "import pyplot; res.plot()": "import matplotlib.pyplot as plt\nres.plot()",
}


def _seconds(cell) -> float:
    meta = cell.metadata.get("execution", {})
    start, end = meta.get("iopub.execute_input"), meta.get("shell.execute_reply")
    if not (start and end):
        return float("nan")
    parse = dt.datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))
            ).total_seconds()


def measure(approach: str) -> list[tuple[str, int, float]]:
    """(cell, image outputs, seconds) of each cell of ``CELLS`` after the setup."""
    setup = SETUP + (PYPLOT if approach == "pyplot" else "")
    rows = []
    for name, code in CELLS.items():  # each in a fresh kernel: no state from another cell
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(setup),
                                             nbformat.v4.new_code_cell(code)])
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       record_timing=True).execute()
        cell = nb.cells[1]
        images = sum(1 for out in cell.outputs
                     if any(k.startswith("image/") for k in out.get("data", {})))
        rows.append((name, images, _seconds(cell)))
    return rows


def main() -> None:
    print(f"{'approach':10s} {'cell':28s} {'images':>6s} {'seconds':>8s}")
    for approach in ("repr", "pyplot"):
        for name, images, seconds in measure(approach):
            print(f"{approach:10s} {name:28s} {images:6d} {seconds:8.2f}")


if __name__ == "__main__":
    main()
