"""The registry of inline sources (nbvslr.data.registry): one module per source, each with a
frozen typed spec, parsed once when the config is read and never checked again on load."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import nbvslr.data.registry as registry
from nbvslr.config import parse_config
from nbvslr.data import absolute_paths, load_task
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.data.recipes import RECIPES
from nbvslr.errors import ConfigError


def test_every_source_is_a_module_with_the_interface():
    """Each registered module names its key or its built-in names, its keys, a frozen Spec,
    parse and load; a built-in-by-name module can fill the cache."""
    assert registry.SOURCES == tuple(m.KEY for m in registry.MODULES if m.KEY is not None)
    for module in registry.MODULES:
        assert (module.KEY is None) != (module.KEY in module.KEYS), module.__name__
        assert module.KEY is not None or module.NAMES, module.__name__
        assert dataclasses.is_dataclass(module.Spec)
        assert module.Spec.__dataclass_params__.frozen, module.__name__
        assert callable(module.parse) and callable(module.load)
        if getattr(module, "NAMES", ()):
            assert callable(module.fetch)
    assert set(registry.TEXT_SOURCES) == {"text", "folder"}
    assert set(registry.PATH_SOURCES) == {"csv", "folder"}


def test_the_registry_lists_every_source_and_every_built_in_task():
    """Every source key and every built-in task (recipes, sms-spam, 20 Newsgroups) has its
    one module; no name or key is served twice."""
    names = [m.__name__.rsplit(".", 1)[1] for m in registry.MODULES]
    assert names == ["recipe", "sms", "newsgroups", "csv", "uci", "openml", "synthetic",
                     "frame", "text", "folder"]
    assert registry.SOURCES == ("csv", "uci", "openml", "synthetic", "frame", "text", "folder")
    served = [n for m in registry.MODULES for n in getattr(m, "NAMES", ())]
    assert len(served) == len(set(served))
    assert set(served) == set(RECIPES) | {"sms-spam", "20news", "20news-crypt-graphics"}
    assert registry.TEXT_TASKS == ("sms-spam", "20news", "20news-crypt-graphics")
    assert registry.BUILTIN["pima"] is registry.recipe
    assert registry.BUILTIN["optdigits-10"] is registry.BUILTIN["adult-mixed"] is registry.recipe
    assert registry.BUILTIN["sms-spam"] is registry.sms
    assert registry.BUILTIN["20news"] is registry.newsgroups


def test_a_built_in_task_is_parsed_once_into_its_typed_spec():
    """A built-in task's overrides are resolved at parse time into a frozen spec; sizes:
    paper reads the recipe's grid from it."""
    config = parse_config({"tasks": [{"name": "lenses", "overrides": {"target": "hard-vs-soft"}},
                                     "sms-spam", "20news"], "sizes": [3], "models": {"nb": {}}},
                          source="c.yaml")
    lenses, sms, news = (t.parsed for t in config.tasks)
    assert isinstance(lenses, registry.recipe.Spec) and lenses.choices["target"] == "hard-vs-soft"
    assert lenses.recipe is RECIPES["lenses"]
    with pytest.raises(TypeError):
        lenses.choices["target"] = "soft-vs-rest"  # read-only
    assert isinstance(sms, registry.sms.Spec) and sms.options["vocabulary"] == "training"
    assert isinstance(news, registry.newsgroups.Spec) and news.strip is None
    paper = parse_config({"tasks": ["lenses"], "sizes": "paper"}, source="c.yaml")
    assert paper.grids[0] == RECIPES["lenses"].sizes


