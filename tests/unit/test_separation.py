"""Overlap, complete and quasi-separated training sets, and LR's rule for quasi sets:
checked against scipy's LP and scikit-learn's penalised fits."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

import nbvslr.models.evaluate as evaluate
import nbvslr.models.lr.newton as newton
import nbvslr.models.lr.separation as separation
from nbvslr.analysis.stats import summarize
from nbvslr.data.dataset import Dataset
from nbvslr.models import ModelSpec, resolve_options, score_full, score_splits
from nbvslr.models.design import get_design, level_directions
from nbvslr.models.lr.entry import fit_lr
from nbvslr.models.lr.newton import fit_newton
from nbvslr.results.read import read_splits


def _quasi_data(n: int = 400, seed: int = 3) -> Dataset:
    """Discrete data whose training sets are often quasi-separated: rare levels seen with
    one class only, and a label that depends on two attributes."""
    rng = np.random.default_rng(seed)
    n_values = (3, 4, 5, 6, 3, 4)
    X = np.stack([rng.choice(k, n, p=np.r_[np.full(k - 1, 0.9 / (k - 1)), 0.1])
                  for k in n_values], axis=1)
    score = 1.2 * (X[:, 0] == 1) - 0.9 * (X[:, 1] == 2) + 0.6 * rng.standard_normal(n)
    y = (score > 0.1).astype(np.int8)
    y[X[:, 2] == 4] = 1  # the rare level of attribute 2: class 1 only
    y[X[:, 3] == 5] = 0  # the rare level of attribute 3: class 0 only
    return Dataset(name="q", title="q", X=X, y=y, kind="discrete", n_values=n_values)


def _train(y: np.ndarray, m: int, S: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < S:
        idx = rng.choice(y.size, m, replace=False)
        if 0 < y[idx].sum() < m:
            out.append(np.sort(idx))
    return np.array(out)


def _spec(**options) -> ModelSpec:
    return ModelSpec("lr", "lr", resolve_options("lr", "lr", options))


def _stack(data: Dataset, m: int, S: int, coding: str = "onehot_ref"):
    design = get_design(data, coding)
    idx = _train(data.y, m, S)
    return design, idx, design.rows(idx), design.sign[idx]


def _lp_rows(A: np.ndarray) -> np.ndarray:
    """The reference: rows a direction of {v : A v >= 0} separates, by scipy's LP
    (max sum t, A v >= t, 0 <= t <= 1), written here independently."""
    m, P = A.shape
    res = linprog(np.r_[np.zeros(P), -np.ones(m)], A_ub=np.c_[-A, np.eye(m)],
                  b_ub=np.zeros(m), bounds=[(None, None)] * P + [(0, 1)] * m, method="highs")
    assert res.status == 0
    return res.x[P:] > 0.5


@pytest.mark.parametrize(("m", "coding"), [(30, "onehot_ref"), (60, "onehot_ref"),
                                           (120, "onehot_ref"), (40, "onehot")])
def test_detection_matches_scipys_lp_on_every_split(m, coding):
    """Every split's kind and separated rows are those of scipy's LP."""
    data = _quasi_data()
    design, idx, Z1, sign = _stack(data, m, 40, coding)
    found = separation.detect(Z1, sign, extra=level_directions(data, coding))
    for a in range(len(idx)):
        q = _lp_rows(sign[a, :, None] * Z1[a])
        assert (found.separated[a] == q).all(), a
        want = 0 if not q.any() else 1 if q.all() else 2
        assert found.code[a] == want, a
    assert (found.code == separation.QUASI).sum() >= 3  # the case under test occurs


def test_lps_solved_as_one_program_find_each_splits_rows():
    """The LPs of many splits solved side by side (``separated_rows_many``) give each split
    the rows its own LP gives, across batches and sizes and for all three kinds."""
    data = _quasi_data()
    As = []
    for m in (20, 45, 90):
        _, _, Z1, sign = _stack(data, m, 15)
        As += [sign[a, :, None] * Z1[a] for a in range(len(Z1))]
    rng = np.random.default_rng(0)  # continuous rows: a complete set and an overlapping one
    X = rng.standard_normal((30, 4))
    As += [np.c_[X, np.ones(30)] * np.where(X[:, :1] > 0, 1.0, -1.0),
           np.c_[X, np.ones(30)] * rng.choice([-1.0, 1.0], (30, 1))]
    found = separation.separated_rows_many(As)
    assert len(found) == len(As) > 2 * separation.LP_BATCH
    want = [_lp_rows(A) for A in As]
    for a, (q, w) in enumerate(zip(found, want, strict=True)):
        assert (q == w).all(), a
        assert (q == separation.separated_rows_lp(As[a])[0]).all(), a
    kinds = {0 if not w.any() else 1 if w.all() else 2 for w in want}
    assert kinds == {0, 1, 2}  # overlap, complete and quasi sets all occur


def test_detection_without_the_peel_still_matches_the_lp():
    """With nothing peeled (no pure column tried), the guess and the LP find the same rows."""
    data = _quasi_data()
    design, idx, Z1, sign = _stack(data, 60, 30)
    found = separation.detect(Z1 * 1.0, sign)
    for a in range(len(idx)):
        assert (found.separated[a] == _lp_rows(sign[a, :, None] * Z1[a])).all(), a


def test_fit_newton_of_some_rows_is_the_fit_of_those_rows():
    """Zeroed rows with ``rows`` fit exactly the other rows (same theta as the subset)."""
    data = _quasi_data()
    design, idx, Z1, sign = _stack(data, 80, 6, "onehot")
    rows = np.ones(Z1.shape[:2], dtype=bool)
    rows[:, :10] = False
    some = fit_newton(Z1 * rows[:, :, None], sign, rows=rows)
    for a in range(len(idx)):
        sub = fit_newton(Z1[a:a + 1, 10:], sign[a:a + 1, 10:])
        np.testing.assert_allclose(some.theta[a], sub.theta[0], atol=1e-8)


def test_fit_newton_given_the_nonzeros_is_the_fit_that_finds_them():
    """``fit_newton`` with the non-zeros given (padded wider than needed, zeroed rows
    listed with none) returns the very iterates, steps and flags it finds without them."""
    from nbvslr.kernels.sparse_gram import sparse_rows

    data = _quasi_data()
    design, idx, Z1, sign = _stack(data, 80, 20, "onehot")
    rows = np.random.default_rng(4).random(Z1.shape[:2]) < 0.9
    Zr = Z1 * rows[:, :, None]
    cols, vals, nnz = sparse_rows(Zr)
    wide = (np.pad(cols, ((0, 0), (0, 0), (0, 3))), np.pad(vals, ((0, 0), (0, 0), (0, 3))), nnz)
    for kw in (dict(stop_when_separable=True), dict(max_iter=3)):
        want = fit_newton(Zr, sign, rows=rows, **kw)
        got = fit_newton(Zr, sign, rows=rows, nonzeros=wide, **kw)
        for field in ("theta", "n_iter", "converged", "separable"):
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field))


def test_fit_newton_on_a_stand_in_of_the_stack_is_the_fit_of_the_stack():
    """Where ``reads_stack`` says Newton given the non-zeros reads no entry of the stack, a
    stand-in of its shape gives the very fit the stack gives; the row-space form (m at most
    P / 2) and a penalty do read it."""
    from nbvslr.kernels.sparse_gram import sparse_rows

    data = _quasi_data()
    design, idx, Z1, sign = _stack(data, 80, 20, "onehot")
    rows = np.random.default_rng(4).random(Z1.shape[:2]) < 0.9
    Zr = Z1 * rows[:, :, None]
    nonzeros = sparse_rows(Zr)
    S, m, P = Zr.shape
    assert not newton.reads_stack(m, P, nonzeros[2])
    assert newton.reads_stack(P // 2, P, nonzeros[2])
    assert newton.reads_stack(m, P, nonzeros[2], C=1.0)
    assert newton.reads_stack(m, P, np.full((S, m), P))  # rows too dense for the sparse form
    stand_in = np.broadcast_to(0.0, Zr.shape)
    for kw in (dict(stop_when_separable=True), dict(max_iter=3)):
        want = fit_newton(Zr, sign, rows=rows, nonzeros=nonzeros, **kw)
        got = fit_newton(stand_in, sign, rows=rows, nonzeros=nonzeros, **kw)
        for field in ("theta", "n_iter", "converged", "separable"):
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field))


def _predictions(design, fit, idx) -> np.ndarray:
    """(q, U) predicted signs of each quasi split on the distinct rows (lexicographic)."""
    Zu = design.unique_Z1
    sv = fit.directions @ Zu.T
    st = fit.theta[fit.quasi] @ Zu.T
    tau = evaluate.DIRECTION_RTOL * np.abs(fit.directions).sum(axis=1, keepdims=True)
    return np.where(np.abs(sv) > tau, np.sign(sv), np.sign(st))


def _fit(data, design, idx, **options):
    opts = _spec(**options).options
    seeds = [np.random.SeedSequence(0, spawn_key=(s,)) for s in range(len(idx))]
    return fit_lr(design, idx, opts, seeds, False,
                  levels=level_directions(data, "onehot_ref"))


def test_limit_predictions_do_not_depend_on_any_numerical_knob(monkeypatch):
    """Two settings of each knob (Newton's tol and max_iter, the certificate's floor, the
    null space's rank tolerance, the direction's optimality check, the zero band of x . v*)
    give the same prediction on >= 99.9% of the (split, held-out row) pairs of the quasi
    splits (the distinct rows outside each split's training rows)."""
    data = _quasi_data()
    design = get_design(data, "onehot_ref")
    idx = _train(data.y, 100, 40)
    base = _fit(data, design, idx)
    assert base.quasi.size >= 20
    ref = _predictions(design, base, idx)
    held_out = np.ones(ref.shape, dtype=bool)  # (q, U)
    for j, a in enumerate(base.quasi):
        held_out[j, design.row_to_unique[idx[a]]] = False
    assert held_out.sum() > 100 * len(base.quasi)
    settings = [
        ({"tol": 1e-7}, None), ({"max_iter": 40}, None),
        ({}, (separation, "CERTIFICATE_FLOOR", 1e-4)),
        ({}, (separation, "RANK_RTOL", 1e-13)),
        ({}, (separation, "KKT_RTOL", 1e-7)), ({}, (separation, "KKT_RTOL", 1e-11)),
        ({}, (evaluate, "DIRECTION_RTOL", 1e-7)),
    ]
    for options, patch in settings:
        with monkeypatch.context() as mp:
            if patch is not None:
                mp.setattr(*patch)
            other = _fit(data, design, idx, **options)
            assert np.array_equal(other.quasi, base.quasi)
            same = (_predictions(design, other, idx) == ref)[held_out].mean()
        assert same >= 0.999, (options, patch, same)


def test_a_loose_tol_does_not_move_the_quasi_predictions_on_adult_discrete():
    """LR's ``tol: 1e-6`` gives every quasi split of the shipped adult (discrete) data the
    separated rows and, on each split's held-out rows, the predictions of the default (the
    detection's fits run to at most ``CERTIFICATE_TOL``: at 1e-6 its certificate accepted
    fits running off, and 6 of 45 splits at m = 42 agreed on under 99.9% of their rows)."""
    from nbvslr.data import DataSettings, TaskSpec, load_task
    from nbvslr.splits import draw_train_sets, split_seeds

    data = load_task(TaskSpec("adult-discrete"), DataSettings())
    design = get_design(data, "onehot_ref")
    draw, _ = split_seeds(0, data.name, 42, range(100))
    idx = draw_train_sets(np.asarray(data.y), 42, draw)
    base, loose = _fit(data, design, idx), _fit(data, design, idx, tol=1e-6)
    assert base.quasi.size >= 20
    assert np.array_equal(loose.quasi, base.quasi)
    assert np.array_equal(loose.directions, base.directions)
    counts = np.bincount(design.row_to_unique, minlength=design.unique_Z1.shape[0])
    same = _predictions(design, loose, idx) == _predictions(design, base, idx)  # (q, U)
    for j, a in enumerate(base.quasi):
        test = counts.astype(float)
        np.subtract.at(test, design.row_to_unique[idx[a]], 1)  # the split's held-out rows
        assert (same[j] * test).sum() / test.sum() >= 0.999, a


def test_limit_agrees_with_scikit_learns_fits_at_small_penalties():
    """On the quasi splits, scikit-learn's L2 fits at C = 1e4 and 1e8 predict as the limit
    rule on nearly all test rows."""
    sklearn = pytest.importorskip("sklearn.linear_model")
    data = _quasi_data()
    design = get_design(data, "onehot_ref")
    idx = _train(data.y, 100, 20)
    fit = _fit(data, design, idx)
    ours = _predictions(design, fit, idx)  # (q, U)
    Zu = design.unique_Z1
    for C in (1e4, 1e8):
        agree = []
        for j, a in enumerate(fit.quasi):
            Z1, y = design.rows(idx[a]), data.y[idx[a]]
            model = sklearn.LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12,
                                               max_iter=1000).fit(Z1[:, :-1], y)
            sk = np.sign(Zu[:, :-1] @ model.coef_[0] + model.intercept_[0])
            test = np.ones(len(Zu), dtype=bool)
            test[design.row_to_unique[idx[a]]] = False
            agree.append((sk == ours[j])[test].mean())
        assert np.mean(agree) >= 0.98, (C, np.mean(agree))


