"""The registry of inline sources (nbvslr.data.inline): one module per source, each with a
frozen typed spec, parsed once when the config is read and never checked again on load."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import nbvslr.data.inline as inline
from nbvslr.config import parse_config
from nbvslr.data import absolute_paths, load_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.errors import ConfigError


def test_every_source_is_a_module_with_the_interface():
    """Each registered module names its key, its keys, a frozen Spec, parse and load."""
    assert inline.SOURCES == tuple(m.KEY for m in inline.MODULES)
    for module in inline.MODULES:
        assert module.KEY in module.KEYS
        assert dataclasses.is_dataclass(module.Spec)
        assert module.Spec.__dataclass_params__.frozen, module.KEY
        assert callable(module.parse) and callable(module.load)
    assert set(inline.TEXT_SOURCES) == {"text", "folder"}
    assert set(inline.PATH_SOURCES) == {"csv", "folder"}


def test_config_parses_once_and_load_checks_nothing_again(tmp_path, monkeypatch):
    """The config keeps each inline task's typed spec; loading it calls no parse."""
    (tmp_path / "d.csv").write_text("a,b,y\n1,2,p\n3,4,n\n5,7,p\n8,1,n\n")
    config = parse_config({"tasks": [{"name": "d", "source": {"csv": "d.csv"},
                                      "target": {"positive": ["p"]}}], "sizes": [2]},
                          source="c.yaml", base_dir=tmp_path)
    spec = config.tasks[0]
    assert isinstance(spec.parsed, inline.csv.Spec)
    assert spec.parsed.path == str(tmp_path / "d.csv") == spec.source["csv"]
    assert spec.parsed.table.positive == ("p",)

    def refuse(*args, **kwargs):
        raise AssertionError("parsed again")

    for module in inline.MODULES:
        monkeypatch.setattr(module, "parse", refuse)
    monkeypatch.setattr(inline, "parse", refuse)
    data = load_task(spec, DataSettings(cache_dir=tmp_path / "cache", download=False))
    assert data.n_rows == 4 and data.kind == "continuous"


def test_a_config_error_names_the_file_and_the_task():
    """A source's one-line message is prefixed with the config and the task's key."""
    with pytest.raises(ConfigError, match=r"^c\.yaml: tasks\[0\]: source\.sep: must be a "
                                          r"separator character"):
        parse_config({"tasks": [{"name": "d", "source": {"csv": "d.csv", "sep": ""}}],
                      "sizes": [2]}, source="c.yaml")


def test_absolute_paths_moves_the_raw_and_the_parsed_path(tmp_path, monkeypatch):
    """A relative path is made absolute in both the raw source and the typed spec."""
    monkeypatch.chdir(tmp_path)
    spec = absolute_paths(TaskSpec("t", source={"folder": "texts"}))
    assert spec.source["folder"] == str(Path(tmp_path, "texts"))
    assert spec.parsed.path == spec.source["folder"]
    synthetic = absolute_paths(TaskSpec("s", source={"synthetic": {"rows": 50}}))
    assert isinstance(synthetic.parsed, inline.synthetic.Spec)
