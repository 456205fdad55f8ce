"""Who is better at one size m: two rules, two names, so that a word means one thing.

- ``winner``: the *winner* at m, from the paired differences ``a - b`` on the same splits
  (one ``paired.csv`` row): the model whose error is lower with the difference's 95%
  interval entirely on its side of 0, else ``NEITHER``. The report's winner columns, the
  crossovers' significance and ``nbvslr compare`` use it.
- ``ahead``: the model *ahead* at m, from two mean errors alone: the lower one when they
  differ by more than a tolerance, else ``NEITHER``. It is for curves without intervals: the
  paper's digitized Figure 1, and ours set against it (``nbvslr fidelity`` and the report's
  table against the paper).

Both return the name of a model of the pair ``(a, b)`` or ``NEITHER``; neither knows which
models the pair holds.
"""

from __future__ import annotations

from nbvslr.config.pairs import NEITHER

__all__ = ["NEITHER", "SLACK", "TIE", "ahead", "winner"]

TIE = 0.005
"""``ahead``: mean errors at most this far apart are a tie (about twice the digitization
error of the paper's curves)."""

# the errors compared are printed to 3 decimals: 0.305 - 0.300 is 0.0050000000000000044 in
# floating point, and must still count as "within 0.005"
SLACK = 1e-9


def winner(paired_row) -> str:
    """The winner at one m, from one paired.csv row (``diff = a - b``; columns ``model_a``,
    ``model_b``, ``ci_low``, ``ci_high``).

    ``model_b`` when the interval lies entirely above 0 (b has the lower error), ``model_a``
    when it lies entirely below 0, and ``NEITHER`` when it contains 0 or is undefined (NaN, a
    single split).
    """
    low, high = float(paired_row["ci_low"]), float(paired_row["ci_high"])
    if low > 0:
        return str(paired_row["model_b"])
    if high < 0:
        return str(paired_row["model_a"])
    return NEITHER


def ahead(error_a: float, error_b: float, pair: tuple[str, str],
          tie: float = TIE) -> str:
    """The model ahead at one m: the name (``pair[0]`` for a, ``pair[1]`` for b) of the one
    with the lower mean error, or ``NEITHER`` when they are within ``tie``."""
    if abs(error_a - error_b) <= tie + SLACK:
        return NEITHER
    return pair[0] if error_a < error_b else pair[1]