def test_quasi_errors_come_from_the_lexicographic_rule():
    """score_splits' error of a quasi split is the held-out error of the lexicographic
    predictions, counted here by hand; other splits are as the Newton path leaves them."""
    data = _quasi_data()
    design = get_design(data, "onehot_ref")
    idx = _train(data.y, 100, 12)
    seeds = [np.random.SeedSequence(0, spawn_key=(s,)) for s in range(len(idx))]
    out = score_splits(_spec(), data, idx, seeds)
    fit = _fit(data, design, idx)
    pred = _predictions(design, fit, idx)[:, design.row_to_unique]  # (q, N)
    for j, a in enumerate(fit.quasi):
        test = np.setdiff1d(np.arange(data.n_rows), idx[a])
        wrong = (pred[j, test] != design.sign[test]).mean()
        assert out["error"][a] == pytest.approx(wrong, abs=1e-12)
    assert (out["separation"][fit.quasi] == separation.QUASI).all()
    assert not out["converged"][fit.quasi].any()


def test_the_all_rows_fit_goes_through_the_quasi_rule():
    """run.json's asymptotic error (score_full) of a quasi-separated data set is the
    lexicographic rule's error on all rows, not the Newton iterate's."""
    data = _quasi_data()
    design = get_design(data, "onehot_ref")
    whole = np.arange(data.n_rows)[None, :]
    fit = _fit(data, design, whole)
    assert fit.separation[0] == separation.QUASI
    pred = _predictions(design, fit, whole)[0, design.row_to_unique]
    expected = (pred != design.sign).mean()
    assert score_full(_spec(), data, np.random.SeedSequence(0)) == pytest.approx(expected)


