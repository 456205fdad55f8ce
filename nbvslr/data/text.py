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

Built-in text tasks (``TEXT_TASKS``, none of them a Figure 1 panel): ``sms-spam``, the SMS
Spam Collection (UCI 228, CC BY 4.0), shipped in ``nbvslr/data/uci/sms-spam/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from nbvslr.data.dataset import DataSettings
from nbvslr.data.recipes import DataFile
from nbvslr.data.sources import read_verified
from nbvslr.errors import ConfigError, DataError

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

#: The built-in text tasks (kept out of Figure 1's ``BUILTIN_TASKS``).
TEXT_TASKS: tuple[str, ...] = ("sms-spam",)

VOCABULARIES = ("training", "all")

#: ``split_vocabulary`` sums a split's rows through a dense selector from m >= N / this.
DENSE_SELECTOR = 8


@dataclass(frozen=True)
class TextTask:
    """A text task: its documents and classes.

    Attributes
    ----------
    name : str
    documents : tuple of str
        The N raw documents.
    y : ndarray of shape (N,), int64
        The class of each (``1`` = the ``positive`` class).
    classes : tuple of str
        ``(negative, positive)`` labels as the source names them.
    """

    name: str
    documents: tuple[str, ...]
    y: np.ndarray
    classes: tuple[str, str]


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
    if vocabulary not in VOCABULARIES:
        raise ConfigError(f"features.vocabulary = {vocabulary!r} is invalid; it must be one of "
                          "'training', 'all'")
    if isinstance(min_df, bool) or not isinstance(min_df, int) or min_df < 1:
        raise ConfigError(f"features.min_df = {min_df!r} is invalid; it must be an integer >= 1")
    if max_features is not None and (isinstance(max_features, bool)
                                     or not isinstance(max_features, int) or max_features < 1):
        raise ConfigError(f"features.max_features = {max_features!r} is invalid; it must be an "
                          "integer >= 1 or null")
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
