"""Who is better at one size m: two rules, two names, so that a word means one thing.

- ``winner``: the *winner* at m, from the paired differences ``a - b`` on the same splits
  (one ``paired.csv`` row): the model whose error is lower with the difference's 95%
  interval entirely on its side of 0, else ``"tie"``. The report's winner columns, the
  crossovers' significance and ``nbvslr compare`` use it.
- ``ahead``: the model *ahead* at m, from two mean errors alone: the lower one when they
  differ by more than a tolerance, else ``"tie"``. It is for curves without intervals: the
  paper's digitized Figure 1, and ours set against it (``nbvslr fidelity`` and the report's
  table against the paper).

Both return ``"nb"``, ``"lr"`` or ``"tie"``: the roles of the default pair, a = NB, b = LR.
"""

from __future__ import annotations

TIE = 0.005
"""``ahead``: mean errors at most this far apart are a tie (about twice the digitization
error of the paper's curves)."""

# the errors compared are printed to 3 decimals: 0.305 - 0.300 is 0.0050000000000000044 in
# floating point, and must still count as "within 0.005"
SLACK = 1e-9


def winner(paired_row) -> str:
    """The winner at one m, from one paired.csv row (``diff = a - b``).

    ``"lr"`` when the interval lies entirely above 0 (model_b, by default LR, has the lower
    error), ``"nb"`` when it lies entirely below 0 (model_a, by default NB, is better), and
    ``"tie"`` when it contains 0 or is undefined (NaN, a single split). The labels name the
    roles of the default pair: a = NB, b = LR.
    """
    low, high = float(paired_row["ci_low"]), float(paired_row["ci_high"])
    if low > 0:
        return "lr"
    if high < 0:
        return "nb"
    return "tie"


def ahead(nb: float, lr: float, tie: float = TIE) -> str:
    """The model ahead at one m: ``"nb"`` or ``"lr"``, the lower mean error, or ``"tie"``
    when they are within ``tie``."""
    if abs(nb - lr) <= tie + SLACK:
        return "tie"
    return "nb" if nb < lr else "lr"
