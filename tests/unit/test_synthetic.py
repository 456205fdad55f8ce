"""Synthetic tasks: deterministic, with the structure and error rates they claim.

scikit-learn is the reference learner here: it checks the generators, not the project's
models.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import CategoricalNB
from sklearn.preprocessing import OneHotEncoder

from nbvslr.data import load_task, synthetic
from nbvslr.data.dataset import DataSettings, TaskSpec


def _load(**params):
    spec = TaskSpec(name="syn", source={"synthetic": params})
    return load_task(spec, DataSettings(download=False))


def _pooled_gaussian_nb(X, y):
    """Gaussian NB with one variance per feature shared by the classes (the paper's NB)."""
    mu = np.stack([X[y == c].mean(axis=0) for c in (0, 1)])  # (2, d)
    var = ((X - mu[y]) ** 2).mean(axis=0)  # (d,)
    prior = np.array([np.mean(y == 0), np.mean(y == 1)])

    def predict(Z):
        score = -((Z[:, None, :] - mu[None]) ** 2 / var).sum(axis=2) / 2 + np.log(prior)
        return score.argmax(axis=1)

    return predict


@pytest.mark.parametrize("generator", ["nb", "dependent"])
@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_shape_types_and_determinism(generator, kind):
    """Same seed, same data bit for bit; another seed, other data; Dataset contract holds."""
    a = _load(generator=generator, kind=kind, rows=200, features=6, seed=3)
    b = _load(generator=generator, kind=kind, rows=200, features=6, seed=3)
    c = _load(generator=generator, kind=kind, rows=200, features=6, seed=4)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)
    assert a.X.shape == (200, 6) and a.y.dtype == np.int8 and a.n_positive == 100
    if kind == "continuous":
        assert a.X.dtype == np.float64 and a.X.min() == 0.0 and a.X.max() == 1.0
    else:
        assert a.X.dtype == np.int64 and a.n_values == (3,) * 6
        assert a.X.min() >= 0 and a.X.max() <= 2
    assert a.notes["generator"] == generator and 0 < a.notes["bayes_error"] < 0.5


def test_prior_sets_class_counts_and_model_does_not_depend_on_rows():
    """prior fixes round(prior * rows) positives; the drawn model is the same for any rows."""
    data = _load(rows=101, prior=0.3)
    assert data.n_positive == 30
    small = synthetic.make_truth(synthetic.parse_params({"rows": 10}))
    large = synthetic.make_truth(synthetic.parse_params({"rows": 10_000}))
    np.testing.assert_array_equal(small.means, large.means)


def test_continuous_nb_bayes_error_is_phi_of_half_separation():
    """For the nb generator at prior 1/2 the Bayes error is Phi(-separation/2), NB's limit too."""
    data = _load(separation=2.0)
    expected = 0.5 * math.erfc(1.0 / math.sqrt(2))  # Phi(-1)
    assert data.notes["bayes_error"] == pytest.approx(expected, rel=1e-9)
    assert data.notes["nb_limit_error"] == pytest.approx(expected, rel=1e-9)


def test_fitted_nb_on_nb_data_reaches_bayes_error():
    """NB fitted on many nb-generated rows errs on fresh rows at close to the Bayes error."""
    p = synthetic.parse_params({"features": 8, "separation": 2.5})
    truth = synthetic.make_truth(p)
    rng = np.random.default_rng(0)
    X, y = synthetic.sample(truth, 20_000, rng)
    Xt, yt = synthetic.sample(truth, 50_000, rng)
    error = np.mean(_pooled_gaussian_nb(X, y)(Xt) != yt)
    bayes = synthetic.error_rates(truth)["bayes_error"]
    assert abs(error - bayes) < 0.006  # sd of the test error ~0.0014, plus fitting error


