"""Config validation: one-line errors, exit code 2, resolved defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbvslr.config import load_config, parse_config, read_yaml
from nbvslr.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _err(raw, **kw) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="c.yaml", **kw)
    msg = str(info.value)
    assert "\n" not in msg
    assert info.value.exit_code == 2
    return msg


def test_defaults_and_paper_grid():
    """A minimal config gets nb and lr with their defaults and the paper's m-grid."""
    cfg = parse_config({"tasks": ["pima"]})
    assert [m.name for m in cfg.models] == ["nb", "lr"]
    assert cfg.grid("pima") == tuple(range(2, 60, 3))
    assert cfg.splits == 1000 and cfg.seed == 0
    assert cfg.models[1].options["separable"] == "sample"


def test_range_sizes_are_inclusive():
    """sizes {start, stop, step} includes stop when the step lands on it."""
    cfg = parse_config({"tasks": ["pima"], "sizes": {"start": 2, "stop": 59, "step": 3}})
    assert cfg.grid("pima")[-1] == 59


def test_model_variants_resolve_family_and_options():
    """A named variant takes its family from model: and keeps its options."""
    cfg = parse_config({"tasks": ["pima"], "models": {"nb": {}, "lr_l2": {"model": "lr", "C": 1}}})
    lr = cfg.models[1]
    assert (lr.name, lr.family, lr.options["C"]) == ("lr_l2", "lr", 1.0)


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"tasks": ["pima"], "split": 10}, "did you mean"),
        ({"tasks": ["pmia"]}, "pima"),
        ({"tasks": ["pima"], "sizes": [1, 5]}, "sizes[0]"),
        ({"tasks": ["pima"], "sizes": {"start": 2}}, "sizes.stop"),
        ({"tasks": ["pima"], "splits": 0}, "splits"),
        ({"tasks": ["pima"], "splits": "many"}, "not an integer"),
        ({"tasks": ["pima"], "seed": -1}, "seed"),
        ({"tasks": ["pima"], "models": {"svm": {}}}, "models.svm"),
        ({"tasks": ["pima"], "models": {"lr": {"C": -1}}}, "'C'"),
        ({"tasks": ["pima"], "models": {"lr": {"CC": 1}}}, "did you mean"),
        ({"tasks": []}, "tasks"),
        ({"tasks": [{"name": "../evil", "source": {"csv": "x.csv"}}]}, "folder"),
        ({"tasks": ["pima", "pima"]}, "twice"),
        ({"tasks": [{"name": "x", "source": {"csv": "x.csv"}}], "sizes": "paper"}, "paper"),
        ([1, 2], "mapping"),
        (None, "empty"),
    ],
)
def test_bad_configs_name_the_key(raw, needle):
    """Each mistake gives one line naming the file and the offending key or value."""
    msg = _err(raw)
    assert msg.startswith("c.yaml: ")
    assert needle in msg


def test_command_line_overrides_and_checks():
    """--splits and --seed override the file; --jobs 0 and unknown backends are refused."""
    cfg = parse_config({"tasks": ["pima"], "splits": 5}, splits=7, seed=3)
    assert (cfg.splits, cfg.seed) == (7, 3)
    assert "--jobs" in _err({"tasks": ["pima"]}, jobs=0)
    assert "--backend" in _err({"tasks": ["pima"]}, backend="lokky")


