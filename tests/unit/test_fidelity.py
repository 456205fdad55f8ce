"""The comparison with the paper's Figure 1: hand-made curves, the shipped data, folders."""

from __future__ import annotations

import pandas as pd
import pytest
from results_factory import fabricate

from nbvslr.analysis import fidelity
from nbvslr.analysis.winner import ahead
from nbvslr.data.recipes import BUILTIN_TASKS
from nbvslr.errors import ConfigError, ResultsError


def _curves(m, nb, lr):
    return pd.DataFrame({"m": m, "nb": nb, "lr": lr})


# --------------------------------------------------------------------------------------
# The shipped data
# --------------------------------------------------------------------------------------

def test_paper_curves_cover_the_15_panels_with_both_curves():
    """The shipped file has every built-in panel, both curves, errors in [0, 1], m increasing."""
    table = fidelity.paper_curves()
    assert list(table.columns) == ["task", "m", "nb", "lr"]
    assert list(pd.unique(table["task"])) == list(BUILTIN_TASKS)
    assert table[["nb", "lr"]].notna().all().all()
    assert ((table[["nb", "lr"]] >= 0) & (table[["nb", "lr"]] <= 1)).all().all()
    for task in BUILTIN_TASKS:
        m = fidelity.paper_curve(task)["m"]
        assert m.is_monotonic_increasing and m.iloc[0] == 2


def test_paper_curve_of_a_task_not_in_the_paper_is_none():
    """A task the paper does not draw has no curve (and never raises)."""
    assert fidelity.paper_curve("nb-data") is None


def test_paper_curves_returns_a_copy():
    """Editing the returned table does not change what the next call returns."""
    table = fidelity.paper_curves()
    table.loc[:, "nb"] = -1.0
    assert (fidelity.paper_curves()["nb"] >= 0).all()


# --------------------------------------------------------------------------------------
# One panel, by hand
# --------------------------------------------------------------------------------------

def test_mean_abs_difference_over_common_sizes_only():
    """|Δ| is averaged over the m's both have: ours' m = 7 and the paper's m = 9 are ignored."""
    paper = _curves([2, 5, 9], [0.40, 0.30, 0.20], [0.50, 0.30, 0.10])
    ours = _curves([2, 5, 7], [0.42, 0.26, 0.90], [0.50, 0.31, 0.90])
    p = fidelity.compare_curves("t", ours, paper)
    assert p.sizes == (2, 5)
    assert p.diff_nb == pytest.approx((0.02 + 0.04) / 2)
    assert p.diff_lr == pytest.approx((0.00 + 0.01) / 2)


def test_ends_use_the_common_sizes_and_the_tie_margin():
    """Winners at the first and last common m; a gap of at most `tie` is a tie."""
    paper = _curves([2, 5, 9], [0.40, 0.30, 0.20], [0.50, 0.304, 0.10])
    ours = _curves([2, 5], [0.50, 0.30], [0.40, 0.303])
    p = fidelity.compare_curves("t", ours, paper)
    assert p.paper_ends == ("nb", "tie")  # at m = 5 the paper's gap is 0.004
    assert p.our_ends == ("lr", "tie")
    assert fidelity.compare_curves("t", ours, paper, tie=0.001).paper_ends == ("nb", "nb")
    assert not p.agrees_at(0) and p.agrees_at(-1)


@pytest.mark.parametrize(("nb", "lr", "expected"), [
    (0.30, 0.40, "nb"), (0.40, 0.30, "lr"), (0.300, 0.305, "tie"), (0.305, 0.300, "tie"),
    (0.300, 0.306, "nb"),
])
def test_ahead(nb, lr, expected):
    """The lower mean error is ahead unless the two are within 0.005."""
    assert ahead(nb, lr, ("nb", "lr")) == expected


