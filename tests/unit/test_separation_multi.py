"""Overlap, complete and quasi-separated training sets of K classes, and softmax LR's rule
for quasi sets: checked against scipy's LP, the two-class rule, other settings of every
numerical knob and other orders of the classes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.optimize import linprog

import nbvslr.models.evaluate_multi as evaluate_multi
import nbvslr.models.lr.separation as separation
import nbvslr.models.lr.separation_multi as sm
from nbvslr.data.dataset import Dataset
from nbvslr.models import ModelSpec, resolve_options, score_full, score_splits
from nbvslr.models.design import get_design, level_directions
from nbvslr.models.evaluate import DIRECTION_RTOL, TIE_RTOL
from nbvslr.models.evaluate_multi import count_mistakes_multi_lex
from nbvslr.models.lr.softmax import fit_softmax
from nbvslr.models.lr.sum_zero import basis
from nbvslr.models.registry import lookup


def _quasi_data(K: int = 3, n: int = 400, seed: int = 3) -> Dataset:
    """Discrete data of K classes whose training sets are often quasi-separated: rare
    levels seen with one class or two only, and classes that overlap elsewhere."""
    rng = np.random.default_rng(seed)
    n_values = (3, 4, 5, 6, 3, 4)
    X = np.stack([rng.choice(k, n, p=np.r_[np.full(k - 1, 0.9 / (k - 1)), 0.1])
                  for k in n_values], axis=1)
    w = rng.standard_normal((len(n_values), K))
    score = sum(np.where(X[:, [j]] == 1, w[j], 0.0) for j in range(len(n_values)))
    score = score + 3.0 * rng.standard_normal((n, K))  # (n, K)
    y = score.argmax(axis=1).astype(np.int8)
    y[X[:, 2] == 4] = 1  # the rare level of attribute 2: class 1 only
    y[(X[:, 3] == 5) & (y == 1)] = 0  # the rare level of attribute 3: never class 1
    return Dataset(name=f"q{K}", title=f"q{K}", X=X, y=y, kind="discrete",
                   n_values=n_values, classes=tuple("abcdefgh"[:K]))


def _train(y: np.ndarray, K: int, m: int, S: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < S:
        idx = np.sort(rng.choice(y.size, m, replace=False))
        if np.unique(y[idx]).size == K:
            out.append(idx)
    return np.array(out)


def _lp_pairs(Z: np.ndarray, y: np.ndarray, K: int) -> np.ndarray:
    """The reference: the pairs (m, K) a direction of the multinomial recession cone
    separates, by scipy's LP over all K weight vectors (no sum-zero coordinates), written
    here independently: max sum t, (w_y - w_k) . z_i >= t_ik, 0 <= t <= 1."""
    m, P = Z.shape
    rows, where = [], []
    for i in range(m):
        for k in range(K):
            if k != y[i]:
                e = np.zeros(K)
                e[y[i]], e[k] = 1.0, -1.0
                rows.append(np.kron(e, Z[i]))
                where.append((i, k))
    A = np.array(rows)
    n, V = A.shape
    res = linprog(np.r_[np.zeros(V), -np.ones(n)], A_ub=np.c_[-A, np.eye(n)],
                  b_ub=np.zeros(n), bounds=[(None, None)] * V + [(0, 1)] * n, method="highs")
    assert res.status == 0
    out = np.zeros((m, K), dtype=bool)
    for (i, k), t in zip(where, res.x[V:], strict=True):
        out[i, k] = t > 0.5
    return out


def _lex_predictions(Zu: np.ndarray, D: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The lexicographic rule's class of each row (U,), -1 for a tie, written here
    independently: the classes of the largest score under D (within DIRECTION_RTOL
    ||D||_1), then the largest score under W among them (within TIE_RTOL ||W||_1)."""
    sv, s = Zu @ D.T, Zu @ W.T  # (U, K)
    cand = sv >= sv.max(axis=1, keepdims=True) - max(DIRECTION_RTOL * np.abs(D).sum(), 1e-300)
    s = np.where(cand, s, -np.inf)
    top = (s >= s.max(axis=1, keepdims=True) - TIE_RTOL * np.abs(W).sum()).sum(axis=1)
    return np.where(top > 1, -1, s.argmax(axis=1))