def test_an_old_splits_file_without_separation_is_read_with_it_empty(tmp_path):
    """A splits.csv.gz written before the column existed reads, its separation empty."""
    old = ("task,model,family,m,split,error,separable,n_iter,converged\n"
           "t,lr,lr,2,0,0.5,True,3,False\nt,nb,nb,2,0,0.25,False,0,True\n")
    df = read_splits(tmp_path / "splits.csv", data=old.encode())
    assert list(df["separation"]) == ["", ""]
    assert summarize(df)["share_quasi"].isna().all()


def test_summary_shares_count_each_kind_per_model_and_size():
    """summary's share_* columns: the share of each separation among the model's splits."""
    df = pd.read_csv(io.StringIO(
        "task,model,family,m,split,error,separable,separation,n_iter,converged\n"
        "t,lr,lr,2,0,0.5,True,complete,3,False\nt,lr,lr,2,1,0.5,False,quasi,3,False\n"
        "t,lr,lr,2,2,0.5,False,quasi,3,False\nt,lr,lr,2,3,0.5,False,overlap,3,True\n"
        "t,nb,nb,2,0,0.2,False,,0,True\n"))
    out = summarize(df).set_index("model")
    assert out.loc["lr", ["share_overlap", "share_complete", "share_quasi"]].tolist() == [
        0.25, 0.25, 0.5]
    assert out.loc["nb", ["share_overlap", "share_complete", "share_quasi"]].isna().all()


