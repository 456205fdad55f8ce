"""The open choices of the paper's method as named settings: NB's prior, epsilon and variance
estimator, training-set rescaling, LR's coding of discrete attributes, and profiles."""

from __future__ import annotations

import numpy as np
import pytest

from nbvslr.config import parse_config
from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError
from nbvslr.models import ModelSpec, resolve_options, score_splits
from nbvslr.models.design import get_design
from nbvslr.models.nb.fit import fit_categorical_nb, fit_gaussian_nb, theta_to_original
from nbvslr.models.options import PROFILES
from nbvslr.models.registry import FAMILIES

# an imbalanced hand example: 2 rows of class 0, 3 of class 1
X = np.array([[0.0, 0.2], [0.4, 0.6], [1.0, 0.9], [0.8, 0.5], [0.6, 1.0]])  # (5, 2)
Y = np.array([0, 0, 1, 1, 1])
MU0, MU1 = np.array([0.2, 0.4]), np.array([0.8, 0.8])
SS = ((X[:2] - MU0) ** 2).sum(0) + ((X[2:] - MU1) ** 2).sum(0)  # pooled sums of squares
X_NEW = np.array([0.3, 0.7])


def _score(theta: np.ndarray, x: np.ndarray) -> float:
    return float(x @ theta[:-1] + theta[-1])


def _shared_log_odds(x: np.ndarray, var: np.ndarray, log_prior: float) -> float:
    return float(
        log_prior - ((x - MU1) ** 2 / (2 * var)).sum() + ((x - MU0) ** 2 / (2 * var)).sum()
    )


def test_uniform_prior_drops_the_prior_term_of_gaussian_nb():
    """prior=uniform: the hand log-odds with equal class priors (no prior term)."""
    eps = 1e-9 * X.var(axis=0).max()
    theta = fit_gaussian_nb(X[None], Y[None], prior="uniform")[0]
    assert _score(theta, X_NEW) == pytest.approx(_shared_log_odds(X_NEW, SS / 5 + eps, 0.0))
    empirical = fit_gaussian_nb(X[None], Y[None])[0]
    assert empirical[-1] - theta[-1] == pytest.approx(np.log(4 / 3))


def test_uniform_prior_equals_equal_class_weights_in_categorical_nb():
    """prior=uniform is categorical NB with p(y=1) = p(y=0): only the conditionals remain."""
    codes = np.array([[0], [1], [1], [2], [1]])  # one attribute with 3 levels
    theta = fit_categorical_nb(codes[None], Y[None], (3,), prior="uniform")[0]
    # conditionals with l = 1: class 0 holds levels {0, 1}, class 1 levels {1, 2, 1}
    p1 = np.array([0 + 1, 2 + 1, 1 + 1]) / (3 + 3)
    p0 = np.array([1 + 1, 1 + 1, 0 + 1]) / (2 + 3)
    np.testing.assert_allclose(theta[:-1], np.log(p1) - np.log(p0), rtol=1e-12)
    assert theta[-1] == 0.0
    assert fit_categorical_nb(codes[None], Y[None], (3,))[0][-1] == pytest.approx(np.log(4 / 3))


def test_absolute_epsilon_is_added_to_every_variance():
    """epsilon_form=absolute: epsilon = var_smoothing on the inputs' scale, added to variances."""
    theta = fit_gaussian_nb(
        X[None], Y[None], epsilon_form="absolute", var_smoothing=0.01, prior="uniform"
    )[0]
    assert _score(theta, X_NEW) == pytest.approx(_shared_log_odds(X_NEW, SS / 5 + 0.01, 0.0))