def _fit(data: Dataset, idx: np.ndarray, **options):
    spec = ModelSpec("lr", "lr", resolve_options("lr", "lr", options))
    entry = lookup("lr", data.kind, True)
    design = get_design(data, entry.design(data, spec.options))
    seeds = [np.random.SeedSequence(0, spawn_key=(i,)) for i in range(len(idx))]
    return design, entry.fit(data, design, idx, spec.options, seeds)


def _test_predictions(data: Dataset, stacks: list[np.ndarray],
                      **options) -> tuple[list[np.ndarray], np.ndarray]:
    """Each quasi split's class (as a name, or "tie") of each of its test rows, over the
    stacks of training sets (each (S, m)), and every split's separation code."""
    preds, codes = [], []
    names = np.array(data.classes + ("tie",))
    for idx in stacks:
        design, fit = _fit(data, idx, **options)
        Zu = design.unique_Z1
        for n, a in enumerate(fit.quasi):
            test = np.setdiff1d(np.arange(data.n_rows), idx[a])
            cls = _lex_predictions(Zu, fit.directions[n], fit.theta[a])
            preds.append(names[cls[design.row_to_unique[test]]])
        codes.append(fit.separation)
    return preds, np.concatenate(codes)


def _gaussian_data(K: int = 3, n: int = 300, seed: int = 4) -> Dataset:
    """Continuous data of K overlapping Gaussian classes: small training sets separable,
    larger ones overlapping."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n).astype(np.int8)
    X = rng.standard_normal((n, 2)) + 1.5 * np.eye(K, 2)[y]
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    return Dataset(name=f"g{K}", title=f"g{K}", X=X, y=y, kind="continuous",
                   classes=tuple("abcdefgh"[:K]))


@pytest.mark.parametrize(("K", "m", "coding"), [(3, 40, "reference"), (3, 80, "reference"),
                                                (4, 60, "reference"), (3, 50, "full"),
                                                (3, 12, "continuous")])
def test_detection_matches_scipys_lp_on_every_split(K, m, coding):
    """Every split's kind and separated (row, class) pairs are those of scipy's LP."""
    data = _gaussian_data(K) if coding == "continuous" else _quasi_data(K)
    name = {"reference": "onehot_ref", "full": "onehot", "continuous": "x"}[coding]
    design = get_design(data, name)
    idx = _train(data.y, K, m, 25)
    Z1, y = design.rows(idx), np.asarray(data.y)[idx]
    found = sm.detect_multi(Z1, y, K, extra=level_directions(data, name))
    for a in range(len(idx)):
        q = _lp_pairs(Z1[a], y[a], K)
        assert (found.separated[a] == q).all(), a
        n = q.sum()
        want = separation.OVERLAP if not n else (
            separation.COMPLETE if n == m * (K - 1) else separation.QUASI)
        assert found.code[a] == want, a
    # the cases under test occur
    kinds = np.bincount(found.code, minlength=3)
    if coding == "continuous":
        assert kinds[separation.OVERLAP] >= 3 and kinds[separation.COMPLETE] >= 3
    else:
        assert kinds[separation.QUASI] >= 5


def test_quasi_direction_is_a_max_margin_cone_direction():
    """The direction separates every pair of Q by >= 1, leaves the others at 0, sums to 0
    over the classes, and is the least-norm such direction: the KKT conditions hold (the
    penalised part of phi is a combination of the active pairs' rows with weights >= 0 and
    of the overlap pairs' rows, by scipy's bounded least squares)."""
    from scipy.optimize import lsq_linear

    data = _quasi_data(3)
    design = get_design(data, "onehot_ref")
    idx = _train(data.y, 3, 60, 12)
    Z1, y = design.rows(idx), np.asarray(data.y)[idx]
    found = sm.detect_multi(Z1, y, 3, extra=level_directions(data, "onehot_ref"))
    quasi = np.flatnonzero(found.code == separation.QUASI)
    assert quasi.size >= 4
    P = Z1.shape[2]
    penalised = np.ones(2 * P, dtype=bool)
    penalised[P - 1::P] = False  # the intercepts' coordinates
    for a in quasi[:6]:
        D = found.direction[a]
        np.testing.assert_allclose(D.sum(axis=0), 0.0, atol=1e-9)
        margin = np.einsum("ikp,ip->ik", D[y[a]][:, None, :] - D[None, :, :], Z1[a])
        q = found.separated[a]
        pair = np.arange(3) != y[a][:, None]
        assert margin[q].min() >= 1.0 - 1e-7
        np.testing.assert_allclose(margin[pair & ~q], 0.0, atol=1e-7)
        phi = (basis(3).T @ D).reshape(-1)  # the sum-zero coordinates
        active = q & (margin <= 1.0 + 1e-7)
        rows = np.concatenate([sm.pair_rows(Z1[a], y[a], 3, active),
                               sm.pair_rows(Z1[a], y[a], 3, pair & ~q)])  # (n, 2 P)
        lo = np.r_[np.zeros(active.sum()), np.full((pair & ~q).sum(), -np.inf)]
        grad = np.where(penalised, phi, 0.0)
        fit = lsq_linear(rows.T, grad, bounds=(lo, np.inf), method="bvls")
        assert np.abs(rows.T @ fit.x - grad).max() <= 1e-6 * max(1.0, np.abs(grad).max())


KNOBS = [
    ("tol", dict(tol=1e-7), {}),
    ("max_iter", dict(max_iter=40), {}),
    ("FIRST_STEPS", {}, {"FIRST_STEPS": 2}),
    ("CERTIFICATE_FLOOR", {}, {"CERTIFICATE_FLOOR": 1e-2}),
    ("RANK_RTOL", {}, {"RANK_RTOL": 1e-8}),
    ("INTERCEPT_WEIGHT", {}, {"INTERCEPT_WEIGHT": 1e-6}),
]


@pytest.mark.parametrize(("knob", "options", "constants"), KNOBS, ids=[k[0] for k in KNOBS])
def test_quasi_rule_does_not_depend_on_a_numerical_knob(knob, options, constants,
                                                        monkeypatch):
    """Two settings of every numerical knob (the fits' tolerance and step cap, the
    detection's first steps and certificate floor, the direction's rank tolerance and
    intercept weight) give the same classes on >= 99.9 % of the quasi splits' test rows
    (Newton-CG's iterate, `quasi: newton`, does not: it moves with tol)."""
    data = _quasi_data(3)
    stacks = [_train(data.y, 3, m, 15, seed=m) for m in (30, 60, 120)]
    base, code0 = _test_predictions(data, stacks)
    assert (code0 == separation.QUASI).sum() >= 20
    for name, value in constants.items():
        monkeypatch.setattr(sm, name, value)
    other, code1 = _test_predictions(data, stacks, **options)
    np.testing.assert_array_equal(code0, code1)
    same = np.concatenate([a == b for a, b in zip(base, other, strict=True)])
    assert same.mean() >= 0.999, (knob, same.mean())


def test_newton_iterate_on_quasi_sets_moves_with_the_tolerance():
    """The comparison the knob test rests on can fail: Newton-CG's iterate on the same
    quasi sets (`quasi: newton`) changes its held-out errors with tol."""
    data = _quasi_data(3)
    idx = _train(data.y, 3, 50, 30)
    seeds = [np.random.SeedSequence(0, spawn_key=(i,)) for i in range(len(idx))]
    err = [score_splits(ModelSpec("lr", "lr", resolve_options("lr", "lr", {
        "quasi": "newton", "tol": tol})), data, idx, seeds)["error"] for tol in (1e-10, 1e-6)]
    assert (err[0] != err[1]).sum() >= 3


def test_direction_band_is_a_knob_of_rounding_only(monkeypatch):
    """The evaluation's band of ties under the direction (DIRECTION_RTOL 1e-9 or 1e-7)
    gives the same held-out errors on every split."""
    data = _quasi_data(3)
    idx = _train(data.y, 3, 60, 30)
    design, fit = _fit(data, idx)
    q = fit.quasi
    a0, t0 = count_mistakes_multi_lex(design, data, fit.directions, fit.theta[q], idx[q])
    monkeypatch.setattr(evaluate_multi, "DIRECTION_RTOL", 1e-7)
    a1, t1 = count_mistakes_multi_lex(design, data, fit.directions, fit.theta[q], idx[q])
    np.testing.assert_array_equal(a0, a1)
    np.testing.assert_array_equal(t0, t1)


@pytest.mark.parametrize(("K", "kind"), [(3, "discrete"), (4, "discrete"), (3, "continuous")])
def test_permuting_the_classes_leaves_quasi_predictions_unchanged(K, kind):
    """The same data with the class codes permuted (every cyclic shift and the reversal):
    the same splits are quasi, and each quasi split predicts the same class names on its
    test rows (>= 99.9 %: only rounding may differ)."""
    data = _quasi_data(K) if kind == "discrete" else _gaussian_data(K)
    sizes = {3: (40, 90), 4: (60,)}[K] if kind == "discrete" else (12, 20)
    stacks = [_train(data.y, K, m, 12 if (K, kind) == (3, "discrete") else 25, seed=m)
              for m in sizes]
    base, code0 = _test_predictions(data, stacks)
    assert (code0 == separation.QUASI).sum() >= 10
    orders = [np.roll(np.arange(K), s) for s in range(1, K)] + [np.arange(K)[::-1]]
    for order in orders:  # new code of each old class
        names = tuple(np.array(data.classes)[np.argsort(order)])
        perm = dataclasses.replace(data, y=order[data.y].astype(np.int8), classes=names)
        other, code1 = _test_predictions(perm, stacks)
        np.testing.assert_array_equal(code0, code1)
        same = np.concatenate([a == b for a, b in zip(base, other, strict=True)])
        assert same.mean() >= 0.999, (order, same.mean())


def test_two_classes_give_the_two_class_quasi_rule():
    """K = 2: the same kind and separated rows as ``separation.detect``, the direction's
    ``w_1 - w_0`` is the two-class max-margin direction, the overlap fit's ``w_1 - w_0`` the
    two-class fit of the overlap rows, and the lexicographic classes are the same."""
    data = dataclasses.replace(_quasi_data(3), classes=())
    data = dataclasses.replace(data, y=(data.y == 1).astype(np.int8))
    design = get_design(data, "onehot_ref")
    extra = level_directions(data, "onehot_ref")
    idx = _train(data.y, 2, 60, 40)
    Z1, y = design.rows(idx), np.asarray(data.y)[idx]
    two = separation.detect(Z1, 2.0 * y - 1.0, extra=extra)
    many = sm.detect_multi(Z1, y, 2, extra=extra)
    np.testing.assert_array_equal(many.code, two.code)
    np.testing.assert_array_equal(many.separated[np.arange(len(y))[:, None],
                                                 np.arange(y.shape[1]), 1 - y], two.separated)
    quasi = np.flatnonzero(two.code == separation.QUASI)
    assert quasi.size >= 10
    v = many.direction[quasi, 1] - many.direction[quasi, 0]
    np.testing.assert_allclose(v, two.direction[quasi], atol=1e-6)
    theta = many.theta[quasi, 1] - many.theta[quasi, 0]
    np.testing.assert_allclose(theta, two.theta[quasi], atol=1e-5)
    Zu = design.unique_Z1
    for a in quasi:
        ours = _lex_predictions(Zu, many.direction[a], many.theta[a])
        sv, st = Zu @ two.direction[a], Zu @ two.theta[a]
        tie = np.abs(st) <= TIE_RTOL * np.abs(two.theta[a]).sum()
        theirs = np.where(np.abs(sv) > DIRECTION_RTOL * np.abs(two.direction[a]).sum(),
                          sv > 0, np.where(tie, -1, st > 0)).astype(int)
        np.testing.assert_array_equal(ours, theirs)


def test_masked_fit_with_every_class_allowed_is_the_plain_fit():
    """``allowed`` all True changes no number of the fit; the symmetric fit of an overlap
    set is the reference-class fit's rule (the same maximum, another representative)."""
    rng = np.random.default_rng(0)
    Z1 = np.concatenate([rng.standard_normal((6, 40, 3)), np.ones((6, 40, 1))], axis=2)
    y = rng.integers(0, 3, (6, 40))
    plain = fit_softmax(Z1, y, 3)
    masked = fit_softmax(Z1, y, 3, allowed=np.ones((6, 40, 3), dtype=bool))
    np.testing.assert_array_equal(plain.theta, masked.theta)
    sym = fit_softmax(Z1, y, 3, symmetric=True)
    assert sym.converged.all()
    np.testing.assert_allclose(sym.theta.sum(axis=1), 0.0, atol=1e-9)
    d = lambda t: t - t[:, -1:]  # noqa: E731 -- differences to the last class
    np.testing.assert_allclose(d(sym.theta), d(plain.theta), atol=1e-6)


def test_runs_record_the_separation_and_score_quasi_sets():
    """``score_splits`` of softmax LR writes each split's separation code and scores a
    quasi split by the lexicographic rule (its error that of ``count_mistakes_multi_lex``);
    ``score_full`` of a quasi full set uses the same rule."""
    data = _quasi_data(3)
    idx = _train(data.y, 3, 60, 20)
    seeds = [np.random.SeedSequence(0, spawn_key=(i,)) for i in range(len(idx))]
    spec = ModelSpec("lr", "lr", resolve_options("lr", "lr", {}))
    out = score_splits(spec, data, idx, seeds)
    design, fit = _fit(data, idx)
    np.testing.assert_array_equal(out["separation"], fit.separation)
    assert (out["separation"] == separation.QUASI).sum() >= 5
    Zu = design.unique_Z1
    for n, a in enumerate(fit.quasi):
        test = np.setdiff1d(np.arange(data.n_rows), idx[a])
        cls = _lex_predictions(Zu, fit.directions[n], fit.theta[a])[design.row_to_unique[test]]
        wrong = np.where(cls < 0, np.nan, cls != data.y[test])
        if not np.isnan(wrong).any():  # no tie under the rule: every row counts 0 or 1
            assert out["error"][a] == pytest.approx(wrong.mean(), abs=1e-12)
    full = score_full(spec, data, np.random.SeedSequence(0))
    assert 0.0 <= full < 0.5
    pen = ModelSpec("lr", "lr", resolve_options("lr", "lr", {"C": 1.0}))
    assert (score_splits(pen, data, idx, seeds)["separation"] == -1).all()


def test_a_fit_started_again_from_its_iterate_takes_the_same_steps():
    """``theta0``: Newton-CG stopped after a few steps and started again from its iterate
    ends at the same numbers as the fit never stopped (the separable-set sampler's start
    of a split that detection sends past step 0 is the one it always had)."""
    rng = np.random.default_rng(1)
    Z1 = np.concatenate([rng.standard_normal((12, 9, 4)), np.ones((12, 9, 1))], axis=2)
    y = np.tile(np.arange(9) % 3, (12, 1))
    whole = fit_softmax(Z1, y, 3, stop_when_separable=True)
    assert whole.separable.sum() >= 6 and (whole.n_iter > 3).sum() >= 6
    part = fit_softmax(Z1, y, 3, stop_when_separable=True, max_iter=3)
    rest = fit_softmax(Z1, y, 3, stop_when_separable=True, max_iter=97, theta0=part.theta)
    np.testing.assert_array_equal(rest.theta, whole.theta)
    np.testing.assert_array_equal(part.n_iter + rest.n_iter, whole.n_iter)
