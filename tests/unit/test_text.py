"""Text tasks: tokens and counts against CountVectorizer, NB and LR against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import BernoulliNB, MultinomialNB
from text_corpus import DOCS, Y

from nbvslr.data import BUILTIN_TASKS, text_task_names
from nbvslr.data.text import (
    count_matrix,
    load_sms_spam,
    parse_sms_spam,
    split_vocabulary,
)
from nbvslr.errors import ConfigError, DataError
from nbvslr.models.text.entry import fit_nb_text_multi
from nbvslr.models.text.fit import design_of, fit_lr_text, fit_nb_text, scores
from nbvslr.results.layout import SPLIT_COLUMNS


def _split_data(seed: int, S: int, m: int):
    rng = np.random.default_rng(seed)
    idx = np.stack([np.sort(np.r_[rng.choice(np.flatnonzero(Y == 1), m // 2, replace=False),
                                  rng.choice(np.flatnonzero(Y == 0), m - m // 2, replace=False)])
                    for _ in range(S)])
    return idx


def test_counts_match_count_vectorizer():
    """count_matrix gives CountVectorizer's default tokens, vocabulary order and counts."""
    X, vocab = count_matrix(DOCS)
    cv = CountVectorizer()
    ref = cv.fit_transform(DOCS)
    assert list(vocab) == list(cv.get_feature_names_out())
    assert (X != ref).nnz == 0


def test_training_vocabulary_is_the_training_documents_words():
    """vocabulary: training keeps exactly the words CountVectorizer finds in the training rows."""
    X, vocab = count_matrix(DOCS)
    idx = _split_data(0, 3, 6)
    keep = split_vocabulary(X, idx, "training", min_df=2)
    for s in range(3):
        cv = CountVectorizer(min_df=2).fit([DOCS[i] for i in idx[s]])
        assert [vocab[j] for j in np.flatnonzero(keep[s])] == list(cv.get_feature_names_out())
    assert split_vocabulary(X, idx, "all").all()
    assert (split_vocabulary(X, idx, "training", max_features=5).sum(axis=1) == 5).all()
    with pytest.raises(ConfigError):
        split_vocabulary(X, idx, "test")


@pytest.mark.parametrize("event", ["multinomial", "bernoulli"])
@pytest.mark.parametrize("smoothing", [1.0, 0.5])
def test_nb_matches_sklearn(event, smoothing):
    """Batched NB on counts = MultinomialNB/BernoulliNB per split (same vocabulary, prior)."""
    X, vocab = count_matrix(DOCS)
    idx = _split_data(1, 4, 8)
    keep = split_vocabulary(X, idx, "training")
    theta = fit_nb_text(X, Y, idx, keep, event=event, smoothing=smoothing)
    z = scores(design_of(X, event), theta)
    for s in range(4):
        cv = CountVectorizer(vocabulary=[vocab[j] for j in np.flatnonzero(keep[s])])
        Xs = cv.transform(DOCS)
        n1 = Y[idx[s]].sum()
        prior = [(8 - n1 + smoothing) / (8 + 2 * smoothing), (n1 + smoothing) / (8 + 2 * smoothing)]
        Model = MultinomialNB if event == "multinomial" else BernoulliNB
        nb = Model(alpha=smoothing, class_prior=prior, force_alpha=True).fit(Xs[idx[s]], Y[idx[s]])
        proba = 1.0 / (1.0 + np.exp(-z[s]))
        np.testing.assert_allclose(proba, nb.predict_proba(Xs)[:, 1], atol=1e-6)
        assert (np.where(z[s] > 0, 1, 0) == nb.predict(Xs)).all()


