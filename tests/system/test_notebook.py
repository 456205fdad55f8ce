"""docs/quickstart.ipynb run by a real Jupyter kernel (nbclient, ipykernel): what a reader
of the notebook sees, not what the API returns."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the test extras' nbformat is not installed")
nbclient = pytest.importorskip("nbclient", reason="the test extras' nbclient is not installed")
pytest.importorskip("ipykernel", reason="the test extras' ipykernel is not installed")

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "docs" / "quickstart.ipynb"


def _images(cell) -> int:
    return sum(1 for out in cell.get("outputs", [])
               if any(kind.startswith("image/") for kind in out.get("data", {})))


def _tagged(nb, tag: str):
    (cell,) = [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]
    return cell


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The quickstart executed top to bottom in a fresh kernel, in a scratch folder."""
    nb = nbformat.read(QUICKSTART, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        "docs/quickstart.ipynb is committed without outputs"
    work = tmp_path_factory.mktemp("quickstart")
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(work)}}).execute()
    return nb, work


def test_quickstart_figure_cell_shows_one_image(executed):
    """`res.plot()` in a fresh kernel, no %matplotlib magic: exactly one image output."""
    nb, _ = executed
    cell = _tagged(nb, "figure")
    assert _images(cell) == 1, [o.get("data", {}).keys() for o in cell.outputs]
    assert sum(_images(c) for c in nb.cells) == 1  # no other cell shows a stray figure


def test_quickstart_shows_results_report_and_no_warning(executed):
    """The run's cell shows Results as an HTML table, the report cell the Markdown table;
    no cell prints a warning (e.g. tqdm's about a missing ipywidgets), and nothing is
    written to the working folder."""
    nb, work = executed
    run_cell = next(c for c in nb.cells if "nbvslr.run(" in c.source)
    html = [o["data"]["text/html"] for o in run_cell.outputs if "text/html" in o.get("data", {})]
    assert html and "clinic" in html[0] and "crossover" in html[0]
    report = "".join(o.get("text", "") for o in _tagged(nb, "report").outputs)
    assert "| clinic |" in report
    streams = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "Warning" not in streams
    assert "clinic: done" in streams
    assert not any(work.iterdir())
