"""The Markdown report: hand-computed cells, crossovers, ties, and broken results folders."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from results_factory import fabricate, run_info, write_task

from nbvslr import results
from nbvslr.analysis.formatting import MISSING, number
from nbvslr.errors import ResultsError
from nbvslr.views import report

# t_{0.975, 2} = 4.302652729911275; 3 splits per m, so half-width = t * sd / sqrt(3)
T2 = 4.302652729911275


def _hand_table(tmp_path, nb, lr, sizes=(2, 4), paired=True):
    """A task folder from explicit per-split errors: nb[m_index][split], lr[...]."""
    rows = []
    for name, errs in (("nb", nb), ("lr", lr)):
        for k, m in enumerate(sizes):
            for s, e in enumerate(errs[k]):
                rows.append(("hand", name, name, m, s, e, False, 1, True))
    splits = pd.DataFrame(rows, columns=["task", "model", "family", "m", "split", "error",
                                         "separable", "n_iter", "converged"])
    info = run_info("hand", "hand", sizes, {"nb": "nb", "lr": "lr"}, (0, 5))
    return write_task(tmp_path, splits, info, paired=paired)


def _row(text, name):
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| {name} "))
    return [c.strip() for c in line.strip("|").split("|")]


def test_report_cells_match_hand_computed_values(tmp_path):
    """Means, half-widths, winners (nb, then tie) and the interpolated crossover at m = 3."""
    # m=2: NB - LR = -0.2 on every split (sd 0: nb wins); m=4: diffs 0.2, 0.1, 0.3 (tie)
    _hand_table(tmp_path, nb=[[0.3, 0.4, 0.5], [0.4, 0.4, 0.4]],
                lr=[[0.5, 0.6, 0.7], [0.2, 0.3, 0.1]])
    text = report.report_table(tmp_path, n_boot=50, notes=False)
    cells = _row(text, "hand")
    half = T2 * 0.1 / 3 ** 0.5  # sd 0.1 for the three non-constant columns
    assert f"{half:.3f}" == "0.248"
    assert cells == [
        "hand", "2–4",
        "0.400 ± 0.248", "0.600 ± 0.248", "nb",
        "0.400 ± 0.000", "0.200 ± 0.248", "tie",
        cells[8], "never", "0.300 / 0.200", "0.400",
    ]
    assert cells[8].startswith("3 [")  # -0.2 at m=2, +0.2 at m=4: crosses at 3


def test_no_crossover_in_range_is_reported(tmp_path):
    """When NB stays better at every m the crossover cell says so, LR is never better."""
    _hand_table(tmp_path, nb=[[0.1, 0.2, 0.3], [0.1, 0.1, 0.2]],
                lr=[[0.5, 0.6, 0.7], [0.4, 0.5, 0.4]])
    cells = _row(report.report_table(tmp_path, notes=False), "hand")
    assert cells[4] == cells[7] == "nb"
    assert cells[8] == "none in range"
    assert cells[9] == "never"


def test_tie_everywhere_is_flagged(tmp_path):
    """Noise-only sign changes are labelled a tie at every m."""
    _hand_table(tmp_path, nb=[[0.3, 0.5, 0.4], [0.3, 0.5, 0.4]],
                lr=[[0.5, 0.3, 0.3], [0.5, 0.3, 0.5]])
    cells = _row(report.report_table(tmp_path, n_boot=50, notes=False), "hand")
    assert cells[4] == cells[7] == "tie"
    assert cells[8].endswith("(tie at every m)")


def test_report_is_reproducible_and_uses_paired_csv_or_splits_alike(tmp_path):
    """The same seed gives the same table; without paired.csv the splits give the same one."""
    fabricate(tmp_path / "a", task="toy")
    fabricate(tmp_path / "b", task="toy")
    (tmp_path / "b" / "toy" / "paired.csv").unlink()
    a1 = report.report_table(tmp_path / "a", n_boot=200, seed=3)
    a2 = report.report_table(tmp_path / "a", n_boot=200, seed=3)
    b = report.report_table(tmp_path / "b", n_boot=200, seed=3)
    assert a1 == a2 == b
    assert _row(a1, "toy")[9] != "never"  # LR ends significantly better


def test_without_splits_the_crossover_has_no_interval(tmp_path):
    """Summaries and paired.csv alone (the committed files) still make the table."""
    folder = fabricate(tmp_path)
    (folder / "splits.csv.gz").unlink()
    cells = _row(report.report_table(tmp_path, notes=False), "toy")
    assert cells[8].endswith("[no interval: no splits file]")


def test_rows_follow_the_papers_panel_order(tmp_path):
    """Built-in tasks come in Figure 1's order, user tasks after them."""
    for name in ("zzz", "sonar", "pima"):
        fabricate(tmp_path, task=name, title=name)
    lines = [ln for ln in report.report_table(tmp_path, n_boot=20, paper=False).splitlines()
             if ln.startswith("| ") and not ln.startswith("| task")]
    assert [ln.split("|")[1].strip() for ln in lines] == ["pima", "sonar", "zzz"]


