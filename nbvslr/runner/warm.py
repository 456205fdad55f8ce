"""The compiled loops, built once per machine: the calling process compiles them before any
worker starts, when numba's cache does not hold them yet, and says so in one line.

numba keeps each compiled loop on disk (``kernels.jit.compiled``: ``cache=True``), but a
first parallel run's workers would each compile the same loops at the same time, with
nothing on screen. ``ensure_compiled`` compiles them once in the calling process (on tiny
inputs of the types a run passes, so the workers load the cached code), the groups of
loops the run's tasks need (``GROUPS``), and leaves a stamp per group beside numba's cache:
later runs see the stamps and import nothing. A stamp's name holds
a digest of the kernels' sources, Python's and numba's versions, so an edited kernel or a
new numba compiles again. ``python -c 'from nbvslr.runner.warm import main; main()'``
does the same from the shell (``make install`` runs it).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[1] / "kernels"

#: the one line a cold first run (and ``make install``) prints, before the compile starts
MESSAGE = ("compiling nbvslr's numerical loops once for this machine (about {seconds:.0f} s"
           "{busy}; later runs load them from numba's cache)")
BUSY = ", as the machine is busy: {cpu:.0f} s on an idle one"

#: The loops by the tasks that need them: every run draws training sets; a two-class task
#: counts, samples and fits Newton steps with the binary loops, a task of K > 2 classes with
#: the K-class ones, a text task with the text models' loops. A run compiles the groups its
#: tasks need (each once per machine, with its own stamp); ``make install`` compiles all.
GROUPS = ("two-class", "k-class", "text")

#: About how long each part takes to compile, CPU seconds on the project machine
#: (benchmarks/RESULTS.md, "A machine's first run"): the draws, shared by every group (with
#: the imports and numba's start), and the groups' own loops. The one source of the compile
#: time that the Makefile, the docs and the line before a compile give.
ESTIMATE_S = {"draws": 7.5, "two-class": 6.5, "k-class": 4.0, "text": 2.7}


PROBE_S = 0.1
"""CPU seconds of the busy loop by which ``busy_factor`` measures this process's share."""


def busy_factor(probe: float = PROBE_S) -> float:
    """How much longer than on an idle machine this process's CPU work takes now: the wall
    time of a ``probe`` seconds' busy loop over its CPU time, at least 1 (the load average
    overstates it: many of the processes it counts wait on something else). Stops after 20
    probes' wall time on a machine too busy to give it any."""
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    while (time.process_time() - start_cpu < probe
           and time.perf_counter() - start_wall < 20 * probe):
        pass
    cpu = max(time.process_time() - start_cpu, 1e-9)
    return max(1.0, (time.perf_counter() - start_wall) / cpu)


def estimate_line(groups: Sequence[str], first: bool) -> str:
    """``MESSAGE`` for compiling ``groups`` (and the draws when ``first``): the CPU seconds
    of ``ESTIMATE_S`` times ``busy_factor``, and the idle machine's seconds when busy."""
    cpu = (ESTIMATE_S["draws"] if first else 0.0) + sum(ESTIMATE_S[g] for g in groups)
    factor = busy_factor()
    busy = BUSY.format(cpu=cpu) if factor >= 1.5 else ""
    return MESSAGE.format(seconds=cpu * factor, busy=busy)


def cache_folder() -> Path | None:
    """The folder numba caches nbvslr's loops in (``NUMBA_CACHE_DIR``, else the kernels'
    ``__pycache__`` when writable, else numba's per-user folder); None if none is writable."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    candidates = [Path(given)] if given else [KERNELS / "__pycache__",
                                              Path.home() / ".cache" / "numba"]
    for folder in candidates:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    return None


def groups_for(kinds: Iterable[tuple[str, bool]]) -> tuple[str, ...]:
    """The groups of loops that tasks of these ``(kind, multiclass)`` need, in ``GROUPS``'
    order."""
    need = {"text" if kind == "text" else "k-class" if multiclass else "two-class"
            for kind, multiclass in kinds}
    return tuple(g for g in GROUPS if g in need)


def stamp_name(group: str, digest: str | None = None) -> str:
    """``nbvslr-kernels-<digest>-<group>.compiled`` (``digest`` as ``kernels_digest`` gives
    it, made here if not given)."""
    return f"nbvslr-kernels-{digest or kernels_digest()}-{group}.compiled"


def cpu_key() -> str:
    """The CPU's model and instruction-set flags (the first processor of /proc/cpuinfo on
    Linux; elsewhere what ``platform`` knows): numba compiles for the CPU it runs on, so
    loops compiled on another kind of machine (a wheel built elsewhere) are not this one's."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            fields = {}
            for line in f:
                if not line.strip():
                    break  # the first processor's block
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
        model = fields.get("model name") or fields.get("CPU part", "")  # x86, else ARM
        return f"{model}|{fields.get('flags') or fields.get('Features', '')}"
    except OSError:
        return platform.processor()


