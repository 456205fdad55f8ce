"""How much memory the fitting code works in: one budget, passed down as an argument.

Every stage works on blocks of the split axis; a block never changes a split's result,
only the speed and the peak memory. ``Budget(memory)`` is the one setting, and each stage
takes its block size from it:

- ``stacks`` (= memory): the gathered training rows of one chunk of splits (``score_splits``);
- ``hmc`` (1/50 of it): HMC's constraint stacks and Gram matrices, a few MB (its chains
  run one at a time in compiled code; larger blocks only page-fault);
- ``cache`` (1/100 of it): Newton's blocks, small enough to stay in the CPU cache and reuse
  freed memory (faster than one large block, whose fresh temporaries page-fault);
- ``hit_and_run`` (4 x cache): hit-and-run's constraint stacks and pre-drawn directions.

Each stage also has its fewest splits per block (``MIN_BLOCK`` of its module), which
``min_block`` overrides (tests use it to force small blocks).
"""

from __future__ import annotations

from dataclasses import dataclass

MEMORY = 200e6
"""The default budget (bytes)."""


@dataclass(frozen=True)
class Budget:
    """Bytes a block of splits may hold, per stage (see the module docstring)."""

    memory: float = MEMORY
    min_block: int | None = None

    @property
    def stacks(self) -> float:
        return self.memory

    @property
    def hmc(self) -> float:
        return self.memory / 50

    @property
    def cache(self) -> float:
        return self.memory / 100

    @property
    def hit_and_run(self) -> float:
        return self.cache * 4

    def step(self, block_bytes: float, split_bytes: float, min_block: int) -> int:
        """Splits per block: ``block_bytes // split_bytes``, at least ``min_block`` (or this
        budget's ``min_block`` when set)."""
        low = self.min_block if self.min_block is not None else min_block
        return max(low, int(block_bytes // max(split_bytes, 1.0)))


DEFAULT_BUDGET = Budget()
