"""Held-out error of many linear models at once."""

from __future__ import annotations

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.models.design import get_design
from nbvslr.models.evaluate import heldout_errors


def _data() -> Dataset:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (60, 3)).astype(float) / 2  # many repeated rows
    y = (rng.random(60) < 0.5).astype(np.int8)
    return Dataset(name="t", title="t", X=X, y=y, kind="continuous")


def test_heldout_error_equals_naive_loop():
    """One product minus training-row mistakes = a per-split loop over the held-out rows."""
    data = _data()
    design = get_design(data, "x")
    rng = np.random.default_rng(1)
    train = np.stack([rng.choice(60, 7, replace=False) for _ in range(25)])  # (25, 7)
    theta = rng.standard_normal((25, 4))
    fast = heldout_errors(design, theta, train)
    for s in range(25):
        test = np.setdiff1d(np.arange(60), train[s])
        score = design.Z1[test] @ theta[s]
        wrong = np.where(score == 0, 0.5, (score > 0) != (data.y[test] == 1))
        assert fast[s] == wrong.mean() or abs(fast[s] - wrong.mean()) < 1e-12


def test_ties_count_half():
    """A zero score is half an error, also when it is zero only up to rounding."""
    X = np.array([[0.0], [0.5], [1.0], [0.3], [0.3]])
    data = Dataset(name="t", title="t", X=X, y=np.array([0, 1, 1, 0, 1], np.int8),
                   kind="continuous")
    design = get_design(data, "x")
    train = np.array([[0]])
    # w x + b with b = -0.5 w: row 0.5 ties; rows 1.0 (class 1) right; 0.3 rows: one wrong
    theta = np.array([[1.0, -0.5]])
    assert heldout_errors(design, theta, train)[0] == (0.5 + 0 + 0 + 1) / 4
    # 0.1 + 0.2 - 0.3 != 0 in floating point, but it is a tie
    X2 = np.array([[0.1, 0.2], [1.0, 0.0]])
    data2 = Dataset(name="t", title="t", X=X2, y=np.array([1, 0], np.int8), kind="continuous")
    err = heldout_errors(get_design(data2, "x"), np.array([[1.0, 1.0, -0.3]]), np.array([[1]]))
    assert err[0] == 0.5
    zero = heldout_errors(design, np.zeros((1, 2)), train)
    assert zero[0] == 0.5


def _numpy_counts(design, theta, train_idx, ties):
    """count_mistakes as numpy passes over the whole score matrix (the compiled pass's oracle)."""
    tau = np.maximum(1e-10 * np.abs(theta).sum(axis=1), 1e-300)

    def steps(scores):  # (rows, models)
        with np.errstate(over="ignore", invalid="ignore"):
            s = np.trunc(np.clip(scores / tau, -1.5, 1.5))
        if ties:
            s[s == 0.0] = ties
        return s

    all_rows = 0.5 * (design.n_rows - design.sign @ steps(design.Z1 @ theta.T))
    tr = np.einsum("smk,sk->ms", design.Z1[train_idx], theta)  # (m, S)
    agree = (design.sign[train_idx].T * steps(tr)).sum(axis=0)
    return all_rows, 0.5 * (train_idx.shape[1] - agree)


def test_compiled_count_equals_numpy_passes():
    """The one compiled pass over each tile counts what numpy's passes count, bit for bit:
    ties within the band (either sign), theta = 0, a huge theta and a nan theta; and any
    tiling of rows and models gives the same counts."""
    from nbvslr.models import evaluate

    data = _data()
    design = get_design(data, "x")
    rng = np.random.default_rng(3)
    theta = rng.standard_normal((40, 4))
    theta[0] = 0.0  # every score a tie
    theta[1] = [1e300, 0.0, 0.0, 1e300]  # huge scores
    theta[2] = [0.0, 0.0, 1.0, -0.5]  # exact ties on rows with x2 = 0.5
    theta[3] = [1.0, -1.0, 0.0, 1e-12]  # ties up to rounding: |score| <= tau
    theta[4, 1] = np.nan
    train = np.stack([rng.choice(60, 9, replace=False) for _ in range(40)])
    for ties in (0.0, 1.0, -1.0):
        got = evaluate.count_mistakes(design, theta, train, ties)
        want = _numpy_counts(design, theta, train, ties)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert np.isnan(got[0][4]) and not np.isnan(got[0][:4]).any()
        if not ties:
            assert got[0][0] == 0.5 * design.n_rows  # theta = 0: every row a tie
    tiled = dict(TILE=7, MODEL_TILE=3)
    old = {k: getattr(evaluate, k) for k in tiled}
    try:
        for k, v in tiled.items():
            setattr(evaluate, k, v)
        small = evaluate.count_mistakes(design, theta, train, 0.0)
    finally:
        for k, v in old.items():
            setattr(evaluate, k, v)
    # a nan step on a row of weight 0 (one copy in each class) still makes the count nan:
    # ||theta||_1 overflows (tau = inf), and only that row's score does too (inf * 0 = nan)
    X = np.array([[1.0], [1.0], [0.0], [0.5]])
    zero = get_design(Dataset(name="z", title="z", X=X, y=np.array([0, 1, 1, 0], np.int8),
                              kind="continuous"), "x")
    huge = np.array([[1e308, 1e308], [1.0, -0.7]])
    with np.errstate(over="ignore", invalid="ignore"):
        got = evaluate.count_mistakes(zero, huge, None)[0]
        want = _numpy_counts(zero, huge, np.zeros((2, 1), int), 0.0)[0]
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[0]) and not np.isnan(got[1])
    whole = evaluate.count_mistakes(design, theta, train, 0.0)
    np.testing.assert_array_equal(small[0], whole[0])
    np.testing.assert_array_equal(small[1], whole[1])
    assert (2 * whole[0][2]) % 2 == 1  # exact ties: an odd number of half errors