def kernels_digest() -> str:
    """16 hex digits of the digest of the kernels' sources, Python's version, numba's
    version, the machine's architecture and its CPU (``cpu_key``)."""
    digest = hashlib.sha256()
    for path in sorted(KERNELS.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    try:
        numba_version = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - numba is required
        numba_version = "?"
    digest.update(f"{sys.version}|{numba_version}|{platform.machine()}|{cpu_key()}".encode())
    return digest.hexdigest()[:16]


def compile_all(groups: Sequence[str] = GROUPS) -> None:
    """Call each compiled loop of these groups once on tiny inputs of a run's types (numba
    compiles it, or loads it from its cache): the training-set draws and the models' seeds
    always; "two-class": the score counts and log-loss sums, the separable-set sampler, the
    Newton solves and sparse products, the peel of pure columns, the quasi direction's
    passes; "k-class": the K-class
    counts, Gaussian NB's sums and the cone sampler; both: LDA's and QDA's passes; "text":
    the text models' loops."""
    import numpy as np

    from nbvslr.splits import draw_train_sets, each_generator, split_seeds

    draw_seeds, model_seeds = split_seeds(0, "t", 2, range(3))
    draw_train_sets(np.array([0, 1, 1, 0]), 2, draw_seeds)
    next(each_generator(model_seeds))
    for group in groups:
        _COMPILE[group]()


def _two_class() -> None:
    import numpy as np

    from nbvslr.data.dataset import Dataset
    from nbvslr.kernels.sparse_gram import listed_rows, pack_columns
    from nbvslr.models.design import get_design
    from nbvslr.models.evaluate import count_mistakes, count_mistakes_lex
    from nbvslr.models.lr.hmc import sample_separating_hmc
    from nbvslr.models.lr.newton import fit_newton
    from nbvslr.models.lr.separation import max_margin_direction, pure_rows
    from nbvslr.models.nb.fit import fit_categorical_nb, fit_gaussian_nb
    from nbvslr.models.probabilities import dense_losses

    data = Dataset(name="t", title="t", X=np.array([[0.0], [1.0]]), y=np.array([0, 1]),
                   kind="continuous")
    count_mistakes(get_design(data, "x"), np.ones((2, 2)), np.array([[0], [1]]))
    count_mistakes_lex(get_design(data, "x"), np.ones((2, 2)), np.ones((2, 2)),
                       np.array([[0], [1]]))
    dense_losses(get_design(data, "x"), data, np.ones((2, 2)), np.array([[0], [1]]))
    # two columns: a lone one is summed by numpy (nb.fit), not the compiled pass
    fit_gaussian_nb(np.array([[[0.0, 1.0], [1.0, 0.5]]]), np.array([[0, 1]]))
    fit_categorical_nb(np.array([[[0], [1]]]), np.array([[0, 1]]), (2,))
    sample_separating_hmc(np.array([[[2.0, 1.0], [1.0, 1.0]]]), np.array([[1.0, -1.0]]),
                          np.array([[1.0, -1.5]]), [np.random.SeedSequence(0)])
    Z = np.zeros((1, 8, 9))
    Z[0, np.arange(8), np.arange(8)] = 1.0
    Z[0, :, 8] = 1.0
    fit_newton(Z, np.array([[1.0, -1.0] * 4]), C=1.0)
    pure_rows(Z, np.array([[1.0, -1.0] * 4]))
    # a split's rest listed from the distinct rows (``separation.detect``)
    listed_rows(np.array([0, 1], dtype=np.int64), np.zeros(1, dtype=np.int64), np.ones(1),
                np.zeros((1, 2), dtype=np.int64), np.array([[False, True]]))
    pack_columns(np.zeros((1, 2, 1), dtype=np.int64), np.ones((1, 2), dtype=np.int64), 2)
    # a quasi set: the first row separated by its own column (kernels.direction)
    Zq = np.array([[[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0],
                    [0.0, 0.0, 1.0]]])
    max_margin_direction(Zq, np.array([[1.0, 1.0, -1.0, 1.0, -1.0]]),
                         np.array([[True, False, False, False, False]]))
    _discriminant()


def _discriminant() -> None:
    """LDA's and QDA's passes (``kernels.gaussian``), with the types their fits pass (two
    classes or K: the same loops)."""
    import numpy as np

    from nbvslr.models.discriminant.gaussian import fit_lda, fit_qda

    X = np.array([[[0.0, 1.0], [0.5, 0.2], [1.0, 0.0], [0.3, 0.9]]])
    y = np.array([[0, 1, 1, 0]])
    fit_lda(X, y, 2)
    fit_qda(X, y, 2)


def _k_class() -> None:
    import numpy as np

    from nbvslr.data.dataset import Dataset
    from nbvslr.models.design import get_design
    from nbvslr.models.evaluate_multi import count_mistakes_multi
    from nbvslr.models.lr.cone_hmc import sample_cone_hmc
    from nbvslr.models.nb.fit_multi import fit_gaussian_nb_multi

    three = Dataset(name="t3", title="t3", X=np.array([[0.0], [0.5], [1.0]]),
                    y=np.array([0, 1, 2]), kind="continuous", classes=("a", "b", "c"))
    count_mistakes_multi(get_design(three, "x"), three, np.ones((1, 3, 2)), np.array([[0, 1, 2]]))
    # two features: a lone one is summed by numpy (nb.fit_multi), not the compiled passes
    fit_gaussian_nb_multi(np.array([[[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]]), np.array([[0, 1, 2]]),
                          3)
    sample_cone_hmc(np.array([[[0.0, 1.0], [0.5, 1.0], [1.0, 1.0]]]), np.array([[0, 1, 2]]), 3,
                    np.array([[[-4.0, 2.0], [-2.0, 1.5], [0.0, 0.0]]]),
                    [np.random.SeedSequence(0)])
    _discriminant()


def _text() -> None:
    """The class sums, the per-split Newton-CG and the held-out counts."""
    import numpy as np
    import scipy.sparse as sp

    from nbvslr.models.text.fit import fit_lr_text, fit_nb_text, heldout_errors

    counts = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [0.0, 1.0]]))
    labels, rows, keep = np.array([0, 1, 0, 1]), np.array([[0, 1]]), np.ones((1, 2), dtype=bool)
    theta = fit_nb_text(counts, labels, rows, keep, "multinomial", 1.0)
    heldout_errors(counts, labels, theta, rows)
    fit_lr_text(counts, labels, rows, keep, 1.0)


