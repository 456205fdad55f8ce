"""`nbvslr report --format html`: one self-contained page, read back as text and rendered by
a real headless browser (Debian's chromium, which .ci/run installs)."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from results_factory import fabricate

from nbvslr.cli import cli

ROOT = Path(__file__).resolve().parents[2]
TASKS = ("alpha", "beta", "gamma")
BLUE = np.array([31, 119, 180])  # tab:blue, naive Bayes' curve in every figure
FRAME = np.array([238, 238, 238])  # #eee, the frame of each figure on the page


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    """The page of three fabricated tasks."""
    root = tmp_path_factory.mktemp("runs")
    for k, name in enumerate(TASKS):
        fabricate(root, task=name, title=f"{name} (continuous)", seed=k)
    out = root / "report.html"
    result = CliRunner().invoke(cli, ["report", str(root), "--format", "html", "-o", str(out),
                                      "--n-boot", "50"])
    assert result.exit_code == 0, result.output
    return out


def test_page_holds_every_figure_inline_and_nothing_from_elsewhere(page):
    """A figure per task as an inline PNG, the report's table and notes, the settings and
    versions; no script, and no address the page would fetch (it reads offline)."""
    text = page.read_text(encoding="utf-8")
    sources = re.findall(r'<img [^>]*src="([^"]+)"', text)
    assert len(sources) == len(TASKS)
    for src in sources:
        head, _, data = src.partition(",")
        assert head == "data:image/png;base64"
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    for name in TASKS:
        assert f'id="figure-{name}"' in text and re.search(f"<td[^>]*>{name}</td>", text)
    assert "<th>crossover [95% CI]</th>" in text and "Student t" in text
    assert "Settings and versions" in text and "splits per size" in text
    assert "<script" not in text and "url(" not in text
    assert not re.search(r'(src|href)="(?!data:)', text)


def test_page_has_the_fidelity_and_extrapolation_sections_when_present(tmp_path):
    """Panels of the paper's Figure 1 get the comparison with the paper; --extrapolate the
    section past the grid (the committed reference, read only)."""
    out = tmp_path / "ref.html"
    result = CliRunner().invoke(cli, [
        "report", str(ROOT / "results/reference/pima"), str(ROOT / "results/reference/boston"),
        "--format", "html", "-o", str(out), "--extrapolate", "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "<h2>Against the paper&#x27;s Figure 1</h2>" in text.replace("'", "&#x27;")
    assert "<h2>Beyond the grid (fitted learning curves)</h2>" in text
    assert text.count("<img ") == 2


def test_html_without_a_file_is_refused():
    """--format html without -o: a one-line error naming -o, exit 2, no page on stdout."""
    result = CliRunner().invoke(cli, ["report", str(ROOT / "results/reference/pima"),
                                      "--format", "html"])
    assert result.exit_code == 2
    assert "give its file, e.g. -o report.html" in result.output
    assert "<html" not in result.output


def _chromium() -> str | None:
    return shutil.which("chromium")


@pytest.mark.skipif(_chromium() is None,
                    reason="Debian's chromium is not installed (.ci/run installs it: "
                           "apt-get install -y chromium)")
def test_browser_renders_every_figure(page, tmp_path):
    """Headless chromium: the DOM holds an img per task, and the screenshot (one figure a
    row at this width) is not blank and shows a naive Bayes curve in each figure."""
    _rendered(page, tmp_path, len(TASKS))


def _rendered(page: Path, tmp_path: Path, figures: int) -> None:
    """Render ``page`` in headless chromium: ``figures`` inline PNGs in the DOM, a page that
    is not blank, and in each figure's frame naive Bayes' blue curve."""
    from PIL import Image

    args = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}", "--window-size=600,4000"]
    dom = subprocess.run([*args, "--dump-dom", page.as_uri()], capture_output=True,
                         text=True, timeout=300, check=True).stdout
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', dom)) == figures
    shot = tmp_path / "shot.png"
    subprocess.run([*args, f"--screenshot={shot}", page.as_uri()], capture_output=True,
                   timeout=300, check=True)
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert (pixels.sum(axis=2) < 3 * 250).mean() > 0.05  # not a blank page
    # each figure's frame (1 px, #eee, the page's style) spans the width: its top and
    # bottom rows bound the figure; inside, naive Bayes' blue curve must be drawn
    frame = np.flatnonzero((pixels == FRAME).all(axis=2).sum(axis=1) > pixels.shape[1] // 2)
    runs = np.split(frame, np.flatnonzero(np.diff(frame) > 1) + 1)
    edges = [int(run[0]) for run in runs if run.size]
    assert len(edges) == 2 * figures, edges
    for top, bottom in zip(edges[::2], edges[1::2], strict=True):
        inside = pixels[top + 1:bottom]
        assert (np.abs(inside - BLUE).max(axis=2) <= 12).sum() > 100


@pytest.fixture(scope="module")
def metric_page(tmp_path_factory) -> tuple[Path, Path]:
    """The page of a small run measuring every metric, for --metric log_loss, and the
    run's folder."""
    import nbvslr

    root = tmp_path_factory.mktemp("metric-run")
    nbvslr.run({"tasks": [{"name": "syn", "source": {"synthetic": {}}}], "sizes": [4, 12, 30],
                "splits": 6}, out=root, progress=False,
               metrics=["error", "log_loss", "brier", "train_error"])
    out = root / "log_loss.html"
    result = CliRunner().invoke(cli, ["report", str(root), "--format", "html", "-o", str(out),
                                      "--metric", "log_loss", "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    return out, root


def test_page_of_a_metric_shows_that_metric(metric_page, tmp_path):
    """--format html --metric log_loss: the title, headings, table and note are the
    log-loss's, the figure is the log-loss panel (a PNG other than the error's), and the
    page without --metric is still the test error's."""
    out, root = metric_page
    text = out.read_text(encoding="utf-8")
    assert "<title>nbvslr report: test log-loss</title>" in text
    assert "<h2>Learning curves (test log-loss)</h2>" in text
    assert "<p>Metric: test log-loss" in text
    assert "have no log_loss" in text  # the separable splits of the paper's LR, and why
    assert "nbvslr report --format html --metric log_loss" in text
    assert 'alt="learning curves (test log-loss) of syn"' in text
    plain = tmp_path / "error.html"
    result = CliRunner().invoke(cli, ["report", str(root), "--format", "html", "-o",
                                      str(plain), "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    error_text = plain.read_text(encoding="utf-8")
    assert "Metric:" not in error_text and "<title>nbvslr report</title>" in error_text
    png = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    error_png = re.findall(r'src="data:image/png;base64,([^"]+)"', error_text)
    assert len(png) == len(error_png) == 1 and png != error_png


def test_page_of_a_metric_not_measured_is_refused(metric_page, tmp_path):
    """--format html --metric brier on a run that measured the error alone: one line
    naming the metric, a non-zero exit, no page written."""
    import nbvslr

    nbvslr.run({"tasks": [{"name": "plain", "source": {"synthetic": {}}}], "sizes": [4, 12],
                "splits": 4}, out=tmp_path, progress=False)
    out = tmp_path / "brier.html"
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "plain"), "--format", "html",
                                      "-o", str(out), "--metric", "brier"])
    assert result.exit_code != 0
    assert "no brier in the splits" in result.output and "Traceback" not in result.output
    assert not out.exists()


# Written into a copy of the page (the page itself runs no script): the elements wider than
# their box, as "TAG:pixels", in an attribute of <body> that --dump-dom shows.
_OVERFLOW_PROBE = (
    "<script>document.body.setAttribute('data-over', Array.from(document.querySelectorAll("
    "'div, figure, img, h1, h2, p, li')).filter(e => e.scrollWidth > e.clientWidth)"
    ".map(e => e.tagName + ':' + (e.scrollWidth - e.clientWidth)).join(' '))</script>")


@pytest.mark.skipif(_chromium() is None,
                    reason="Debian's chromium is not installed (.ci/run installs it: "
                           "apt-get install -y chromium)")
def test_browser_renders_the_metric_page(metric_page, tmp_path):
    """Headless chromium renders the log-loss page: its one figure is drawn, with naive
    Bayes' curve in it."""
    _rendered(metric_page[0], tmp_path, 1)


@pytest.mark.skipif(_chromium() is None,
                    reason="Debian's chromium is not installed (.ci/run installs it: "
                           "apt-get install -y chromium)")
def test_nothing_is_cut_at_the_right_edge_of_a_wide_window(tmp_path):
    """In a 1200-pixel window, the committed panels with the longest captions, titles and
    crossover cells: no figure, table or caption wider than its box (the report's table
    ran about 280 pixels past its box, each figure's image 2)."""
    names = ("optdigits-0v1", "sick", "lenses", "adult-discrete", "adult-continuous")
    out = tmp_path / "page.html"
    result = CliRunner().invoke(cli, ["report", *(str(ROOT / "results/reference" / n)
                                                  for n in names),
                                      "--format", "html", "-o", str(out), "--n-boot", "20"])
    assert result.exit_code == 0, result.output
    probe = tmp_path / "probe.html"
    probe.write_text(out.read_text(encoding="utf-8").replace("</body>",
                                                             _OVERFLOW_PROBE + "</body>"),
                     encoding="utf-8")
    dom = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                          "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
                          "--window-size=1200,3000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    over = re.search(r'data-over="([^"]*)"', dom)
    assert over is not None, dom[-500:]
    assert over.group(1) == ""