def test_fitted_nb_on_discrete_nb_data_reaches_bayes_error():
    """Categorical NB on many discrete nb rows errs at close to the (Monte Carlo) Bayes error."""
    p = synthetic.parse_params({"kind": "discrete", "features": 8, "levels": 4})
    truth = synthetic.make_truth(p)
    rng = np.random.default_rng(1)
    X, y = synthetic.sample(truth, 20_000, rng)
    Xt, yt = synthetic.sample(truth, 50_000, rng)
    model = CategoricalNB(alpha=1.0, min_categories=4).fit(X, y)
    error = np.mean(model.predict(Xt) != yt)
    assert abs(error - synthetic.error_rates(truth)["bayes_error"]) < 0.008


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
def test_dependent_data_lr_beats_nb_at_large_m(kind):
    """On dependent data NB's limit is above the Bayes error and a fitted LR beats NB."""
    p = synthetic.parse_params({"generator": "dependent", "kind": kind})
    truth = synthetic.make_truth(p)
    rates = synthetic.error_rates(truth)
    assert rates["nb_limit_error"] > rates["bayes_error"] + 0.02
    rng = np.random.default_rng(2)
    X, y = synthetic.sample(truth, 5_000, rng)
    Xt, yt = synthetic.sample(truth, 20_000, rng)
    if kind == "continuous":
        nb_error = np.mean(_pooled_gaussian_nb(X, y)(Xt) != yt)
        F, Ft = X, Xt
    else:
        nb = CategoricalNB(alpha=1.0, min_categories=p.levels).fit(X, y)
        nb_error = np.mean(nb.predict(Xt) != yt)
        enc = OneHotEncoder(categories=[range(p.levels)] * p.features).fit(X)
        F, Ft = enc.transform(X), enc.transform(Xt)
    lr = LogisticRegression(C=1e4, max_iter=2000).fit(F, y)
    lr_error = np.mean(lr.predict(Ft) != yt)
    assert nb_error == pytest.approx(rates["nb_limit_error"], abs=0.015)
    assert lr_error < nb_error - 0.015


def test_dependent_features_are_correlated_given_the_class():
    """Copies of the crowded factor are strongly correlated within a class."""
    p = synthetic.parse_params({"generator": "dependent", "features": 6, "factors": 2})
    truth = synthetic.make_truth(p)
    X, y = synthetic.sample(truth, 5000, np.random.default_rng(0))
    crowd = np.flatnonzero(truth.copy_of == 0)
    assert len(crowd) == 5
    corr = np.corrcoef(X[y == 0][:, crowd], rowvar=False)
    assert corr[np.triu_indices(len(crowd), 1)].min() > 0.7  # 1 / (1 + 0.5^2) = 0.8


def test_synthetic_config_parses_and_loads_offline(tmp_path):
    """configs/synthetic.yaml (the README's offline default) validates and its two tasks load
    without any file or network: an NB-generated one and a dependent one."""
    from pathlib import Path

    from nbvslr.config import load_config
    from nbvslr.data import load_task

    path = Path(__file__).resolve().parents[2] / "configs" / "synthetic.yaml"
    settings = DataSettings(cache_dir=tmp_path / "cache", mirror=None, download=False)
    config = load_config(path, data=settings)
    assert [t.name for t in config.tasks] == ["nb-data", "dependent"]
    assert {m.family for m in config.models} == {"nb", "lr"} and config.splits == 1000
    tasks = {t.name: load_task(t, settings) for t in config.tasks}
    assert max(config.grids[0]) < tasks["nb-data"].n_rows
    nb_data, dependent = tasks["nb-data"].notes, tasks["dependent"].notes
    assert nb_data["generator"] == "nb" and dependent["generator"] == "dependent"
    assert nb_data["nb_limit_error"] == pytest.approx(nb_data["bayes_error"])
    assert dependent["nb_limit_error"] > dependent["bayes_error"] + 0.05
    assert not (tmp_path / "cache").exists()  # nothing was fetched or cached


def test_discrete_draws_beyond_the_limit_are_refused_before_any_allocation():
    """rows x features x levels is bounded (the inverse-CDF draw's work, the task's rows or
    the error estimate's, whichever is more): 10^7 rows x 10 features x 1000 levels is one
    ConfigError naming the key, not a MemoryError."""
    import pytest

    from nbvslr.errors import ConfigError

    raw = {"kind": "discrete", "rows": 10_000_000, "features": 10, "levels": 1000}
    with pytest.raises(ConfigError, match=r"source\.synthetic\.levels: rows x features x "
                                          r"levels is more than"):
        synthetic.parse_params(raw)
    synthetic.parse_params(dict(raw, levels=5))  # 5 x 10^8: allowed
    # few rows, but the error estimate draws MC_ROWS of them
    with pytest.raises(ConfigError, match="rows x features x levels"):
        synthetic.parse_params({"kind": "discrete", "rows": 100, "features": 10_000,
                                "levels": 1000})


def test_discrete_draw_in_chunks_is_the_draw_in_one_piece():
    """The chunked inverse-CDF draw consumes the same uniforms in the same order as one
    (n, r, 1) draw, so it gives the same rows."""
    p = synthetic.parse_params({"kind": "discrete", "rows": 3000, "features": 7, "levels": 300})
    truth = synthetic.make_truth(p)
    x, y = synthetic.sample(truth, 3000, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    y1 = (rng.random(3000) < p.prior).astype(np.int8)
    cdf = np.cumsum(np.exp(truth.log_probs[y1]), axis=-1)
    z = np.minimum((rng.random((3000, 7, 1)) > cdf).sum(-1), p.levels - 1)
    np.testing.assert_array_equal(y, y1)
    np.testing.assert_array_equal(x, z)