# --------------------------------------------------------------------------- the batched steps
def _shipped(name: str, tmp_path_factory) -> Dataset:
    from nbvslr.data import load_task
    from nbvslr.data.dataset import DataSettings, TaskSpec

    settings = DataSettings(cache_dir=tmp_path_factory.mktemp("cache"), download=False)
    return load_task(TaskSpec(name), settings)


def _peel_cases(tmp_path_factory):
    """(data, coding, m) cases: the random quasi data in three codings, a random mixed
    design with continuous columns, and two shipped panels at sizes with quasi sets."""
    rng = np.random.default_rng(11)
    q = _quasi_data()
    mixed = Dataset(name="mx", title="mx", X=np.c_[rng.random((300, 3)), q.X[:300, :3] * 1.0],
                    y=q.y[:300], kind="mixed", n_values=(3, 4, 5))
    sick = _shipped("sick", tmp_path_factory)
    return [(q, "onehot_ref", 30), (q, "onehot_ref", 120), (q, "onehot", 60),
            (mixed, "x_onehot_ref", 40),
            (_shipped("adult-discrete", tmp_path_factory), "onehot_ref", 102),
            (sick, "x_onehot_ref" if sick.kind == "mixed" else "onehot_ref", 56)]


def test_peel_from_the_distinct_rows_equals_the_peel_of_the_stack(tmp_path_factory):
    """``pure_rows`` read from the design's distinct rows peels exactly the rows the pass
    over the gathered (S, m, P) stack peels (random and shipped designs)."""
    for data, coding, m in _peel_cases(tmp_path_factory):
        design = get_design(data, coding)
        idx = _train(data.y, m, 30)
        Z1, sign = design.rows(idx), design.sign[idx]
        extra = level_directions(data, coding)
        want = separation.pure_rows(Z1, sign, extra)
        got = separation.pure_rows(None, sign, extra,
                                   rows=(design.unique_Z1, design.row_to_unique[idx]))
        assert (got == want).all(), (data.name, coding, m)
        assert want.any(), (data.name, m)  # something is peeled: the case under test occurs