def test_epsilon_floor_raises_only_small_variances():
    """epsilon_mode=floor: max(variance, epsilon), so a variance above epsilon is unchanged."""
    var = SS / 5  # (0.032, 0.056) here
    eps = 0.04
    theta = fit_gaussian_nb(
        X[None], Y[None], epsilon_form="absolute", var_smoothing=eps, epsilon_mode="floor"
    )[0]
    expect = _shared_log_odds(X_NEW, np.maximum(var, eps), np.log(4 / 3))
    assert _score(theta, X_NEW) == pytest.approx(expect)
    assert np.maximum(var, eps)[1] == var[1] and np.maximum(var, eps)[0] == eps


def test_unbiased_variances_divide_by_degrees_of_freedom():
    """var_estimator=unbiased: pooled sums of squares / (m - 2); class ones / (count - 1)."""
    kw = dict(epsilon_form="absolute", var_smoothing=1e-12, prior="uniform")
    shared = fit_gaussian_nb(X[None], Y[None], var_estimator="unbiased", **kw)[0]
    assert _score(shared, X_NEW) == pytest.approx(_shared_log_odds(X_NEW, SS / 3, 0.0))
    cls = fit_gaussian_nb(X[None], Y[None], variance="class", var_estimator="unbiased", **kw)[0]
    v0 = X[:2].var(axis=0, ddof=1)
    v1 = X[2:].var(axis=0, ddof=1)
    log_odds = (
        -((X_NEW - MU1) ** 2 / (2 * v1)).sum() - 0.5 * np.log(v1).sum()
        + ((X_NEW - MU0) ** 2 / (2 * v0)).sum() + 0.5 * np.log(v0).sum()
    )
    score = X_NEW @ cls[:2] + (X_NEW**2) @ cls[2:4] + cls[-1]
    assert score == pytest.approx(log_odds, rel=1e-10)


@pytest.mark.parametrize("variance", ["shared", "class"])
def test_training_rescale_equals_fitting_on_hand_rescaled_rows(variance):
    """rescale=training: the rule fitted on training rows rescaled to [0, 1], mapped back."""
    Xt = 0.2 + 0.5 * X  # training rows span [0.2, 0.7] x [0.3, 0.7]
    kw = dict(variance=variance, epsilon_form="absolute", var_smoothing=0.01)
    theta = fit_gaussian_nb(Xt[None], Y[None], rescale="training", **kw)[0]
    lo, hi = Xt.min(axis=0), Xt.max(axis=0)
    ref = fit_gaussian_nb(((Xt - lo) / (hi - lo))[None], Y[None], **kw)[0]
    x = np.array([0.9, 0.1])
    u = (x - lo) / (hi - lo)
    d = 2
    design = (lambda v: v) if variance == "shared" else (lambda v: np.concatenate([v, v * v]))
    assert design(x) @ theta[:-1] + theta[-1] == pytest.approx(design(u) @ ref[:-1] + ref[-1])
    # absolute epsilon is not scale-free: dataset scaling gives another rule
    other = fit_gaussian_nb(Xt[None], Y[None], **kw)[0]
    assert not np.allclose(other, theta)
    assert theta.shape == ((2 * d + 1,) if variance == "class" else (d + 1,))


def test_theta_to_original_keeps_every_score():
    """theta_to_original maps a rule on u = (x - lo) / r to the same scores on x."""
    rng = np.random.default_rng(0)
    lo, r = rng.random(3), 0.5 + rng.random(3)
    x = rng.random((6, 3))
    u = (x - lo) / r
    for width in (4, 7):
        th = rng.standard_normal(width)
        zu = u if width == 4 else np.concatenate([u, u * u], axis=1)
        zx = x if width == 4 else np.concatenate([x, x * x], axis=1)
        back = theta_to_original(th, lo, r)
        np.testing.assert_allclose(zx @ back[:-1] + back[-1], zu @ th[:-1] + th[-1], atol=1e-12)


def _discrete() -> Dataset:
    rng = np.random.default_rng(1)
    n_values = (2, 3, 4)
    Xd = np.stack([rng.integers(0, k, 150) for k in n_values], axis=1)
    y = ((Xd[:, 1] + rng.integers(0, 3, 150)) > 2).astype(np.int8)
    return Dataset(name="d", title="d", X=Xd, y=y, kind="discrete", n_values=n_values)


