"""Text tasks: documents, their tokens and their word counts, held sparse.

Tokens are those of scikit-learn's ``CountVectorizer`` with its defaults: the document
lowercased, then every match of ``(?u)\\b\\w\\w+\\b`` (words of two or more word characters;
no stop words, no accent stripping). The vocabulary of a task is every token of every
document in sorted order, so column ``j`` of ``count_matrix`` is the ``j``-th word as
``CountVectorizer(vocabulary=...)`` would number it.

A split may see only part of it: ``vocabulary: training`` (the default) keeps the words of
the split's training documents, ``all`` every word of the task; ``min_df`` (documents) and
``max_features`` (the most frequent words) then prune it, counted over the same documents.
``split_vocabulary`` gives that choice as a mask (S, V) over the task's words, so one sparse
count matrix (N, V) serves every split and no (S, m, V) stack is ever made.

Built-in text tasks (none of them a Figure 1 panel; sources of the registry
``nbvslr.data.registry``): ``sms-spam``, the SMS Spam Collection (UCI 228, CC BY 4.0), shipped
in ``nbvslr/data/uci/sms-spam/`` (read here, ``load_sms_spam``); ``20news`` (20 classes) and
``20news-crypt-graphics`` (sci.crypt = 1 against comp.graphics), from the 20 Newsgroups
archive downloaded on first use (``nbvslr.data.newsgroups``). A folder of files, one
sub-folder per class, is a task too (``nbvslr.data.textfolder``). ``text_dataset`` makes a
task's ``Dataset`` of kind ``text``: its ``X`` the sparse counts, its ``text_options`` the
vocabulary options (``check_text_options``) that every fit applies per split.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.recipes import DataFile
from nbvslr.data.sources import read_verified
from nbvslr.data.texttask import TextTask
from nbvslr.errors import ConfigError, DataError, check_known_keys, setting_error

#: ``CountVectorizer``'s default ``token_pattern``.
TOKEN_PATTERN = re.compile(r"(?u)\b\w\w+\b")

#: The SMS Spam Collection's one file (sha256 of the original, uncompressed bytes). Its
#: download location is the public copy SOURCES.md names; that copy carries a header line,
#: so a download is refused by the checksum: the shipped file or a mirror is the source.
SMS_SPAM_FILE = DataFile(
    "SMSSpamCollection",
    "7d039a24a6083ed9ef0f806ebad56bbb976e3aeb8de05669173bfdc4996c239d",
    "github",
    "hamzaaacodes/sms-spam-collection/f3e73e1e74e6330b62d1ee1983bba2a063184c26/SMSSpamCollection",
)

VOCABULARIES = ("training", "all")

#: The vocabulary options of a text task's ``features:`` (besides ``kind: text`` and a
#: CSV's ``column``): name, default, valid values, meaning. The one table the check below,
#: docs/options.md and ``nbvslr run --help`` read.
TEXT_FEATURES: tuple[tuple[str, Any, str, str], ...] = (
    ("vocabulary", "training", "one of 'training', 'all'",
     "`training`: each split's words are those of its training documents (no test "
     "document's words enter a fit); `all`: every word of the task, one vocabulary for every "
     "split"),
    ("min_df", 1, "an integer >= 1",
     "keep a word found in at least this many of those documents"),
    ("max_features", None, "an integer >= 1, or null (every word)",
     "then keep only this many words, the most frequent in those documents (ties: the sorted "
     "vocabulary's order)"),
)
TEXT_DEFAULTS: Mapping[str, Any] = {name: default for name, default, _, _ in TEXT_FEATURES}

#: ``split_vocabulary`` sums a split's rows through a dense selector from m >= N / this.
DENSE_SELECTOR = 8


def tokenize(document: str) -> list[str]:
    """The tokens of one document, as ``CountVectorizer()`` makes them."""
    return TOKEN_PATTERN.findall(document.lower())


def count_matrix(documents: tuple[str, ...] | list[str]) -> tuple[sp.csr_matrix, tuple[str, ...]]:
    """The word counts of ``documents`` over their sorted vocabulary.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (N, V), float64
        ``X[i, j]`` = how often word ``j`` occurs in document ``i`` (sorted indices).
    vocabulary : tuple of str
        The V words, sorted (the column order ``CountVectorizer`` gives them).
    """
    tokens = [tokenize(d) for d in documents]
    vocabulary = tuple(sorted({t for doc in tokens for t in doc}))
    column = {w: j for j, w in enumerate(vocabulary)}
    indptr = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum([len(doc) for doc in tokens], out=indptr[1:])
    indices = np.fromiter((column[t] for doc in tokens for t in doc), dtype=np.int64,
                          count=int(indptr[-1]))
    X = sp.csr_matrix((np.ones(indices.shape[0]), indices, indptr),
                      shape=(len(tokens), len(vocabulary)))
    X.sum_duplicates()  # adds repeated words and sorts each row's indices
    return X, vocabulary


def split_vocabulary(
    X: sp.csr_matrix,
    idx: np.ndarray,
    vocabulary: str = "training",
    min_df: int = 1,
    max_features: int | None = None,
) -> np.ndarray:
    """The words each split keeps, as a mask over the task's V words.

    Parameters
    ----------
    X : csr_matrix of shape (N, V)
        The task's counts (``count_matrix``).
    idx : ndarray of shape (S, m)
        The training rows of S splits.
    vocabulary : {"training", "all"}
        Count document frequencies over each split's training documents, or over all N.
    min_df : int
        Keep a word found in at least ``min_df`` of those documents.
    max_features : int or None
        Then keep the ``max_features`` words of most occurrences in those documents (ties
        broken by the sorted vocabulary's order, a stable sort).

    Returns
    -------
    keep : ndarray of shape (S, V), bool
    """
    check_text_options({"vocabulary": vocabulary, "min_df": min_df,
                        "max_features": max_features})
    S = idx.shape[0]
    V = X.shape[1]
    present = X.copy()
    present.data[:] = 1.0
    if vocabulary == "all":
        df = np.broadcast_to(np.asarray(present.sum(axis=0)).ravel(), (S, V))
        tf = np.broadcast_to(np.asarray(X.sum(axis=0)).ravel(), (S, V))
    else:
        # Sums over each split's training rows (of counts: exact in any order). Small
        # training sets: an (S, N) sparse selector times X (O(the splits' non-zeros)). Large
        # ones (m >= N / DENSE_SELECTOR): X^T (V, N) times the selector held dense (N, S),
        # O(nonzeros of X x S) with a contiguous inner loop, where the sparse product would
        # sort nearly S x V entries.
        m = idx.shape[1]
        if m * DENSE_SELECTOR >= X.shape[0]:
            sel = np.zeros((X.shape[0], S))
            sel[idx, np.arange(S)[:, None]] = 1.0
            df = (present.T.tocsr() @ sel).T
            tf = (X.T.tocsr() @ sel).T if max_features is not None else None
        else:
            sel = sp.csr_matrix((np.ones(S * m), idx.ravel(), np.arange(0, S * m + 1, m)),
                                shape=(S, X.shape[0]))
            df = (sel @ present).toarray()
            tf = (sel @ X).toarray() if max_features is not None else None
    keep = df >= max(min_df, 1)
    if max_features is not None:
        over = np.flatnonzero(keep.sum(axis=1) > max_features)
        if over.size:
            # per split, the max_features kept words of most occurrences (stable: ties by
            # the sorted vocabulary's order)
            order = np.argsort(-np.where(keep[over], tf[over], -1.0), axis=1, kind="stable")
            keep[over] = False
            keep[over[:, None], order[:, :max_features]] = True
    return keep


def parse_sms_spam(data: bytes) -> TextTask:
    """The SMS Spam Collection from its file's bytes: one message per line, ``ham`` or
    ``spam``, a TAB, the text (UTF-8). Spam is class 1."""
    documents, labels = [], []
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        label, tab, text = line.partition("\t")
        if not tab or label not in ("ham", "spam"):
            raise DataError(f"SMSSpamCollection line {number}: expected 'ham' or 'spam', a TAB, "
                            "the message; the file is not the original")
        documents.append(text)
        labels.append(label == "spam")
    return TextTask("sms-spam", tuple(documents), np.asarray(labels, dtype=np.int64),
                    ("ham", "spam"))


def load_sms_spam(settings: DataSettings | None = None) -> TextTask:
    """The built-in task ``sms-spam`` (spam vs ham), its file verified by sha256."""
    data, _ = read_verified("sms-spam", SMS_SPAM_FILE, settings or DataSettings())
    return parse_sms_spam(data)


def _valid(name: str, value: Any) -> bool:
    if name == "vocabulary":
        return value in VOCABULARIES
    if value is None and name == "max_features":
        return True
    return not isinstance(value, bool) and isinstance(value, int) and value >= 1


def check_text_options(features: Mapping[str, Any]) -> dict[str, Any]:
    """The vocabulary options of a text task's ``features:`` (``TEXT_FEATURES``), validated
    and completed with their defaults; other keys are ignored. ``ConfigError`` (one line)
    for a value out of range."""
    out = {**TEXT_DEFAULTS, **{k: features[k] for k in TEXT_DEFAULTS if k in features}}
    for name, _, valid, _ in TEXT_FEATURES:
        if not _valid(name, out[name]):
            raise ConfigError(f"features.{name} = {out[name]!r} is invalid; it must be {valid}")
    return out


def validate_text_features(features: Mapping[str, Any] | None, column: bool,
                           task: str = "a built-in text task") -> None:
    """Check a text task's ``features:`` before any data is read: ``kind: text``, the
    vocabulary options, and for a table (``column``) the ``column`` holding the documents.
    ``task`` says what the task is, in the message about a ``kind`` other than text.
    ``ConfigError``, one line."""
    features = features or {}
    allowed = ("kind", *(("column",) if column else ()), *TEXT_DEFAULTS)
    check_known_keys("features", features, allowed)
    if features.get("kind", "text") != "text":
        raise setting_error("features.kind", f"{task} has text features",
                            features["kind"], "write kind: text, or leave kind: out")
    if column:
        name = features.get("column")
        if name is None:
            raise setting_error("features.column", "missing", None,
                                "name the column holding the documents, e.g. column: message")
        if isinstance(name, bool) or not isinstance(name, str | int):
            raise setting_error("features.column", "not a column name", name,
                                "write the column's name as text")
    check_text_options(features)


def text_dataset(task: TextTask, options: Mapping[str, Any],
                 notes: Mapping[str, Any] | None = None) -> Dataset:
    """The ``Dataset`` of a text task: kind ``text``, ``X`` its counts (a (N, V) csr matrix,
    ``count_matrix``), ``feature_names`` its V words, ``text_options`` the vocabulary
    options (``check_text_options``)."""
    X, vocabulary = count_matrix(task.documents)
    if not vocabulary:
        raise DataError(f"{task.name}: no document holds a word (a run of 2 or more letters or "
                        f"digits) in its {len(task.documents)} documents; check the source "
                        "(for a CSV, features.column names the column of documents)")
    min_df = int(options.get("min_df", 1))
    most = int(np.diff(X.tocsc().indptr).max())  # the most documents any one word is in
    if most < min_df:
        raise DataError(f"{task.name}: features.min_df = {min_df} keeps no word: none is in more "
                        f"than {most} of its {len(task.documents)} documents; lower min_df")
    multi = len(task.classes) > 2
    y = np.asarray(task.y, dtype=np.int8)
    about: dict[str, Any] = {"documents": len(task.documents), "words": len(vocabulary),
                             "tokens": int(X.sum())}
    if multi:
        about["classes"] = list(task.classes)
    elif "positive" not in (notes or {}):
        about["negative"], about["positive"] = [task.classes[0]], [task.classes[1]]
    return Dataset(
        name=task.name,
        title=f"{task.name} (text)",
        X=X,
        y=y,
        kind="text",
        feature_names=vocabulary,
        notes={**(notes or {}), **about, "features": dict(options)},
        classes=tuple(task.classes) if multi else (),
        text_options=dict(options),
    )


def corpus_options(task: TaskSpec) -> dict[str, Any]:
    """The vocabulary options of a built-in text task (named alone, or ``source: {text:
    NAME}``), checked (``validate_text_features``) and completed: it takes no recipe
    overrides and no ``target:`` (its classes are its own). ``ConfigError``, one line."""
    if task.overrides:
        raise ConfigError(f"overrides: a text task takes no recipe overrides "
                          f"({', '.join(task.overrides)}); set its options in features:")
    if task.target is not None:
        raise setting_error("target", "a built-in text task has its own classes", task.target,
                            "remove target:")
    validate_text_features(task.features, column=False)
    return check_text_options(task.features or {})
