"""Text tasks as a config task kind: validation, registry entries, a CSV column of documents,
per-split vocabularies, and the runner's numbers against scikit-learn."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import BernoulliNB, MultinomialNB
from text_corpus import DOCS as CORPUS

import nbvslr
from nbvslr.config import parse_config
from nbvslr.data import load_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.errors import ConfigError, DataError
from nbvslr.models import ModelSpec, resolve_options, score_splits
from nbvslr.models.registry import lookup
from nbvslr.models.text.entry import PAPER_MAX_FEATURES, MulticlassTextNB, TextLR, TextNB
from nbvslr.splits import draw_train_sets, split_seeds

DOCS = [
    *CORPUS,
    "Win a brand new phone, text now to claim",
    "Lunch at noon? The usual place",
]
LABELS = ["spam", "ham"] * 7


@pytest.fixture
def sms_csv(tmp_path):
    """A CSV of 14 messages: an id, the label, the text (with commas, quoted)."""
    path = tmp_path / "sms.csv"
    pd.DataFrame({"id": range(len(DOCS)), "label": LABELS, "message": DOCS}).to_csv(
        path, index=False)
    return path


def _config(tasks, models, sizes=(4, 8), splits=3, **extra):
    return {"tasks": tasks, "sizes": list(sizes), "splits": splits, "models": models, **extra}


def _one_line_error(raw):
    with pytest.raises(ConfigError) as err:
        parse_config(raw, source="c.yaml")
    assert "\n" not in str(err.value)
    return str(err.value)


def test_registry_has_text_entries():
    """lookup("nb"/"lr", "text") are the text entries; K > 2 classes too."""
    assert isinstance(lookup("nb", "text"), TextNB)
    assert isinstance(lookup("lr", "text"), TextLR)
    assert isinstance(lookup("nb", "text", multiclass=True), MulticlassTextNB)
    assert resolve_options("nb", "nb", {"event": "bernoulli"})["event"] == "bernoulli"
    assert resolve_options("lr", "lr", {})["max_features"] is None


@pytest.mark.parametrize("task, models, words", [
    ({"name": "sms-spam", "features": {"min_df": 0}}, {"nb": {}}, "features.min_df"),
    ({"name": "sms-spam", "features": {"max_features": 0}}, {"nb": {}}, "features.max_features"),
    ({"name": "sms-spam", "features": {"vocabulary": "test"}}, {"nb": {}}, "features.vocabulary"),
    ({"name": "sms-spam", "features": {"kind": "continuous"}}, {"nb": {}}, "features.kind"),
    ({"name": "sms-spam", "features": {"columns": ["a"]}}, {"nb": {}}, "features.columns"),
    ({"name": "sms-spam", "target": {"column": "a"}}, {"nb": {}}, "target"),
    ("sms-spam", {"nb": {"event": "poisson"}}, "event"),
    ("sms-spam", {"nb": {"smoothing": 0}}, "smoothing"),
    ("sms-spam", {"lr": {"C": -1}}, "'C'"),
    ("sms-spam", {"lr": {}}, "set C:"),
    # the cap is no way out on K > 2 classes (refused there too): the advice says so
    ("sms-spam", {"lr": {}}, "or, on a task of two classes, max_features: 200 on this model"),
    ({"name": "sms-spam", "features": {"vocabulary": "all"}}, {"lr": {}}, "max_features: 200"),
    ({"name": "sms-spam", "features": {"vocabulary": "all", "max_features": 5000}}, {"lr": {}},
     f"at most {PAPER_MAX_FEATURES} words"),
    ("pima", {"nb": {"event": "bernoulli"}}, "text tasks only"),
    ("pima", {"lr": {"max_features": 10}}, "text tasks only"),
    ("sms-spamm", {"nb": {}}, "did you mean 'sms-spam'"),
    ({"name": "t", "source": {"text": "sms"}}, {"nb": {}}, "source.text"),
    ({"name": "t", "source": {"csv": "x.csv"}, "features": {"kind": "text"}}, {"nb": {}},
     "features.column"),
    ({"name": "t", "source": {"csv": "x.csv"}, "features": {"kind": "text", "column": "m",
                                                            "drop": ["a"]}}, {"nb": {}},
     "features.drop"),
    # a column of documents (or a vocabulary option) without kind: text: the fix is named
    ({"name": "t", "source": {"csv": "x.csv"}, "features": {"column": "m"}}, {"nb": {}},
     "features.column: applies to a column of documents only ('m'); add kind: text"),
    ({"name": "t", "source": {"csv": "x.csv"}, "features": {"kind": "discrete", "min_df": 2}},
     {"nb": {}}, "features.min_df: applies to a column of documents only (2); add kind: text"),
])
def test_bad_text_configs_are_one_line_errors(task, models, words):
    """Each text option out of range, each combination a text task cannot fit: one line."""
    assert words in _one_line_error(_config([task], models))


def test_a_text_config_without_models_runs_nb_and_l2_lr(sms_csv):
    """A first text config (features: {kind: text}, no models:) is not refused: its default
    models are nb and lr with C = 1, and it runs."""
    task = {"name": "msgs", "source": {"csv": str(sms_csv)},
            "target": {"column": "label", "positive": ["spam"]},
            "features": {"kind": "text", "column": "message"}}
    config = parse_config({"tasks": [task], "sizes": [4, 6], "splits": 3})
    assert [(m.name, m.family, m.options.get("C")) for m in config.models] == [
        ("nb", "nb", None), ("lr", "lr", 1.0)]
    res = nbvslr.run(config, progress=False)
    assert sorted(set(res.summary["model"])) == ["lr", "nb"]
    mixed = {"tasks": [task, "lenses"], "sizes": [4, 6], "splits": 3}
    assert "set C: (e.g. C: 1)" in _one_line_error(mixed)


def test_paper_grid_refused_for_a_text_task():
    assert "no grid for the text task" in _one_line_error(
        {"tasks": ["sms-spam"], "models": {"nb": {}}})


def test_paper_lr_allowed_on_a_shared_capped_vocabulary():
    """C: null on text: a model's own max_features, or the task's vocabulary: all with a cap."""
    parse_config(_config(["sms-spam"], {"lr": {"max_features": 200}}))
    parse_config(_config([{"name": "sms-spam", "features": {"vocabulary": "all",
                                                            "max_features": 200}}], {"lr": {}}))
    parse_config(_config([{"name": "s200", "source": {"text": "sms-spam"},
                           "features": {"kind": "text", "vocabulary": "all",
                                        "max_features": PAPER_MAX_FEATURES}}], {"lr": {}}))


def _sklearn_errors(docs, y, idx):
    """Test errors of MultinomialNB, BernoulliNB and LogisticRegression(C=1) on each split,
    CountVectorizer's vocabulary the split's training documents' words."""
    docs = np.asarray(docs, dtype=object)
    out = {"nb": [], "nb-bernoulli": [], "lr-C1": []}
    for rows in idx:
        test = np.setdiff1d(np.arange(len(docs)), rows)
        cv = CountVectorizer().fit(docs[rows])
        Xtr, Xte = cv.transform(docs[rows]), cv.transform(docs[test])
        m, n1 = len(rows), int(y[rows].sum())
        prior = [(m - n1 + 1) / (m + 2), (n1 + 1) / (m + 2)]
        for name, model in (("nb", MultinomialNB(alpha=1.0, force_alpha=True, class_prior=prior)),
                            ("nb-bernoulli", BernoulliNB(alpha=1.0, force_alpha=True,
                                                         class_prior=prior)),
                            ("lr-C1", LogisticRegression(C=1.0, tol=1e-12, max_iter=10000))):
            out[name].append(np.mean(model.fit(Xtr, y[rows]).predict(Xte) != y[test]))
    return out


