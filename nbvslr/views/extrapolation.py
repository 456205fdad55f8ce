"""The report's section past the grid: each model's fitted learning curve, its limit beside
the error when trained on all rows, and the predicted crossover beyond the largest m, with
intervals that count the noise of the means and the choice of the curve family, within the
reach the validation supports (``nbvslr.analysis.extrapolate``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from nbvslr.analysis.extrapolate import (
    DEFAULT_N_BOOT,
    FAMILIES,
    REACH,
    Extrapolation,
    all_rows,
    task_extrapolation,
)
from nbvslr.analysis.formatting import MISSING, m_text, number
from nbvslr.analysis.metrics import LABELS, metric_of
from nbvslr.errors import ResultsError
from nbvslr.views.naming import GENERIC, family_of, shared_titles, task_label


def header(names: tuple[str, str] | None) -> list[str]:
    """The section's header, the pair's columns headed ``names`` (else a and b)."""
    a, b = names or GENERIC
    return ["task", f"{a} fit", f"{a} limit", f"{a} all rows", f"{b} fit",
            f"{b} limit", f"{b} all rows", "predicted crossover"]


NOTES = """\
- fit: the curve family that best predicted the larger sizes from the smaller ones (fitted
  to the first two thirds of the sizes, scored on the rest), then fitted to every size,
  weighted by 1/sem²; in brackets the other families that predicted them acceptably, whose
  curves widen the intervals: {families}.
- limit: the best family's limit as m grows, [the envelope of the acceptable families'
  {pct}% intervals over {n_boot} draws of the mean curves, with the shape error as far as the
  task's rows]; no fit may put it below the {what} when trained and scored on all rows
  (all rows) less two of its standard errors{noise}.
- predicted crossover: the first m past the largest measured size where the fitted {A} and {B}
  curves cross, [its interval, as the limit's]; looked for up to {reach:g}× the largest m
  (the reach the validation supports) or the task's rows if fewer. "none before N" only
  where every interval agrees; "uncertain before N" where some draws cross and the best
  fits do not; "none" at an interval's upper end: some draws do not cross before N.
  {beyond}
- Extrapolation is a model, not a measurement: how its intervals held against curves
  measured far past the paper's grids, and what remains untrustworthy: docs/extrapolation.md
  in nbvslr's repository."""

#: What the all-rows value's standard error is, by metric.
NOISE = {"error": " (binomial)",
         "brier": (" (the rows' squared distances' standard deviation over √N; 0 where the "
                   "rule on all rows has no probabilities)")}

BEYOND_NOTE = {
    False: "Past the reach: \"beyond reach\"; `--beyond-reach` looks as far as the task's "
           "rows.",
    True: "**--beyond-reach**: looked for up to the task's rows, past the validated reach.",
}


def _interval(iv: tuple[float, float] | None, fmt) -> str:
    if iv is None or all(math.isinf(x) for x in iv):
        return ""
    return " [" + ", ".join("none" if math.isinf(x) else fmt(x) for x in iv) + "]"


def _fit(ex: Extrapolation, model: str) -> str:
    others = [f for f in ex.acceptable.get(model, ()) if f != ex.family[model]]
    return ex.family[model] + (f" (+{', '.join(others)})" if others else "")


def _limit(ex: Extrapolation, model: str) -> str:
    return number(ex.asymptote[model]) + _interval(ex.asymptote_interval[model], number)


def _crossover(ex: Extrapolation) -> str:
    """The crossover's cell: its point and interval, "none before N" where the interval
    agrees, "uncertain before N" where it does not."""
    end = m_text(ex.search_to)
    past = (f"; past it, beyond reach ({ex.reach:g}× the largest m)"
            if ex.search_to < ex.horizon else "")  # the reach: past it, nothing is said
    iv = ex.crossover_interval
    if ex.crossover is not None:
        return m_text(round(ex.crossover)) + _interval(iv, lambda x: m_text(round(x)))
    if iv is None or math.isinf(iv[0]):
        return f"none before {end}{past}"
    return (f"uncertain before {end}" + _interval(iv, lambda x: m_text(round(x))) + past)


def section(tasks: Sequence, *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0,
            level: float = 0.95, notes: bool = True, beyond: bool = False) -> str:
    """The Markdown section "Beyond the grid" for ``tasks`` (``results.TaskResults``, in
    the report's order); a task whose grid is too short to fit gets its reason.
    ``beyond``: look for the crossover up to the task's rows, past the reach."""
    made: list[tuple[object, Extrapolation | ResultsError]] = []
    for task in tasks:
        try:
            made.append((task, task_extrapolation(task, n_boot=n_boot, seed=seed,
                                                  level=level, beyond=beyond)))
        except ResultsError as err:
            made.append((task, err))
    families = {id(task): (family_of(task, ex.model_a), family_of(task, ex.model_b))
                for task, ex in made if isinstance(ex, Extrapolation)}
    names = shared_titles(families.values())
    head = header(names)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task, ex in made:
        full = all_rows(task)
        if not isinstance(ex, Extrapolation):
            lines.append(f"| {task.name} | " + " | ".join([MISSING] * 6)
                         + f" | {str(ex).split(': ', 1)[-1]} |")
            continue
        a, b = ex.model_a, ex.model_b
        cells = [task_label(task.name, (a, b), families[id(task)], names is not None),
                 _fit(ex, a), _limit(ex, a), number(full.get(a)),
                 _fit(ex, b), _limit(ex, b), number(full.get(b)), _crossover(ex)]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    if notes:
        curves = ", ".join(f"{f.name} `{f.formula}`" for f in FAMILIES.values())
        A, B = names or GENERIC
        metric = metric_of(tasks[0]) if tasks else "error"
        text += "\n" + NOTES.format(pct=round(100 * level), n_boot=n_boot,
                                    families=curves, A=A, B=B, reach=REACH,
                                    what=LABELS[metric], noise=NOISE[metric],
                                    beyond=BEYOND_NOTE[beyond]) + "\n"
    return text