_COMPILE: dict[str, Callable[[], None]] = {"two-class": _two_class, "k-class": _k_class,
                                           "text": _text}


def ensure_compiled(say: Callable[[str], None] | None = None,
                    groups: Sequence[str] = GROUPS) -> float | None:
    """Compile the loops of ``groups`` here unless their stamps say this machine's cache
    holds them; then write the stamps. ``say`` gets the one line (``MESSAGE``) before the
    compile starts. Returns the seconds spent, or None when nothing was done (the cache is
    warm, or no folder is writable: numba then compiles in every process anyway)."""
    folder = cache_folder()
    if folder is None:
        return None
    digest = kernels_digest()
    stamps = {g: folder / stamp_name(g, digest) for g in groups}
    missing = [g for g in groups if not stamps[g].exists()]
    if not missing:
        return None
    if say is not None:
        first = not any(folder.glob(stamp_name("*", digest)))  # the draws not compiled yet
        say(estimate_line(missing, first))
    started = time.perf_counter()
    compile_all(missing)
    seconds = time.perf_counter() - started
    for group in missing:
        try:
            stamps[group].write_text(f"{seconds:.1f} s\n", encoding="utf-8")
        except OSError:
            pass  # next run compiles (or loads) again: slower, never wrong
    return seconds


def main() -> None:
    """Compile the loops now, saying so on stderr (``make install``)."""
    seconds = ensure_compiled(lambda line: print(line, file=sys.stderr, flush=True))
    print("nbvslr's numerical loops: " + ("already compiled" if seconds is None
                                          else f"compiled in {seconds:.1f} s"),
          file=sys.stderr)