def test_csv_text_column_run_matches_sklearn(sms_csv):
    """A CSV's text column (other columns ignored) through nbvslr.run: every split's error of
    multinomial NB, Bernoulli NB and LR (C = 1) is scikit-learn's on that split."""
    task = {"name": "sms", "source": {"csv": str(sms_csv)},
            "target": {"column": "label", "positive": ["spam"]},
            "features": {"kind": "text", "column": "message"}}
    models = {"nb": {}, "nb-bernoulli": {"model": "nb", "event": "bernoulli"},
              "lr-C1": {"model": "lr", "C": 1.0}}
    res = nbvslr.run(_config([task], models, sizes=(6,), splits=4), progress=False)
    y = (np.array(LABELS) == "spam").astype(int)
    idx = draw_train_sets(y, 6, split_seeds(0, "sms", 6, range(4))[0])
    expected = _sklearn_errors(DOCS, y, idx)
    for name, errors in expected.items():
        got = res.splits.query("model == @name").sort_values("split")["error"].to_numpy()
        np.testing.assert_allclose(got, errors, atol=1e-12, err_msg=name)


def test_csv_text_dataset_ignores_other_columns(sms_csv):
    spec = TaskSpec("sms", source={"csv": str(sms_csv)}, target={"column": "label"},
                    features={"kind": "text", "column": "message", "min_df": 2})
    data = load_task(spec, DataSettings(download=False))
    assert data.kind == "text" and data.X.shape == (14, len(data.feature_names))
    assert "80086" in data.feature_names and "id" not in data.feature_names
    assert data.text_options == {"vocabulary": "training", "min_df": 2, "max_features": None}
    assert data.notes["positive"] == ["spam"]  # the second value in text order


