"""Statistics of learning curves against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from nbvslr.analysis.crossovers import crossovers, first_crossing
from nbvslr.analysis.stats import (
    PAIRED_COLUMNS,
    SHARE_COLUMNS,
    SUMMARY_COLUMNS,
    default_pair,
    normal_quantile,
    paired_differences,
    paired_summary,
    summarize,
    t_quantile,
)
from nbvslr.analysis.winner import winner
from nbvslr.errors import ResultsError


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


@pytest.mark.parametrize("df", [1, 2, 39, 299, 999, 1999, 10**6])
@pytest.mark.parametrize("p", [0.6, 0.975, 0.9995])
def test_t_quantile_inverts_the_t_cdf_to_round_off(df, p):
    """At the df a run's 40, 300 or 1000 splits give, the t quantile is exact to round-off:
    the t CDF at it is p within 2e-16 (the hand-written Newton polish was off by up to
    5e-15 at df 999)."""
    from scipy.special import stdtr

    assert abs(stdtr(df, t_quantile(p, df)) - p) <= 2e-16


@pytest.mark.parametrize("p", [1e-300, 1e-20, 1e-8, 0.3, 0.5, 0.975, 1 - 1e-12])
def test_normal_quantile_inverts_the_normal_cdf(p):
    """The normal quantile is exact to round-off, deep tails included; p outside (0, 1)
    is refused."""
    from scipy.special import ndtr

    assert ndtr(normal_quantile(p)) == pytest.approx(p, rel=2e-13)
    for bad in (0.0, 1.0):
        with pytest.raises(ValueError, match="p must be in"):
            normal_quantile(bad)


# ---- summarize -----------------------------------------------------------------------

def test_summarize_hand_computed():
    """Mean, sd (ddof=1), sem and the 95% t interval of four errors, by hand."""
    table = splits_table({"nb": {2: [0.1, 0.2, 0.3, 0.4]}, "lr": {2: [0.5, 0.5, 0.5, 0.5]}})
    out = summarize(table)
    assert list(out.columns) == [*SUMMARY_COLUMNS, *SHARE_COLUMNS]
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
    lr = out[out.model == "lr"].iloc[0]  # 0.5 -+ 12.706 x 0.1, clipped to what an error can be
    assert (lr.ci_low, lr.ci_high) == (0.0, 1.0)


def test_summarize_two_splits_interval_is_the_t_interval_within_zero_one():
    """n = 2 uses t(0.975, 1) = 12.706; the ends are clipped to [0, 1], never past them."""
    out = summarize(splits_table({"nb": {2: [0.40, 0.42]}, "lr": {2: [0.02, 0.06]}}))
    nb = out[out.model == "nb"].iloc[0]
    assert nb.ci_high - nb.ci_low == pytest.approx(2 * 12.706204736 * 0.01)
    lr = out[out.model == "lr"].iloc[0]
    assert lr.ci_low == 0.0 and lr.ci_high == pytest.approx(0.04 + 12.706204736 * 0.02)


def test_paired_intervals_are_clipped_to_what_a_difference_can_be():
    """A paired difference's interval stays within [-1, 1] with two splits."""
    out = paired_summary(splits_table({"nb": {2: [0.9, 0.1]}, "lr": {2: [0.1, 0.5]}}),
                         "nb", "lr")
    assert (out.ci_low.iloc[0], out.ci_high.iloc[0]) == (-1.0, 1.0)


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


# ---- winner and crossovers -------------------------------------------------------------

def curve_table(diff_by_m: dict[int, float], spread: float = 0.02, n: int = 4,
                lr_error: float = 0.3) -> pd.DataFrame:
    """NB and LR splits whose per-m mean difference NB - LR is exactly ``diff_by_m[m]``.

    The differences at one m are ``d + spread * (-1.5, -0.5, 0.5, 1.5, ...)`` (mean d).
    """
    offsets = spread * (np.arange(n) - (n - 1) / 2)
    nb = {m: [lr_error + d + o for o in offsets] for m, d in diff_by_m.items()}
    lr = {m: [lr_error] * n for m in diff_by_m}
    return splits_table({"nb": nb, "lr": lr})


