"""Any two models by their roles: the analysis and the views name the pair (a, b) they are
given, the default pairs come from each family's declared approach, and no table or figure
prints one model's numbers under another's name."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from results_factory import lr_curve, make_splits, nb_curve, run_info, write_task

from nbvslr.analysis import stats
from nbvslr.config import parse_config
from nbvslr.config.pairs import pick_pairs
from nbvslr.errors import ConfigError
from nbvslr.models import registry
from nbvslr.models.family import DISCRIMINATIVE, GENERATIVE
from nbvslr.results import load_results
from nbvslr.views import plots, report

ROOT = Path(__file__).resolve().parents[2]


def _folder(root: Path, task: str, curves: dict, pairs: list[tuple[str, str]]) -> Path:
    """A task folder of the given curves (name -> (family, mean)) and compared pairs."""
    sizes = (2, 4, 8, 16, 32)
    splits = make_splits(task, sizes, 40, 0, curves)
    info = run_info(task, task, sizes, {n: f for n, (f, _) in curves.items()}, (0, 40))
    info["config"] = {"compare": [list(p) for p in pairs]}
    folder = write_task(root, splits, info, paired=False)
    pd.concat([stats.paired_summary(splits, a, b) for a, b in pairs]).to_csv(
        folder / "paired.csv", index=False)
    return folder


def test_an_lda_vs_lr_report_never_says_nb(tmp_path):
    """A run of lda against lr is headed LDA and LR: no column, note or line says NB."""
    _folder(tmp_path, "toy", {"lda": ("lda", nb_curve), "lr": ("lr", lr_curve)},
            [("lda", "lr")])
    text = report.report_table(tmp_path, n_boot=50, paper=False)
    head = text.splitlines()[0]
    assert "LDA @ min m" in head and "LR @ max m" in head and "LR better from" in head
    assert "asymptotic LDA / LR" in head
    assert not re.search(r"\bNB\b", text), text
    row = next(ln for ln in text.splitlines() if ln.startswith("| toy "))
    assert "| lda |" in row  # the winner at the smallest m is named, not a role
    assert "paired differences LDA − LR" in text


def test_the_separable_note_names_only_a_discriminative_model(tmp_path):
    """The note "asymptotic ... 0 for X when the whole dataset is linearly separable" names
    the side whose models are LR: a, when the pair is (lr, lda); not LDA, and not a side
    mixing LR and LDA."""
    _folder(tmp_path / "one", "toy", {"lr": ("lr", lr_curve), "lda": ("lda", nb_curve)},
            [("lr", "lda")])
    text = report.report_table(tmp_path / "one", n_boot=50, paper=False)
    assert "0 for LR when the whole dataset" in text, text
    assert "0 for LDA" not in text
    _folder(tmp_path / "two", "toy", {"lr": ("lr", lr_curve), "lda": ("lda", nb_curve),
                                      "nb": ("nb", nb_curve)}, [("nb", "lr"), ("nb", "lda")])
    text = report.report_table(tmp_path / "two", n_boot=50, paper=False)
    assert "0 for b" not in text and "linearly separable" not in text, text
    _folder(tmp_path / "three", "toy", {"nb": ("nb", nb_curve), "lr": ("lr", lr_curve)},
            [("nb", "lr")])
    text = report.report_table(tmp_path / "three", n_boot=50, paper=False)
    assert "0 for LR when the whole dataset" in text  # the paper's pair, as before


def test_pairs_of_different_families_are_headed_a_and_b(tmp_path):
    """nb and lda each against lr: the columns say a and b, and every row names its pair."""
    _folder(tmp_path, "toy", {"nb": ("nb", nb_curve), "lda": ("lda", nb_curve),
                              "lr": ("lr", lr_curve)}, [("nb", "lr"), ("lda", "lr")])
    text = report.report_table(tmp_path, n_boot=50, paper=False)
    head = text.splitlines()[0]
    assert "a @ min m" in head and "b better from" in head and "NB" not in head
    assert "| toy (nb vs lr) |" in text and "| toy (lda vs lr) |" in text
    assert "a, b: the two models of the row's pair" in text


def test_two_models_of_one_family_are_headed_a_and_b(tmp_path):
    """lr against lr-C1: the columns say a and b (not "LR @ min m" twice), and the row names
    its pair."""
    _folder(tmp_path, "toy", {"lr": ("lr", nb_curve), "lr-C1": ("lr", lr_curve)},
            [("lr", "lr-C1")])
    text = report.report_table(tmp_path, n_boot=50, paper=False)
    head = text.splitlines()[0]
    assert "a @ min m" in head and "b @ max m" in head and "b better from" in head
    assert "LR @" not in head and "LR / LR" not in head
    assert "| toy (lr vs lr-C1) |" in text


def test_one_crossover_table_for_the_api_and_the_csv(tmp_path):
    """Results.crossovers and report --format csv hold the same crossover columns, equal."""
    from nbvslr.api import load

    _folder(tmp_path, "toy", {"lda": ("lda", nb_curve), "lr": ("lr", lr_curve)},
            [("lda", "lr")])
    api = load(tmp_path).crossovers  # its default resamples, as the report's below
    csv = pd.read_csv(io.StringIO(report.report_csv(tmp_path)))
    cols = [c for c in api.columns if c not in ("task", "model_a", "model_b")]
    assert set(cols) <= set(csv.columns)
    pd.testing.assert_frame_equal(api[cols].reset_index(drop=True),
                                  csv[cols].astype(api[cols].dtypes.to_dict()),
                                  check_exact=False, rtol=1e-5)
    assert api["better_after"].iloc[0] == "lr" and api["b_better_from"].iloc[0] > 0


def test_the_api_crossovers_follow_the_reports_task_order(tmp_path):
    """Results.crossovers lists its tasks as report --format csv does (the paper's panel
    order: pima before adult-continuous), not in the order the folders load."""
    from nbvslr.api import load

    for task in ("adult-continuous", "pima"):
        _folder(tmp_path, task, {"nb": ("nb", nb_curve), "lr": ("lr", lr_curve)},
                [("nb", "lr")])
    res = load(tmp_path)
    assert [t.name for t in res.tasks] == ["adult-continuous", "pima"]  # the load order
    csv = pd.read_csv(io.StringIO(report.report_csv(tmp_path)))
    assert res.crossovers["task"].tolist() == csv["task"].tolist() == ["pima",
                                                                       "adult-continuous"]


def test_the_figure_names_the_pair_it_draws(tmp_path):
    """An lda-vs-lr figure: LDA solid like NB, LR dashed, its caption names LDA and LR."""
    _folder(tmp_path, "toy", {"lda": ("lda", nb_curve), "lr": ("lr", lr_curve)},
            [("lda", "lr")])
    _folder(tmp_path, "toy2", {"lda": ("lda", nb_curve), "lr": ("lr", lr_curve)},
            [("lda", "lr")])
    fig = plots.figure_of_tasks(load_results(tmp_path), n_boot=20)
    text = fig.get_supxlabel()
    assert registry.approach("lda") == GENERATIVE
    assert "LDA solid, LR dashed" in " ".join(text.split()), text
    assert "first crossover of LDA and LR, LR ahead after it" in " ".join(text.split())
    assert "NB" not in text


def test_default_pairs_follow_each_familys_approach(monkeypatch):
    """Every generative model against every discriminative one, in config order; a family
    nbvslr does not know is on neither side."""
    monkeypatch.setitem(registry.APPROACHES, "toy_gen", GENERATIVE)
    monkeypatch.setitem(registry.APPROACHES, "toy_disc", DISCRIMINATIVE)
    models = [("g1", "toy_gen"), ("d1", "toy_disc"), ("g2", "nb"), ("x", "unknown"),
              ("d2", "lr")]
    assert pick_pairs(models) == (("g1", "d1"), ("g1", "d2"), ("g2", "d1"), ("g2", "d2"))
    assert pick_pairs([("g", "nb")]) == ()


def test_every_model_name_declares_an_approach():
    """The registry gives every model name an approach, generative or discriminative."""
    assert set(registry.APPROACHES) == set(registry.OPTIONS)
    assert set(registry.APPROACHES.values()) <= {GENERATIVE, DISCRIMINATIVE}


def test_a_model_named_tie_is_refused():
    """"tie" is the report's word for no winner: a model of that name is a config error."""
    with pytest.raises(ConfigError, match="tie"):
        parse_config({"tasks": ["pima"], "models": {"tie": {"model": "nb"}, "lr": {}}},
                     source="c.yaml")


def test_analysis_and_views_never_test_for_nb_or_lr():
    """The literals "nb" and "lr" appear in nbvslr/analysis and nbvslr/views only as the
    paper's own pair (fidelity.PAPER_PAIR), outside docstrings and comments."""
    hits = []
    for path in sorted((ROOT / "nbvslr" / "analysis").glob("*.py")) + sorted(
            (ROOT / "nbvslr" / "views").glob("*.py")):
        code = re.sub(r'"""(.|\n)*?"""', "", path.read_text(encoding="utf-8"))
        for line in code.splitlines():
            line = line.split("#", 1)[0]
            if re.search(r"""["'](nb|lr)["']""", line):
                hits.append(f"{path.name}: {line.strip()}")
    assert hits == ['fidelity.py: PAPER_PAIR = ("nb", "lr")'], hits