def test_crossings_are_interpolated_with_the_model_ahead_after():
    """NB ahead, then LR (at 4 by interpolation), then NB again (at 8.5)."""
    cross = fidelity.crossings([2, 6, 8, 10], [0.2, 0.4, 0.3, 0.2], [0.3, 0.3, 0.2, 0.3])
    assert cross == (pytest.approx((4.0, "lr")), pytest.approx((9.0, "nb")))
    assert cross[0][1] == "lr" and cross[1][1] == "nb"


def test_crossovers_paper_on_its_grid_ours_on_every_size():
    """The paper's crossover from its own grid, ours from all our sizes (m = 3 included)."""
    paper = _curves([2, 10], [0.3, 0.3], [0.4, 0.2])  # crosses at 6
    ours = _curves([2, 3, 10], [0.3, 0.3, 0.3], [0.4, 0.2, 0.2])  # crosses at 2.5
    p = fidelity.compare_curves("t", ours, paper)
    assert p.paper_crossover == pytest.approx(6.0)
    assert p.our_crossover == pytest.approx(2.5)
    flat = fidelity.compare_curves("t", _curves([2, 10], [0.1, 0.1], [0.2, 0.2]), paper)
    assert flat.our_crossover is None and flat.our_crossings == ()


def test_within_needs_both_curves():
    """A panel is within the tolerance only when NB and LR both are."""
    paper = _curves([2, 5], [0.4, 0.3], [0.5, 0.3])
    close_nb = fidelity.compare_curves("t", _curves([2, 5], [0.41, 0.31], [0.55, 0.35]), paper)
    assert close_nb.diff_nb == pytest.approx(0.01) and close_nb.diff_lr == pytest.approx(0.05)
    assert not close_nb.within(0.03)
    assert close_nb.within(0.05)


def test_no_common_size_is_an_error_naming_the_task():
    """Curves on another grid cannot be compared: ResultsError naming the task."""
    with pytest.raises(ResultsError, match="pima.*no size m in common"):
        fidelity.compare_curves("pima", _curves([3], [0.1], [0.2]), _curves([2], [0.1], [0.2]))


def test_summary_counts_and_line():
    """k of n within, and agreement at each end, counted from the panels."""
    paper = _curves([2, 5], [0.40, 0.30], [0.50, 0.20])  # ends: nb, lr
    same = fidelity.compare_curves("a", paper, paper)
    far = fidelity.compare_curves("b", _curves([2, 5], [0.40, 0.10], [0.50, 0.20]), paper)
    s = fidelity.summarize([same, far], tol=0.03)
    assert (s.n, s.within, s.agree_smallest, s.agree_largest) == (2, 1, 2, 1)
    line = fidelity.summary_line([same, far], tol=0.03)
    assert "1 of 2 panels within 0.03" in line
    assert "smallest m on 2 of 2" in line and "largest m on 1 of 2" in line


def test_markdown_marks_gaps_and_disagreements():
    """Differences above tol and our ends that differ from the paper's are bold."""
    paper = _curves([2, 5], [0.40, 0.30], [0.50, 0.20])
    far = fidelity.compare_curves("b", _curves([2, 5], [0.40, 0.10], [0.50, 0.20]), paper)
    row = fidelity.markdown([far], notes=False).splitlines()[2]
    assert row == ("| b | 2–5 | **0.100** | 0.000 | nb, lr | nb, **nb** | 3.5 → lr | none |")


# --------------------------------------------------------------------------------------
# Results folders
# --------------------------------------------------------------------------------------

def _paper_shifted(root, task, shift_nb, shift_lr=0.0, n_splits=2):
    """A results folder for ``task`` whose curves are the paper's moved by a constant.

    Two splits with errors mean ± 0.01, so the mean of the splits is the shifted curve.
    """
    from results_factory import run_info, write_task

    paper = fidelity.paper_curve(task)
    rows = []
    for name, shift in (("nb", shift_nb), ("lr", shift_lr)):
        for _, r in paper.iterrows():
            for split, noise in enumerate((-0.01, 0.01)[:n_splits]):
                rows.append({"task": task, "model": name, "family": name, "m": int(r["m"]),
                             "split": split, "error": r[name] + shift + noise,
                             "separable": False, "n_iter": 1, "converged": True})
    info = run_info(task, task, paper["m"].tolist(), {"nb": "nb", "lr": "lr"})
    return write_task(root, pd.DataFrame(rows), info)