def test_lr_matches_sklearn():
    """Batched Newton-CG LR on counts = LogisticRegression(C) per split, to 1e-6 in probability."""
    X, vocab = count_matrix(DOCS)
    idx = _split_data(2, 3, 8)
    keep = split_vocabulary(X, idx, "training")
    theta, n_iter, converged = fit_lr_text(X, Y, idx, keep, C=1.0)
    assert converged.all()
    z = scores(X, theta)
    for s in range(3):
        cv = CountVectorizer(vocabulary=[vocab[j] for j in np.flatnonzero(keep[s])])
        Xs = cv.transform(DOCS)
        lr = LogisticRegression(C=1.0, tol=1e-12, max_iter=10000).fit(Xs[idx[s]], Y[idx[s]])
        np.testing.assert_allclose(1 / (1 + np.exp(-z[s])), lr.predict_proba(Xs)[:, 1], atol=1e-6)
        assert (np.where(z[s] > 0, 1, 0) == lr.predict(Xs)).all()


def test_unpenalised_lr_is_refused_in_one_line():
    """lr without C on text is refused with a one-line hint to set C, not faked."""
    X, _ = count_matrix(DOCS)
    idx = _split_data(3, 1, 6)
    with pytest.raises(ConfigError, match="set C:") as err:
        fit_lr_text(X, Y, idx, split_vocabulary(X, idx), C=None)
    assert "\n" not in str(err.value)


def test_sms_spam_is_shipped_verified_and_out_of_figure_1(tmp_path):
    """sms-spam reads from the shipped file (5,574 messages, 747 spam), not a Figure 1 task."""
    from nbvslr.data.dataset import DataSettings

    task = load_sms_spam(DataSettings(cache_dir=tmp_path, download=False))
    assert len(task.documents) == 5574 and int(task.y.sum()) == 747
    assert "sms-spam" in text_task_names() and "sms-spam" not in BUILTIN_TASKS


def test_sms_spam_parse_refuses_a_changed_file():
    """A line without the label and TAB is a one-line DataError, not a traceback."""
    with pytest.raises(DataError, match="line 2"):
        parse_sms_spam(b"ham\thello\nLabel SMS\n")


def test_sms_spam_run_in_memory_matches_sklearn_nb():
    """nbvslr.run on sms-spam (nothing written) gives the splits table and its summary;
    multinomial NB's error on a split = scikit-learn's there (its vocabulary: the split's
    training messages' words)."""
    import nbvslr
    from nbvslr.data.dataset import DataSettings
    from nbvslr.splits import draw_train_sets, split_seeds

    task = load_sms_spam(DataSettings(download=False))
    models = {"nb-multinomial": {"model": "nb"},
              "nb-bernoulli": {"model": "nb", "event": "bernoulli"},
              "lr": {"model": "lr", "C": 1.0}}
    res = nbvslr.run({"tasks": ["sms-spam"], "sizes": [10, 60], "splits": 2, "models": models},
                     progress=False)
    table, summary = res.splits, res.summary
    assert list(table.columns) == list(SPLIT_COLUMNS) and table["split"].tolist()[:2] == [0, 1]
    assert len(table) == 3 * 2 * 2 and table["converged"].all()
    assert set(summary["model"]) == set(models)
    idx = draw_train_sets(task.y, 60, split_seeds(0, "sms-spam", 60, range(2))[0])
    docs = np.array(task.documents, dtype=object)
    test = np.setdiff1d(np.arange(len(docs)), idx[1])
    cv = CountVectorizer().fit(docs[idx[1]])
    n1 = task.y[idx[1]].sum()
    nb = MultinomialNB(alpha=1.0, force_alpha=True, class_prior=[(60 - n1 + 1) / 62, (n1 + 1) / 62])
    nb.fit(cv.transform(docs[idx[1]]), task.y[idx[1]])
    expected = np.mean(nb.predict(cv.transform(docs[test])) != task.y[test])
    got = table.query("model == 'nb-multinomial' and m == 60 and split == 1")["error"].item()
    assert got == pytest.approx(expected, abs=1e-12)