def test_winner_reads_the_paired_interval():
    """Interval above 0 -> model b's name, below 0 -> model a's, containing 0 or NaN -> tie."""
    pair = {"model_a": "nb", "model_b": "lr"}
    assert winner({**pair, "ci_low": 0.01, "ci_high": 0.05}) == "lr"
    assert winner({**pair, "ci_low": -0.05, "ci_high": -0.01}) == "nb"
    assert winner({**pair, "ci_low": -0.01, "ci_high": 0.05}) == "tie"
    assert winner({**pair, "ci_low": float("nan"), "ci_high": float("nan")}) == "tie"


def test_winner_names_any_pair():
    """winner names the row's own models (lda vs lr), never the roles of nb and lr."""
    pair = {"model_a": "lda", "model_b": "lr-C1"}
    assert winner({**pair, "ci_low": 0.01, "ci_high": 0.05}) == "lr-C1"
    assert winner({**pair, "ci_low": -0.05, "ci_high": -0.01}) == "lda"


def test_crossovers_of_a_pair_other_than_nb_and_lr():
    """The crossovers of (lda, qda) name lda and qda: b_better_from and better_after follow
    the pair's own names."""
    table = curve_table({2: -0.1, 4: 0.1, 6: 0.3, 8: 0.2}, spread=0.001)
    table["model"] = table["model"].map({"nb": "lda", "lr": "qda"})
    table["family"] = table["model"]
    out = crossovers(paired_summary(table, "lda", "qda"))
    assert out.better_after == ("qda",)
    assert out.first_a_better == 2 and out.first_b_better == 4 and out.b_better_from == 4


def test_no_crossover_when_nb_is_better_everywhere():
    """A curve that stays below 0 has no crossover and no bootstrap interval."""
    table = curve_table({2: -0.2, 4: -0.1, 6: -0.05, 8: -0.2})
    out = crossovers(paired_summary(table, "nb", "lr"), table, rng=np.random.default_rng(0))
    assert out.crossings == () and out.first_crossover is None
    assert out.interval is None
    assert out.first_b_better is None and out.b_better_from is None
    assert out.first_a_better == 2
    assert not out.tie_everywhere


def test_two_crossovers_interpolated_by_hand():
    """d = (-.1, .1, .3, -.1) at m = 2, 4, 6, 8 crosses at 2 + 2*.1/.2 = 3 and 6 + 2*.3/.4 = 7.5."""
    table = curve_table({2: -0.1, 4: 0.1, 6: 0.3, 8: -0.1}, spread=0.001)
    paired = paired_summary(table, "nb", "lr")
    out = crossovers(paired)
    assert out.crossings == pytest.approx((3.0, 7.5))
    assert out.better_after == ("lr", "nb")
    assert out.first_crossover == pytest.approx(3.0)
    assert out.first_b_better == 4
    assert out.b_better_from is None  # NB is better again at the last size
    assert [winner(r) for _, r in paired.iterrows()] == ["nb", "lr", "lr", "nb"]


def test_crossing_through_an_exact_zero_and_a_touch():
    """A zero between opposite signs is the crossing; touching 0 and turning back is not."""
    ms = np.array([2.0, 4, 6, 8, 10, 12])
    loc, start = first_crossing(ms, np.array([[-1.0, 0, 1, 1, 1, 1],
                                              [-1.0, 0, 0, -1, 0, 0],
                                              [0.0, -1, 0, 0, 2, 2],
                                              [0.0, 0, 0, 0, 0, 0]]))
    np.testing.assert_allclose(loc, [4.0, np.nan, 7.0, np.nan])
    np.testing.assert_array_equal(start, [-1, -1, -1, 0])


def test_a_curve_that_starts_on_the_other_side_crossed_before_the_range():
    """Measured from the point curve's starting sign, a resampled curve that starts on the
    other side is -inf (its later crossing goes the other way), one that never leaves the
    starting side +inf, a curve of zeros NaN; the others their first sign change."""
    from nbvslr.analysis.crossovers import crossing_from

    ms = np.array([2.0, 4, 6, 8])
    D = np.array([[-1.0, -1, 1, 1],   # crosses at 5
                  [1.0, -1, -1, 1],   # starts on the other side: -inf, not 3 or 7
                  [0.0, 1, -1, -1],   # its first non-zero is on the other side: -inf
                  [-1.0, -1, -1, -1],  # never crosses: +inf
                  [0.0, 0, 0, 0]])     # all zero: left out (NaN)
    np.testing.assert_array_equal(crossing_from(ms, D, -1.0),
                                  [5.0, -np.inf, -np.inf, np.inf, np.nan])