def test_lex_all_rows_count_equals_numpy_passes():
    """count_mistakes_lex's one compiled pass (fold and count) counts what the numpy passes
    count on all rows, bit for bit: rows the direction decides, rows with a direction score
    of exactly 0 (theta decides), ties of theta, directions of 0, theta of 0, any tiling."""
    from nbvslr.models import evaluate

    data = _data()  # x in {0, 0.5, 1}: integer rules give exact scores, exact zeros
    design = get_design(data, "x")
    rng = np.random.default_rng(4)
    directions = rng.integers(-2, 3, (30, 4)).astype(float) * (rng.random((30, 4)) < 0.5)
    directions[:4] = 0.0  # every row falls through to theta
    theta = rng.integers(-3, 4, (30, 4)).astype(float)
    theta[4:7] = 0.0  # every row theta does not decide is a tie
    train = np.stack([rng.choice(60, 9, replace=False) for _ in range(30)])
    tau = np.maximum(evaluate.TIE_RTOL * np.abs(theta).sum(axis=1), 1e-300)
    tau_v = np.maximum(evaluate.DIRECTION_RTOL * np.abs(directions).sum(axis=1), 1e-300)
    sv, st = design.Z1 @ directions.T, design.Z1 @ theta.T  # (N, models)
    folded = np.where(np.abs(sv) > tau_v, np.sign(sv) * 2.0 * tau, st)
    assert (np.abs(sv) > tau_v).any() and ((sv == 0) & (st != 0)).any() and (folded == 0).any()
    for ties in (0.0, 1.0, -1.0):
        step = np.trunc(np.clip(folded / tau, -1.5, 1.5))
        step[step == 0.0] = ties
        want = 0.5 * (design.n_rows - design.sign @ step)
        got = evaluate.count_mistakes_lex(design, directions, theta, train, ties)[0]
        np.testing.assert_array_equal(got, want)
    tiled = dict(TILE=7, MODEL_TILE=3)
    old = {k: getattr(evaluate, k) for k in tiled}
    try:
        for k, v in tiled.items():
            setattr(evaluate, k, v)
        small = evaluate.count_mistakes_lex(design, directions, theta, train, 1.0)
    finally:
        for k, v in old.items():
            setattr(evaluate, k, v)
    whole = evaluate.count_mistakes_lex(design, directions, theta, train, 1.0)
    np.testing.assert_array_equal(small[0], whole[0])
    np.testing.assert_array_equal(small[1], whole[1])


def test_lexicographic_pass_equals_the_pass_over_the_folded_tile():
    """``add_lex_agreement`` sums exactly what ``add_agreement`` sums over the folded tile
    (``+-2 tau`` where ``|sv| > tau_v``, else ``st``): direction scores at, below and above
    the band, of both signs, 0 and nan; fit scores that tie, cross the band and are nan."""
    from nbvslr.kernels.steps import add_agreement, add_lex_agreement

    rng = np.random.default_rng(7)
    R, C = 50, 6
    tau = np.array([1e-9, 1e-6, 1.0, 0.5, 1e-12, 2.0])
    tau_v = np.array([1e-9, 1e-3, 0.1, 0.5, 1e-300, 1.0])
    sv = rng.standard_normal((R, C)) * rng.choice([0.0, 1e-10, 1e-3, 1.0], (R, C))
    sv[0] = tau_v  # at the band: the fit decides
    sv[1] = -2 * tau_v
    sv[2, 0] = np.nan  # no direction score: the fit's is read
    st = rng.standard_normal((R, C)) * rng.choice([0.0, 1e-9, 1.0], (R, C))
    st[3] = tau
    st[4] = -tau
    st[5, 1] = np.nan
    sv[5, 1] = 0.0  # the fit's nan is read
    weight = rng.integers(1, 4, R).astype(float)
    for ties in (0.0, 1.0, -1.0):
        folded = np.where(np.abs(sv) > tau_v, np.sign(sv) * 2.0 * tau, st)
        want, got = np.zeros(C), np.zeros(C)
        add_agreement(np.ascontiguousarray(folded), 1.0 / tau, weight, ties, want)
        add_lex_agreement(sv, st, tau_v, tau, 1.0 / tau, weight, ties, got)
        np.testing.assert_array_equal(got, want)
        assert np.isnan(got[1]) and not np.isnan(np.delete(got, 1)).any()