def _with_test_word(tmp_path, word):
    """The CSV of DOCS with ``word`` appended to message 13 (never a training row below)."""
    docs = list(DOCS)
    docs[13] = docs[13] + " " + word
    path = tmp_path / f"sms-{word or 'none'}.csv"
    pd.DataFrame({"label": LABELS, "message": docs}).to_csv(path, index=False)
    spec = TaskSpec("sms", source={"csv": str(path)}, target={"column": "label"},
                    features={"kind": "text", "column": "message"})
    return load_task(spec, DataSettings(download=False))


@pytest.mark.parametrize("options", [{"event": "multinomial"}, {"event": "bernoulli"}])
def test_a_word_only_in_test_documents_changes_no_fit(tmp_path, options):
    """vocabulary: training: a word found only in a test document weighs 0 in every split's
    fit, every other weight is unchanged, and so is every test error."""
    plain = _with_test_word(tmp_path, "")
    extra = _with_test_word(tmp_path, "zyzzyva")
    col = extra.feature_names.index("zyzzyva")
    assert "zyzzyva" not in plain.feature_names
    idx = np.array([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11], [0, 3, 4, 7, 8, 11]])
    for family, opts in (("nb", options), ("lr", {"C": 1.0})):
        spec = ModelSpec(family, family, resolve_options(family, family, opts))
        fits = []
        for data in (plain, extra):
            entry = lookup(family, "text")
            fits.append(entry.fit(data, None, idx, spec.options, [None] * 3).theta)
        assert (fits[1][:, col] == 0).all()
        np.testing.assert_array_equal(np.delete(fits[1], col, axis=1), fits[0])
        seeds = split_seeds(0, "sms", 6, range(3))[1]
        a = score_splits(spec, plain, idx, seeds)["error"]
        b = score_splits(spec, extra, idx, seeds)["error"]
        np.testing.assert_array_equal(a, b)


def test_three_class_text_nb_matches_sklearn(tmp_path):
    """K = 3 classes: NB's error on each split = MultinomialNB's with the prior
    (n_k + 1) / (m + 3); lr with C = scikit-learn's multinomial LogisticRegression on the
    split's words; the paper's unpenalised lr on it is refused in one line."""
    labels = ["a", "b", "c"] * 6
    rng = np.random.default_rng(1)
    words = {"a": "apple pear plum", "b": "car bus train", "c": "red blue green"}
    docs = [" ".join(rng.choice(words[c].split() + ["the", "of", "and"], size=6)) for c in labels]
    path = tmp_path / "three.csv"
    pd.DataFrame({"label": labels, "text": docs}).to_csv(path, index=False)
    task = {"name": "three", "source": {"csv": str(path)}, "target": {"column": "label"},
            "features": {"kind": "text", "column": "text"}}
    res = nbvslr.run(_config([task], {"nb": {}}, sizes=(6,), splits=3), progress=False)
    y = np.repeat([[0, 1, 2]], 6, axis=0).ravel()
    idx = draw_train_sets(y, 6, split_seeds(0, "three", 6, range(3))[0])
    D = np.asarray(docs, dtype=object)
    for s, rows in enumerate(idx):
        test = np.setdiff1d(np.arange(len(D)), rows)
        cv = CountVectorizer().fit(D[rows])
        prior = (np.bincount(y[rows], minlength=3) + 1) / (6 + 3)
        nb = MultinomialNB(alpha=1.0, force_alpha=True, class_prior=prior)
        nb.fit(cv.transform(D[rows]), y[rows])
        expected = np.mean(nb.predict(cv.transform(D[test])) != y[test])
        got = res.splits.loc[res.splits["split"] == s, "error"].item()
        assert got == pytest.approx(expected, abs=1e-12)
    res = nbvslr.run(_config([task], {"lr": {"C": 1.0}}, sizes=(6,), splits=3), progress=False)
    for s, rows in enumerate(idx):
        test = np.setdiff1d(np.arange(len(D)), rows)
        cv = CountVectorizer().fit(D[rows])
        lr = LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000)
        lr.fit(cv.transform(D[rows]), y[rows])
        expected = np.mean(lr.predict(cv.transform(D[test])) != y[test])
        got = res.splits.loc[res.splits["split"] == s, "error"].item()
        assert got == pytest.approx(expected, abs=1e-12)
    paper = {"lr": {"max_features": 20}}  # the paper's rule on a shared vocabulary
    with pytest.raises(ConfigError, match="more than two classes") as err:
        nbvslr.run(_config([task], paper, sizes=(6,), splits=3), progress=False)
    assert "\n" not in str(err.value)


