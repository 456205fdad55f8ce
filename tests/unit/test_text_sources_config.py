"""The text sources beyond sms-spam, from a config: a folder of class folders
(``source: {folder: PATH}``) and the 20 Newsgroups tasks by name, with ``strip``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import test_newsgroups as tn
from click.testing import CliRunner
from loopback import GENEROUS
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB

import nbvslr
from nbvslr.cli import cli
from nbvslr.config import load_config
from nbvslr.data.dataset import DataSettings
from nbvslr.errors import ConfigError
from nbvslr.splits import draw_train_sets, split_seeds

server, tiny = tn.server, tn.tiny  # the loopback server serving a tiny archive

WORDS = {
    "ham": ["lunch at noon today", "see you at the game", "call me when home",
            "dinner with mum tonight", "the bus is late again", "meeting moved to friday"],
    "spam": ["win cash now call", "free prize claim now", "cash bonus win today",
             "claim your free cash", "urgent prize call now", "win win free bonus"],
}


def _folder(root: Path) -> Path:
    for label, docs in WORDS.items():
        (root / "texts" / label).mkdir(parents=True)
        for k, doc in enumerate(docs):
            (root / "texts" / label / f"{k:02d}.txt").write_text(doc, encoding="utf-8")
    return root


def _config(root: Path, text: str) -> Path:
    path = root / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_folder_task_runs_from_a_relative_path_and_matches_scikit_learn(tmp_path):
    root = _folder(tmp_path)
    config = _config(root, "tasks:\n  - {name: mine, source: {folder: texts}}\n"
                           "sizes: [4]\nsplits: 3\nmodels: {nb: {}}\n")
    res = nbvslr.run(str(config))
    got = res.splits.sort_values("split")["error"].to_numpy()
    # the same splits by hand: class 1 is the second sub-folder in sorted order (spam)
    docs = [*WORDS["ham"], *WORDS["spam"]]
    y = np.array([0] * 6 + [1] * 6)
    draw, _ = split_seeds(0, "mine", 4, range(3))
    want = []
    for train in draw_train_sets(y, 4, draw):
        vec = CountVectorizer().fit([docs[i] for i in train])
        n1 = int(y[train].sum())  # the prior (count + 1) / (m + 2), as nbvslr's
        nb = MultinomialNB(alpha=1.0, force_alpha=True,
                           class_prior=[(5 - n1) / 6, (n1 + 1) / 6])
        nb.fit(vec.transform([docs[i] for i in train]), y[train])
        test = np.setdiff1d(np.arange(12), train)
        joint = nb.predict_joint_log_proba(vec.transform([docs[i] for i in test]))
        gap = (joint[:, 1] - joint[:, 0]) * np.where(y[test] == 1, 1, -1)
        # a tie (a message of no training word, equal priors) is half an error, as in nbvslr
        want.append(np.mean(np.where(np.abs(gap) < 1e-12, 0.5, gap < 0)))
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize(("task", "match"), [
    ("{name: mine, source: {folder: texts}, target: {column: x}}", "sub-folders"),
    ("{name: mine, source: {folder: 3}}", "folder path"),
    # empty: refused, not read as the config's own folder (whose sub-folders hold folders)
    ("{name: mine, source: {folder: ''}}", "source.folder: must be a folder path;"),
    ("{name: mine, source: {folder: ' '}}", "folder path"),
    ("{name: mine, source: {folder: texts}, features: {vocabulary: some}}", "vocabulary"),
    ("{name: s, source: {text: sms-spam, strip: none}}", "only the 20 Newsgroups"),
    ("{name: n, source: {text: 20news, strip: [headers, signature]}}", "signature"),
])
def test_bad_text_sources_are_one_line_config_errors(tmp_path, task, match):
    config = _config(_folder(tmp_path), f"tasks:\n  - {task}\nsizes: [4]\nmodels: {{nb: {{}}}}\n")
    with pytest.raises(ConfigError, match=match) as err:
        load_config(config)
    assert "\n" not in str(err.value)


def test_a_20_newsgroups_task_by_name_downloads_once_and_runs(tmp_path, server):
    settings = DataSettings(cache_dir=tmp_path / "cache", mirror=None, download=True,
                            timeout=GENEROUS)
    config = _config(tmp_path, "tasks:\n  - {name: ng, source: {text: 20news, strip: none}}\n"
                               "  - {name: ng-stripped, source: {text: 20news}}\n"
                               "sizes: [6]\nsplits: 2\nmodels: {nb: {}}\n")
    res = nbvslr.run(load_config(config, data=settings))
    assert sorted(res.summary["task"]) == ["ng", "ng-stripped"]
    assert len(server.requests) == 1  # the archive once; the second task reads the cache
    assert res.summary["error_mean"].between(0, 1).all()


def test_datasets_fetch_takes_the_text_tasks(tmp_path, server):
    """`nbvslr datasets fetch 20news sms-spam` puts each verified file in the cache (the
    archive downloaded once for both 20 Newsgroups tasks), as for a UCI task; offline
    without it, one line naming the fix."""
    cache = tmp_path / "cache"
    result = CliRunner().invoke(cli, ["datasets", "fetch", "20news", "20news-crypt-graphics",
                                      "sms-spam", "--cache", str(cache)])
    assert result.exit_code == 0, result.output
    archive = cache / "20news" / "20news-bydate.tar.gz"
    assert result.output.split() == [str(archive), str(cache / "sms-spam" / "SMSSpamCollection")]
    assert archive.read_bytes() == tn.ARCHIVE_BYTES and len(server.requests) == 1
    offline = CliRunner().invoke(cli, ["datasets", "fetch", "20news", "--offline",
                                       "--cache", str(tmp_path / "empty")])
    assert offline.exit_code == 1
    assert offline.output.count("\n") == 1 and "run without --offline" in offline.output