def test_bad_text_options_are_one_line_errors():
    """min_df, max_features, smoothing and C out of range: one-line ConfigError each."""
    X, _ = count_matrix(DOCS)
    idx = _split_data(4, 2, 6)
    keep = split_vocabulary(X, idx)
    for call in (lambda: split_vocabulary(X, idx, min_df=0),
                 lambda: split_vocabulary(X, idx, max_features=0),
                 lambda: fit_nb_text(X, Y, idx, keep, smoothing=0.0),
                 lambda: fit_nb_text(X, Y, idx, keep, event="poisson"),
                 lambda: fit_lr_text(X, Y, idx, keep, C=-1.0)):
        with pytest.raises(ConfigError) as err:
            call()
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("event", ["multinomial", "bernoulli"])
@pytest.mark.parametrize("frac", [0.2, 0.9])  # the sparse and the dense formulas
def test_a_split_keeping_no_word_is_its_prior_without_nan(event, frac):
    """A split whose vocabulary is empty (chance, min_df > 1 at small m) has every word weight
    0 and its prior's intercept: finite, for two classes (either formula) and for K."""
    X, _ = count_matrix(DOCS)
    idx = _split_data(2, 6, 6)
    keep = np.zeros((6, X.shape[1]), dtype=bool)
    keep[1:, : max(1, int(frac * X.shape[1]))] = True  # split 0 keeps nothing
    with np.errstate(all="raise"):
        theta = fit_nb_text(X, Y, idx, keep, event=event)
    n1 = Y[idx[0]].sum()
    assert np.isfinite(theta).all() and (theta[0, :-1] == 0).all()
    assert theta[0, -1] == pytest.approx(np.log((n1 + 1) / (6 - n1 + 1)))
    y3 = np.arange(len(DOCS)) % 3
    idx3 = np.stack([np.r_[np.flatnonzero(y3 == 0)[:2], np.flatnonzero(y3 == 1)[:2],
                           np.flatnonzero(y3 == 2)[:2]]] * 6)
    with np.errstate(all="raise"):
        theta3 = fit_nb_text_multi(X, y3, idx3, keep, 3, event=event)
    assert np.isfinite(theta3).all() and (theta3[0, :, :-1] == 0).all()


@pytest.mark.parametrize("smoothing", [1e-20, 1e-300])
def test_bernoulli_nb_with_tiny_smoothing_stays_finite(smoothing):
    """A word in every training document of a class has p = (n + l) / (n + 2 l), 1 in floating
    point for a tiny l: log(1 - p) is then taken exactly, log(l / (n + 2 l)), not -inf (whose
    differences made NaN weights and scores)."""
    docs = ["spam offer now", "spam deal now", "hello friend", "hello there", "spam hello"]
    X, vocab = count_matrix(docs)
    y = np.array([1, 1, 0, 0, 1])
    idx = np.array([[0, 1, 2, 3]])
    keep = np.ones((1, X.shape[1]), dtype=bool)
    for frac_keep in (keep, keep & (np.arange(X.shape[1]) < 2)):  # dense, then sparse formulas
        with np.errstate(all="raise"):
            theta = fit_nb_text(X, y, idx, frac_keep, event="bernoulli", smoothing=smoothing)
        assert np.isfinite(theta).all()
    theta = fit_nb_text(X, y, idx, keep, event="bernoulli", smoothing=smoothing)
    l, n = smoothing, 2.0
    j = vocab.index("spam")  # in both class-1 documents, in no class-0 one
    want = (np.log(n + l) - np.log(l)) - (np.log(l) - np.log(n + l))  # log p/(1-p), both classes
    assert theta[0, j] == pytest.approx(want, rel=1e-12)
    y3 = np.array([1, 1, 0, 0, 2])
    theta3 = fit_nb_text_multi(X, y3, np.array([[0, 1, 2, 3, 4]]), keep, 3, event="bernoulli",
                               smoothing=smoothing)
    assert np.isfinite(theta3).all()
