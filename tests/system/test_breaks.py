"""Faults found by breaking the tool on purpose: each test here failed on the code before
its fix (stale data in one process, unbounded memory, results no reader accepts, damaged
folders believed, unbounded reads, tracebacks instead of one line)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import nbvslr

SIZES = [5, 10, 20]


def _csv(path: Path, seed: int, shift: float) -> None:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 120)
    X = rng.normal(size=(120, 3)) + shift * y[:, None]  # (N, d)
    pd.DataFrame(X, columns=list("abc")).assign(label=y).to_csv(path, index=False)


def _raw(csv: Path) -> dict:
    return {"tasks": [{"name": "toy", "source": {"csv": str(csv)},
                       "target": {"column": "label", "positive": [1]},
                       "features": {"kind": "continuous"}}],
            "sizes": SIZES, "splits": 6, "seed": 1, "models": {"nb": {}, "lr": {}}}


# ------------------------------------------------------------- 1. stale data in one process


def test_a_csv_edited_between_two_runs_of_one_process_is_read_again(tmp_path):
    """nbvslr.run twice in one process, the CSV edited between: the second fits the new file."""
    _csv(tmp_path / "toy.csv", seed=0, shift=2.0)
    nbvslr.run(_raw(tmp_path / "toy.csv"), progress=False)
    _csv(tmp_path / "toy.csv", seed=1, shift=0.0)  # other rows, labels unrelated to X
    _csv(tmp_path / "fresh.csv", seed=1, shift=0.0)  # the same bytes, never read before
    again = nbvslr.run(_raw(tmp_path / "toy.csv"), progress=False).summary
    fresh = nbvslr.run(_raw(tmp_path / "fresh.csv"), progress=False).summary
    assert again["error_mean"].tolist() == fresh["error_mean"].tolist()


def test_a_sealed_run_records_the_sha256_of_the_file_it_fitted(tmp_path):
    """With out= and jobs=2, run.json names the edited file's sha256, not the first one's."""
    from nbvslr.data.sources import sha256_of

    csv = tmp_path / "toy.csv"
    _csv(csv, seed=0, shift=2.0)
    nbvslr.run(_raw(csv), out=tmp_path / "a", jobs=2, progress=False)
    _csv(csv, seed=1, shift=0.0)
    nbvslr.run(_raw(csv), out=tmp_path / "b", jobs=2, progress=False)
    info = json.loads((tmp_path / "b" / "toy" / "run.json").read_text())
    assert sha256_of(csv) in json.dumps(info)


def test_a_text_folder_edited_between_two_runs_of_one_process_is_read_again(tmp_path):
    """A text folder whose documents change between two runs in one process is read again."""
    def folder(root: Path, words: tuple[str, str]) -> None:
        for k, word in enumerate(words):
            (root / f"c{k}").mkdir(parents=True, exist_ok=True)
            for i in range(20):
                (root / f"c{k}" / f"d{i}.txt").write_text(f"{word} {'x' * (i % 3)} y{i % 4}")

    raw = {"tasks": [{"name": "docs", "source": {"folder": str(tmp_path / "docs")}}],
           "sizes": [4, 8], "splits": 4, "seed": 2, "models": {"nb": {}}}
    folder(tmp_path / "docs", ("alpha", "beta"))
    first = nbvslr.run(raw, progress=False).summary["error_mean"].tolist()
    for i in range(20):  # the class words now say nothing of the class
        for k in range(2):
            (tmp_path / "docs" / f"c{k}" / f"d{i}.txt").write_text(f"y{(i + k) % 4} z")
    second = nbvslr.run(raw, progress=False).summary["error_mean"].tolist()
    assert second != first


# ----------------------------------------------- 2. the fit on all rows of a separable set


def _separable_rows(n: int, d: int = 3, seed: int = 0):
    """n rows of a set a hyperplane separates with a margin: ``(Z1, sign, theta0)``, one split."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    w = np.arange(1.0, d + 1)
    score = X @ w
    X = X[np.abs(score) > 0.2]  # a margin
    sign = np.where(X @ w > 0, 1.0, -1.0)
    Z1 = np.concatenate([X, np.ones((len(X), 1))], axis=1)[None]  # (1, N, P)
    return Z1, sign[None], np.append(w, 0.0)[None]