def test_lr_codings_of_discrete_attributes():
    """coding: reference drops one level each, full keeps all, ordinal is code / (k - 1)."""
    data = _discrete()
    assert get_design(data, "onehot_ref").Z1.shape == (150, (1 + 2 + 3) + 1)
    full = get_design(data, "onehot").Z1
    assert full.shape == (150, (2 + 3 + 4) + 1)
    np.testing.assert_array_equal(full[:, :-1].sum(axis=1), 3.0)  # one level per attribute
    ordinal = get_design(data, "ordinal").Z1
    assert ordinal.shape == (150, 3 + 1)
    np.testing.assert_allclose(ordinal[:, :-1], data.X / np.array([1.0, 2.0, 3.0]))
    assert set(np.unique(ordinal[:, 2])) == {0.0, 1 / 3, 2 / 3, 1.0}


def test_lr_coding_changes_the_separable_rule_but_not_the_fitted_rule():
    """Full and reference one-hot span the same rules: equal errors where the MLE exists;
    ordinal coding is another model."""
    data = _discrete()
    rng = np.random.default_rng(2)
    idx = np.sort(np.stack([rng.choice(150, 100, replace=False) for _ in range(20)]), axis=1)
    seeds = [np.random.SeedSequence(0, spawn_key=(s,)) for s in range(20)]

    def run(coding: str) -> dict:
        spec = ModelSpec("lr", "lr", resolve_options("lr", "lr", {"coding": coding}))
        return score_splits(spec, data, idx, seeds)

    ref, full, ordinal = run("reference"), run("full"), run("ordinal")
    fitted = ~ref["separable"]
    assert fitted.sum() > 10
    np.testing.assert_allclose(full["error"][fitted], ref["error"][fitted], atol=1e-12)
    assert not np.allclose(ordinal["error"], ref["error"])


def test_lr_training_rescale_leaves_fitted_rules_alone():
    """rescale=training moves only the separable-set rule: a unique MLE is scale-free."""
    rng = np.random.default_rng(0)
    Xc = rng.random((200, 3))
    y = (Xc @ np.array([1.0, -1.0, 0.5]) + 0.5 * rng.standard_normal(200) > 0.2).astype(np.int8)
    data = Dataset(name="c", title="c", X=Xc, y=y, kind="continuous")
    idx = np.sort(np.stack([rng.choice(200, 60, replace=False) for _ in range(10)]), axis=1)
    seeds = [np.random.SeedSequence(0, spawn_key=(s,)) for s in range(10)]

    def run(rescale: str) -> dict:
        spec = ModelSpec("lr", "lr", resolve_options("lr", "lr", {"rescale": rescale}))
        return score_splits(spec, data, idx, seeds)

    a, b = run("dataset"), run("training")
    assert not a["separable"].any()
    np.testing.assert_allclose(a["error"], b["error"], atol=1e-12)


def test_option_values_are_validated():
    """A misspelt value of a new option is a ConfigError naming the valid values."""
    new = {"nb": ("prior", "var_estimator", "epsilon_form", "epsilon_mode", "rescale", "ties"),
           "lr": ("coding", "rescale")}
    for family, key in [(f, k) for f, keys in new.items() for k in keys]:
        with pytest.raises(ConfigError, match=f"option '{key}'.*one of"):
            resolve_options("m", family, {key: "bogus"})
        assert key in FAMILIES[family]


def _config(**top) -> object:
    raw = {"tasks": [{"name": "t", "source": {"synthetic": {"generator": "nb"}}}],
           "sizes": [4], "models": {"nb": {}, "lr": {}, "nb_prior": {"model": "nb",
                                                                   "prior": "empirical"}}}
    return parse_config({**raw, **top})


