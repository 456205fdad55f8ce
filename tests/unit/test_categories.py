"""No silent categories: a discrete column of nearly all distinct values, or of free text,
is refused with the fix named, or kept on an explicit ``many_levels: allow`` with a warning."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import nbvslr
from nbvslr.config import parse_config
from nbvslr.data import load_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.errors import ConfigError, DataError

WORDS = ("free", "money", "call", "now", "meeting", "lunch", "tomorrow", "prize", "win",
         "see", "you", "later", "text", "back", "claim", "reply")


def _messages(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """n distinct messages of 6 to 12 words, and their labels (spam when 'prize' is in)."""
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, size=rng.integers(6, 13))) + f" {i}" for i in range(n)]
    labels = ["spam" if "prize" in t else "ham" for t in texts]
    return texts, labels


def _settings(tmp_path):
    return DataSettings(cache_dir=tmp_path / "cache", download=False)


def _measurements(n: int = 120, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    return pd.DataFrame({"x1": np.round(rng.normal(y, 1.0), 3),
                         "x2": np.round(rng.normal(-y, 1.0), 3), "label": y})


def test_csv_of_one_text_column_is_refused(tmp_path):
    """Case 1: a CSV whose only feature is free text is refused, naming kind: text."""
    texts, labels = _messages(60)
    path = tmp_path / "sms.csv"
    pd.DataFrame({"message": texts, "label": labels}).to_csv(path, index=False)
    spec = TaskSpec(name="sms", source={"csv": str(path)}, target={"column": "label"})
    with pytest.raises(DataError) as info:
        load_task(spec, _settings(tmp_path))
    line = str(info.value)
    assert "\n" not in line and "'message'" in line and "free text" in line
    assert "features: {kind: text, column: message}" in line
    assert "features.many_levels: allow" in line


def test_frame_of_one_text_column_is_refused(tmp_path):
    """Case 2: the same table from Python without kind='text' is refused, naming the
    Python fix."""
    texts, labels = _messages(60)
    df = pd.DataFrame({"message": texts, "label": labels})
    task = nbvslr.Task.from_frame(df, target="label", name="sms")
    config = parse_config({"tasks": [task.to_config()], "sizes": [4]}, source="<dict>")
    with pytest.raises(DataError) as info:
        load_task(config.tasks[0], _settings(tmp_path))
    line = str(info.value)
    assert "'message'" in line and "kind='text'" in line and "columns=['message']" in line
    assert "many_levels='allow'" in line


def test_measurements_read_as_discrete_are_refused(tmp_path):
    """Case 3: kind: discrete on a CSV of measurements is refused, naming continuous."""
    path = tmp_path / "m.csv"
    _measurements().to_csv(path, index=False)
    spec = TaskSpec(name="m", source={"csv": str(path)}, target={"column": "label"},
                    features={"kind": "discrete"})
    with pytest.raises(DataError) as info:
        load_task(spec, _settings(tmp_path))
    line = str(info.value)
    assert "'x1'" in line and "numbers" in line and "kind: continuous" in line
    # the same table as continuous is read
    ok = TaskSpec(name="m", source={"csv": str(path)}, target={"column": "label"})
    assert load_task(ok, _settings(tmp_path)).kind == "continuous"


def test_mixed_task_checks_its_discrete_columns(tmp_path):
    """A measurement listed under features.discrete of a mixed task is refused too."""
    path = tmp_path / "m.csv"
    _measurements().assign(g=["a", "b", "c"] * 40).to_csv(path, index=False)
    spec = TaskSpec(name="m", source={"csv": str(path)}, target={"column": "label"},
                    features={"continuous": ["x1"], "discrete": ["g", "x2"]})
    with pytest.raises(DataError, match=r"column 'x2' would be read as \d+ categories"):
        load_task(spec, _settings(tmp_path))


def test_an_id_column_is_refused_with_drop(tmp_path):
    """Text values that are all distinct (an id column) are refused, naming features.drop."""
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"id": [f"u{i:04d}" for i in range(50)],
                       "g": rng.choice(["a", "b"], size=50), "label": rng.choice(["p", "n"],
                                                                                 size=50)})
    path = tmp_path / "ids.csv"
    df.to_csv(path, index=False)
    spec = TaskSpec(name="ids", source={"csv": str(path)}, target={"column": "label"})
    with pytest.raises(DataError, match=r"'id'.*features\.drop it"):
        load_task(spec, _settings(tmp_path))


def test_few_levels_are_kept(tmp_path):
    """Discrete columns of a few levels, even long ones, are read as before."""
    rng = np.random.default_rng(3)
    answers = ["I agree with this statement a lot", "I do not agree with it at all"]
    df = pd.DataFrame({"a": rng.choice(answers, size=80), "b": rng.choice(list("xyz"), 80),
                       "label": rng.choice(["p", "n"], size=80)})
    path = tmp_path / "ok.csv"
    df.to_csv(path, index=False)
    spec = TaskSpec(name="ok", source={"csv": str(path)}, target={"column": "label"})
    data = load_task(spec, _settings(tmp_path))
    assert data.kind == "discrete" and data.n_values == (2, 3)
    assert "warnings" not in data.notes


def test_many_levels_allow_warns_once_and_records(tmp_path, capsys):
    """many_levels: allow keeps the categories, warns once on stderr and in run.json."""
    path = tmp_path / "m.csv"
    _measurements().to_csv(path, index=False)
    config = parse_config({
        "tasks": [{"name": "m", "source": {"csv": str(path)}, "target": {"column": "label"},
                   "features": {"kind": "discrete", "many_levels": "allow"}}],
        "sizes": [4], "splits": 2, "models": {"nb": {}}},
        source="<dict>", out=tmp_path / "out", jobs=1, backend="sequential",
        data=_settings(tmp_path))
    nbvslr.runner.run_tasks(config)
    err = capsys.readouterr().err
    assert err.count("would be read as") == 2  # x1 and x2, each said once
    assert "warning:" in err and "many_levels: allow" in err
    run = json.loads((tmp_path / "out" / "m" / "run.json").read_text())
    assert len(run["warnings"]) == 2 and "'x1'" in run["warnings"][0]


@pytest.mark.parametrize("value, pattern", [
    ("maybe", r"^features\.many_levels: unknown mode"),
])
def test_many_levels_is_checked(value, pattern):
    """A many_levels of neither refuse nor allow is a config error."""
    from nbvslr.data import validate_task

    spec = TaskSpec(name="t", source={"csv": "x.csv"}, features={"many_levels": value})
    with pytest.raises(ConfigError, match=pattern):
        validate_task(spec)


def test_from_frame_many_levels_allow_is_kept_and_recorded(tmp_path):
    """Task.from_frame(..., many_levels='allow') reads the categories, the finding kept in
    the Dataset's notes (run.json's warnings)."""
    texts, labels = _messages(60)
    df = pd.DataFrame({"message": texts, "label": labels})
    task = nbvslr.Task.from_frame(df, target="label", name="sms", many_levels="allow")
    assert task.to_config()["features"]["many_levels"] == "allow"
    config = parse_config({"tasks": [task.to_config()], "sizes": [4]}, source="<dict>")
    data = load_task(config.tasks[0], _settings(tmp_path))
    assert data.kind == "discrete" and data.n_values == (60,)
    assert len(data.notes["warnings"]) == 1 and "free text" in data.notes["warnings"][0]