def test_a_run_equal_to_the_paper_agrees_everywhere(tmp_path):
    """The paper's own curves written as a run: zero difference, every end the same."""
    _paper_shifted(tmp_path, "sonar", 0.0)
    _paper_shifted(tmp_path, "voting", 0.0)
    panels = fidelity.compare_results(tmp_path)
    assert [p.task for p in panels] == ["sonar", "voting"]  # the paper's order
    for p in panels:
        assert p.diff_nb == pytest.approx(0, abs=1e-12)
        assert p.diff_lr == pytest.approx(0, abs=1e-12)
        assert p.our_ends == p.paper_ends
        assert p.our_crossover == pytest.approx(p.paper_crossover)


def test_a_shifted_curve_is_measured_and_can_fail(tmp_path):
    """NB moved up by 0.04: the panel is 0.04 off on NB, 0 on LR, and not within 0.03."""
    _paper_shifted(tmp_path, "pima", 0.04)
    (p,) = fidelity.compare_results(tmp_path)
    assert p.diff_nb == pytest.approx(0.04)
    assert p.diff_lr == pytest.approx(0.0, abs=1e-12)
    assert not p.within(0.03)


def test_non_paper_tasks_are_skipped_and_none_at_all_is_an_error(tmp_path):
    """Synthetic tasks are not compared; a folder with no panel of the paper is an error."""
    fabricate(tmp_path, task="nb-data", title="x", x_range=(0, 10))
    with pytest.raises(ResultsError, match="no panel of the paper"):
        fidelity.compare_results(tmp_path)
    _paper_shifted(tmp_path, "liver", 0.0)
    assert [p.task for p in fidelity.compare_results(tmp_path)] == ["liver"]


def test_models_by_name_and_a_missing_one(tmp_path):
    """--nb/--lr pick the models; an unknown name is a ConfigError listing the models, and
    a model of the other family (the pair swapped) one naming the family's models."""
    _paper_shifted(tmp_path, "liver", 0.0)
    (p,) = fidelity.compare_results(tmp_path, nb="nb", lr="lr")
    assert p.diff_nb < 1e-12 and p.label == "liver (nb vs lr)"
    with pytest.raises(ConfigError, match="no NB model named 'nb2'.*models there: lr, nb"):
        fidelity.compare_results(tmp_path, nb="nb2")
    with pytest.raises(ConfigError, match="'lr' is a model of family 'lr', not 'nb'.*"
                                          r"--nb names one of the nb family \(nb\)"):
        fidelity.compare_results(tmp_path, nb="lr", lr="nb")


def test_one_size_in_common_is_not_a_comparison_of_two_ends():
    """A run sharing a single m with the paper's grid cannot say who is ahead at the
    smallest and at the largest m (they are one size): ResultsError naming it."""
    with pytest.raises(ResultsError, match=r"pima: only m = 2 in common.*two sizes"):
        fidelity.compare_curves("pima", _curves([2, 10], [0.4, 0.3], [0.5, 0.2]),
                                _curves([2, 5], [0.4, 0.3], [0.5, 0.3]))


# --------------------------------------------------------------------------------------
# nbvslr fidelity
# --------------------------------------------------------------------------------------

def _invoke(*args):
    from click.testing import CliRunner

    from nbvslr.cli import cli

    return CliRunner().invoke(cli, ["fidelity", *[str(a) for a in args]])


@pytest.fixture
def two_panels(tmp_path):
    """sonar as in the paper, pima with NB 0.04 off: 1 of 2 within 0.03."""
    _paper_shifted(tmp_path / "results", "sonar", 0.0)
    _paper_shifted(tmp_path / "results", "pima", 0.04)
    return tmp_path / "results"


