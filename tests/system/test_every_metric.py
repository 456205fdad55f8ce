"""`nbvslr report --metric all`: every metric a run measured side by side, as a page rendered
by headless chromium (Debian's chromium, which .ci/run installs), as Markdown and as CSV."""

from __future__ import annotations

import html
import io
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import nbvslr
from nbvslr.analysis.metric_winners import disagreement, winners_by_m
from nbvslr.analysis.metrics import LABELS
from nbvslr.analysis.winner import NEITHER, winner
from nbvslr.cli import cli
from nbvslr.views.every_metric import ERROR_ALONE

ROOT = Path(__file__).resolve().parents[2]
METRICS = ("error", "log_loss", "brier", "train_error")
TASKS = ("syn", "wide")
BOOT = ["--n-boot", "20"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A small run of two tasks measuring every metric, with the paper's LR (no
    probabilities on separable training sets) and an L2-refitted one."""
    root = tmp_path_factory.mktemp("every-metric")
    nbvslr.run({"tasks": [{"name": "syn", "source": {"synthetic": {}}},
                          {"name": "wide", "source": {"synthetic": {"features": 6}}}],
                "sizes": [4, 12, 30], "splits": 6,
                "models": {"nb": {}, "lr": {}, "lr-l2": {"model": "lr", "separable": "l2"}}},
               out=root, progress=False, metrics=list(METRICS))
    return root


@pytest.fixture(scope="module")
def page(run) -> Path:
    """The page of every metric of that run."""
    out = run.parent / f"{run.name}-all.html"
    result = CliRunner().invoke(cli, ["report", str(run), "--format", "html", "--metric",
                                      "all", "-o", str(out), *BOOT])
    assert result.exit_code == 0, result.output
    return out


def _csv(args: list[str]) -> pd.DataFrame:
    result = CliRunner().invoke(cli, ["report", *args, "--format", "csv", *BOOT])
    assert result.exit_code == 0, result.output
    return pd.read_csv(io.StringIO(result.stdout))


def _section(text: str, task: str) -> str:
    found = re.search(f'<section id="task-{task}">(.*?)</section>', text, re.S)
    assert found is not None, f"no section of {task}"
    return found.group(1)


def _rows(section: str) -> list[list[str]]:
    """The cells of a section's table rows, as text."""
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", section, re.S):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)
        if cells:
            rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)).replace("\xa0", " ")
                         for c in cells])
    return rows


def _close(cell: str, value: float) -> bool:
    """A cell ``0.414 ± 0.008`` (or ``n/a``) shows ``value`` to its 3 decimals."""
    if pd.isna(value):
        return cell.startswith("n/a")
    return abs(float(cell.split()[0]) - value) <= 0.0005 + 1e-9


def test_each_task_shows_each_metric_with_the_numbers_of_its_own_report(run, page):
    """Per task one figure, and a row per pair and metric whose means, winners and crossover
    are those of `report --metric X --format csv`."""
    text = page.read_text(encoding="utf-8")
    assert "<title>nbvslr report: every metric</title>" in text
    assert "nbvslr report --format html --metric all" in text
    for task in TASKS:
        section = _section(text, task)
        assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', section)) == 1
        rows = _rows(section)
        checked = 0
        for metric in METRICS:
            csv = _csv([str(run / task), "--metric", metric])
            for _, want in csv.iterrows():
                pair = f"{want['model_a']} vs {want['model_b']}"
                got = [r for r in rows if r[:2] == [LABELS[metric], pair]]
                assert len(got) == 1, (task, metric, pair, rows)
                cells = got[0]
                assert cells[2] == f"{want['m_min']}–{want['m_max']}"
                for k, col in ((3, "a_error_min_m"), (4, "b_error_min_m"),
                               (6, "a_error_max_m"), (7, "b_error_max_m")):
                    assert _close(cells[k], want[col]), (metric, col, cells[k], want[col])
                assert cells[5] == want["winner_min_m"] and cells[8] == want["winner_max_m"]
                if pd.isna(want["crossover"]):
                    assert cells[9].startswith("none in range")
                else:
                    assert abs(float(cells[9].split()[0]) - want["crossover"]) <= 0.05 + 1e-9
                checked += 1
        assert checked == len(rows)  # no row that no metric's report has


def test_the_csv_of_every_metric_is_each_metrics_csv_one_under_the_other(run):
    """`--metric all --format csv`: its rows of metric X are `--metric X --format csv`'s,
    the same numbers in the same order, under a first column `metric`."""
    def text(metric):
        result = CliRunner().invoke(cli, ["report", str(run), "--format", "csv", "--metric",
                                          metric, *BOOT])
        assert result.exit_code == 0, result.output
        return result.stdout.splitlines()

    every = text("all")
    assert every[0].startswith("metric,task,")
    assert list(dict.fromkeys(x.split(",")[0] for x in every[1:])) == list(METRICS)
    for metric in METRICS:
        mine = [x.removeprefix(f"{metric},") for x in every[1:] if x.startswith(f"{metric},")]
        own = text(metric)
        assert every[0].removeprefix("metric,") == own[0] and mine == own[1:] and mine


