"""The public model API: score_splits and score_full on small synthetic Datasets."""

from __future__ import annotations

import numpy as np
import pytest

from nbvslr.data.dataset import Dataset
from nbvslr.errors import ConfigError, DataError, SizeError
from nbvslr.models import ModelSpec, resolve_options, score_full, score_splits
from nbvslr.models.design import get_design
from nbvslr.models.lr.newton import fit_newton


def _spec(family: str, **options) -> ModelSpec:
    return ModelSpec(family, family, resolve_options(family, family, options))


def _continuous(n: int = 120, d: int = 4, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = (X @ np.linspace(1, -1, d) + 0.4 * rng.standard_normal(n) > 0).astype(np.int8)
    return Dataset(name="c", title="c", X=X, y=y, kind="continuous")


def _discrete(n: int = 150, seed: int = 1) -> Dataset:
    rng = np.random.default_rng(seed)
    n_values = (2, 3, 4)
    X = np.stack([rng.integers(0, k, n) for k in n_values], axis=1)
    y = ((X[:, 1] + rng.integers(0, 3, n)) > 2).astype(np.int8)
    return Dataset(name="d", title="d", X=X, y=y, kind="discrete", n_values=n_values)


def _train(y: np.ndarray, m: int, S: int, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < S:
        idx = rng.choice(y.size, m, replace=False)
        if 0 < y[idx].sum() < m:
            out.append(np.sort(idx))
    return np.array(out)


def _seeds(S: int, base: int = 0) -> list[np.random.SeedSequence]:
    return [np.random.SeedSequence(base, spawn_key=(s,)) for s in range(S)]


SPECS = [
    ("nb", {}), ("nb", {"variance": "class"}), ("lr", {}), ("lr", {"separable": "l2"}),
    ("lr", {"separable": "mle"}), ("lr", {"C": 1.0}),
]


@pytest.mark.parametrize(
    ("kind", "family", "options"),
    [(k, f, o) for k in ("continuous", "discrete") for f, o in SPECS
     if not (k == "discrete" and "variance" in o)],
)
def test_score_splits_schema_and_block_invariance(kind, family, options):
    """Outputs have the documented keys, dtypes and shapes; same seeds give the same numbers,
    and scoring the splits in two blocks gives the numbers of one block."""
    data = _continuous() if kind == "continuous" else _discrete()
    spec = _spec(family, **options)
    train = _train(data.y, 6, 12)
    out = score_splits(spec, data, train, _seeds(12))
    assert set(out) == {"error", "separable", "separation", "n_iter", "converged"}
    for key, dtype in (("error", np.float64), ("separable", bool), ("separation", np.int8),
                       ("n_iter", np.int64), ("converged", bool)):
        assert out[key].shape == (12,) and out[key].dtype == dtype
    assert ((out["error"] >= 0) & (out["error"] <= 1)).all()
    again = score_splits(spec, data, train, _seeds(12))
    halves = [score_splits(spec, data, train[sl], _seeds(12)[sl])
              for sl in (slice(0, 5), slice(5, 12))]
    for key in out:
        np.testing.assert_array_equal(out[key], again[key])
        np.testing.assert_array_equal(out[key], np.concatenate([h[key] for h in halves]))


def test_nb_reports_no_separability_and_no_iterations():
    """NB does not need separability: separable False, n_iter 0, converged True."""
    data = _continuous()
    out = score_splits(_spec("nb"), data, _train(data.y, 3, 5), _seeds(5))
    assert not out["separable"].any() and (out["n_iter"] == 0).all() and out["converged"].all()


def test_lr_sample_rule_on_separable_and_nonseparable_splits():
    """Separable splits are flagged and averaged over sampled hyperplanes; the others keep
    the converged maximum-likelihood fit."""
    data = _continuous(d=3)
    small, large = _train(data.y, 3, 4), _train(data.y, 80, 4)  # separable / not
    out_small = score_splits(_spec("lr"), data, small, _seeds(4))
    assert out_small["separable"].all() and not out_small["converged"].any()
    out_large = score_splits(_spec("lr"), data, large, _seeds(4))
    assert not out_large["separable"].any() and out_large["converged"].all()
    # the non-separable errors are those of the MLE
    design = get_design(data, "x")
    mle = fit_newton(design.Z1[large], design.sign[large]).theta
    for s in range(4):
        test = np.setdiff1d(np.arange(data.n_rows), large[s])
        pred = design.Z1[test] @ mle[s] > 0
        assert out_large["error"][s] == pytest.approx(np.mean(pred != (data.y[test] == 1)))
    # sampled hyperplanes differ from the Newton certificate: another seed, another error
    other = score_splits(_spec("lr"), data, small, _seeds(4, base=9))
    assert not np.array_equal(out_small["error"], other["error"])


def test_score_full_separable_data_has_zero_error():
    """On separable full data the sampled hyperplanes all separate it: error 0."""
    X = np.array([[0.0, 0.1], [0.2, 0.3], [0.9, 0.8], [1.0, 0.7], [0.4, 0.1], [0.7, 1.0]])
    data = Dataset(name="s", title="s", X=X, y=np.array([0, 0, 1, 1, 0, 1], np.int8),
                   kind="continuous")
    assert score_full(_spec("lr"), data, np.random.SeedSequence(0)) == 0.0
    nb = score_full(_spec("nb"), data, np.random.SeedSequence(0))
    assert 0.0 <= nb <= 0.5


def test_score_full_matches_resubstitution_of_the_mle():
    """On non-separable data score_full is the MLE's error on all rows."""
    data = _continuous(n=200)
    design = get_design(data, "x")
    theta = fit_newton(design.Z1[None], design.sign[None]).theta[0]
    expected = np.mean((design.Z1 @ theta > 0) != (data.y == 1))
    assert score_full(_spec("lr"), data, np.random.SeedSequence(0)) == pytest.approx(expected)


def test_bad_training_sets_are_rejected():
    """One-class and repeated-row training sets raise DataError, a no-test-row one SizeError."""
    data = _continuous(n=10)
    zeros = np.flatnonzero(data.y == 0)[:3]
    with pytest.raises(DataError, match="only class 0"):
        score_splits(_spec("nb"), data, zeros[None], _seeds(1))
    with pytest.raises(DataError, match="repeats a row"):
        score_splits(_spec("lr"), data, np.array([[0, 0, 1]]), _seeds(1))
    with pytest.raises(SizeError, match="at least one row must be left to test on"):
        score_splits(_spec("lr"), data, np.arange(10)[None], _seeds(1))


def test_unknown_option_is_a_config_error():
    """resolve_options names the bad option and suggests the close one."""
    with pytest.raises(ConfigError, match="did you mean 'mcmc_thin'"):
        resolve_options("lr", "lr", {"mcmc_thinn": 3})


def test_every_name_and_kind_has_one_entry_and_one_table():
    """The registry answers every (model name, task kind) pair; a name's entries share one
    options table, whose defaults are FAMILIES."""
    from nbvslr.models import FAMILIES
    from nbvslr.models.nb.fit import NB_OPTIONS
    from nbvslr.models.registry import ENTRIES, OPTIONS, lookup

    assert lookup("nb", "continuous").options is lookup("nb", "discrete").options is NB_OPTIONS
    assert lookup("nb", "continuous") is not lookup("nb", "discrete")
    assert lookup("lr", "continuous") is lookup("lr", "discrete")
    assert {e.name for e in ENTRIES} == set(OPTIONS) == set(FAMILIES) == {"nb", "lr", "lda", "qda"}
    for name, table in OPTIONS.items():
        assert FAMILIES[name] == {o.name: o.default for o in table}
        for o in table:
            assert o.valid and o.meaning
            if o.default is not None:
                assert o.check(o.default) == o.default
    with pytest.raises(ConfigError, match="no fit for counts tasks of two classes; with two "
                       "classes it fits continuous, discrete, mixed"):
        lookup("nb", "counts")
    with pytest.raises(ConfigError, match="no fit for mixed tasks of more than two classes"):
        lookup("nb", "mixed", multiclass=True)


def test_run_help_lists_every_model_option():
    """nbvslr run --help ends with the model options, made from the tables."""
    from click.testing import CliRunner

    from nbvslr.cli import cli
    from nbvslr.models.registry import OPTIONS

    out = CliRunner().invoke(cli, ["run", "--help"]).output
    for name, table in OPTIONS.items():
        for o in table:
            assert f"{name}.{o.name} " in out


@pytest.mark.parametrize("kind", ["continuous", "discrete"])
@pytest.mark.parametrize("family, options", [
    ("nb", {}), ("nb", {"variance": "class"}), ("lr", {}), ("lr", {"coding": "full"}),
    ("lr", {"coding": "ordinal"}), ("lr", {"separable": "l2"}), ("lr", {"mcmc_draws": 7}),
    ("lr", {"C": 1.0}),
])
def test_memory_plan_bounds_what_each_entry_holds(kind, family, options):
    """The width and hyperplanes an entry declares for the memory plan, before any design is
    built, bound what its fit then holds: its hyperplanes' length and, on training sets
    small enough to be separable, the hyperplanes it draws per split."""
    from nbvslr.models.budget import DEFAULT_BUDGET
    from nbvslr.models.registry import lookup

    data = _continuous() if kind == "continuous" else _discrete()
    spec = _spec(family, **options)
    entry = lookup(family, kind)
    width, hyperplanes = entry.planned(data, spec.options)
    design = get_design(data, entry.design(data, spec.options))
    idx = _train(np.asarray(data.y), 4, 6)  # (6, 4): 4 rows, most of them separable
    seeds = [np.random.SeedSequence(i) for i in range(6)]
    fit = entry.fit(data, design, idx, spec.options, seeds, DEFAULT_BUDGET)
    assert fit.theta.shape[1] <= width and design.n_params <= width
    if spec.options.get("separable") == "sample" and spec.options["C"] is None:
        assert fit.sampled.size > 0  # the draws below are really there
        assert fit.draws.shape[1] <= hyperplanes
    else:
        assert fit.sampled.size == 0 and hyperplanes == 0
