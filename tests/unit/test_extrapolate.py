"""Learning curves past the grid: the families' fits, the choice by extrapolation, the
predicted crossover and its interval, and the report's section."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner
from results_factory import fabricate

from nbvslr.analysis import extrapolate as ex
from nbvslr.cli import cli
from nbvslr.errors import ConfigError
from nbvslr.results import load_task

M = np.array([2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128], dtype=float)
SEM = np.full(M.size, 0.005)

TRUE = {
    "pow3": (lambda m: 0.10 + 0.40 * m ** -0.7, 0.10),
    "exp3": (lambda m: 0.15 + 0.30 * np.exp(-0.05 * m), 0.15),
    "mmf4": (lambda m: (0.5 * 20 + 0.12 * m**1.3) / (20 + m**1.3), 0.12),
    "wbl4": (lambda m: 0.20 - (-0.25) * np.exp(-0.2 * m**0.8), 0.20),
}


@pytest.mark.parametrize("family", list(ex.FAMILIES))
def test_each_family_recovers_its_own_curve(family):
    """A noiseless curve of a family is fitted by that family: the predictions at the sizes
    and the asymptote come back."""
    curve, limit = TRUE[family]
    fit = ex.fit(family, M, curve(M), SEM)
    assert np.max(np.abs(fit.predict(M)[0] - curve(M))) < 2e-3
    assert fit.asymptote[0] == pytest.approx(limit, abs=0.01)


def test_fits_of_many_curves_equal_the_fits_one_by_one():
    """A batch of curves (bootstrap resamples) is fitted as each curve alone would be."""
    rng = np.random.default_rng(0)
    Y = TRUE["pow3"][0](M)[None, :] + rng.normal(0, 0.004, (5, M.size))
    batch = ex.fit("mmf4", M, Y, SEM)
    for i in range(5):
        one = ex.fit("mmf4", M, Y[i], SEM)
        np.testing.assert_allclose(batch.predict(M)[i], one.predict(M)[0], atol=1e-12)


def test_a_curve_no_error_rate_limit_fits_has_no_fit():
    """Means above 1 or below 0 (not error rates) get NaN parameters, never a limit outside
    [0, 1], and no family is chosen for them."""
    for y in (np.full(M.size, 1.2), np.full(M.size, -0.1)):
        for family in ex.FAMILIES:
            assert np.isnan(ex.fit(family, M, y, SEM).asymptote).all()
        with pytest.raises(ValueError, match="no family fits"):
            ex.choose(M, y, SEM)


def test_asymptotes_stay_error_rates():
    """A curve still falling steeply cannot be fitted with a limit below 0."""
    m = M[:6]
    y = 0.5 - 0.08 * np.log(m)  # would run below 0 if followed
    for family in ex.FAMILIES:
        assert 0.0 <= ex.fit(family, m, y, SEM[:6]).asymptote[0] <= 1.0


def test_choice_prefers_the_family_that_extrapolates():
    """An exponential curve is best predicted from its smaller sizes by exp3, not by the
    4-parameter families that fit the smaller sizes as well."""
    c = ex.choose(M, TRUE["exp3"][0](M), SEM)
    assert c.family == "exp3"
    assert c.scores["exp3"] == min(c.scores.values()) and c.n_fit == 8
    assert ex.choose(M[:5], TRUE["exp3"][0](M[:5]), SEM[:5]).n_fit == 4  # the fewest
    with pytest.raises(ValueError, match="at least 5"):
        ex.choose(M[:4], TRUE["exp3"][0](M[:4]), SEM[:4])


def _pair(nb, lr, m=M):
    return {"nb": (m, nb(m), SEM[: m.size]), "lr": (m, lr(m), SEM[: m.size])}


def test_crossover_past_the_grid_is_predicted_where_the_fitted_curves_cross():
    """NB fast to 0.2, LR slow to 0.1 (both pow3): they cross past the grid, where the true
    curves do; a pair that never crosses gives None before the horizon."""
    def nb(m):
        return 0.20 + 0.20 * m ** -1.0

    def lr(m):
        return 0.10 + 0.90 * m ** -0.4

    def nb_high(m):
        return 0.30 + 0.20 * m ** -1.0

    grid = np.geomspace(128, 5000, 20000)
    true = grid[np.argmax(nb(grid) - lr(grid) > 0)]
    assert 150 < true < 400  # past the grid's 128, within the reach
    out = ex.extrapolate(_pair(nb, lr), ("nb", "lr"), horizon=5000)
    assert out.crossover == pytest.approx(true, rel=0.05)
    assert out.asymptote["nb"] == pytest.approx(0.20, abs=0.01)
    assert out.asymptote["lr"] == pytest.approx(0.10, abs=0.02)
    never = ex.extrapolate(_pair(nb_high, lr), ("nb", "lr"), horizon=5000)
    assert never.crossover is None and never.horizon == 5000
    assert never.search_to == round(ex.REACH * 128)  # looked for up to the reach only


def test_bootstrap_intervals_cover_the_estimate_and_repeat_with_the_seed():
    """Resampling the splits gives intervals around the point estimates; the same seed the
    same intervals."""
    rng = np.random.default_rng(1)
    n = 60
    per = {"nb": TRUE["pow3"][0](M)[:, None] + rng.normal(0, 0.03, (M.size, n)),
           "lr": TRUE["exp3"][0](M)[:, None] + rng.normal(0, 0.03, (M.size, n))}
    summary = {k: (M, v.mean(axis=1), v.std(axis=1, ddof=1) / np.sqrt(n))
               for k, v in per.items()}
    runs = [ex.extrapolate(summary, ("nb", "lr"), 1000, per, n_boot=50,
                           rng=np.random.default_rng(7)) for _ in range(2)]
    assert runs[0] == runs[1]
    for model in ("nb", "lr"):
        lo, hi = runs[0].asymptote_interval[model]
        assert lo <= runs[0].asymptote[model] + 0.01 and runs[0].asymptote[model] - 0.01 <= hi
        assert hi - lo < 0.2


def test_task_extrapolation_and_report_section(tmp_path):
    """A saved task is extrapolated from its files; `nbvslr report --extrapolate` appends
    the section, with intervals where the splits were kept."""
    folder = fabricate(tmp_path, sizes=(2, 4, 6, 8, 12, 16, 24, 32), n_splits=40)
    e = ex.task_extrapolation(load_task(folder), n_boot=30)
    assert e.model_a == "nb" and e.last_m == 32 and e.horizon == 500
    assert all(e.asymptote_interval[m] is not None for m in ("nb", "lr"))
    result = CliRunner().invoke(cli, ["report", str(tmp_path), "--extrapolate", "--no-paper"])
    assert result.exit_code == 0, result.output
    assert "Beyond the grid" in result.output
    section = result.output.split("Beyond the grid")[1]
    row = next(line for line in section.splitlines() if line.startswith("| toy |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 8 and cells[1].split()[0] in ex.FAMILIES
    assert cells[4].split()[0] in ex.FAMILIES
    assert "[" in cells[2] and "[" in cells[5]  # the asymptotes' intervals
    plain = CliRunner().invoke(cli, ["report", str(tmp_path), "--no-paper"])
    assert "Beyond the grid" not in plain.output
    csv = CliRunner().invoke(cli, ["report", str(tmp_path), "--format", "csv", "--extrapolate"])
    assert csv.exit_code == 2 and "use it without --format csv" in csv.output


def test_intervals_need_no_splits_file(tmp_path):
    """The intervals are drawn from summary.csv and paired.csv: removing splits.csv.gz (as
    the committed runs do) changes nothing."""
    folder = fabricate(tmp_path, sizes=(2, 4, 6, 8, 12, 16, 24, 32), n_splits=40)
    kept = ex.task_extrapolation(load_task(folder), n_boot=30)
    (folder / "splits.csv.gz").unlink()
    bare = ex.task_extrapolation(load_task(folder), n_boot=30)
    assert kept == bare and bare.asymptote_interval["lr"] is not None


def test_one_split_gives_no_interval(tmp_path):
    """With one split per size there is nothing to resample: point estimates only."""
    folder = fabricate(tmp_path, n_splits=1)
    e = ex.task_extrapolation(load_task(folder), n_boot=30)
    assert e.asymptote_interval == {"nb": None, "lr": None} and e.crossover_interval is None


def test_too_short_a_grid_is_one_line_in_the_section(tmp_path):
    """A task with too few sizes to choose a family gets its reason in the section, not an
    error for the whole report."""
    fabricate(tmp_path, sizes=(2, 4, 8, 16), n_splits=20)  # 4 sizes, 5 needed
    result = CliRunner().invoke(cli, ["report", str(tmp_path), "--extrapolate", "--no-paper"])
    assert result.exit_code == 0, result.output
    assert "4 sizes are too few to choose and fit a learning curve" in result.output


def _falling(m):
    """Still falling steeply at the grid's end, towards a limit of 0.15."""
    return 0.15 + 0.45 * m ** -0.3


