"""Mixed tasks (continuous and discrete columns at once): the table rules, the designs, NB
against scikit-learn's Gaussian + categorical NB, LR against scikit-learn on the design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nbvslr.config import parse_config
from nbvslr.data.csvsource import TableChoices, build_dataset
from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError, DataError
from nbvslr.models.design import get_design, reference_levels
from nbvslr.models.registry import lookup, resolve_options


def _mixed(n: int = 200, seed: int = 0) -> Dataset:
    """A mixed Dataset: 2 continuous columns in [0, 1], discrete columns of 3 and 2 levels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(np.int8)
    Xc = np.clip(rng.normal(0.4 + 0.2 * y[:, None], 0.2, size=(n, 2)), 0, 1)
    codes = np.stack([rng.choice(3, n, p=[0.5, 0.3, 0.2]),
                      np.where(rng.random(n) < 0.3 + 0.4 * y, 1, 0)], axis=1)
    return Dataset(name="mix", title="mix", X=np.concatenate([Xc, codes], axis=1).astype(float),
                   y=y, kind="mixed", n_values=(3, 2))


def _theta(data: Dataset, family: str, idx: np.ndarray, **options) -> tuple[np.ndarray, object]:
    opts = resolve_options(family, family, options)
    entry = lookup(family, data.kind)
    design = get_design(data, entry.design(data, opts))
    seeds = [np.random.SeedSequence(i) for i in range(idx.shape[0])]
    return entry.fit(data, design, idx, opts, seeds).theta, design


def test_table_with_continuous_and_discrete_columns():
    """features: {continuous, discrete}: the continuous columns first, scaled; the discrete
    ones coded in sorted order; kind mixed."""
    table = pd.DataFrame({"a": ["1", "3", "2", "5"], "c": ["x", "y", "x", "y"],
                          "t": ["0", "1", "0", "1"]})
    data = build_dataset(table, name="m", choices=TableChoices(continuous=("a",),
                                                               discrete=("c",)),
                         origin="t.csv", row_label=str, default_target="t",
                         default_features=None, notes={})
    assert data.kind == "mixed" and data.n_continuous == 1 and data.n_values == (2,)
    assert data.X.tolist() == [[0.0, 0.0], [0.5, 1.0], [0.25, 0.0], [1.0, 1.0]]
    assert data.feature_names == ("a", "c")


def test_free_text_in_a_continuous_column_names_features_discrete():
    """A text cell in a continuous column: the fix is to list it under features.discrete."""
    table = pd.DataFrame({"a": ["1", "word", "2"], "t": ["0", "1", "0"]})
    with pytest.raises(DataError, match=r"features\.discrete") as caught:
        build_dataset(table, name="m", choices=TableChoices(continuous=("a",), discrete=()),
                      origin="t.csv", row_label=str, default_target="t",
                      default_features=None, notes={})
    assert "kind: discrete" not in str(caught.value)


@pytest.mark.parametrize(("features", "pattern"), [
    ({"continuous": ["a"], "kind": "continuous"}, r"take no kind:"),
    ({"continuous": ["a"], "discrete": ["a"]}, r"under both continuous and discrete"),
    ({"continuous": ["t"], "discrete": ["b"]}, r"lists the target column"),
])
def test_mixed_features_are_checked(features, pattern):
    """The mixed features key: no other key beside it, each column once, never the target."""
    task = {"name": "m", "source": {"csv": "x.csv"}, "target": {"column": "t"},
            "features": features}
    with pytest.raises(ConfigError, match=pattern):
        parse_config({"tasks": [task], "sizes": [2]})