def test_api_task_from_frame_text_column():
    """nbvslr.Task.from_frame(kind="text") runs a DataFrame's column of documents: the same
    errors as the CSV of the same table."""
    df = pd.DataFrame({"label": LABELS, "message": DOCS, "other": range(len(DOCS))})
    task = nbvslr.Task.from_frame(df, target="label", name="sms", positive="spam", kind="text",
                                  columns=["message"], text={"min_df": 1})
    assert task.to_config()["features"] == {"kind": "text", "column": "message", "min_df": 1}
    res = nbvslr.run(_config([task], {"nb": {}}, sizes=(6,), splits=4), progress=False)
    y = (np.array(LABELS) == "spam").astype(int)
    idx = draw_train_sets(y, 6, split_seeds(0, "sms", 6, range(4))[0])
    np.testing.assert_allclose(res.splits.sort_values("split")["error"].to_numpy(),
                               _sklearn_errors(DOCS, y, idx)["nb"], atol=1e-12)
    with pytest.raises(ConfigError, match="one column of documents"):
        nbvslr.Task.from_frame(df, target="label", name="sms", kind="text")


def test_k_class_text_fits_plan_their_class_weights():
    """The memory plan of K-class text NB and LR counts each split's (K, V + 1) weights:
    more classes over the same words plan more bytes a split."""
    from nbvslr.data.text import check_text_options, text_dataset
    from nbvslr.data.texttask import TextTask
    from nbvslr.models.text.entry import CLASS_WORD_BYTES, SCORE_BYTES, MulticlassTextLR

    docs = tuple(f"word{k} other{k % 3} shared" for k in range(12))

    def planned(entry, K):
        task = TextTask("t", docs, np.arange(12) % K, tuple(f"c{k}" for k in range(K)))
        data = text_dataset(task, check_text_options({}))
        opts = resolve_options(entry.name, entry.name, {"C": 1.0} if entry.name == "lr" else {})
        return data.n_features, entry.sparse_bytes(data, opts)[0]

    for entry in (MulticlassTextNB(), MulticlassTextLR()):
        V, three = planned(entry, 3)
        _, four = planned(entry, 4)
        # one more class: its scores of the 12 documents and its weights of the V words
        assert four - three == SCORE_BYTES * 12 + CLASS_WORD_BYTES * V


def _csv_task(path, **features):
    return {"name": "sms", "source": {"csv": str(path)},
            "target": {"column": "label", "positive": ["spam"]},
            "features": {"kind": "text", "column": "message", **features}}


def test_min_df_above_every_words_document_count_is_refused(sms_csv):
    """min_df that no word reaches in the whole task: a one-line DataError, not a run of
    constant classifiers (every split's vocabulary empty)."""
    with pytest.raises(DataError, match=r"features.min_df = 15 keeps no word: none is in more "
                                        r"than \d+ of its 14 documents; lower min_df") as err:
        nbvslr.run(_config([_csv_task(sms_csv, min_df=15)], {"nb": {}}), progress=False)
    assert "\n" not in str(err.value)


