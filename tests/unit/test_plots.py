"""Learning-curve pictures: styles, titles, axis ranges, layout and file formats."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure
from results_factory import fabricate, lr_curve, make_splits, nb_curve, run_info

from nbvslr.analysis import stats
from nbvslr.analysis.fidelity import panel_order
from nbvslr.errors import ConfigError
from nbvslr.results import load_results
from nbvslr.views import plots

SIZES = (2, 4, 6, 8, 12, 16, 24, 32)


def _model_lines(ax):
    return {line.get_label(): line for line in ax.get_lines() if line.get_gid() != "crossover"}


def _draw(curves=None, x_range=(0, 40), paired=True):
    splits = make_splits("toy", SIZES, 30, seed=1, curves=curves)
    models = dict(zip(splits["model"], splits["family"], strict=False))
    info = run_info("toy", "toy (continuous)", SIZES, models, x_range)
    fig = Figure()
    ax = fig.add_subplot()
    pair = stats.paired_summary(splits, "nb", "lr") if paired else None
    plots.plot_task(ax, stats.summarize(splits), info, paired=pair)
    return fig, ax


def test_plot_task_nb_solid_lr_dashed_title_labels_and_xlim():
    """NB is solid, LR dashed (the paper's convention), with the run's title and axes; the
    x axis from the paper's left end to the data's largest m (not the paper's 40)."""
    fig, ax = _draw()
    lines = _model_lines(ax)
    assert set(lines) == {"nb", "lr"}
    assert lines["nb"].get_linestyle() == "-"
    assert lines["lr"].get_linestyle() == "--"
    assert ax.get_title() == "toy (continuous)"
    assert ax.get_xlabel() == "m" and ax.get_ylabel() == "mean test error"
    assert ax.get_xlim() == (0.0, 32.0)
    np.testing.assert_array_equal(lines["nb"].get_xdata(), SIZES)
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == ["nb", "lr"]


def test_plot_task_draws_one_band_per_model_and_marks_the_crossover():
    """Each curve has its 95% band, and the first NB/LR crossover (near m = 10) is marked."""
    fig, ax = _draw()
    assert len(ax.collections) == 2  # one fill_between per model
    marks = [line for line in ax.get_lines() if line.get_gid() == "crossover"]
    assert len(marks) == 1
    assert 6 <= marks[0].get_xdata()[0] <= 16


def test_plot_task_without_paired_has_no_crossover_mark():
    """Without paired.csv nothing but the model curves is drawn."""
    fig, ax = _draw(paired=False)
    assert all(line.get_gid() != "crossover" for line in ax.get_lines())
    assert len(ax.get_lines()) == 2


def test_extra_variants_keep_family_style_with_their_own_colour_and_marker():
    """A second LR variant is dashed too, but told apart by colour and marker."""
    curves = {"nb": ("nb", nb_curve), "lr": ("lr", lr_curve),
              "lr-l2": ("lr", lambda m: 0.22 + 0.6 / m)}
    fig, ax = _draw(curves=curves)
    lines = _model_lines(ax)
    assert lines["lr-l2"].get_linestyle() == "--"
    assert lines["lr-l2"].get_color() != lines["lr"].get_color()
    assert lines["lr-l2"].get_marker() not in (None, "None", "")
    assert lines["lr"].get_marker() in (None, "None", "")


def test_x_range_falls_back_to_largest_m():
    """A user task without the paper's x range is drawn from 0 to its largest m."""
    fig, ax = _draw(x_range=None)
    assert ax.get_xlim() == (0.0, 32.0)


def test_single_split_draws_no_band():
    """With one split per m there is no interval, so no band (never a fake exact band)."""
    splits = make_splits("toy", SIZES, 1, seed=2)
    info = run_info("toy", "toy", SIZES, {"nb": "nb", "lr": "lr"})
    ax = Figure().add_subplot()
    plots.plot_task(ax, stats.summarize(splits), info)
    assert len(ax.collections) == 0
    assert len(ax.get_lines()) == 2


def test_figure1_orders_builtin_panels_like_the_paper(tmp_path):
    """figure1 puts built-in tasks in Figure 1's order, user tasks after, one axes each."""
    fabricate(tmp_path, task="my-task", title="my task")
    fabricate(tmp_path, task="sonar", title="sonar (continuous)", x_range=(0, 120))
    fabricate(tmp_path, task="pima", title="pima (continuous)", x_range=(0, 60))
    tasks = load_results(tmp_path)
    assert [t.name for t in tasks] == ["my-task", "pima", "sonar"]  # folder order
    fig = plots.figure1(tasks)
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == [
        "pima (continuous)", "sonar (continuous)", "my task"]
    tops = [float(t.summary["m"].max()) for t in tasks]
    assert [ax.get_xlim()[1] for ax in axes] == [tops[1], tops[2], tops[0]]
    for ax in axes:
        lines = _model_lines(ax)
        assert lines["nb"].get_linestyle() == "-" and lines["lr"].get_linestyle() == "--"


@pytest.mark.parametrize(("n", "grid"), [(1, (1, 1)), (2, (1, 2)), (3, (1, 3)), (4, (2, 2)),
                                         (5, (2, 3)), (7, (3, 3))])
def test_figure_of_tasks_lays_four_panels_two_by_two(tmp_path, n, grid):
    """Panels go three a row, but four make two rows of two (no empty places)."""
    for k in range(n):
        fabricate(tmp_path, task=f"t{k}", title=f"t{k}")
    fig = plots.figure_of_tasks(load_results(tmp_path))
    assert fig.get_axes()[0].get_subplotspec().get_gridspec().get_geometry() == grid


def test_panel_order_is_the_papers_5_by_3_grid():
    """All 15 built-in tasks, given shuffled, come back in the paper's panel order."""
    from nbvslr.data.recipes import BUILTIN_TASKS

    assert len(BUILTIN_TASKS) == 15
    shuffled = list(reversed(BUILTIN_TASKS))
    assert [shuffled[i] for i in panel_order(shuffled)] == list(BUILTIN_TASKS)


def test_figure1_of_15_tasks_is_5_rows_by_3_columns(tmp_path):
    """Fifteen panels make the paper's 5 x 3 layout."""
    from nbvslr.data.recipes import BUILTIN_TASKS

    splits = make_splits("t", (2, 4), 2, seed=3)
    summary = stats.summarize(splits)

    class T:
        def __init__(self, name):
            self.name, self.summary = name, summary
            self.run_info = {"task": {"name": name, "title": name}}

    fig = plots.figure1([T(n) for n in reversed(BUILTIN_TASKS)])
    axes = fig.get_axes()
    assert len(axes) == 15
    grid = {(ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start)
            for ax in axes}
    assert grid == {(r, c) for r in range(5) for c in range(3)}
    assert axes[0].get_title() == BUILTIN_TASKS[0]
    assert axes[0].get_subplotspec().rowspan.start == 0


@pytest.mark.parametrize(("fmt", "magic"), [("png", b"\x89PNG"), ("pdf", b"%PDF"),
                                           ("svg", b"<?xml")])
def test_render_formats_and_same_bytes_twice(fmt, magic):
    """PNG, PDF and SVG come out with their signature, byte-identical for the same data."""
    fig, _ = _draw()
    a, b = plots.render(fig, fmt), plots.render(fig, fmt)
    assert a.startswith(magic)
    assert a == b


def test_format_for_rejects_unknown_extension():
    """An unknown extension is a ConfigError naming the valid ones."""
    assert plots.format_for("out/fig.PDF") == "pdf"
    with pytest.raises(ConfigError, match=r"\.png, \.pdf or \.svg"):
        plots.format_for("fig.jpg")


# --------------------------------------------------------------------------------------
# The paper's curves, the shared legend, the caption and the crossover mark
# --------------------------------------------------------------------------------------

def _lines_by_gid(ax, prefix):
    return {ln.get_gid(): ln for ln in ax.get_lines() if str(ln.get_gid()).startswith(prefix)}


def test_plot_task_overlays_the_paper_thin_black_and_labelled():
    """The paper's NB solid and LR dashed, thinner than ours, black, labelled "paper"."""
    from nbvslr.analysis.fidelity import paper_curve

    splits = make_splits("pima", (2, 5, 8), 10, seed=1)
    info = run_info("pima", "pima", (2, 5, 8), {"nb": "nb", "lr": "lr"}, (0, 60))
    ax = Figure().add_subplot()
    paper = paper_curve("pima")
    plots.plot_task(ax, stats.summarize(splits), info, paper=paper)
    lines = _lines_by_gid(ax, "paper-")
    assert set(lines) == {"paper-nb", "paper-lr"}
    assert lines["paper-nb"].get_linestyle() == "-" and lines["paper-lr"].get_linestyle() == "--"
    np.testing.assert_array_equal(lines["paper-lr"].get_ydata(), paper["lr"])
    ours = _model_lines(ax)["nb"]
    assert lines["paper-nb"].get_linewidth() < ours.get_linewidth()
    assert lines["paper-nb"].get_color() == "black"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "paper: nb" in labels and "paper: lr" in labels


def test_figure1_overlays_the_paper_on_its_panels_only_and_can_be_turned_off(tmp_path):
    """Panels of the paper get its curves by default; a user task never; paper=False: none."""
    fabricate(tmp_path, task="sonar", title="sonar", x_range=(0, 120))
    fabricate(tmp_path, task="my-task", title="my task")
    tasks = load_results(tmp_path)
    sonar, mine = plots.figure1(tasks, n_boot=10).get_axes()
    assert len(_lines_by_gid(sonar, "paper-")) == 2
    assert _lines_by_gid(mine, "paper-") == {}
    for ax in plots.figure1(tasks, paper=False, n_boot=10).get_axes():
        assert _lines_by_gid(ax, "paper-") == {}


def test_many_panels_share_one_legend_and_a_caption(tmp_path):
    """No legend inside the panels, one figure legend with each label once, and a caption
    giving the number of splits; the y label on the left column only."""
    fabricate(tmp_path, task="sonar", title="sonar", x_range=(0, 120), n_splits=40)
    fabricate(tmp_path, task="pima", title="pima", x_range=(0, 60), n_splits=40)
    fig = plots.figure1(load_results(tmp_path), n_boot=10)
    assert all(ax.get_legend() is None for ax in fig.get_axes())
    (legend,) = fig.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:4] == ["nb", "lr", "paper: nb", "paper: lr"]
    assert len(labels) == len(set(labels)) and "crossover" in labels
    text = fig._supxlabel.get_text()
    assert "over 40 random train/test splits" in text and "95%" in text
    assert "paper" in text
    assert [ax.get_ylabel() for ax in fig.get_axes()] == ["mean test error", ""]


def test_one_panel_keeps_its_own_legend(tmp_path):
    """A single panel has its legend inside and no figure legend."""
    fabricate(tmp_path, task="toy", title="toy")
    fig = plots.figure_of_tasks(load_results(tmp_path), n_boot=10)
    assert fig.legends == [] and fig.get_axes()[0].get_legend() is not None


def test_crossover_is_labelled_and_its_interval_shaded(tmp_path):
    """With splits.csv.gz the report's bootstrap interval is shaded around the dotted line,
    and the crossover's m is written beside it, inside the panel."""
    from nbvslr.analysis.crossovers import task_crossovers

    fabricate(tmp_path, task="toy", title="toy")
    (task,) = load_results(tmp_path)
    cross = task_crossovers(task, n_boot=50)[1]
    ax = plots.figure_of_tasks([task], n_boot=50).get_axes()[0]
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "crossover"]
    assert line.get_xdata()[0] == pytest.approx(cross.first_crossover)
    (span,) = [p for p in ax.patches if p.get_gid() == "crossover-interval"]
    assert span.get_x() == pytest.approx(cross.interval[0])
    assert span.get_x() + span.get_width() == pytest.approx(cross.interval[1])
    (label,) = [t for t in ax.texts if t.get_gid() == "crossover-label"]
    assert label.get_text() == f"m ≈ {cross.first_crossover:.1f}"