def test_the_floor_holds_every_fit():
    """With a floor, no family's limit lies below it (the fit puts it on the floor instead),
    and without one the same curve is fitted to a lower limit."""
    m = M[:8]
    y = 0.5 - 0.08 * np.log(m)  # heads for 0 if followed
    bound = 0
    for family in ex.FAMILIES:
        free = ex.fit(family, m, y, SEM[:8]).asymptote[0]
        floored = ex.fit(family, m, y, SEM[:8], floor=0.2).asymptote[0]
        assert floored >= 0.2 - 1e-12
        if free < 0.2:  # the floor bound this fit: its limit sits on it
            bound += 1
            assert floored == pytest.approx(0.2, abs=1e-9)
    assert bound >= 3


def test_floor_of_is_the_all_rows_error_less_its_noise():
    """The floor is the all-rows error less FLOOR_Z binomial standard errors, never below 0,
    and 0 when the all-rows error is unknown."""
    assert ex.floor_of(0.2, 10_000) == pytest.approx(0.2 - ex.FLOOR_Z * 0.004)
    assert ex.floor_of(0.0, 24) == 0.0 and ex.floor_of(0.01, 10) == 0.0
    assert ex.floor_of(None, 500) == 0.0 and ex.floor_of(0.3, 0) == 0.0