def _peel_by_rounds(Z1: np.ndarray, sign: np.ndarray, extra) -> np.ndarray:
    """The reference: the peel's rule in rounds, one split at a time (every pure column of
    the live rows, then its rows removed, until no column is pure)."""
    out = np.zeros(sign.shape, dtype=bool)
    for a in range(sign.shape[0]):
        A = sign[a, :, None] * (Z1[a] if extra is None else np.c_[Z1[a], Z1[a] @ extra])
        live = np.ones(A.shape[0], dtype=bool)
        while True:
            B = A[live]
            pure = ((B > 0).any(axis=0) != (B < 0).any(axis=0))
            hit = live & (A[:, pure] != 0).any(axis=1)
            if not hit.any():
                break
            live &= ~hit
        out[a] = ~live
    return out


def test_the_compiled_peel_equals_the_peel_by_rounds(tmp_path_factory):
    """``pure_rows`` (one queue of pure columns per split, compiled) peels exactly the rows
    that the rule applied in rounds peels (random and shipped designs)."""
    for data, coding, m in _peel_cases(tmp_path_factory):
        design = get_design(data, coding)
        idx = _train(data.y, m, 30)
        Z1, sign = design.rows(idx), design.sign[idx]
        extra = level_directions(data, coding)
        want = _peel_by_rounds(Z1, sign, extra)
        got = separation.pure_rows(None, sign, extra,
                                   rows=(design.unique_Z1, design.row_to_unique[idx]))
        assert (got == want).all(), (data.name, coding, m)
        assert want.any() and not want.all(), (data.name, m)  # the case under test occurs