def test_crossover_next_to_the_axis_is_written_to_its_right():
    """A crossover at m ≈ 2 of 0..60 (liver, sick) gets its m written on the inside."""
    ax = Figure().add_subplot()
    ax.set_xlim(0, 60)
    plots._mark_crossover(ax, 2.1, None)
    (label,) = ax.texts
    assert label.get_text() == "m ≈ 2.1" and label.get_ha() == "left"
    assert not [p for p in ax.patches if p.get_gid() == "crossover-interval"]


@pytest.mark.parametrize(("rule", "title"), [
    ("hard-vs-rest", "lenses (predict hard vs. soft or no lenses, discrete)"),
    ("hard-vs-soft", "lenses (predict hard vs. soft, discrete)"),
])
def test_lenses_title_says_which_target_was_computed(rule, title):
    """The title follows the target rule recorded in run.json, not the stored title."""
    info = {"task": {"name": "lenses", "title": "lenses (predict hard vs. soft, discrete)",
                     "recipe": {"target": {"rule": rule}}}}
    assert plots.task_title(info) == title


def test_caption_mentions_only_what_is_drawn(tmp_path):
    """Without splits.csv.gz no interval is shaded, and without a panel of the paper no
    paper curve is drawn: the caption then mentions neither."""
    fabricate(tmp_path, task="toy", title="toy")
    fabricate(tmp_path, task="toy2", title="toy2")
    for folder in ("toy", "toy2"):
        (tmp_path / folder / "splits.csv.gz").unlink()
    fig = plots.figure1(load_results(tmp_path))
    text = fig._supxlabel.get_text()
    assert "Dotted line" in text
    assert "shaded" not in text and "paper" not in text
    assert not [p for ax in fig.get_axes() for p in ax.patches
                if p.get_gid() == "crossover-interval"]