def test_min_df_above_the_smallest_training_set_is_refused(sms_csv):
    """vocabulary: training keeps words of min_df of m training documents: none when
    m < min_df, refused before any fit; vocabulary: all counts over the task and runs."""
    with pytest.raises(DataError, match=r"min_df = 5 keeps no word at m = 4 .*use sizes of at "
                                        r"least 5, a lower min_df, or vocabulary: all") as err:
        nbvslr.run(_config([_csv_task(sms_csv, min_df=5)], {"nb": {}}), progress=False)
    assert "\n" not in str(err.value)
    res = nbvslr.run(_config([_csv_task(sms_csv, min_df=2, vocabulary="all")], {"nb": {}},
                             sizes=(2,)), progress=False)
    assert res.splits["error"].notna().all()


def test_documents_without_a_word_are_refused(tmp_path):
    path = tmp_path / "blank.csv"
    pd.DataFrame({"label": LABELS, "message": ["", "a", "1 2", "!!"] * 3 + ["", ""]}).to_csv(
        path, index=False)
    with pytest.raises(DataError, match=r"sms: no document holds a word .* in its 14 "
                                        "documents; check the source") as err:
        nbvslr.run(_config([_csv_task(path)], {"nb": {}}), progress=False)
    assert "\n" not in str(err.value)


def test_a_split_that_keeps_no_word_is_its_prior_without_warnings(tmp_path):
    """With min_df: 2 a split of two documents sharing no word keeps no word: each NB event
    and LR are then the class prior (one of each class: a tie, half an error), no log(0)
    warning, no NaN."""
    path = tmp_path / "two.csv"
    docs = ["alpha beta", "gamma delta", "alpha gamma", "beta delta", "alpha delta", "beta gamma"]
    pd.DataFrame({"label": ["ham", "spam"] * 3, "message": docs}).to_csv(path, index=False)
    models = {"nb": {}, "nbb": {"model": "nb", "event": "bernoulli"},
              "lr": {"model": "lr", "C": 1.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = nbvslr.run(_config([_csv_task(path, min_df=2)], models, sizes=(2,), splits=6),
                         progress=False)
    assert res.splits["error"].notna().all()
    # a pair of one ham and one spam sharing a word keeps it; one sharing none is a tie
    assert (res.splits["error"] == 0.5).any()


def test_three_class_text_run_with_splits_keeping_no_word_has_no_nan(tmp_path):
    """K = 3 classes, min_df: 2, m = 3 (one document per class, sharing no word): every split
    keeps no word; each model is then its prior (a three-way tie: 2/3 of an error), never
    NaN (a NaN error was written to the checkpoint and then refused as a corrupt one)."""
    path = tmp_path / "k3.csv"
    docs = ["alpha beta", "gamma delta", "epsilon zeta", "alpha eta", "gamma theta",
            "epsilon iota", "beta kappa", "delta lambda", "zeta mu"]
    pd.DataFrame({"label": list("abc") * 3, "message": docs}).to_csv(path, index=False)
    task = {"name": "k3", "source": {"csv": str(path)}, "target": {"column": "label"},
            "features": {"kind": "text", "column": "message", "min_df": 2}}
    models = {"nb": {}, "nbb": {"model": "nb", "event": "bernoulli"},
              "lr": {"model": "lr", "C": 1.0}}
    res = nbvslr.run(_config([task], models, sizes=(3,), splits=5), progress=False,
                     out=tmp_path / "out")
    np.testing.assert_allclose(res.splits["error"], 2 / 3)


def test_api_text_task_misuse_is_a_config_error():
    """Python API: text= that is no mapping, and from_arrays(kind='text') (numbers, no
    documents): a one-line ConfigError naming the fix, not a TypeError."""
    df = pd.DataFrame({"label": LABELS, "message": DOCS})
    with pytest.raises(ConfigError, match=r"text= is int, not a mapping .*text=\{'min_df': 2\}"):
        nbvslr.Task.from_frame(df, target="label", name="sms", kind="text", columns=["message"],
                               text=5)
    with pytest.raises(ConfigError, match=r"from_arrays makes a task of numeric features.*"
                                          r"Task.from_frame\(df, kind='text'"):
        nbvslr.Task.from_arrays(np.eye(4), np.array([0, 1, 0, 1]), name="x", kind="text")