def test_the_guess_steps_change_the_cost_not_the_answer(tmp_path_factory, monkeypatch):
    """``detect`` with the rest's first fit stopped after EARLY_STEPS and GUESS_STEPS (the
    guess read from one more step; the fits not guessed early resumed) returns every field
    as with that fit run to its end (the guess read from the rows below the floor), as with
    no early stop, and as with an early stop so early that many guesses fail and resume:
    the same kinds, rows, fits and directions; the stopped fit guesses right on most of the
    shipped splits that need a guess."""
    data = _shipped("adult-discrete", tmp_path_factory)
    design = get_design(data, "onehot_ref")
    idx = _train(data.y, 102, 60)
    Z1, sign = design.rows(idx), design.sign[idx]
    kw = dict(extra=level_directions(data, "onehot_ref"),
              rows=(design.unique_Z1, design.row_to_unique[idx]))
    capped = separation.detect(Z1, sign, **kw)
    others = []
    for early, cap in [(100, 100), (10, 10), (3, 10)]:
        monkeypatch.setattr(separation, "EARLY_STEPS", early)
        monkeypatch.setattr(separation, "GUESS_STEPS", cap)
        others.append(separation.detect(Z1, sign, **kw))
    for other in others:
        for field in ("code", "separated", "theta", "direction", "n_iter", "converged"):
            np.testing.assert_array_equal(getattr(capped, field), getattr(other, field),
                                          err_msg=field)
    guessed = capped.how == separation.GUESS
    assert guessed.sum() >= 10 and (capped.how == separation.LP).sum() <= guessed.sum() / 5