def test_title_of_an_inline_task_is_its_own():
    """An inline task's run.json (a target that is not a recipe rule) keeps its title."""
    info = {"task": {"name": "mine", "title": "mine (discrete)",
                     "recipe": {"target": "label"}}}
    assert plots.task_title(info) == "mine (discrete)"


def test_crossover_of_the_first_pair_names_a_pair_other_than_nb_lr():
    """paired.csv of several pairs: the first pair's crossover is marked, once; a pair other
    than nb and lr is named in its legend entry."""
    import pandas as pd

    curves = {"nb": ("nb", nb_curve), "lr": ("lr", lr_curve),
              "lr_l2": ("lr", lambda m: 0.22 + 0.60 / m)}  # crosses nb at m = 5
    splits = make_splits("toy", SIZES, 30, seed=1, curves=curves)
    info = run_info("toy", "toy", SIZES, {n: f for n, (f, _) in curves.items()}, (0, 40))
    paired = pd.concat([stats.paired_summary(splits, "nb", "lr_l2"),
                        stats.paired_summary(splits, "nb", "lr")], ignore_index=True)
    ax = Figure().add_subplot()
    plots.plot_task(ax, stats.summarize(splits), info, paired=paired)
    (mark,) = [line for line in ax.get_lines() if line.get_gid() == "crossover"]
    assert 3 <= mark.get_xdata()[0] <= 7
    assert mark.get_label() == "crossover (nb vs lr_l2)"