def test_yaml_tags_and_bad_bytes_are_refused(tmp_path):
    """Python object tags are never constructed; non-UTF-8 files are refused."""
    evil = tmp_path / "evil.yaml"
    evil.write_text("tasks: !!python/object/apply:os.system ['touch pwned']\n")
    with pytest.raises(ConfigError, match="tags are not allowed"):
        read_yaml(evil)
    assert not (tmp_path / "pwned").exists()
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"tasks: [\xff\xfe]\n")
    with pytest.raises(ConfigError, match="UTF-8"):
        read_yaml(binary)
    with pytest.raises(ConfigError, match="not found"):
        read_yaml(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("tasks: [pima\n")
    with pytest.raises(ConfigError, match="malformed YAML"):
        read_yaml(broken)


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_are_valid(path):
    """Every config in configs/ parses; per-panel configs use the paper's grid and 1000 splits."""
    cfg = load_config(path)
    assert cfg.splits == 1000
    for spec, grid in zip(cfg.tasks, cfg.grids, strict=True):
        from nbvslr.data import RECIPES

        if spec.source is None and spec.name in RECIPES:  # a text task has no paper grid
            from nbvslr.data import get_recipe

            assert grid == tuple(sorted(get_recipe(spec.name).sizes))


def test_relative_csv_path_is_read_from_the_config_folder(tmp_path, monkeypatch):
    """source: {csv: file.csv} in a config file means next to that file, whatever the cwd."""
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "toy.csv").write_text("a,label\n0.1,0\n0.2,1\n0.3,0\n0.9,1\n")
    (folder / "toy.yaml").write_text(
        "tasks:\n  - name: toy\n    source: {csv: toy.csv}\n"
        "    target: {column: label, positive: [1]}\nsizes: [2]\nsplits: 1\n"
    )
    monkeypatch.chdir(tmp_path)
    cfg = load_config(folder / "toy.yaml")
    assert Path(cfg.tasks[0].source["csv"]) == folder / "toy.csv"


MODELS3 = {"nb": {}, "lr": {}, "lr_l2": {"model": "lr", "C": 1.0}}


def test_compare_defaults_to_every_nb_model_against_every_lr_model():
    """No compare: key: nb vs lr and nb vs lr_l2 (config order); one family only: no pair."""
    cfg = parse_config({"tasks": ["pima"],
                        "models": {**MODELS3, "nb_class": {"model": "nb", "variance": "class"}}})
    assert cfg.pairs == (("nb", "lr"), ("nb", "lr_l2"), ("nb_class", "lr"),
                         ("nb_class", "lr_l2"))
    assert parse_config({"tasks": ["pima"], "models": {"lr": {}}}).pairs == ()
    assert cfg.to_dict()["compare"][0] == ["nb", "lr"]


def test_compare_names_the_pairs():
    """compare: [[nb, lr_l2], [lr, lr_l2]] is kept as written, any two models."""
    cfg = parse_config({"tasks": ["pima"], "models": MODELS3,
                        "compare": [["nb", "lr_l2"], ["lr", "lr_l2"]]})
    assert cfg.pairs == (("nb", "lr_l2"), ("lr", "lr_l2"))


@pytest.mark.parametrize(
    ("compare", "expected"),
    [
        ([["nb", "lr_12"]], "compare[0][1]: unknown model, did you mean 'lr_l2'? ('lr_12'); "
                            "use the names under models: nb, lr, lr_l2"),
        ([["nb"]], "compare[0]: not a pair of two model names"),
        ("nb, lr", "compare: must be a non-empty list of pairs [a, b]"),
        ([], "compare: must be a non-empty list of pairs [a, b]"),
        ([["lr", "lr"]], "compare[0]: a model compared with itself"),
        ([["nb", "lr"], ["lr", "nb"]], "compare[1]: this pair is already compared"),
        ([["nb", 3]], "compare[0][1]: unknown model (3)"),
    ],
)
def test_compare_mistakes_are_one_line_errors(compare, expected):
    """A bad compare: names the entry, the problem and the fix, with "did you mean"."""
    msg = _err({"tasks": ["pima"], "models": MODELS3, "compare": compare})
    assert expected in msg
    assert msg.startswith("c.yaml: compare")


def test_a_metric_listed_twice_is_refused():
    """metrics: [error, error] is refused as a size listed twice is, not silently merged."""
    with pytest.raises(ConfigError, match=r"metrics: a metric listed twice \('brier'\)"):
        parse_config({"tasks": ["pima"], "metrics": ["error", "brier", "brier"]}, source="c")


def test_a_stop_below_start_names_the_start_once():
    """The message names the start once, with no doubled parentheses."""
    with pytest.raises(ConfigError, match=r"sizes.stop: must be >= start = 5 \(3\); give"):
        parse_config({"tasks": ["pima"], "sizes": {"start": 5, "stop": 3}}, source="c")
