"""Statistics of learning curves against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from nbvslr.errors import ResultsError
from nbvslr.stats import (
    PAIRED_COLUMNS,
    SUMMARY_COLUMNS,
    default_pair,
    normal_quantile,
    paired_differences,
    paired_summary,
    summarize,
    t_quantile,
)


def splits_table(errors: dict[str, dict[int, list[float]]], task: str = "toy") -> pd.DataFrame:
    """A splits table from ``{model: {m: [error of split 0, split 1, ...]}}``."""
    rows = []
    for model, by_m in errors.items():
        family = "nb" if model.startswith("nb") else "lr"
        for m, errs in by_m.items():
            for split, e in enumerate(errs):
                rows.append(dict(task=task, model=model, family=family, m=m, split=split,
                                 error=e, separable=False, n_iter=0, converged=True))
    return pd.DataFrame(rows)


# ---- quantiles -----------------------------------------------------------------------

def test_t_quantile_known_values():
    """Textbook two-sided 95% t multipliers (df 1, 2, 3, 9, 29) and the normal limit."""
    assert t_quantile(0.975, 1) == pytest.approx(12.706204736, rel=1e-9)
    assert t_quantile(0.975, 2) == pytest.approx(4.302652730, rel=1e-9)
    assert t_quantile(0.975, 3) == pytest.approx(3.182446305, rel=1e-9)
    assert t_quantile(0.975, 9) == pytest.approx(2.262157163, rel=1e-9)
    assert t_quantile(0.975, 29) == pytest.approx(2.045229642, rel=1e-9)
    assert t_quantile(0.975, 10**6) == pytest.approx(1.959966, abs=1e-6)
    assert normal_quantile(0.975) == pytest.approx(1.959963984540054, abs=1e-12)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 7, 10, 30, 99, 999, 1999, 2001, 50_000])
@pytest.mark.parametrize("p", [0.6, 0.9, 0.95, 0.975, 0.995, 0.9995])
def test_t_quantile_matches_scipy(df, p):
    """The package's t quantile agrees with scipy to 1e-9 relative for every df."""
    assert t_quantile(p, df) == pytest.approx(sps.t.ppf(p, df), rel=1e-9)


def test_normal_quantile_matches_scipy():
    """The normal quantile agrees with scipy over the whole range, tails included."""
    ps = np.concatenate([np.geomspace(1e-12, 0.02, 50), np.linspace(0.02, 0.98, 97),
                         1 - np.geomspace(1e-12, 0.02, 50)])
    mine = np.array([normal_quantile(p) for p in ps])
    np.testing.assert_allclose(mine, sps.norm.ppf(ps), rtol=1e-9, atol=1e-12)


# ---- summarize -----------------------------------------------------------------------

def test_summarize_hand_computed():
    """Mean, sd (ddof=1), sem and the 95% t interval of four errors, by hand."""
    table = splits_table({"nb": {2: [0.1, 0.2, 0.3, 0.4]}, "lr": {2: [0.5, 0.5, 0.5, 0.5]}})
    out = summarize(table)
    assert list(out.columns) == list(SUMMARY_COLUMNS)
    nb = out[out.model == "nb"].iloc[0]
    # mean 0.25; squared deviations .0225+.0025+.0025+.0225 = .05; sd = sqrt(.05/3)
    sd = math.sqrt(0.05 / 3)
    sem = sd / 2
    half = 3.182446305284263 * sem  # t_{0.975, 3}
    assert nb.n_splits == 4
    assert nb.error_mean == pytest.approx(0.25)
    assert nb.error_sd == pytest.approx(sd)
    assert nb.error_sem == pytest.approx(sem)
    assert (nb.ci_low, nb.ci_high) == pytest.approx((0.25 - half, 0.25 + half))
    lr = out[out.model == "lr"].iloc[0]
    assert (lr.error_sd, lr.ci_low, lr.ci_high) == (0.0, 0.5, 0.5)