# --------------------------------------------------------------------------------------
# What a reader sees: the crossover's direction, clipped starts, our lines on top, captions
# --------------------------------------------------------------------------------------

def _crossing_mark(ax):
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "crossover"]
    (label,) = [t for t in ax.texts if t.get_gid() == "crossover-label"]
    return line, label


def test_nb_overtaking_lr_is_drawn_unlike_lr_overtaking_nb():
    """LR going ahead: dotted grey; NB going ahead (sick): dash-dotted blue, said in the
    label and the legend."""
    _, ax = _draw()  # NB ahead first, LR from m = 10
    line, label = _crossing_mark(ax)
    assert line.get_linestyle() == ":" and "NB ahead" not in label.get_text()
    swapped = {"nb": ("nb", lr_curve), "lr": ("lr", nb_curve)}  # LR first, then NB
    _, ax = _draw(curves=swapped)
    line, label = _crossing_mark(ax)
    assert line.get_linestyle() == "-." and line.get_color() == plots.A_AHEAD_COLOR
    assert label.get_text().endswith("NB ahead after")
    assert "crossover, NB ahead after" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_crossover_label_is_readable():
    """The "m ≈ …" label: not x-small, dark, on a white ground above the curves."""
    _, ax = _draw()
    _, label = _crossing_mark(ax)
    assert label.get_fontsize() >= Figure().add_subplot().text(0, 0, "", fontsize="small"
                                                               ).get_fontsize()
    assert label.get_bbox_patch() is not None and label.get_zorder() > 4