def test_the_winners_that_differ_are_the_paired_winners(run):
    """The summary under each task's table: the sizes where the log-loss's (Brier score's)
    winner is the other model than the test error's are those of the API's paired tables
    of the two metrics, and the line says "opposite winners" exactly when there are any."""
    result = CliRunner().invoke(cli, ["report", str(run), "--metric", "all", *BOOT])
    assert result.exit_code == 0, result.output
    res = nbvslr.load(run)
    winners = {m: {(r.task, r.model_a, r.model_b, int(r.m)): winner(r)
                   for _, r in res.metric(m).paired.iterrows()} for m in METRICS[:3]}
    pairs = {k[:3] for k in winners["error"]}
    for metric in ("log_loss", "brier"):
        for task, a, b in sorted(pairs):
            opposite = sorted(k[3] for k, w in winners["error"].items() if k[:3] == (task, a, b)
                              and w != NEITHER and winners[metric].get(k, w) not in (w, NEITHER))
            got = [d for d in disagreement(winners_by_m(res[task].tasks[0], ["error", metric]),
                                           metric) if (d.model_a, d.model_b) == (a, b)]
            assert [m for m, _, _ in got[0].opposite] == opposite
            section = result.output.split(f"\n{task}:\n")[1].split("\n\n", 3)[2]
            what = LABELS[metric].removeprefix("test ")
            line = [x for x in section.splitlines() if x.startswith(f"- {a} vs {b}, {what}:")]
            assert len(line) == 1, section
            assert ("**opposite winners**" in line[0]) == bool(opposite), line[0]
            top = result.output.split("\nsyn:\n")[0]  # the list above the tasks
            listed = [x for x in top.splitlines() if x.startswith(f"- {task} ({a} vs {b}): ")
                      and x.endswith(f"on the {what}")]
            assert bool(listed) == bool(opposite), (listed, opposite)


def test_the_splits_without_a_value_are_those_of_each_metrics_report(run):
    """The note on the splits without a log-loss or Brier score: per task and model the
    count of each metric's own report, metrics missing on the same splits named together."""
    every = CliRunner().invoke(cli, ["report", str(run), "--metric", "all", *BOOT])
    assert every.exit_code == 0, every.output
    seen = 0
    for metric in ("log_loss", "brier"):
        own = CliRunner().invoke(cli, ["report", str(run), "--metric", metric, *BOOT])
        for line in own.output.splitlines():
            found = re.match(rf"- (\S+): (\d+) splits of (\S+) have no {metric} ", line)
            if found:
                task, count, model = found.groups()
                assert re.search(rf"- {task}: {count} splits of {model} have no "
                                 rf"(\S+ or )?{metric}( or \S+)? \(", every.output), line
                seen += 1
    assert seen  # the paper's LR has no probabilities on separable training sets


def test_one_figure_per_task_has_a_panel_per_metric(run):
    """The page's figure of a task: a panel per metric in METRICS order, each titled by
    its metric and with its own axis label (the metrics' scales differ)."""
    from nbvslr.analysis.metrics import for_metric
    from nbvslr.views.plots import figure_of_metrics

    task = nbvslr.load(run)["syn"].tasks[0]
    fig = figure_of_metrics([for_metric(task, m) for m in METRICS], n_boot=20)
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in axes] == ["Test error", "Test log-loss",
                                               "Test Brier score", "Training error"]
    assert [ax.get_ylabel() for ax in axes] == [f"mean {LABELS[m]}" for m in METRICS]


def test_runs_that_measured_different_metrics_share_one_page(run, tmp_path):
    """A run of every metric beside one of the error alone: each task shows the metrics it
    measured, the second only its test error, with a line that says why nothing is set
    against it."""
    nbvslr.run({"tasks": [{"name": "plain", "source": {"synthetic": {}}}], "sizes": [4, 12],
                "splits": 4}, out=tmp_path, progress=False)
    result = CliRunner().invoke(cli, ["report", str(run), str(tmp_path / "plain"),
                                      "--metric", "all", *BOOT])
    assert result.exit_code == 0, result.output
    plain = result.output.split("\nplain:\n")[1].split("\nNotes:\n")[0]
    assert [x.split(" | ")[0] for x in plain.splitlines()
            if x.startswith("| ") and not x.startswith("| metric")] == ["| test error"]
    assert "this task measured neither" in plain
    syn = result.output.split("\nsyn:\n")[1].split("\nwide:\n")[0]
    assert all(f"| {LABELS[m]} |" in syn for m in METRICS)


