"""Which models a run compares by default: every generative model against every
discriminative one, each family's approach as the registry declares it
(``nbvslr.models.registry.APPROACHES``).
"""

from __future__ import annotations

from collections.abc import Sequence

from nbvslr.models.family import DISCRIMINATIVE, GENERATIVE
from nbvslr.models.registry import approach

NEITHER = "tie"
"""What the report calls a size where neither model of a pair is better
(``nbvslr.analysis.winner``): no model may be named so."""


def pick_pairs(models: Sequence[tuple[str, str | None]]) -> tuple[tuple[str, str], ...]:
    """The default comparisons ``(a, b)`` of ``(name, family)`` pairs: every model of a
    generative family (a) against every model of a discriminative one (b), each side in the
    given order, a-major; ``()`` when one side is empty. A family nbvslr does not know (or
    None) is on neither side."""
    a = [name for name, fam in models if fam is not None and approach(fam) == GENERATIVE]
    b = [name for name, fam in models if fam is not None and approach(fam) == DISCRIMINATIVE]
    return tuple((x, y) for x in a for y in b)


def pick_pair(models: Sequence[tuple[str, str | None]]) -> tuple[str, str] | None:
    """The first of ``pick_pairs`` (the first generative model against the first
    discriminative one), or None when one side is empty."""
    pairs = pick_pairs(models)
    return pairs[0] if pairs else None