def test_missing_folder_is_a_results_error(tmp_path):
    """A folder that does not exist names itself and the command that makes results."""
    with pytest.raises(ResultsError, match=r"does not exist; run `nbvslr run"):
        report.report_table(tmp_path / "nope")


def test_empty_folder_is_a_results_error(tmp_path):
    """A folder without task results says what it looked for."""
    with pytest.raises(ResultsError, match="holds no task results"):
        results.load_results(tmp_path)


@pytest.mark.parametrize(("victim", "content", "match"), [
    ("run.json", "{not json", "run.json: cannot be read"),
    ("run.json", "[1, 2]", "expected a JSON object"),
    ("summary.csv", "task,model\nx,y\n", "summary.csv: missing column"),
    ("paired.csv", "a,b\n1,2\n", "paired.csv: missing column"),
    ("splits.csv.gz", "not gzip at all", "splits.csv.gz"),
])
def test_corrupt_files_are_one_line_results_errors(tmp_path, victim, content, match):
    """Each corrupt file raises a one-line ResultsError naming it and the fix."""
    folder = fabricate(tmp_path)
    (folder / victim).write_text(content)
    with pytest.raises(ResultsError, match=match) as err:
        report.report_table(tmp_path, n_boot=20)
    assert "\n" not in str(err.value)
    assert "nbvslr run" in str(err.value)


def test_incomplete_task_folder_names_the_missing_file(tmp_path):
    """A task folder without summary.csv is reported as incomplete."""
    folder = fabricate(tmp_path)
    (folder / "summary.csv").unlink()
    with pytest.raises(ResultsError, match="incomplete: summary.csv missing"):
        results.load_results(folder)


def test_model_order_reads_run_json_models_list(tmp_path):
    """run.json lists models as objects; their order is the legend and pairing order."""
    folder = fabricate(tmp_path)
    info = json.loads((folder / "run.json").read_text())
    info["models"] = list(reversed(info["models"]))
    (folder / "run.json").write_text(json.dumps(info))
    assert results.load_task(folder).model_order() == ["lr", "nb"]


def test_numbers_never_show_a_negative_zero():
    """A floating-point residue like -2.5e-16 is printed as 0.000, never -0.000."""
    assert number(-2.5e-16) == "0.000"
    assert number(-0.0004) == "0.000"
    assert number(-0.0006) == "-0.001"
    assert number(None) == MISSING and number(float("nan")) == MISSING == "n/a"


def test_csv_has_the_hand_computed_values_as_plain_numbers(tmp_path):
    """--format csv: the Markdown cells as numbers (means, half-widths, crossover at 3)."""
    _hand_table(tmp_path, nb=[[0.3, 0.4, 0.5], [0.4, 0.4, 0.4]],
                lr=[[0.5, 0.6, 0.7], [0.2, 0.3, 0.1]])
    (tmp_path / "report.csv").write_text(report.report_csv(tmp_path, n_boot=50))
    table = pd.read_csv(tmp_path / "report.csv")
    assert list(table.columns) == list(report.COLUMNS)
    row = table.iloc[0]
    half = T2 * 0.1 / 3 ** 0.5
    assert (row["task"], row["model_a"], row["model_b"]) == ("hand", "nb", "lr")
    assert (row["m_min"], row["m_max"]) == (2, 4)
    assert row["a_error_min_m"] == pytest.approx(0.4) and row["b_error_min_m"] == pytest.approx(0.6)
    assert row["a_halfwidth_min_m"] == pytest.approx(half, rel=1e-5)
    assert row["a_halfwidth_max_m"] == 0
    assert (row["winner_min_m"], row["winner_max_m"]) == ("nb", "tie")
    assert row["crossover"] == 3 and row["crossover_low"] <= 3 <= row["crossover_high"]
    assert row["n_crossings"] == 1 and pd.isna(row["b_better_from"])
    assert row["better_after"] == "lr" and row["first_a_better"] == 2
    assert (row["a_asymptotic"], row["b_asymptotic"], row["majority"]) == (0.3, 0.2, 0.4)
    assert row["splits"] == 3