def test_profile_sets_defaults_and_explicit_options_win():
    """profile: as-published changes the defaults of every model; a model's own option wins."""
    stated = {m.name: m.options for m in _config().models}
    pub = {m.name: m.options for m in _config(profile="as-published").models}
    assert stated["nb"] == FAMILIES["nb"]
    for key, value in PROFILES["as-published"]["nb"].items():
        assert pub["nb"][key] == value
    assert pub["nb_prior"]["prior"] == "empirical"
    assert pub["nb"] != stated["nb"]
    assert _config(profile="as-published").to_dict()["profile"] == "as-published"


def test_unknown_profile_is_a_one_line_error():
    """A misspelt profile names the valid ones."""
    with pytest.raises(ConfigError, match=r"profile: unknown profile.*as-published"):
        _config(profile="as-publshed")


def test_tie_rule_of_nb():
    """ties: a zero score counts half an error, or predicts class 1 / class 0."""
    from nbvslr.models.evaluate import heldout_errors

    data = _discrete()
    design = get_design(data, "onehot")
    theta = np.zeros((1, design.n_params))  # every score is a tie
    train = np.array([[0, 1, 2]])
    test_y = np.delete(np.asarray(data.y), train[0])
    assert heldout_errors(design, theta, train)[0] == pytest.approx(0.5)
    assert heldout_errors(design, theta, train, 1.0)[0] == pytest.approx((test_y == 0).mean())
    assert heldout_errors(design, theta, train, -1.0)[0] == pytest.approx((test_y == 1).mean())
    # a score that is not a tie keeps its sign under every rule
    sure = np.zeros((1, design.n_params))
    sure[0, -1] = 1.0  # always class 1
    assert heldout_errors(design, sure, train, -1.0)[0] == pytest.approx((test_y == 0).mean())


def test_tie_rule_reaches_the_model_at_m2():
    """score_splits with ties=positive errs more than half at m = 2 when ties hit class 0 rows."""
    data = _discrete()
    y = np.asarray(data.y)
    idx = np.array([[int(np.flatnonzero(y == 0)[k]), int(np.flatnonzero(y == 1)[k])]
                    for k in range(30)])
    idx.sort(axis=1)
    seeds = [np.random.SeedSequence(0, spawn_key=(s,)) for s in range(30)]

    def run(ties: str) -> np.ndarray:
        spec = ModelSpec("nb", "nb", resolve_options("nb", "nb", {"ties": ties}))
        return score_splits(spec, data, idx, seeds)["error"]

    half, pos, neg = run("half"), run("positive"), run("negative")
    np.testing.assert_allclose(half, (pos + neg) / 2, atol=1e-12)
    assert not np.allclose(pos, neg)


def test_uniform_gaussian_prior_leaves_categorical_nb_alone():
    """prior=uniform-gaussian: equal priors for Gaussian NB, the Laplace prior for categorical."""
    from nbvslr.models.registry import lookup

    def _fit_nb(data, idx, opts):
        entry = lookup("nb", data.kind)
        return entry.fit(data, get_design(data, entry.design(data, opts)), idx, opts).theta

    data = _discrete()
    idx = np.arange(40)[None]
    opts = {p: resolve_options("nb", "nb", {"prior": p}) for p in
            ("empirical", "uniform", "uniform-gaussian")}
    np.testing.assert_array_equal(_fit_nb(data, idx, opts["uniform-gaussian"]),
                                  _fit_nb(data, idx, opts["empirical"]))
    cont = Dataset(name="c", title="c", X=np.vstack([X, X]), y=np.concatenate([Y, Y]),
                   kind="continuous")
    idx = np.arange(10)[None]
    np.testing.assert_array_equal(_fit_nb(cont, idx, opts["uniform-gaussian"]),
                                  _fit_nb(cont, idx, opts["uniform"]))
    assert not np.allclose(_fit_nb(cont, idx, opts["uniform"]),
                           _fit_nb(cont, idx, opts["empirical"]))