def test_a_start_far_above_the_rest_leaves_the_axis_and_is_written():
    """Sick-like curves (0.5 at m = 2, below 0.2 after): the axis stops above the rest and
    the starts are written at the top; ordinary curves keep matplotlib's limits."""
    steep = {"nb": ("nb", lambda m: 0.07 + 0.9 * (m == 2)),
             "lr": ("lr", lambda m: 0.08 + 0.8 / m)}
    _, ax = _draw(curves=steep)
    assert ax.get_ylim()[1] < 0.4
    (note,) = [t for t in ax.texts if t.get_gid() == "clipped-start"]
    assert note.get_text().startswith("↑ m=2: nb 0.9")
    _, ax = _draw()
    assert not [t for t in ax.texts if t.get_gid() == "clipped-start"]
    assert ax.get_ylim()[1] >= 0.8
    flat = {"nb": ("nb", lambda m: 0.5 * (m == 2)), "lr": ("lr", lambda m: 0.4 * (m == 2))}
    assert plots.y_limits([(np.array([2.0, 4, 8]), np.array([0.5, 0, 0]))]) is None
    _draw(curves=flat)  # errors 0 after m = 2: drawn as they are, no singular axis


def test_our_curves_are_drawn_over_the_papers():
    """Where our NB and the paper's coincide (promoters), ours is on top."""
    from nbvslr.analysis.fidelity import paper_curve

    splits = make_splits("pima", (2, 5, 8), 10, seed=1)
    info = run_info("pima", "pima", (2, 5, 8), {"nb": "nb", "lr": "lr"}, (0, 60))
    ax = Figure().add_subplot()
    plots.plot_task(ax, stats.summarize(splits), info, paper=paper_curve("pima"))
    paper = _lines_by_gid(ax, "paper-")["paper-nb"]
    assert _model_lines(ax)["nb"].get_zorder() > paper.get_zorder()


def test_one_panel_has_a_caption_too(tmp_path):
    """A task's curve.png says what it shows below the panel."""
    fabricate(tmp_path, task="toy", title="toy")
    fig = plots.figure_of_tasks(load_results(tmp_path), n_boot=10)
    text = fig._supxlabel.get_text().replace("\n", " ")
    assert text.startswith("Mean test error over 40 splits per m") and "crossover" in text