def test_csv_of_several_tasks_loads_with_pandas_in_one_line(tmp_path):
    """`nbvslr report ROOT --format csv -o F`: one row per task, numeric columns numeric,
    an interval end outside the range as -inf / inf, and the same text printed."""
    from click.testing import CliRunner

    from nbvslr.cli import cli

    fabricate(tmp_path / "res", task="pima", title="pima")
    fabricate(tmp_path / "res", task="mine", title="mine",
              curves={"nb": ("nb", lambda m: 0.1 + 0 * m), "lr": ("lr", lambda m: 0.3 + 0 * m)})
    out = tmp_path / "all.csv"
    res = CliRunner().invoke(cli, ["report", str(tmp_path / "res"), "--format", "csv",
                                   "--n-boot", "100", "-o", str(out)])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out)
    assert out.read_text() in res.output
    assert list(table["task"]) == ["pima", "mine"]
    numeric = [c for c in report.COLUMNS if c not in (
        "task", "model_a", "model_b", "winner_min_m", "winner_max_m", "tie_everywhere",
        "folder", "better_after")]
    assert all(pd.api.types.is_numeric_dtype(table[c]) for c in numeric), table.dtypes
    mine = table.set_index("task").loc["mine"]
    assert pd.isna(mine["crossover"]) and mine["n_crossings"] == 0
    assert mine["winner_max_m"] == "nb"
    assert table.set_index("task").loc["pima", "b_better_from"] > 0


def test_every_compared_pair_gets_its_row(tmp_path):
    """A run of nb, lr and lr_l2 compared as nb-lr and nb-lr_l2: two rows, each with its
    own paired interval; the second names its models and its winner by name."""
    curves = {"nb": ("nb", lambda m: 0.30 + 0.20 / m), "lr": ("lr", lambda m: 0.20 + 1.20 / m),
              "lr_l2": ("lr", lambda m: 0.22 + 0.60 / m)}
    from results_factory import make_splits

    from nbvslr.analysis import stats

    sizes = (2, 4, 8, 16, 32)
    splits = make_splits("toy", sizes, 40, 0, curves)
    info = run_info("toy", "toy", sizes, {n: f for n, (f, _) in curves.items()}, (0, 40))
    info["config"] = {"compare": [["nb", "lr"], ["nb", "lr_l2"]]}
    folder = write_task(tmp_path, splits, info, paired=False)
    pd.concat([stats.paired_summary(splits, "nb", "lr"),
               stats.paired_summary(splits, "nb", "lr_l2")]).to_csv(
        folder / "paired.csv", index=False)
    text = report.report_table(tmp_path, n_boot=50, paper=False)
    assert _row(text, "toy")[0] == "toy"
    second = _row(text, "toy (nb vs lr_l2)")
    assert second[4] == "nb" and second[7] == "lr_l2"
    assert "A row `task (a vs b)`" in text
    table = pd.read_csv(io.StringIO(report.report_csv(tmp_path, n_boot=50)))
    assert [tuple(r) for r in table[["model_a", "model_b"]].to_numpy()] == [
        ("nb", "lr"), ("nb", "lr_l2")]
    assert table["crossover"].iloc[0] != table["crossover"].iloc[1]
    (folder / "paired.csv").unlink()  # the same pairs from run.json's compare and the splits
    assert report.report_table(tmp_path, n_boot=50, paper=False) == text


def test_a_run_of_one_family_reports_each_model_alone(tmp_path):
    """A run of nb alone has no pair: the report lists its curve (errors and intervals at
    both ends by hand) instead of failing, and says that nothing is compared."""
    rows = [("solo", "nb", "nb", m, s, e, False, 1, True)
            for m, errs in ((2, (0.3, 0.4, 0.5)), (4, (0.2, 0.2, 0.2))) for s, e in enumerate(errs)]
    splits = pd.DataFrame(rows, columns=["task", "model", "family", "m", "split", "error",
                                         "separable", "n_iter", "converged"])
    folder = write_task(tmp_path, splits, run_info("solo", "solo", (2, 4), {"nb": "nb"}),
                        paired=False)
    text = report.report_table([folder], n_boot=50, paper=False)
    cells = _row(text, "solo (nb only)")
    assert cells[2] == f"{number(0.4)} ± {number(T2 * 0.1 / 3 ** 0.5)}"
    assert cells[5] == f"{number(0.2)} ± {number(0.0)}"
    assert cells[3] == cells[4] == cells[6] == cells[7] == cells[8] == MISSING
    assert "no pair to compare" in report.verdict_lines(report.report_rows([folder], n_boot=50))
    table = pd.read_csv(io.StringIO(report.report_csv([folder], n_boot=50)))
    assert table.loc[0, "model_a"] == "nb" and table["b_error_max_m"].isna().all()


def test_one_task_name_in_two_folders_is_told_apart_in_both_forms(tmp_path):
    """Two folders holding a task of one name: the table and the brief lines both name
    each row's folder (the brief lines named only the task, twice)."""
    first = fabricate(tmp_path / "a", task="pima", title="pima (continuous)")
    second = fabricate(tmp_path / "b", task="pima", title="pima (continuous)")
    rows = report.report_rows([tmp_path / "a", tmp_path / "b"], n_boot=50)
    lines = report.verdict_lines(rows).splitlines()
    assert len(lines) == 2
    assert f"({first})" in lines[0] and f"({second})" in lines[1]