#: (task, the start of its one-line message): each source's parse errors.
PARSE_ERRORS = [
    (TaskSpec("pimaa"), r"unknown task, did you mean 'pima'\? \('pimaa'\); use a built-in task "
     r"\(pima, .*\), a text task \(sms-spam, 20news, 20news-crypt-graphics\) or give"),
    (TaskSpec("pima", target={"column": "class"}), r"target: only inline tasks \(with a "
     r"source:\) take this key \('pima'\); change a built-in task through overrides:"),
    (TaskSpec("pima", features={"kind": "discrete"}), r"features: only inline tasks"),
    (TaskSpec("lenses", overrides={"tagret": 1}), r"overrides: 'tagret' is not a choice of "
     r"task 'lenses' \(did you mean 'target'\?\)"),
    (TaskSpec("adult-discrete", overrides={"pool": 1}), r"overrides: pool=1 is not allowed"),
    (TaskSpec("sms-spam", overrides={"pool": True}), r"overrides: a text task takes no recipe "
     r"overrides \(pool\); set its options in features:"),
    (TaskSpec("sms-spam", target={"column": "x"}), r"target: a built-in text task has its own "
     r"classes"),
    (TaskSpec("sms-spam", features={"kind": "discrete"}), r"features.kind: a built-in text task "
     r"has text features"),
    (TaskSpec("20news", features={"min_df": 0}), r"features.min_df = 0 is invalid"),
    (TaskSpec("20news", features={"vocab": "all"}), r"features.vocab: unknown key"),
    (TaskSpec("t", source={"text": "sms"}), r"source.text: not a built-in text task \('sms'\); "
     r"use one of: sms-spam, 20news"),
    (TaskSpec("t", source={"text": "sms-spam", "strip": "none"}), r"source.strip: only the 20 "
     r"Newsgroups tasks \(20news, 20news-crypt-graphics\) take strip"),
    (TaskSpec("t", source={"text": "20news", "strip": "sigs"}), r"strip: 'sigs' is not a part "
     r"of a post"),
    (TaskSpec("t", source={"text": "20news"}, overrides={"pool": True}), r"overrides: only "
     r"built-in tasks take recipe overrides"),
    (TaskSpec("t", source={"csv": ""}), r"source.csv: must be a file path"),
    (TaskSpec("t", source={"csv": "a.csv", "sep": ""}), r"source.sep: must be a separator"),
    (TaskSpec("t", source={"uci": 0}), r"source.uci: must be a UCI dataset id"),
    (TaskSpec("t", source={"openml": "x"}), r"source.openml: must be an OpenML dataset id"),
    (TaskSpec("t", source={"synthetic": {"rows": -1}}), r"source.synthetic.rows"),
    (TaskSpec("t", source={"frame": "x"}), r"source.frame: an in-memory table is given from "
     r"Python only"),
    (TaskSpec("t", source={"folder": 3}), r"source.folder: must be a folder path"),
    (TaskSpec("t", source={"folder": "f"}, target={"column": "c"}), r"target: a folder's "
     r"classes are its sub-folders"),
    (TaskSpec("t", source={"csvv": "a.csv"}), r"source: names no known source, did you mean "
     r"'csv'\?"),
    (TaskSpec("t", source={"csv": "a", "uci": 2}), r"source: names 2 sources"),
    (TaskSpec("t", source={"uci": 2, "sep": ","}), r"source.sep: unknown key"),
]


@pytest.mark.parametrize(("task", "message"), PARSE_ERRORS,
                         ids=[f"{t.name}-{i}" for i, (t, _) in enumerate(PARSE_ERRORS)])
def test_each_source_refuses_a_bad_task_in_one_line(task, message):
    """Each source's parse gives its one-line ConfigError, prefixed with where it stands."""
    with pytest.raises(ConfigError) as err:
        registry.parse(task, "c.yaml: tasks[0]")
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith("c.yaml: tasks[0]: ")
    assert re.match(message, text[len("c.yaml: tasks[0]: "):]), text


def test_config_parses_once_and_load_checks_nothing_again(tmp_path, monkeypatch):
    """The config keeps each inline task's typed spec; loading it calls no parse."""
    (tmp_path / "d.csv").write_text("a,b,y\n1,2,p\n3,4,n\n5,7,p\n8,1,n\n")
    config = parse_config({"tasks": [{"name": "d", "source": {"csv": "d.csv"},
                                      "target": {"positive": ["p"]}}], "sizes": [2]},
                          source="c.yaml", base_dir=tmp_path)
    spec = config.tasks[0]
    assert isinstance(spec.parsed, registry.csv.Spec)
    assert spec.parsed.path == str(tmp_path / "d.csv") == spec.source["csv"]
    assert spec.parsed.table.positive == ("p",)

    def refuse(*args, **kwargs):
        raise AssertionError("parsed again")

    for module in registry.MODULES:
        monkeypatch.setattr(module, "parse", refuse)
    monkeypatch.setattr(registry, "parse", refuse)
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
    assert isinstance(synthetic.parsed, registry.synthetic.Spec)


def test_the_code_digest_covers_the_source_modules(tmp_path, monkeypatch):
    """A checkpoint's code digest changes with a source module (data/registry/*.py), which
    now reads the built-in tasks too, not only with the modules directly in data/."""
    import shutil

    import nbvslr.runner.bookkeeping as bookkeeping

    copy = tmp_path / "nbvslr"
    shutil.copytree(Path(bookkeeping.__file__).parents[1], copy,
                    ignore=shutil.ignore_patterns("__pycache__", "uci", "paper"))
    monkeypatch.setattr(bookkeeping, "__file__", str(copy / "runner" / "bookkeeping.py"))
    before = bookkeeping.code_digest()
    recipe = copy / "data" / "registry" / "recipe.py"
    recipe.write_text(recipe.read_text() + "\n# changed\n")
    assert bookkeeping.code_digest() != before