def test_bootstrap_counts_no_crossing_of_the_other_direction():
    """Where the smallest m's difference is nearly 0, about half the resamples start on the
    other side: the interval's low end is -inf and the share crossing inside the range is
    about half (counting their crossings back, it was nearly all of them)."""
    from nbvslr.analysis.crossovers import _bootstrap_first_crossing

    rng = np.random.default_rng(0)
    ms = np.array([2.0, 4, 6, 8, 10])
    means = (-0.001, -0.05, -0.05, 0.05, 0.05)  # the point curve: a better, then b from 7
    diffs = [mu + (0.05 if k == 0 else 0.005) * rng.standard_normal(200)
             for k, mu in enumerate(means)]
    diffs = [d - d.mean() + mu for d, mu in zip(diffs, means, strict=True)]
    (low, high), inside = _bootstrap_first_crossing(ms, diffs, -1.0,
                                                    np.random.default_rng(1), 2000, 0.95)
    assert low == -np.inf and 6.0 < high < 8.0
    assert 0.35 < inside < 0.65


def test_vectorised_first_crossing_matches_the_scalar_rule():
    """first_crossing over a (B, M) stack equals the one-curve rule on each row."""
    from nbvslr.analysis.crossovers import sign_changes

    rng = np.random.default_rng(3)
    ms = np.cumsum(rng.integers(1, 5, size=9)).astype(float)
    D = rng.integers(-2, 3, size=(500, 9)).astype(float) * rng.uniform(0.5, 1, size=(500, 9))
    loc, _ = first_crossing(ms, D)
    expected = [(c[0][0] if (c := sign_changes(ms, row)) else np.nan) for row in D]
    np.testing.assert_allclose(loc, expected)


def test_tie_everywhere():
    """Noisy curves whose paired interval contains 0 at every m: winner 'tie' everywhere."""
    table = curve_table({2: 0.01, 4: -0.01, 6: 0.005}, spread=0.2)
    paired = paired_summary(table, "nb", "lr")
    out = crossovers(paired)
    assert out.tie_everywhere
    assert {winner(r) for _, r in paired.iterrows()} == {"tie"}
    assert out.first_b_better is None and out.first_a_better is None
    assert len(out.crossings) == 2  # sign changes of noise are still listed


def _noisy_crossing_table(seed: int = 11) -> pd.DataFrame:
    """True mean difference 0.01 * (m - 21): NB better below m = 21, LR above."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(2, 42, 3):
        lr = rng.uniform(0.2, 0.4, size=300)
        nb = lr + 0.01 * (m - 21) + rng.normal(0, 0.05, size=300)
        for split in range(300):
            rows += [dict(task="toy", model="nb", family="nb", m=m, split=split, error=nb[split]),
                     dict(task="toy", model="lr", family="lr", m=m, split=split, error=lr[split])]
    return pd.DataFrame(rows)


def test_bootstrap_interval_contains_true_crossover_and_is_reproducible():
    """The bootstrap interval brackets the true crossing (21) and repeats with the same seed."""
    table = _noisy_crossing_table()
    paired = paired_summary(table, "nb", "lr")
    out = crossovers(paired, table, rng=np.random.default_rng(42), n_boot=400)
    low, high = out.interval
    assert low < 21 < high
    assert high - low < 6  # 300 splits per size pin it down to a few units of m
    assert out.first_crossover == pytest.approx(21, abs=2)
    assert out.boot_fraction == 1.0
    again = crossovers(paired, table, rng=np.random.default_rng(42), n_boot=400)
    assert again.interval == out.interval
    other = crossovers(paired, table, rng=np.random.default_rng(43), n_boot=400)
    assert other.interval != out.interval


def test_bootstrap_interval_open_ended_when_resamples_leave_the_range():
    """A crossing near the last size: resamples that never cross push the upper end to +inf."""
    table = curve_table({2: -0.1, 4: -0.05, 6: 0.0005}, spread=0.05, n=20)
    paired = paired_summary(table, "nb", "lr")
    out = crossovers(paired, table, rng=np.random.default_rng(0), n_boot=300)
    assert out.first_crossover == pytest.approx(4 + 2 * 0.05 / 0.0505)
    assert out.interval[1] == np.inf
    assert 0 < out.boot_fraction < 1