def test_the_hmc_sampler_on_many_rows_never_holds_their_gram_matrix():
    """HMC on 6,000 separable rows peaks far below the 288 MB an N x N Gram matrix takes."""
    import tracemalloc

    from nbvslr.models.lr.hmc import GRAM_ROWS, sample_separating_hmc

    Z1, sign, theta0 = _separable_rows(7000)
    assert Z1.shape[1] > GRAM_ROWS
    tracemalloc.start()
    draws = sample_separating_hmc(Z1, sign, theta0, [np.random.SeedSequence(1)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50e6, f"peak {peak / 1e6:.0f} MB"
    margins = sign[0] * (Z1[0] @ draws[0].T).T  # (K, N)
    assert (margins > 0).all()


def test_bounces_that_make_their_gram_row_follow_the_held_matrix(monkeypatch):
    """The sampler without the held Gram matrix draws what it draws with it (up to rounding)."""
    import nbvslr.models.lr.hmc as hmc

    Z1, sign, theta0 = _separable_rows(400, seed=3)
    seeds = [np.random.SeedSequence(7)]
    held = hmc.sample_separating_hmc(Z1, sign, theta0, seeds, draws=4)
    monkeypatch.setattr(hmc, "GRAM_ROWS", 10)
    made = hmc.sample_separating_hmc(Z1, sign, theta0, seeds, draws=4)
    np.testing.assert_allclose(made, held, atol=1e-6)


def test_the_memory_plan_counts_the_samplers_gram_matrices():
    """A separable LR task's plan counts the sampler's m x m Gram matrices of its sizes."""
    from nbvslr.runner import memory

    shape = memory.TaskShape("t", rows=3000, features=3, width=4, grid=(2000,),
                             hyperplanes=2, models=2)
    without = memory.TaskShape("t", rows=3000, features=3, width=4, grid=(2000,),
                               hyperplanes=0, models=2)
    gram = 16 * 8.0 * 2000 ** 2  # the sampler's fewest splits per block, each 2000 x 2000
    assert memory.unit_bytes(shape, 2000, 100) - memory.unit_bytes(without, 2000, 100) >= gram


def test_the_fit_on_all_rows_of_a_separable_set_never_forms_n_by_n(tmp_path):
    """The all-rows fit of 4,000 rows with a leaked label: error 0, below N x N's 128 MB."""
    import tracemalloc

    Z1, sign, _ = _separable_rows(4500)
    task = nbvslr.Task.from_arrays(Z1[0, :, :3], (sign[0] > 0).astype(int), name="leak")
    raw = {"tasks": [task], "sizes": [10, 20], "splits": 3, "seed": 1, "models": {"lr": {}}}
    nbvslr.run(raw, progress=False)  # the modules and kernels loaded before the count
    tracemalloc.start()
    nbvslr.run(raw, out=tmp_path / "r", progress=False, jobs=1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    info = json.loads((tmp_path / "r" / "leak" / "run.json").read_text())
    assert info["asymptotic_error"]["lr"] == 0.0
    assert peak < 100e6, f"peak {peak / 1e6:.0f} MB"


# ------------------------------------------------------ 3. few splits, wide intervals


def test_two_splits_seal_intervals_every_reader_accepts(tmp_path):
    """A run of 2 splits: its intervals stay within what an error can be; every reader reads it."""
    from click.testing import CliRunner

    from nbvslr.cli import cli

    _csv(tmp_path / "toy.csv", seed=0, shift=0.3)
    raw = {**_raw(tmp_path / "toy.csv"), "splits": 2}
    nbvslr.run(raw, out=tmp_path / "r", progress=False)
    summary = pd.read_csv(tmp_path / "r" / "toy" / "summary.csv")
    paired = pd.read_csv(tmp_path / "r" / "toy" / "paired.csv")
    half = (summary["ci_high"] - summary["ci_low"]) / 2
    assert (half > 0.2).any()  # wide: the clip is what keeps them in range
    assert summary["ci_low"].between(0, 1).all() and summary["ci_high"].between(0, 1).all()
    assert paired["ci_low"].between(-1, 1).all() and paired["ci_high"].between(-1, 1).all()
    assert (summary["ci_low"] <= summary["error_mean"]).all()
    assert (summary["error_mean"] <= summary["ci_high"]).all()
    nbvslr.load(tmp_path / "r")
    folder = str(tmp_path / "r" / "toy")
    for args in (["report", folder], ["plot", folder, "-o", str(tmp_path / "f.png")],
                 ["compare", folder, folder]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)


# ------------------------------------------- 4. folders without a digest: values checked


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two finished runs of the toy task (seeds 1 and 2), their files.sha256 removed."""
    root = tmp_path_factory.mktemp("runs")
    _csv(root / "toy.csv", seed=0, shift=0.8)
    for seed in (1, 2):
        nbvslr.run({**_raw(root / "toy.csv"), "seed": seed}, out=root / f"s{seed}",
                   progress=False)
        (root / f"s{seed}" / "toy" / "files.sha256").unlink()
    return root


def _damaged(two_runs, tmp_path, damage) -> Path:
    folder = tmp_path / "toy"
    shutil.copytree(two_runs / "s1" / "toy", folder)
    damage(folder)
    return folder


def _edit(name: str, change):
    def damage(folder: Path) -> None:
        table = pd.read_csv(folder / name)
        change(table).to_csv(folder / name, index=False, float_format="%.10g")
    return damage


def _swap(name: str, a: str, b: str):
    return _edit(name, lambda t: t.rename(columns={a: b, b: a}))


def _flip(t):
    t[["diff_mean", "ci_low", "ci_high"]] = -t[["diff_mean", "ci_high", "ci_low"]].to_numpy()
    return t


DAMAGES = {
    "flipped signs in paired.csv": _edit("paired.csv", _flip),
    "paired.csv's models swapped": _swap("paired.csv", "model_a", "model_b"),
    "a truncated paired.csv": _edit("paired.csv", lambda t: t.iloc[:-1]),
    "summary headers swapped (mean, ci_low)": _swap("summary.csv", "error_mean", "ci_low"),
    "summary headers swapped (sd, sem)": _swap("summary.csv", "error_sd", "error_sem"),
    "summary headers swapped (ci ends)": _swap("summary.csv", "ci_low", "ci_high"),
    "summary model labels swapped": _edit(
        "summary.csv", lambda t: t.assign(model=t["model"].map({"nb": "lr", "lr": "nb"}))),
    "NaN as a mean": _edit("summary.csv", lambda t: t.assign(
        error_mean=np.where(np.arange(len(t)) == 2, np.nan, t["error_mean"]))),
}


@pytest.mark.parametrize("what", list(DAMAGES))
def test_a_folder_without_a_digest_refuses_values_that_disagree(two_runs, tmp_path, what):
    """A damaged summary.csv or paired.csv in a folder without files.sha256 is refused."""
    from nbvslr.errors import ResultsError
    from nbvslr.results import read

    folder = _damaged(two_runs, tmp_path, DAMAGES[what])
    with pytest.raises(ResultsError):
        read.load_task(folder).saved_paired()
    with pytest.raises(ResultsError):
        read.load_tables(folder)


def test_another_runs_paired_csv_is_refused(two_runs, tmp_path):
    """paired.csv copied from a run of another seed disagrees with the summary: refused."""
    from nbvslr.errors import ResultsError
    from nbvslr.results import read

    folder = _damaged(two_runs, tmp_path, lambda f: shutil.copy(
        two_runs / "s2" / "toy" / "paired.csv", f / "paired.csv"))
    with pytest.raises(ResultsError, match="diff_mean"):
        read.load_task(folder).saved_paired()


def test_a_nan_mean_under_a_recomputed_digest_is_refused_in_one_line(two_runs, tmp_path):
    """NaN as a mean with files.sha256 made again for it: report refuses in one line, exit 1."""
    from click.testing import CliRunner

    from nbvslr.cli import cli

    folder = _damaged(two_runs, tmp_path, DAMAGES["NaN as a mean"])
    (folder / "files.sha256").write_text("".join(
        f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n"
        for n in ("summary.csv", "paired.csv", "run.json")))
    result = CliRunner().invoke(cli, ["report", str(folder)])
    assert result.exit_code == 1
    assert "error_mean: missing (NaN)" in result.output
    assert "Traceback" not in result.output


def test_the_undamaged_runs_are_read(two_runs):
    """The two runs the damage tests start from are read by every reader."""
    from nbvslr.results import read

    for seed in (1, 2):
        task = read.load_task(two_runs / f"s{seed}" / "toy")
        assert task.saved_paired() is not None
        read.load_tables(two_runs / f"s{seed}" / "toy")


# ------------------------------------------------ 10. devices and pipes are never read


def _cli(*args: str):
    from click.testing import CliRunner

    from nbvslr.cli import cli

    return CliRunner().invoke(cli, list(args))


@pytest.mark.timeout(120)
def test_a_device_or_a_pipe_as_the_config_is_refused_in_one_line(tmp_path):
    """nbvslr run /dev/zero, or a named pipe no one writes: one line, never read or waited on."""
    import os

    os.mkfifo(tmp_path / "pipe.yaml")
    for path in ("/dev/zero", str(tmp_path / "pipe.yaml")):
        result = _cli("run", path, "--out", str(tmp_path / "out"))
        assert result.exit_code != 0
        assert "not a regular file" in result.output and "Traceback" not in result.output


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", ["paired.csv", ".checkpoints/m=5.csv.gz"])
def test_a_named_pipe_in_a_task_folder_is_refused_not_waited_on(tmp_path, where):
    """A named pipe as paired.csv or a checkpoint: report and run refuse it in one line."""
    import os

    out = tmp_path / "out"
    _csv(tmp_path / "toy.csv", seed=0, shift=0.8)
    raw = _raw(tmp_path / "toy.csv")
    nbvslr.run(raw, out=out, progress=False)
    (out / "toy" / where).unlink()
    os.mkfifo(out / "toy" / where)
    result = _cli("report", str(out))
    if where == "paired.csv":
        assert result.exit_code == 1 and "is not a regular file" in result.output
    config = tmp_path / "toy.json"
    config.write_text(json.dumps(raw))
    result = _cli("run", str(config), "--out", str(out), "-q")
    if where != "paired.csv":
        assert result.exit_code == 1 and "is not a regular file" in result.output
    assert "Traceback" not in result.output


def test_a_csv_larger_than_the_memory_is_refused_before_it_is_read(tmp_path):
    """A CSV of 1 TiB (sparse, nothing stored) is refused from its size in one line."""
    from nbvslr.errors import DataError

    big = tmp_path / "big.csv"
    with big.open("wb") as fh:
        fh.write(b"a,b,label\n")
        fh.truncate(1 << 40)
    with pytest.raises(DataError, match=r"memory: .*big\.csv is 1024\.0 GiB"):
        nbvslr.run(_raw(big), progress=False)


# --------------------------------------------------------- 6, 9, 11. tables made in Python


def test_a_dataframe_wider_than_a_csv_may_be_is_refused_at_once():
    """1000 x 100,000 numeric columns: refused in one line, as the same CSV is."""
    from nbvslr.errors import ConfigError

    wide = pd.DataFrame(np.zeros((1000, 100_000)))
    wide["label"] = np.arange(1000) % 2
    with pytest.raises(ConfigError, match=r"memory: the DataFrame has 100001 columns, more "
                                          r"than the 10000"):
        nbvslr.Task.from_frame(wide, target="label", name="wide")


def test_dataframes_with_newlines_and_tabs_in_cells_have_their_own_digests():
    """Two tables whose cells differ only in where a newline or tab falls: two digests."""
    from nbvslr.data.frame import Frame

    a = pd.DataFrame({"x": ["p\nq"], "y": ["r"]})  # a newline moved to the next column
    b = pd.DataFrame({"x": ["p"], "y": ["q\nr"]})
    c = pd.DataFrame({"x": ["p\tq", "r"], "y": ["s", "t"]})  # a tab moved to the next row
    d = pd.DataFrame({"x": ["p", "q\tr"], "y": ["s", "t"]})
    assert Frame(a).sha256 != Frame(b).sha256
    assert Frame(c).sha256 != Frame(d).sha256


def test_a_lone_surrogate_in_a_text_cell_is_no_traceback():
    """A cell holding a lone surrogate character: a task is made, or one line says why."""
    from nbvslr.errors import NbvslrError

    rng = np.random.default_rng(0)
    words = ["apple pie", "banana split", "cherry tart", "date loaf"]
    docs = [f"{words[i % 4]} {i}" for i in range(60)]
    docs[3] = "bad \ud800 cell"
    frame = pd.DataFrame({"text": docs, "label": [i % 2 for i in range(60)]})
    frame["x"] = rng.normal(size=60)
    for kind, columns in (("text", ["text"]), (None, ["text", "x"])):
        try:
            task = nbvslr.Task.from_frame(frame, target="label", name="s", kind=kind,
                                          columns=columns)
            nbvslr.run({"tasks": [task], "sizes": [10], "splits": 2, "seed": 0,
                        "models": {"nb": {}}}, progress=False)
        except NbvslrError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize("progress", [object(), "yes", 1.5])
def test_a_progress_without_the_methods_is_a_config_error_before_any_work(tmp_path, progress):
    """progress= given an object without Progress's methods: one ConfigError, nothing run."""
    from nbvslr.errors import ConfigError

    _csv(tmp_path / "toy.csv", seed=0, shift=1.0)
    with pytest.raises(ConfigError, match=r"progress: a \w+ without the method\(s\) start"):
        nbvslr.run(_raw(tmp_path / "toy.csv"), out=tmp_path / "out", progress=progress)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- 13. a long model name


def test_a_300_character_model_name_is_drawn_without_warning(tmp_path):
    """A model named with 300 characters: the figure is drawn without a layout warning, its
    legend shows the name shortened, and two such names stay apart."""
    import warnings

    from nbvslr.results import read
    from nbvslr.views import plots

    _csv(tmp_path / "toy.csv", seed=0, shift=1.0)
    raw = _raw(tmp_path / "toy.csv")
    raw["models"] = {"n" * 300 + "a": {"model": "nb"}, "n" * 300 + "b": {"model": "nb"},
                     "lr": {}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbvslr.run(raw, out=tmp_path / "out", progress=False)
        fig = plots.figure_of_tasks([read.load_task(tmp_path / "out" / "toy")])
        plots.render(fig, "png")
    labels = fig.axes[0].get_legend_handles_labels()[1]
    long = [label for label in labels if label.startswith("nnn")]
    assert len(long) == 2 and len(set(long)) == 2
    assert all(len(label) <= plots.LABEL_CHARS for label in labels)


# ------------------------------------------------ 7. an OS error while files are renamed


@pytest.mark.parametrize("fail_at", range(1, 7))  # 6 renames: 5 files, then files.sha256
def test_an_os_error_at_any_rename_leaves_the_previous_result_readable(tmp_path, monkeypatch,
                                                                      fail_at):
    """EIO at the k-th rename of the final files: the previous finished result is read back
    whole (the same bytes, its digest checked); the next write succeeds."""
    import errno

    import nbvslr.results.write as write
    from nbvslr.results import read

    _csv(tmp_path / "toy.csv", seed=0, shift=1.0)
    raw = _raw(tmp_path / "toy.csv")
    nbvslr.run(raw, out=tmp_path / "out", progress=False)
    folder = tmp_path / "out" / "toy"
    def files() -> dict[str, bytes]:  # what the readers read (the lock is the run's own)
        return {p.name: p.read_bytes() for p in folder.iterdir()
                if p.is_file() and p.name != ".lock"}

    before = files()
    real, calls = write.replace_staged, []

    def failing(tmp, path):
        calls.append(path)
        if len(calls) == fail_at:
            Path(tmp).unlink()
            raise OSError(errno.EIO, "Input/output error", str(path))
        real(tmp, path)

    monkeypatch.setattr(write, "replace_staged", failing)
    with pytest.raises(OSError):
        nbvslr.run({**raw, "seed": 2}, out=tmp_path / "out", progress=False)
    assert files() == before
    task = read.load_task(folder)
    assert task.manifest is not None and task.saved_paired() is not None
    monkeypatch.setattr(write, "replace_staged", real)
    nbvslr.run({**raw, "seed": 2}, out=tmp_path / "out", progress=False)
    assert read.load_task(folder).summary.shape == task.summary.shape


# ------------------------------------------------------- 12. Ctrl-C as the command starts


EARLY = """
import importlib.abc, os, signal, sys, time
sys.argv = ["nbvslr", "--version"]

class Interrupt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):  # Ctrl-C as nbvslr.errors starts to import
        if name == "nbvslr.errors":
            os.kill(os.getpid(), signal.{sig})
            time.sleep(0.05)  # the handler has run by now
        return None

sys.meta_path.insert(0, Interrupt())
from nbvslr.__main__ import main
main()
"""


@pytest.mark.parametrize(("sig", "code", "word"), [("SIGINT", 130, "interrupted"),
                                                   ("SIGTERM", 143, "terminated")])
def test_a_signal_while_the_command_itself_imports_is_one_line(sig, code, word):
    """Ctrl-C (SIGTERM) before the command's handlers are in place: exit 130 (143), one
    line, no traceback."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", EARLY.replace("{sig}", sig)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == code, done.stderr
    assert done.stderr.strip().splitlines() == [f"{word}: rerun the same command to start again"]
    assert done.stdout == ""


def test_a_text_folder_with_a_terabyte_document_is_refused_unread(tmp_path):
    """A class folder holding a 1 TiB document (sparse): one line from its size, unread."""
    from nbvslr.errors import DataError

    for k in range(2):
        (tmp_path / "docs" / f"c{k}").mkdir(parents=True)
        (tmp_path / "docs" / f"c{k}" / "a.txt").write_text("a short post")
    with (tmp_path / "docs" / "c1" / "b.txt").open("wb") as fh:
        fh.truncate(1 << 40)
    raw = {"tasks": [{"name": "docs", "source": {"folder": str(tmp_path / "docs")}}],
           "sizes": [2], "splits": 2, "models": {"nb": {}}}
    with pytest.raises(DataError, match=r"memory: text folder .* holds more bytes"):
        nbvslr.run(raw, progress=False)