def test_a_run_of_one_model_shows_its_metrics_without_a_comparison(tmp_path):
    """A run of naive Bayes alone measuring the log-loss: a row per metric of that model, no
    winners and no list of opposite winners (no pair to compare)."""
    nbvslr.run({"tasks": [{"name": "solo", "source": {"synthetic": {}}}], "sizes": [4, 12],
                "splits": 4, "models": {"nb": {}}}, out=tmp_path, progress=False,
               metrics=["error", "log_loss"])
    result = CliRunner().invoke(cli, ["report", str(tmp_path), "--metric", "all", *BOOT])
    assert result.exit_code == 0, result.output
    rows = [x.split(" | ")[:2] for x in result.output.splitlines() if x.startswith("| test")]
    assert rows == [["| test error", "nb only"], ["| test log-loss", "nb only"]]
    assert "Opposite winners" not in result.output and "never name" not in result.output


def test_a_run_of_the_error_alone_gets_the_error_page_said_so(tmp_path):
    """`--metric all` on a run that measured the test error alone: the test error's page
    (its figure, table and title) with the line that says why, not an error."""
    nbvslr.run({"tasks": [{"name": "plain", "source": {"synthetic": {}}}], "sizes": [4, 12],
                "splits": 4}, out=tmp_path, progress=False)
    pages = {}
    for metric in ("error", "all"):
        out = tmp_path / f"{metric}.html"
        result = CliRunner().invoke(cli, ["report", str(tmp_path / "plain"), "--format",
                                          "html", "--metric", metric, "-o", str(out), *BOOT])
        assert result.exit_code == 0, result.output
        pages[metric] = out.read_text(encoding="utf-8")
    said = html.escape(ERROR_ALONE.split(" (")[0], quote=False)
    assert said in pages["all"] and said not in pages["error"]
    assert "<title>nbvslr report</title>" in pages["all"]

    def tables(text):
        return re.findall(r"<table>.*?</table>", text, re.S)
    assert tables(pages["all"]) == tables(pages["error"]) and tables(pages["all"])
    imgs = [re.findall(r'src="(data:image/png;base64,[^"]+)"', p) for p in pages.values()]
    assert imgs[0] == imgs[1] and len(imgs[0]) == 1
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "plain"), "--metric", "all",
                                      "--no-notes", *BOOT])
    assert result.exit_code == 0 and result.output.startswith(ERROR_ALONE)


def test_bad_metrics_and_options_are_one_line_errors(run, tmp_path):
    """An unknown --metric names the choices, all among them; --extrapolate with all, and
    all on runs whose splits were not kept, are refused in one line; no page written."""
    out = tmp_path / "page.html"
    cases = [
        (["--metric", "log-loss"], 2, "'log-loss' is not one of 'error', 'log_loss', 'brier', "
                                      "'train_error', 'all'"),
        (["--metric", "all", "--extrapolate"], 2, "give one --metric, not all"),
    ]
    for args, code, words in cases:
        result = CliRunner().invoke(cli, ["report", str(run), "--format", "html", "-o",
                                          str(out), *args])
        assert result.exit_code == code and words in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and not out.exists()
    kept = tmp_path / "pima"  # the committed run's tables, without a splits file a refresh leaves
    shutil.copytree(ROOT / "results/metrics/pima", kept,
                    ignore=shutil.ignore_patterns("splits.csv.gz"))
    result = CliRunner().invoke(cli, ["report", str(kept),
                                      "--format", "html", "-o", str(out), "--metric", "all"])
    assert result.exit_code == 1 and "the splits were not kept" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()


def _chromium() -> str | None:
    return shutil.which("chromium")


# Written into a copy of the page (the page itself runs no script): the elements wider than
# their box, and the images that did not load, in attributes of <body> that --dump-dom shows.
_PROBE = (
    "<script>document.body.setAttribute('data-over', Array.from(document.querySelectorAll("
    "'div, section, figure, img, table, h1, h2, p, li')).filter(e => e.scrollWidth > "
    "e.clientWidth).map(e => e.tagName + ':' + (e.scrollWidth - e.clientWidth)).join(' '));"
    "document.body.setAttribute('data-broken', Array.from(document.images).filter(i => "
    "!i.complete || i.naturalWidth < 400).length + ' of ' + document.images.length);"
    "document.body.setAttribute('data-sections', Array.from(document.querySelectorAll("
    "'section')).map(s => s.id).join(' '))</script>")


@pytest.mark.skipif(_chromium() is None,
                    reason="Debian's chromium is not installed (.ci/run installs it: "
                           "apt-get install -y chromium)")
def test_browser_renders_the_page_of_every_metric(page, tmp_path):
    """Headless chromium at 1200 px: a section per task, every figure loaded (a PNG of its
    full width), nothing wider than its box."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"),
                     encoding="utf-8")
    dom = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                          "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
                          "--window-size=1200,3000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    got = {k: re.search(f'data-{k}="([^"]*)"', dom) for k in ("over", "broken", "sections")}
    assert all(v is not None for v in got.values()), dom[-500:]
    assert got["over"].group(1) == ""
    assert got["broken"].group(1) == f"0 of {len(TASKS)}"
    assert got["sections"].group(1).split() == [f"task-{t}" for t in TASKS]