def test_detect_from_the_distinct_rows_equals_detect_on_the_stack(tmp_path_factory,
                                                                   monkeypatch):
    """Every field ``detect`` returns is the same with and without the distinct rows, and
    with them and no stack (with them, the direction problem reads them instead of the
    stack, and Newton's fits of the rests run on a stand-in of the stack where they read
    none of its entries: both kinds of fit occur)."""
    read = []

    def spy(*args, **kwargs):
        read.append(newton.reads_stack(*args, **kwargs))
        return read[-1]

    monkeypatch.setattr(separation, "reads_stack", spy)
    for data, coding, m in _peel_cases(tmp_path_factory)[:4]:
        design = get_design(data, coding)
        idx = _train(data.y, m, 30)
        Z1, sign = design.rows(idx), design.sign[idx]
        extra = level_directions(data, coding)
        a = separation.detect(Z1, sign, extra=extra)
        rows = (design.unique_Z1, design.row_to_unique[idx])
        b = separation.detect(Z1, sign, extra=extra, rows=rows)
        c = separation.detect(None, sign, extra=extra, rows=rows)
        for field in ("code", "separated", "theta", "direction", "n_iter", "converged", "how"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
            np.testing.assert_array_equal(getattr(a, field), getattr(c, field), err_msg=field)
    assert set(read) == {True, False}


def test_a_complete_set_starts_from_newtons_first_separating_iterate():
    """A complete set's theta is Newton's first separating iterate on all its rows, whether
    the peel cut it (refitted at the end) or Newton certified it first."""
    rng = np.random.default_rng(4)
    q = _quasi_data()
    cont = Dataset(name="c", title="c", X=rng.random((300, 4)), y=q.y[:300],
                   kind="continuous", n_values=())
    seen = set()
    for data, coding, m in [(q, "onehot_ref", 12), (cont, "x", 8)]:
        design, idx, Z1, sign = _stack(data, m, 60, coding)
        extra = level_directions(data, coding)
        found = separation.detect(Z1, sign, extra=extra)
        done = np.flatnonzero(found.code == separation.COMPLETE)
        assert done.size >= 10
        seen |= set(separation.pure_rows(Z1[done], sign[done], extra).any(axis=1).tolist())
        ref = fit_newton(Z1[done], sign[done], stop_when_separable=True)
        np.testing.assert_array_equal(found.theta[done], ref.theta)
        np.testing.assert_array_equal(found.n_iter[done], ref.n_iter)
    assert seen == {True, False}  # both ways occur


def _lex_train_per_split(design, directions, theta, idx, ties):
    """The reference: each split's training-row mistakes under the lexicographic rule, one
    split at a time (as count_mistakes_lex counted them before it worked by blocks)."""
    out = np.zeros(len(idx))
    for a in range(len(idx)):
        Zt = design.unique_Z1[design.row_to_unique[idx[a]]]
        tau = max(evaluate.TIE_RTOL * np.abs(theta[a]).sum(), 1e-300)
        tau_v = max(evaluate.DIRECTION_RTOL * np.abs(directions[a]).sum(), 1e-300)
        sv, st = Zt @ directions[a], Zt @ theta[a]
        sc = np.where(np.abs(sv) > tau_v, np.sign(sv) * 2.0 * tau, st)
        step = np.where(sc / tau >= 1.0, 1.0, np.where(sc / tau <= -1.0, -1.0, ties))
        out[a] = 0.5 * (idx.shape[1] - (design.sign[idx[a]] * step).sum())
    return out


@pytest.mark.parametrize("ties", [0.0, 1.0, -1.0])
def test_lex_training_mistakes_by_blocks_equal_the_per_split_count(monkeypatch, ties):
    """count_mistakes_lex's training-row count, read from the tiles of the distinct rows,
    equals the per-split count, on random rules (rows with a direction score of exactly 0
    included) and on the quasi fits of the random data."""
    monkeypatch.setattr(evaluate, "TILE", 64)  # several tiles of rows
    data = _quasi_data()
    design, idx, Z1, sign = _stack(data, 40, 50)
    rng = np.random.default_rng(2)
    P = Z1.shape[2]
    directions = rng.standard_normal((50, P)) * (rng.random((50, P)) < 0.3)
    directions[:10] = 0.0  # every row falls through to theta
    theta = rng.standard_normal((50, P))
    theta[:5] = 0.0  # every row a tie
    want = _lex_train_per_split(design, directions, theta, idx, ties)
    got = evaluate.count_mistakes_lex(design, directions, theta, idx, ties)[1]
    np.testing.assert_array_equal(got, want)
    fit = _fit(data, design, idx)
    assert fit.quasi.size >= 3
    q = fit.quasi
    want = _lex_train_per_split(design, fit.directions, fit.theta[q], idx[q], ties)
    got = evaluate.count_mistakes_lex(design, fit.directions, fit.theta[q], idx[q], ties)[1]
    np.testing.assert_array_equal(got, want)


def test_distinct_rows_cache_is_safe_across_threads():
    """Two threads peeling different designs at once (``--backend threading``) each get
    their own design's entries from the one-entry caches, never the other's."""
    import sys
    import threading

    from nbvslr.models.lr import separation as sep

    rng = np.random.default_rng(0)
    Us = [(rng.random((50 + 10 * k, 8)) < 0.3).astype(float) for k in range(2)]
    extras = [rng.standard_normal((8, 2)) for _ in range(2)]
    want = [sep._entries(U, e) for U, e in zip(Us, extras, strict=True)]
    want_nz = [np.count_nonzero(U) for U in Us]
    wrong = []

    def work(k):
        for _ in range(20000):
            got = sep._distinct_entries(Us[k], extras[k])
            nz = sep._distinct_nonzeros(Us[k])
            if got[0].shape != want[k][0].shape or got[3] != want[k][3] or \
                    nz[1].size != want_nz[k]:
                wrong.append(k)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: widen any window
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


def test_cut_complete_sets_certified_first_get_the_fields_of_the_fit_of_their_rest(
        monkeypatch):
    """A split the peel cut, tried on all rows first (no row seen in both classes), ends
    with every field ``detect`` returns as when its rest is fitted first (the order before)."""
    data = _quasi_data()
    design = get_design(data, "onehot_ref")
    extra = level_directions(data, "onehot_ref")
    tried = 0
    for m in (12, 30, 60):
        idx = _train(data.y, m, 80)
        Z1, sign = design.rows(idx), design.sign[idx]
        rows = (design.unique_Z1, design.row_to_unique[idx])
        repeated = separation._repeated_both(rows[1], sign)
        cut = separation.pure_rows(Z1, sign, extra).any(axis=1)
        new = separation.detect(Z1, sign, extra=extra, rows=rows)
        tried += int((cut & ~repeated & (new.code == separation.COMPLETE)).sum())
        with monkeypatch.context() as mp:  # every cut split to the fit of its rest
            mp.setattr(separation, "_repeated_both", lambda ids, s: np.ones(len(s), bool))
            old = separation.detect(Z1, sign, extra=extra, rows=rows)
        for field in ("code", "separated", "theta", "direction", "n_iter", "converged", "how"):
            np.testing.assert_array_equal(getattr(new, field), getattr(old, field),
                                          err_msg=f"{field} at m = {m}")
    assert tried >= 20


def test_repeated_both_finds_a_row_seen_in_both_classes():
    """``_repeated_both`` is True exactly where one distinct row is a training row of both
    classes (repeats within one class do not count)."""
    ids = np.array([[3, 1, 3, 2], [3, 1, 3, 2], [0, 0, 0, 5], [7, 2, 9, 4]])
    sign = np.array([[1, -1, -1, 1], [1, -1, 1, 1], [1, 1, 1, -1], [1, -1, 1, -1]], float)
    np.testing.assert_array_equal(separation._repeated_both(ids, sign),
                                  [True, False, False, False])


def test_rows_sharing_a_key_stay_distinct_rows():
    """One-hot rows of columns {2, 7} and {23} share the key sqrt(4) + sqrt(9) = sqrt(25):
    ``_distinct`` and the direction problem's separated rows keep both (the second row's
    constraint was dropped: 407 of adult (discrete)'s 17224 quasi splits over its grid)."""
    P = 30
    U = np.zeros((4, P))
    U[0, [2, 7]] = 1.0
    U[1, 23] = 1.0
    U[2, 5] = 1.0
    U[3, [2, 7]] = 1.0  # a repeat of row 0
    keys = separation._keys(U[:3])
    assert keys[0] == keys[1]  # the collision itself
    rows, back = separation._distinct(U)
    assert rows.shape[0] == 3 and np.array_equal(rows[back], U)
    ids = np.array([[0, 1, 2, 0]])
    sign = np.array([[1.0, 1.0, -1.0, 1.0]])
    A, ptr = separation._distinct_separated(U[:3], ids, keys, sign,
                                            np.array([[True, True, False, True]]))
    assert ptr.tolist() == [0, 2]
    assert sorted(map(tuple, A)) == sorted([tuple(U[0]), tuple(U[1])])
