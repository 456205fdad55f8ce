"""What the numbers of a run say, computed from its tables (never drawn, never written).

- ``stats``: per-size summaries with their t intervals, paired differences;
- ``crossovers``: where two curves cross, its bootstrap interval (``Crossovers``);
- ``winner``: the winner at one m (from the paired interval), and the model ahead (from
  the means alone, for the paper's curves);
- ``fidelity``: our curves against the paper's Figure 1;
- ``compare``: the curve guard, a new run against a reference (``nbvslr compare``);
- ``formatting``: how every table writes a number, a size m and a missing value.

Imported by module (``from nbvslr.analysis.stats import summarize``); this file imports
nothing.
"""
