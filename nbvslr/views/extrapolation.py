"""The report's section past the grid: each model's fitted learning curve, its asymptote beside
the error when trained on all rows, and the predicted crossover beyond the largest m
(``nbvslr.analysis.extrapolate``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from nbvslr.analysis.extrapolate import (
    DEFAULT_N_BOOT,
    FAMILIES,
    Extrapolation,
    task_extrapolation,
)
from nbvslr.analysis.formatting import MISSING, m_text, number
from nbvslr.errors import ResultsError
from nbvslr.views.naming import GENERIC, family_of, shared_titles, task_label


def header(names: tuple[str, str] | None) -> list[str]:
    """The section's header, the pair's columns headed ``names`` (else a and b)."""
    a, b = names or GENERIC
    return ["task", f"{a} fit", f"{a} asymptote", f"{a} all rows", f"{b} fit",
            f"{b} asymptote", f"{b} all rows", "predicted crossover"]


NOTES = """\
- fit: the curve family that best predicted the larger sizes from the smaller ones (fitted
  to the first two thirds of the sizes, scored on the rest), then fitted to every size,
  weighted by 1/sem²: {families}.
- asymptote: the fitted curve's limit as m grows, [{pct}% bootstrap interval over the
  splits, {n_boot} resamples] where the splits were kept; **‡** where it lies below the error
  when trained and tested on all rows (all rows), which it should not: that curve is bending
  down faster than the data can sustain, and its extrapolation is not to be trusted.
- predicted crossover: the first m past the largest measured size where the fitted {A} and {B}
  curves cross, up to the task's rows; "none before N" when they do not. Its interval's
  upper end "none" means some resamples predict no crossover before N; **‡** where it rests
  on an asymptote marked ‡.
- Extrapolation is a model, not a measurement: how well it predicted the second half of each
  paper panel's grid from the first, and where not to trust it: docs/extrapolation.md in
  nbvslr's repository."""


def _interval(iv: tuple[float, float] | None, fmt) -> str:
    if iv is None or all(math.isinf(x) for x in iv):
        return ""
    return " [" + ", ".join("none" if math.isinf(x) else fmt(x) for x in iv) + "]"


def _below(ex: Extrapolation, model: str, all_rows: float | None) -> bool:
    """The fitted asymptote lies below the error when trained and tested on all rows."""
    return all_rows is not None and ex.asymptote[model] < all_rows - 1e-9


def _asymptote(ex: Extrapolation, model: str, all_rows: float | None) -> str:
    text = number(ex.asymptote[model]) + _interval(ex.asymptote_interval[model], number)
    return text + (" ‡" if _below(ex, model, all_rows) else "")


def _crossover(ex: Extrapolation, doubtful: bool) -> str:
    if ex.crossover is None:
        text = f"none before {ex.horizon}"
    else:
        text = m_text(round(ex.crossover))
    text += _interval(ex.crossover_interval, lambda x: m_text(round(x)))
    return text + (" ‡" if doubtful and ex.crossover is not None else "")


def section(tasks: Sequence, *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
            level: float = 0.95, notes: bool = True) -> str:
    """The Markdown section "Beyond the grid" for ``tasks`` (``results.TaskResults``, in
    the report's order); a task whose grid is too short to fit gets its reason."""
    made: list[tuple[object, Extrapolation | ResultsError]] = []
    for task in tasks:
        try:
            made.append((task, task_extrapolation(task, n_boot=n_boot, seed=seed,
                                                  level=level)))
        except ResultsError as err:
            made.append((task, err))
    families = {id(task): (family_of(task, ex.model_a), family_of(task, ex.model_b))
                for task, ex in made if isinstance(ex, Extrapolation)}
    names = shared_titles(families.values())
    head = header(names)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task, ex in made:
        full = task.run_info.get("asymptotic_error") or {}
        if not isinstance(ex, Extrapolation):
            lines.append(f"| {task.name} | " + " | ".join([MISSING] * 6)
                         + f" | {str(ex).split(': ', 1)[-1]} |")
            continue
        a, b = ex.model_a, ex.model_b
        cells = [task_label(task.name, (a, b), families[id(task)], names is not None),
                 ex.family[a], _asymptote(ex, a, full.get(a)), number(full.get(a)),
                 ex.family[b], _asymptote(ex, b, full.get(b)), number(full.get(b)),
                 _crossover(ex, any(_below(ex, mo, full.get(mo)) for mo in (a, b)))]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if notes:
        curves = ", ".join(f"{f.name} `{f.formula}`" for f in FAMILIES.values())
        A, B = names or GENERIC
        text += "\n" + NOTES.format(pct=round(100 * level), n_boot=n_boot,
                                    families=curves, A=A, B=B) + "\n"
    return text