def test_cli_prints_the_table_and_passes_at_the_threshold(two_panels):
    """The table and the summary on stdout; exit 0 when exactly --min-within panels pass."""
    res = _invoke(two_panels, "--min-within", 1)
    assert res.exit_code == 0, res.output
    assert res.output.startswith("| panel |")
    assert "| pima | 2–59 | **0.040** | 0.000 |" in res.output
    assert "1 of 2 panels within 0.03" in res.output


def test_cli_exits_1_below_the_threshold(two_panels):
    """One panel short of --min-within: exit 1, the reason on one line."""
    res = _invoke(two_panels, "--min-within", 2)
    assert res.exit_code == 1
    assert res.output.splitlines()[-1] == (
        "error: further from the paper than allowed: 1 of 2 panels within 0.03 "
        "(--min-within 2)")
    assert _invoke(two_panels, "--min-within", 2, "--tol", 0.05).exit_code == 0


def test_cli_min_agree_counts_the_largest_m(tmp_path):
    """pima's LR moved up 0.05: the paper's LR win at m = 59 becomes ours for NB; exit 1."""
    _paper_shifted(tmp_path, "pima", 0.0, shift_lr=0.05)
    assert _invoke(tmp_path, "--min-agree", 1).exit_code == 1
    assert _invoke(tmp_path, "--min-agree", 0).exit_code == 0


def test_cli_missing_folder_is_a_one_line_usage_error(tmp_path):
    """A folder that does not exist: exit 2 and one line naming it."""
    res = _invoke(tmp_path / "nope")
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0
    assert "nope does not exist" in res.output


# --------------------------------------------------------------------------------------
# nbvslr report
# --------------------------------------------------------------------------------------

def test_report_appends_the_comparison_for_paper_panels_only(tmp_path):
    """The report ends with the comparison when a panel of the paper is there, not otherwise."""
    from nbvslr.views.report import report_table

    fabricate(tmp_path / "synthetic", task="nb-data", title="x", x_range=(0, 40))
    assert "Against the paper" not in report_table(tmp_path / "synthetic", n_boot=10)
    _paper_shifted(tmp_path / "both", "sonar", 0.02)
    fabricate(tmp_path / "both", task="nb-data", title="x", x_range=(0, 40))
    text = report_table(tmp_path / "both", n_boot=10)
    tail = text.split("Against the paper's Figure 1:")[1]
    assert "| sonar | 2–102 | 0.020 | 0.000 |" in tail and "nb-data" not in tail
    assert "1 of 1 panels within 0.03" in tail
    assert "Against the paper" not in report_table(tmp_path / "both", n_boot=10, paper=False)


def test_report_leaves_out_a_panel_it_cannot_compare(tmp_path):
    """A paper panel run on sizes the paper does not have is left out of the report's
    comparison, while `fidelity` names the problem."""
    from nbvslr.views.report import report_table

    fabricate(tmp_path, task="lenses", title="lenses", sizes=(24, 25), n_splits=5)
    assert "Against the paper" not in report_table(tmp_path, n_boot=10)
    with pytest.raises(ResultsError, match="lenses: no size m in common"):
        fidelity.compare_results(tmp_path)


def test_cli_without_argument_reads_results(two_panels, monkeypatch):
    """Bare `nbvslr fidelity` compares the runs in ./results; none there: one line naming
    the committed run to compare instead."""
    monkeypatch.chdir(two_panels.parent)
    res = _invoke()
    assert res.exit_code == 0, res.output
    assert "| pima | 2–59 |" in res.output
    monkeypatch.chdir(two_panels / "pima")
    res = _invoke()
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert res.output.strip().count("\n") == 0
    assert "nbvslr fidelity results/reference" in res.output


def test_ahead_names_the_pair_it_is_given():
    """ahead names the given pair's models, whatever they are (not the nb/lr roles)."""
    assert ahead(0.2, 0.3, ("lda", "qda")) == "lda"
    assert ahead(0.3, 0.2, ("lda", "qda")) == "qda"