def test_acceptable_families_are_within_the_ratio_and_the_noise():
    """A family is acceptable when its held-out score is within ACCEPT_RATIO times the best
    plus ACCEPT_SEM standard errors; the best comes first."""
    scores = {"pow3": 0.010, "exp3": 0.004, "mmf4": 0.013, "wbl4": 0.050}
    assert ex.acceptable(scores, 0.001, ratio=3, n_sem=2) == ("exp3", "pow3", "mmf4")
    assert ex.acceptable(scores, 0.0, ratio=1, n_sem=0) == ("exp3",)
    c = ex.choose(M, TRUE["exp3"][0](M), SEM)
    assert c.acceptable[0] == c.family and set(c.acceptable) <= set(c.scores)


def test_the_interval_is_the_envelope_of_the_acceptable_families():
    """Each acceptable family's own percentile interval of the prediction lies inside the
    reported one, and it touches the widest of them at both ends."""
    summary = _pair(_falling, TRUE["exp3"][0])
    out = ex.extrapolate(summary, ("nb", "lr"), 5000, rng=np.random.default_rng(3),
                         n_boot=60)
    at = np.array([200.0, 400.0])
    p = out.predict("nb", at)
    lows, highs = [], []
    for fam in out.acceptable["nb"]:
        q = np.nanquantile(out.drawn("nb", fam, at), [0.025, 0.975], axis=0)
        assert np.all(p["low"] <= q[0] + 1e-12) and np.all(q[1] <= p["high"] + 1e-12)
        lows.append(q[0])
        highs.append(q[1])
    np.testing.assert_allclose(p["low"], np.min(lows, axis=0))
    np.testing.assert_allclose(p["high"], np.max(highs, axis=0))
    lo, hi = out.asymptote_interval["nb"]
    assert lo <= out.asymptote["nb"] <= hi


def test_drawn_means_keep_the_pairs_covariance():
    """The pair's drawn means have the standard errors and the covariance the paired
    standard error implies, at every m."""
    m = np.array([10.0, 20.0, 40.0])
    sa, sb, sd = np.array([0.01, 0.02, 0.01]), np.array([0.01, 0.01, 0.02]), \
        np.array([0.005, 0.015, 0.02])
    summary = {"nb": (m, np.full(3, 0.3), sa), "lr": (m, np.full(3, 0.4), sb)}
    d = ex.draw_means(summary, ("nb", "lr"), sd, 40_000, np.random.default_rng(0))
    for j in range(3):
        cov = np.cov(d["nb"][:, j], d["lr"][:, j])
        assert np.sqrt(cov[0, 0]) == pytest.approx(sa[j], rel=0.03)
        assert np.sqrt(cov[1, 1]) == pytest.approx(sb[j], rel=0.03)
        assert cov[0, 1] == pytest.approx((sa[j]**2 + sb[j]**2 - sd[j]**2) / 2, abs=4e-6)