def test_log_m_axis_from_the_smallest_to_the_largest_m(tmp_path):
    """`nbvslr plot --log-m`: a log-scale m axis over the data's sizes."""
    from click.testing import CliRunner

    from nbvslr.cli import cli

    fabricate(tmp_path, task="toy", title="toy")
    fig = plots.figure_of_tasks(load_results(tmp_path), n_boot=10, log_m=True)
    ax = fig.get_axes()[0]
    assert ax.get_xscale() == "log" and ax.get_xlim() == pytest.approx((2, 32))
    for name, flags in (("log.png", ["--log-m"]), ("lin.png", [])):
        res = CliRunner().invoke(cli, ["plot", str(tmp_path / "toy"), *flags,
                                       "-o", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
    assert (tmp_path / "log.png").read_bytes() != (tmp_path / "lin.png").read_bytes()


def test_a_grid_spaced_by_ratios_is_drawn_on_a_log_axis():
    """Text and K-class grids (10, 15, 20, 30, 50, ...) get a log m axis by default; the
    paper's evenly spaced grids, and short ranges, stay linear."""
    from nbvslr.views.plots import log_axis

    assert log_axis([10, 15, 20, 30, 50, 75, 100, 200, 500, 1000, 2000])
    assert not log_axis(list(range(2, 383, 20)))  # adult (discrete): 2..382 step 20
    assert not log_axis([2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 30])  # ratios, but 15x only
    assert not log_axis([1, 100])  # two sizes: no grid to judge


def test_the_legend_of_a_short_log_axis_leaves_the_crossovers_m_readable(tmp_path):
    """voting-like curves on m = 20 .. 100 with --log-m: the bands fill the panel, and
    "best" alone put the legend over the "m ≈ …" written at the top (it counts a covered
    text as little as a point of a curve); the legend goes below the label instead (PDF and
    SVG render it too), and a panel whose legend covers nothing keeps it where it was."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fabricate(tmp_path, task="vote", title="vote", sizes=(20, 40, 60, 80, 100), x_range=None,
              curves={"nb": ("nb", lambda m: 0.105 + 0 * m),
                      "lr": ("lr", lambda m: 0.06 + 2.3 / m)})
    fig = plots.figure_of_tasks(load_results(tmp_path), n_boot=50, log_m=True)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    ax = fig.get_axes()[0]
    (label,) = [t for t in ax.texts if t.get_gid() == "crossover-label"]
    legend = ax.get_legend().get_window_extent(renderer)
    text = label.get_window_extent(renderer)
    assert not legend.overlaps(text)
    assert legend.y1 < text.y0 and ax.bbox.contains(legend.x0, legend.y0)
    for fmt in ("pdf", "svg"):
        assert plots.render(fig, fmt)  # drawn by those renderers too
    # the toy panel: "best" covers no note there, and the legend stays where it chose
    fabricate(tmp_path / "toy", task="toy", title="toy")
    fig = plots.figure_of_tasks(load_results(tmp_path / "toy"), n_boot=50)
    FigureCanvasAgg(fig).draw()
    ax = fig.get_axes()[0]
    assert [t for t in ax.texts if t.get_gid() == "crossover-label"]
    assert ax.get_legend().get_bbox_to_anchor() is ax.bbox


def _outside(fig, ncols):
    """The titles that pass their column's edges and a caption that passes the figure's,
    on the laid-out figure: ``[(text, x0, x1, left, right)]``."""
    fig.draw_without_rendering()
    full = fig.bbox.width
    column = full / ncols
    found = []
    placed = [(ax.title, (k % ncols) * column, (k % ncols + 1) * column)
              for k, ax in enumerate(fig.axes) if ax.title.get_text()]
    for text, left, right in [*placed, (fig._supxlabel, 0.0, full)]:
        box = text.get_window_extent()
        if box.x0 < left or box.x1 > right:
            found.append((text.get_text(), box.x0, box.x1, left, right))
    return found


@pytest.mark.parametrize("panels", [1, 3])
def test_long_titles_and_captions_stay_inside_the_figure(tmp_path, panels):
    """A title longer than its panel is wide and a caption of every note (a start above the
    axis, a crossover each way) are wrapped inside the figure, as on the page and in
    curve.png (optdigits-0v1's caption and lenses' title were cut at the right edge)."""
    steep = {"nb": ("nb", lambda m: 0.07 + 0.9 * (m == 2) + 0.2 * (m >= 24)),
             "lr": ("lr", lambda m: 0.08 + 0.8 / m)}
    for k in range(panels):
        fabricate(tmp_path, task=f"t{k}", curves=steep,
                  title="a task whose title is far longer than one panel is wide (discrete)")
    fig = plots.figure_of_tasks(load_results(tmp_path), n_boot=10)
    caption = fig._supxlabel.get_text()
    assert "↑" in caption and "crossover" in caption
    assert _outside(fig, panels) == []
    fig.set_dpi(150)  # the dpi curve.png is written at
    assert _outside(fig, panels) == []


@pytest.mark.parametrize("name", ["optdigits-0v1", "sick", "lenses"])
def test_committed_panels_captions_and_titles_inside_the_figure(name):
    """The reference panels whose caption (optdigits-0v1, sick) or title (lenses) passed
    the right edge of the HTML page's figure and of curve.png are now inside it."""
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "results" / "reference" / name
    fig = plots.figure_of_tasks(load_results(folder), n_boot=10)
    assert _outside(fig, 1) == []
    fig.set_dpi(150)
    assert _outside(fig, 1) == []


# --------------------------------------------------------------------------------------
# Values a line cannot show, styles across panels, the shared legend's width
# --------------------------------------------------------------------------------------

def _marked_points(ax, color):
    """The (m, value) points drawn with a marker in ``color`` on ``ax``."""
    from matplotlib.colors import same_color

    return {(float(x), float(y)) for line in ax.get_lines()
            if line.get_marker() not in (None, "None", "", " ")
            and same_color(line.get_color(), color)
            for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)
            if np.isfinite(y)}


def test_a_value_with_no_value_beside_it_is_drawn_as_a_dot():
    """A plain curve (the first LR, drawn without markers) finite at one m only, or at one m
    between undefined ones, shows its values as dots in its colour (a line alone drew
    nothing there though the legend listed it); every other line is drawn as before."""
    splits = make_splits("toy", SIZES, 30, seed=1)
    info = run_info("toy", "toy", SIZES, {"nb": "nb", "lr": "lr"}, (0, 40))
    summary = stats.summarize(splits)
    lr = summary["model"] == "lr"
    undefined = lr & ~summary["m"].isin([4, 12, 16, 32])  # 4 alone, 12-16 a segment, 32 alone
    summary.loc[undefined, ["error_mean", "ci_low", "ci_high"]] = np.nan
    ax = Figure().add_subplot()
    plots.plot_task(ax, summary, info)
    means = summary[lr].set_index("m")["error_mean"]
    assert _marked_points(ax, plots.APPROACH_COLORS["discriminative"]) == {
        (4.0, means[4]), (32.0, means[32])}
    assert _marked_points(ax, plots.APPROACH_COLORS["generative"]) == set()
    lines = _model_lines(ax)
    assert lines["lr"].get_marker() in (None, "None", "")  # the legend's swatch as before
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["nb", "lr"]
    np.testing.assert_array_equal(plots.isolated(np.array([np.nan, 1, np.nan, 2, 3, np.nan])),
                                  [False, True, False, False, False, False])
    assert not plots.isolated(np.array([1.0, 2.0])).any() and plots.isolated(np.ones(1)).all()


def _style(line):
    from matplotlib.colors import to_hex

    return (to_hex(line.get_color()), str(line.get_marker()), line.get_linestyle())


def test_one_name_one_style_across_the_panels_and_the_legend(tmp_path):
    """Panels of different variants (lr_l2 in one, lr_c in the other, each its panel's first
    variant) draw them in two styles, each name alike in every panel and in the shared
    legend; they were both green with dots, one swatch for two models."""
    variant = ("lr", lambda m: 0.22 + 0.6 / m)
    fabricate(tmp_path, task="a", title="a", curves={
        "nb": ("nb", nb_curve), "lr": ("lr", lr_curve), "lr_l2": variant})
    fabricate(tmp_path, task="b", title="b", curves={
        "nb": ("nb", nb_curve), "lr": ("lr", lr_curve), "lr_c": variant})
    fabricate(tmp_path, task="c", title="c", curves={
        "nb": ("nb", nb_curve), "lr_c": variant, "lr": ("lr", lr_curve)})
    fig = plots.figure_of_tasks(load_results(tmp_path), n_boot=10)
    styles = {}
    for ax in fig.get_axes():
        for name, line in _model_lines(ax).items():
            styles.setdefault(name, set()).add(_style(line))
    assert {name: len(s) for name, s in styles.items()} == {
        "nb": 1, "lr": 1, "lr_l2": 1, "lr_c": 1}
    assert len({s.pop() for s in styles.values()}) == 4
    (legend,) = fig.legends
    swatches = {t.get_text(): _style(h) for t, h in zip(legend.get_texts(),
                                                      legend.legend_handles, strict=True)
                if t.get_text() in styles}
    for ax in fig.get_axes():
        for name, line in _model_lines(ax).items():
            assert swatches[name] == _style(line)
    many = plots.model_styles([("nb", "nb")] + [(f"v{k}", "nb") for k in range(20)])
    looks = [(s["color"], s["marker"]) for s in many.values()]
    assert len(set(looks)) == len(looks)  # past the 8 colours too


def test_the_shared_legend_fits_the_figure_and_keeps_its_rows_where_they_fit(tmp_path):
    """Two panels of five models with long names and a long crossover label: the shared
    legend takes fewer entries a row and stays inside the figure (six a row ran off both
    edges, cutting the first names and the crossover's label); short names keep six."""
    variant = ("lr", lambda m: 0.22 + 0.6 / m)
    long = {"nb": ("nb", nb_curve), "lr_with_a_weak_penalty": variant,
            "lr": ("lr", lr_curve), "lda_shrunk_towards_diagonal": ("lda", nb_curve),
            "qda_regularised": ("qda", lambda m: 0.35 + 0.1 / m)}
    for task in ("a", "b"):
        fabricate(tmp_path / "long", task=task, title=task, curves=long)
    fig = plots.figure_of_tasks(load_results(tmp_path / "long"), n_boot=10)
    (legend,) = fig.legends
    assert len(legend.get_texts()) >= 6 and legend._ncols < 6
    for dpi in (100, 150):  # the page's and the files' dpi
        fig.set_dpi(dpi)
        fig.draw_without_rendering()
        box, page = legend.get_window_extent(), fig.bbox
        assert page.x0 <= box.x0 and box.x1 <= page.x1
    for task in ("a", "b", "c"):
        fabricate(tmp_path / "short", task=task, title=task, curves={
            "nb": ("nb", nb_curve), "lr": ("lr", lr_curve), "lr_c": variant,
            "lda": ("lda", nb_curve)})
    (legend,) = plots.figure_of_tasks(load_results(tmp_path / "short"), n_boot=10).legends
    assert len(legend.get_texts()) >= 6 and legend._ncols == 6


def test_a_lone_value_shows_its_interval_and_is_whole_on_the_panels_edge():
    """A lone value of a variant (drawn with markers) at the largest m, the axis' end: its
    marker is drawn whole, not cut in half by the panel's edge, and its 95% interval, which
    a band of one m cannot show, is a bar from ci_low to ci_high."""
    curves = {"nb": ("nb", nb_curve), "lr": ("lr", lr_curve),
              "lr_c": ("lr", lambda m: 0.22 + 0.6 / m)}
    splits = make_splits("toy", SIZES, 30, seed=1, curves=curves)
    info = run_info("toy", "toy", SIZES, {n: f for n, (f, _) in curves.items()}, (0, 40))
    summary = stats.summarize(splits)
    variant = summary["model"] == "lr_c"
    summary.loc[variant & (summary["m"] < 32), ["error_mean", "ci_low", "ci_high"]] = np.nan
    ax = Figure().add_subplot()
    plots.plot_task(ax, summary, info)
    assert ax.get_xlim()[1] == 32.0
    row = summary[variant & (summary["m"] == 32)].iloc[0]
    color = _model_lines(ax)["lr_c"].get_color()
    whole = [line for line in ax.get_lines() if not line.get_clip_on()]
    assert [(line.get_color(), line.get_marker(), list(line.get_xdata())) for line in whole] == [
        (color, _model_lines(ax)["lr_c"].get_marker(), [32.0])]
    (bars,) = [c for c in ax.collections if c.get_gid() == "isolated-interval"]
    np.testing.assert_allclose(bars.get_segments()[0], [[32, row["ci_low"]],
                                                        [32, row["ci_high"]]])
