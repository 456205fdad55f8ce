"""The 15 panels of Figure 1 as benchmark inputs: the real tasks, or synthetic stand-ins.

The benchmark measures speed, which depends on the shapes (rows N, attributes d, levels of
each discrete attribute, the class balance) and hardly on the values. When the data layer or
the real tasks cannot be loaded, ``synthetic_dataset`` builds a task of the same shape, with
labels that depend on the attributes (so LR is not trivially separable at large m) and
reports ``notes["synthetic"] = True`` so that every printed table can say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nbvslr.data.dataset import Dataset
from nbvslr.data.recipes import get_recipe


@dataclass(frozen=True)
class PanelShape:
    """Shape of one panel's task.

    Attributes
    ----------
    name : str
        Built-in task name.
    kind : {"continuous", "discrete"}
    n_rows : int
    positive : float
        Fraction of rows in class 1.
    n_features : int
        Continuous: attributes. Discrete: ``len(n_values)``.
    n_values : tuple of int
        Discrete: levels of each attribute.
    sizes : tuple of int
        The paper's m-grid.
    """

    name: str
    kind: str
    n_rows: int
    positive: float
    n_features: int
    n_values: tuple[int, ...]
    sizes: tuple[int, ...]


def _cont(name: str, n: int, pos: float, d: int) -> PanelShape:
    return PanelShape(name, "continuous", n, pos, d, (), get_recipe(name).sizes)


def _disc(name: str, n: int, pos: float, k: tuple[int, ...]) -> PanelShape:
    return PanelShape(name, "discrete", n, pos, len(k), k, get_recipe(name).sizes)


#: Figure 1's panels in the paper's order: the real tasks' shapes and class balance, and
#: the paper's grid of each (from its recipe).
PANELS: tuple[PanelShape, ...] = (
    _cont("pima", 768, 0.35, 8),
    _cont("adult-continuous", 48842, 0.24, 6),
    _cont("boston", 506, 0.49, 13),
    _cont("optdigits-0v1", 1125, 0.51, 64),
    _cont("optdigits-2v3", 1129, 0.51, 64),
    _cont("ionosphere", 351, 0.64, 34),
    _cont("liver", 345, 0.58, 6),
    _cont("sonar", 208, 0.53, 60),
    _disc("adult-discrete", 48842, 0.24, (9, 16, 7, 15, 6, 5, 2, 42)),
    _disc("promoters", 106, 0.50, (4,) * 57),
    _disc("lymphography", 148, 0.55, (4, 2, 2, 2, 2, 2, 2, 2, 4, 4, 3, 4, 4, 8, 3, 2, 2, 8)),
    _disc("breast-cancer", 286, 0.30, (6, 3, 11, 7, 3, 3, 2, 6, 2)),
    _disc("lenses", 24, 0.38, (3, 2, 2, 2)),
    _disc("sick", 3772, 0.06, (3,) + (2,) * 20 + (5,)),
    _disc("voting", 435, 0.39, (3,) * 16),
)

PANEL_NAMES = tuple(p.name for p in PANELS)


def panel_shape(name: str) -> PanelShape:
    """The shape of the panel named ``name`` (KeyError if unknown)."""
    for p in PANELS:
        if p.name == name:
            return p
    raise KeyError(name)


def synthetic_dataset(shape: PanelShape, seed: int = 0, concentration: float = 1.0) -> Dataset:
    """A random task with the panel's shape.

    Continuous: two Gaussian classes whose means differ along a random direction, plus a
    few near-constant columns, rescaled to [0, 1]. Discrete: per attribute and class, level
    probabilities drawn from a Dirichlet(``concentration``) law (at 1 a few levels are rare,
    as in the real tasks; a large value makes every level common).
    Labels: exactly ``round(positive * n_rows)`` rows of class 1, shuffled.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(len(shape.name),)))
    n = shape.n_rows
    n_pos = min(n - 1, max(1, round(shape.positive * n)))
    y = np.zeros(n, dtype=np.int8)
    y[rng.permutation(n)[:n_pos]] = 1
    if shape.kind == "continuous":
        d = shape.n_features
        shift = rng.standard_normal(d) * 0.6  # (d,) class-mean difference
        X = rng.standard_normal((n, d)) + y[:, None] * shift  # (N, d)
        X[:, : max(1, d // 16)] = np.round(X[:, : max(1, d // 16)])  # a few coarse columns
        lo, hi = X.min(axis=0), X.max(axis=0)
        X = (X - lo) / np.where(hi > lo, hi - lo, 1.0)  # (N, d) in [0, 1]
        n_values: tuple[int, ...] = ()
    else:
        n_values = shape.n_values
        X = np.empty((n, len(n_values)), dtype=np.int64)  # (N, d)
        for j, k in enumerate(n_values):
            p = rng.dirichlet(np.full(k, concentration), size=2)  # (2, k) level law per class
            u = rng.random(n)[:, None]  # (N, 1)
            X[:, j] = np.minimum((u > np.cumsum(p[y], axis=1)).sum(axis=1), k - 1)
    return Dataset(
        name=shape.name,
        title=f"{shape.name} (synthetic)",
        X=X,
        y=y,
        kind=shape.kind,  # type: ignore[arg-type]
        n_values=n_values,
        sizes=shape.sizes,
        notes={"synthetic": True},
    )


def real_data_available() -> str | None:
    """None when the real tasks can be loaded (their files ship with nbvslr), else why not."""
    try:
        from nbvslr.data import load_task  # noqa: F401
    except ImportError as exc:
        return f"the data layer is not importable ({exc})"
    return None


def load_panel(name: str, cache_dir: Path, synthetic: bool) -> Dataset:
    """The panel's task: loaded from the shipped files, or synthetic when ``synthetic``."""
    if synthetic:
        return synthetic_dataset(panel_shape(name))
    from nbvslr.data import load_task
    from nbvslr.data.dataset import DataSettings, TaskSpec

    settings = DataSettings(cache_dir=cache_dir, download=False)
    return load_task(TaskSpec(name=name), settings)
