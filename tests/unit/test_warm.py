"""The compiled loops are built once per machine: the first run compiles them in the
calling process and says so in one line; a stamp beside numba's cache keeps later runs
quiet, and an edited kernel compiles again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nbvslr.runner import warm


def _counting(monkeypatch):
    calls = []
    monkeypatch.setattr(warm, "compile_all", lambda groups=warm.GROUPS: calls.append(1))
    return calls


def test_first_call_compiles_and_says_one_line_later_calls_do_nothing(tmp_path, monkeypatch):
    """An empty cache folder: one compile and one line; then the stamp: neither again."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    calls, said = _counting(monkeypatch), []
    assert warm.ensure_compiled(said.append) is not None
    assert warm.ensure_compiled(said.append) is None
    assert calls == [1]
    assert len(said) == 1 and said[0].startswith("compiling nbvslr's numerical loops once")
    assert all((tmp_path / "numba" / warm.stamp_name(g)).exists() for g in warm.GROUPS)


def test_an_edited_kernel_compiles_again(tmp_path, monkeypatch):
    """The stamp names a digest of the kernels' sources: a changed source misses it."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    kernels = tmp_path / "kernels"
    shutil.copytree(warm.KERNELS, kernels, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(warm, "KERNELS", kernels)
    calls = _counting(monkeypatch)
    warm.ensure_compiled()
    (kernels / "steps.py").write_text((kernels / "steps.py").read_text() + "\n# edited\n")
    warm.ensure_compiled()
    assert calls == [1, 1]


def test_no_writable_cache_folder_compiles_nothing_here(tmp_path, monkeypatch):
    """Where numba cannot cache, warming would be lost: nothing is compiled ahead."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocker / "numba"))
    calls = _counting(monkeypatch)
    assert warm.ensure_compiled(print) is None
    assert calls == []


def test_a_run_compiles_the_groups_its_tasks_need_once_each(tmp_path, monkeypatch):
    """A two-class run compiles the two-class loops (and the draws) only; a later K-class
    run compiles its own group, saying so again; then neither compiles anything."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    compiled, said = [], []
    monkeypatch.setattr(warm, "compile_all", lambda groups: compiled.append(tuple(groups)))
    monkeypatch.setattr(warm, "busy_factor", lambda: 1.0)  # the idle machine's seconds
    two = warm.groups_for([("continuous", False), ("discrete", False)])
    k = warm.groups_for([("discrete", True), ("continuous", False)])
    assert two == ("two-class",) and k == ("two-class", "k-class")
    assert warm.groups_for([("text", False), ("text", True)]) == ("text",)
    warm.ensure_compiled(said.append, two)
    warm.ensure_compiled(said.append, k)
    warm.ensure_compiled(said.append, k)
    warm.ensure_compiled(said.append, two)
    assert compiled == [("two-class",), ("k-class",)]
    assert len(said) == 2
    # the first line counts the draws' compile, the second only the K-class loops'
    est = warm.ESTIMATE_S
    assert f"about {est['draws'] + est['two-class']:.0f} s" in said[0]
    assert f"about {est['k-class']:.0f} s" in said[1]


def test_the_estimate_counts_a_busy_machine(monkeypatch):
    """Where this process gets a quarter of a core, the line says four times the idle
    machine's CPU seconds, and names those; on an idle machine, those alone."""
    monkeypatch.setattr(warm, "busy_factor", lambda: 4.0)
    cpu = warm.ESTIMATE_S["draws"] + warm.ESTIMATE_S["two-class"]
    line = warm.estimate_line(["two-class"], first=True)
    assert f"(about {4 * cpu:.0f} s, as the machine is busy: {cpu:.0f} s on an idle one;" in line
    monkeypatch.setattr(warm, "busy_factor", lambda: 1.0)
    assert f"(about {cpu:.0f} s; later runs" in warm.estimate_line(["two-class"], first=True)


def test_busy_factor_is_the_wall_time_of_cpu_work():
    """The probe's wall over CPU time: at least 1, and, with nothing run beside this process
    by the test, a finite share of a core."""
    factor = warm.busy_factor(probe=0.02)
    assert 1.0 <= factor <= 20.0


def test_warming_compiles_what_a_k_class_gaussian_fit_runs():
    """compile_all builds the K-class Gaussian NB passes with the types a fit of several
    features passes them (a lone feature is summed by numpy): such a fit compiles nothing."""
    import numpy as np

    from nbvslr.kernels.classes import largest_variance, within_squares
    from nbvslr.models.nb.fit_multi import fit_gaussian_nb_multi

    warm.compile_all(["k-class"])
    built = (list(largest_variance.signatures), list(within_squares.signatures))
    assert all(built)
    rng = np.random.default_rng(0)
    y = np.stack([rng.permutation(np.arange(12) % 4) for _ in range(3)]).astype(np.int8)
    fit_gaussian_nb_multi(rng.random((3, 12, 5)), y, 4)
    assert (list(largest_variance.signatures), list(within_squares.signatures)) == built


@pytest.mark.parametrize("group", ["two-class", "k-class"])
def test_warming_compiles_what_an_lda_or_qda_fit_runs(group):
    """compile_all builds LDA's and QDA's passes with the types their entries pass them (the
    data's rows read by index, two classes or K): such a fit compiles nothing."""
    import numpy as np

    from nbvslr.kernels.gaussian import class_stats, mirror_lower, quadratic_weights
    from nbvslr.models.discriminant.gaussian import fit_lda, fit_qda

    kernels = (class_stats, mirror_lower, quadratic_weights)
    warm.compile_all([group])
    built = [list(k.signatures) for k in kernels]
    assert all(built)
    rng = np.random.default_rng(0)
    X = rng.random((20, 5))
    rows = np.stack([rng.choice(20, 12, replace=False) for _ in range(3)])
    y = np.stack([rng.permutation(np.arange(12) % 3) for _ in range(3)]).astype(np.int8)
    fit_lda(X, y, 3, rows=rows)
    fit_qda(X, y, 3, rows=rows)
    assert [list(k.signatures) for k in kernels] == built


def test_loops_compiled_on_another_cpu_are_not_this_machines(tmp_path, monkeypatch):
    """The stamps name the CPU (a wheel carries the loops of the machine that built it):
    the same kernels stamped on another kind of CPU compile again here, with the line."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    calls, said = _counting(monkeypatch), []
    monkeypatch.setattr(warm, "cpu_key", lambda: "the build machine|avx512f")
    warm.ensure_compiled()
    monkeypatch.setattr(warm, "cpu_key", lambda: "this machine|sse2")
    warm.ensure_compiled(said.append)
    assert calls == [1, 1] and len(said) == 1


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="Linux's /proc/cpuinfo")
def test_the_cpu_key_names_the_model_and_its_instruction_sets():
    """On Linux, the first processor's model and flags (what numba compiles for)."""
    model, flags = warm.cpu_key().split("|")
    assert model and len(flags.split()) > 5
