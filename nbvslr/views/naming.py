"""How the tables and figures name the two models of a compared pair ``(a, b)``.

A heading names a family in capitals (``NB``, ``LDA``, ``LR``). Where every pair shown has
the same two families, the headings and captions name them ("NB @ min m", "NB solid, LR
dashed", "LR better from"); where the pairs differ, they say *a* and *b* and each row or
legend names its pair. A model named after its family (``nb``, ``lda``) is that family's
plain model: it needs no name beside the family's heading; any other model (``lr-C1``,
``nb-bernoulli``) is named with its pair ("pima (nb vs lr-C1)").
"""

from __future__ import annotations

from collections.abc import Iterable

GENERIC = ("a", "b")
"""The headings of a table or figure whose pairs are of different families."""


def family_of(task, model: str) -> str:
    """The family of a model of ``task`` (a ``results.TaskResults``: its summary.csv's
    ``family``), the model's own name when the summary has no row of it."""
    hit = task.summary.loc[task.summary["model"].astype(str) == model, "family"]
    return str(hit.iloc[0]) if not hit.empty else model


def title(family: str) -> str:
    """A family's heading: its name in capitals (``nb`` -> ``NB``)."""
    return str(family).upper()


def shared_titles(families: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The headings ``(A, B)`` of the family pairs ``(family of a, family of b)`` when
    they are all the same pair of two different families, else None (``GENERIC`` then, or
    nothing to show): two models of one family (``lr`` against ``lr-C1``) would be headed
    alike, "LR" and "LR"."""
    pairs = set(families)
    if len(pairs) != 1:
        return None
    fam_a, fam_b = pairs.pop()
    if title(fam_a) == title(fam_b):
        return None
    return title(fam_a), title(fam_b)


def plain(pair: tuple[str, str], families: tuple[str, str]) -> bool:
    """Both models of ``pair`` are their families' plain models (named after them)."""
    return tuple(pair) == tuple(families)


def task_label(task: str, pair: tuple[str, str], families: tuple[str, str],
               titled: bool) -> str:
    """A row's name: the task alone when the headings name the families (``titled``) and the
    pair is their plain models, else ``task (a vs b)``."""
    if titled and plain(pair, families):
        return task
    return f"{task} ({pair[0]} vs {pair[1]})"