def test_predictions_past_the_reach_are_withheld_unless_asked_for():
    """Past REACH times the largest m a prediction is flagged and NaN, unless asked for;
    within it, a number inside its interval."""
    out = ex.extrapolate(_pair(_falling, TRUE["exp3"][0]), ("nb", "lr"), 5000,
                         rng=np.random.default_rng(1), n_boot=40)
    at = np.array([100.0, ex.REACH * 128, ex.REACH * 128 + 1, 4000.0])
    p = out.predict("lr", at)
    assert p["within_reach"].tolist() == [True, True, False, False]
    assert np.isnan(p["predicted"][2:]).all() and np.isnan(p["low"][2:]).all()
    assert np.all((p["low"][:2] <= p["predicted"][:2]) & (p["predicted"][:2] <= p["high"][:2]))
    far = out.predict("lr", at, beyond=True)
    assert np.isfinite(far["predicted"]).all() and far["within_reach"].tolist()[2] is False


def test_none_before_is_said_only_where_the_interval_agrees():
    """The section says "none before N" only when no draw crosses before N, "uncertain
    before N" with the interval's lower end when some do."""
    from nbvslr.views.extrapolation import _crossover

    base = ex.extrapolate(_pair(_falling, TRUE["exp3"][0]), ("nb", "lr"), 5000)
    sure = replace(base, crossover=None, crossover_interval=(np.inf, np.inf), search_to=512)
    assert _crossover(sure) == (f"none before 512; past it, beyond reach ({ex.REACH:g}× the "
                                "largest m)")
    unsure = replace(sure, crossover_interval=(300.0, np.inf))
    assert _crossover(unsure).startswith("uncertain before 512") and "[300, none]" in \
        _crossover(unsure)
    whole = replace(sure, search_to=5000)
    assert _crossover(whole) == "none before 5000"


def test_beyond_reach_needs_extrapolate(tmp_path):
    """`nbvslr report --beyond-reach` without --extrapolate is refused in one line; with it,
    the section says it looked past the reach."""
    fabricate(tmp_path, sizes=(2, 4, 6, 8, 12, 16, 24, 32), n_splits=20)
    alone = CliRunner().invoke(cli, ["report", str(tmp_path), "--beyond-reach"])
    assert alone.exit_code == 2 and "give --extrapolate too" in alone.output
    both = CliRunner().invoke(cli, ["report", str(tmp_path), "--extrapolate", "--beyond-reach",
                                    "--no-paper"])
    assert both.exit_code == 0, both.output
    assert "**--beyond-reach**" in both.output


def test_results_extrapolation_at_sizes(tmp_path):
    """`Results.extrapolation(at=...)` gives one row per task, model and m with the
    prediction columns (NaN and within_reach False past the reach unless beyond_reach);
    the call without `at` keeps its columns; sizes that are not sizes are refused."""
    from nbvslr import api

    fabricate(tmp_path, sizes=(2, 4, 6, 8, 12, 16, 24, 32), n_splits=40)
    res = api.load(tmp_path)
    table = res.extrapolation(at=[40, 100, 400], n_boot=30)
    assert tuple(table.columns) == api.PREDICTION_COLUMNS
    assert len(table) == 2 * 3 and set(table["model"]) == {"nb", "lr"}
    assert table["within_reach"].tolist() == [True, True, False] * 2
    near = table[table["within_reach"]]
    assert ((near["predicted_low"] <= near["predicted"])
            & (near["predicted"] <= near["predicted_high"])).all()
    assert table.loc[~table["within_reach"], "predicted"].isna().all()
    far = res.extrapolation(at=[400], n_boot=30, beyond_reach=True)
    assert far["predicted"].notna().all() and not far["within_reach"].any()
    assert tuple(res.extrapolation(n_boot=30).columns) == api.EXTRAPOLATION_COLUMNS
    with pytest.raises(ConfigError, match="sizes must be numbers >= 1"):
        res.extrapolation(at=[0.5])


@pytest.mark.parametrize("family", ["mmf4", "wbl4"])
def test_fits_reach_the_least_squares_minimum(family, monkeypatch):
    """Noisy curves fitted with the default grids come within 1 (the weighted SSE, in units
    of 1/sem²: less than the noise of one mean) of what a search four times finer reaches:
    the zoom and its Newton steps do not stop on the side of a narrow valley."""
    rng = np.random.default_rng(5)
    Y = TRUE["mmf4"][0](M)[None, :] + rng.normal(0, 0.005, (8, M.size))
    w = 1.0 / SEM

    def sse(cf):
        return (((cf.predict(M) - Y) * w) ** 2).sum(axis=1)

    ours = sse(ex.fit(family, M, Y, SEM))
    monkeypatch.setattr(ex, "_GRID_2D", 96)
    monkeypatch.setattr(ex, "_ROUNDS", 12)
    finer = sse(ex.fit(family, M, Y, SEM))
    assert np.all(ours <= finer + 1.0)
    assert np.median(ours - finer) < 1e-3