def test_designs_of_a_mixed_task():
    """x_onehot is [Xc, every level's indicator]; x_onehot_ref drops each attribute's most
    frequent level; x_x2_onehot adds Xc**2."""
    data = _mixed()
    Xc, codes = data.X[:, :2], data.codes()
    full = np.concatenate([np.eye(3)[codes[:, 0]], np.eye(2)[codes[:, 1]]], axis=1)
    ones = np.ones((data.n_rows, 1))
    assert np.array_equal(get_design(data, "x_onehot").Z1, np.hstack([Xc, full, ones]))
    assert np.array_equal(get_design(data, "x_x2_onehot").Z1,
                          np.hstack([Xc, Xc * Xc, full, ones]))
    ref = reference_levels(data)
    assert ref.tolist() == [int(np.bincount(codes[:, 0]).argmax()),
                            int(np.bincount(codes[:, 1]).argmax())]
    keep = np.ones(5, dtype=bool)
    keep[[ref[0], 3 + ref[1]]] = False
    assert np.array_equal(get_design(data, "x_onehot_ref").Z1, np.hstack([Xc, full[:, keep], ones]))


@pytest.mark.parametrize("variance", ["shared", "class"])
def test_mixed_nb_is_gaussian_plus_categorical(variance):
    """The log-odds of mixed NB on every row: scikit-learn's GaussianNB (equal priors) on the
    continuous columns plus its CategoricalNB (the smoothed prior) on the discrete ones."""
    sk = pytest.importorskip("sklearn.naive_bayes")
    data = _mixed()
    idx = np.arange(60)[None, :]
    theta, design = _theta(data, "nb", idx, variance=variance)
    ours = design.Z1 @ theta[0]  # (N,)
    X, y = data.X[:60], data.y[:60]
    Xc, codes = X[:, :2], data.codes()[:60]
    n1 = y.sum()
    prior = np.array([60 - n1 + 1, n1 + 1]) / 62  # Laplace-smoothed, l = 1
    if variance == "class":
        gauss = sk.GaussianNB(priors=[0.5, 0.5], var_smoothing=1e-9).fit(Xc, y)
        g = gauss.predict_joint_log_proba(data.X[:, :2])
        g_odds = g[:, 1] - g[:, 0]
    else:  # one variance per feature pooled over the classes: by hand
        mu = np.array([Xc[y == k].mean(axis=0) for k in (0, 1)])
        var = ((Xc - mu[y]) ** 2).mean(axis=0)
        total = Xc.var(axis=0).max()
        var = var + max(1e-9 * total, 1e-12)
        x = data.X[:, :2]
        g_odds = (((x - mu[0]) ** 2 - (x - mu[1]) ** 2) / (2 * var)).sum(axis=1)
    cat = sk.CategoricalNB(alpha=1.0, class_prior=prior, min_categories=[3, 2]).fit(codes, y)
    c = cat.predict_joint_log_proba(data.codes())
    np.testing.assert_allclose(ours, g_odds + c[:, 1] - c[:, 0], rtol=1e-9, atol=1e-9)


def test_mixed_lr_is_logistic_regression_on_the_design():
    """Penalised mixed LR (C = 1) has scikit-learn's coefficients on [Xc, one-hot minus the
    reference levels] (intercept unpenalised in both)."""
    lm = pytest.importorskip("sklearn.linear_model")
    data = _mixed()
    idx = np.arange(80)[None, :]
    theta, design = _theta(data, "lr", idx, C=1.0)
    Z = design.Z1[:80, :-1]
    ref = lm.LogisticRegression(C=1.0, tol=1e-12, max_iter=10_000).fit(Z, data.y[:80])
    np.testing.assert_allclose(theta[0, :-1], ref.coef_[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(theta[0, -1], ref.intercept_[0], rtol=1e-5, atol=1e-6)


def test_memory_plan_counts_the_mixed_designs():
    """planned() is at least the width of every design the mixed entries build."""
    data = _mixed()
    for family, options in [("nb", {}), ("nb", {"variance": "class"}), ("lr", {}),
                            ("lr", {"coding": "full"})]:
        opts = resolve_options(family, family, options)
        entry = lookup(family, "mixed")
        width, _ = entry.planned(data, opts)
        assert width >= get_design(data, entry.design(data, opts)).n_params