def test_summarize_single_split_has_no_interval():
    """With one split the sd, sem and CI are NaN, not a zero-width 'exact' interval."""
    out = summarize(splits_table({"nb": {2: [0.3]}, "lr": {2: [0.4, 0.6]}}))
    nb = out[out.model == "nb"].iloc[0]
    assert nb.n_splits == 1 and nb.error_mean == pytest.approx(0.3)
    assert np.isnan([nb.error_sd, nb.error_sem, nb.ci_low, nb.ci_high]).all()
    lr = out[out.model == "lr"].iloc[0]
    assert lr.ci_high - lr.ci_low == pytest.approx(2 * 12.706204736 * 0.1)


def test_summarize_sorted_and_ignores_missing_errors():
    """Rows come sorted by model then m; NaN errors are left out of n and the mean."""
    table = splits_table({"nb": {10: [0.2, np.nan, 0.4], 2: [0.5, 0.5]},
                          "lr": {10: [0.1, 0.1], 2: [0.3, 0.3]}})
    out = summarize(table)
    assert list(zip(out.model, out.m, strict=True)) == [("lr", 2), ("lr", 10),
                                                         ("nb", 2), ("nb", 10)]
    row = out[(out.model == "nb") & (out.m == 10)].iloc[0]
    assert row.n_splits == 2 and row.error_mean == pytest.approx(0.3)


def test_summarize_missing_column_is_results_error():
    """A splits table without an error column is reported, naming the column."""
    with pytest.raises(ResultsError, match="error"):
        summarize(splits_table({"nb": {2: [0.1]}}).drop(columns="error"))


# ---- paired differences ----------------------------------------------------------------

def test_paired_summary_hand_computed():
    """Differences are taken split by split: (0.3-0.1, 0.2-0.3, 0.4-0.2) -> mean 1/30."""
    table = splits_table({"nb": {5: [0.3, 0.2, 0.4]}, "lr": {5: [0.1, 0.3, 0.2]}})
    out = paired_summary(table, "nb", "lr")
    assert list(out.columns) == list(PAIRED_COLUMNS)
    row = out.iloc[0]
    d = np.array([0.2, -0.1, 0.2])
    sem = d.std(ddof=1) / math.sqrt(3)
    half = 4.302652729911275 * sem  # t_{0.975, 2}
    assert (row.model_a, row.model_b, row.m, row.n_splits) == ("nb", "lr", 5, 3)
    assert row.diff_mean == pytest.approx(0.1)
    assert row.diff_sem == pytest.approx(sem)
    assert (row.ci_low, row.ci_high) == pytest.approx((0.1 - half, 0.1 + half))


def test_paired_sem_is_smaller_than_unpaired_when_splits_correlate():
    """Pairing removes the shared split-to-split variation (identical offsets -> sem 0)."""
    nb = [0.1, 0.4, 0.2, 0.5]
    table = splits_table({"nb": {3: nb}, "lr": {3: [e - 0.05 for e in nb]}})
    row = paired_summary(table, "nb", "lr").iloc[0]
    assert row.diff_mean == pytest.approx(0.05)
    assert row.diff_sem == pytest.approx(0.0, abs=1e-12)


def test_paired_uses_only_common_splits_and_rejects_unknown_model():
    """Splits one model lacks are dropped; an unknown model name is a ResultsError."""
    table = splits_table({"nb": {2: [0.5, 0.5, 0.9]}, "lr": {2: [0.2, 0.4]}})
    diffs = paired_differences(table, "nb", "lr")
    assert diffs["diff"].tolist() == pytest.approx([0.3, 0.1])
    assert paired_summary(table, "nb", "lr").iloc[0].n_splits == 2
    with pytest.raises(ResultsError, match="lr_l2"):
        paired_summary(table, "nb", "lr_l2")


def test_default_pair_first_nb_and_first_lr():
    """The default pair is the first nb-family model vs the first lr-family model."""
    table = splits_table({"lr_l2": {2: [0.1]}, "nb": {2: [0.1]}, "lr": {2: [0.1]}})
    assert default_pair(table) == ("nb", "lr_l2")
    assert default_pair(table, models=["nb", "lr", "lr_l2"]) == ("nb", "lr")
    with pytest.raises(ResultsError):
        default_pair(splits_table({"nb": {2: [0.1]}}))
