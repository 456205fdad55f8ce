"""``nbvslr report --extrapolate`` on the committed Figure 1 reference: its CPU time against
the report without the section, measured in the same process.

Usage::

    python benchmarks/extrapolation.py            # results/reference, 3 repeats
    python benchmarks/extrapolation.py --quick    # one task, 20 draws, 1 repeat (seconds)

It prints the median CPU seconds (``harness.CLOCK``, BLAS on one thread) of ``report_table``
without and with the section past the grid (``nbvslr.views.extrapolation``, its default
draws), the section's share and the ratio of the two; the target is 10 s of CPU for the whole
report with the section. Nothing here asserts a timing; a crash exits non-zero.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import harness  # noqa: E402
from nbvslr.analysis.extrapolate import DEFAULT_N_BOOT  # noqa: E402
from nbvslr.results import load_results  # noqa: E402
from nbvslr.views.extrapolation import section  # noqa: E402
from nbvslr.views.report import report_table  # noqa: E402


def measure(results: Path, *, repeats: int, quick: bool) -> dict[str, float]:
    """Median CPU seconds of the report without and with the section, and of the section."""
    tasks = load_results([results])
    if quick:
        tasks = tasks[:1]
    draws = 20 if quick else DEFAULT_N_BOOT
    with threadpool_limits(limits=1):
        plain, _, _ = harness.time_repeated(lambda: report_table(tasks, paper=False), repeats)
        alone, _, _ = harness.time_repeated(lambda: section(tasks, n_boot=draws), repeats)
        whole, times, _ = harness.time_repeated(
            lambda: report_table(tasks, paper=False, extrapolate=True), 1 if quick else repeats)
    return {"tasks": len(tasks), "draws": draws, "report": plain, "section": alone,
            "report_extrapolate": whole, "ratio": whole / plain if plain else float("nan")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", type=Path, default=REPO / "results/reference")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    out = measure(args.results, repeats=1 if args.quick else args.repeats, quick=args.quick)
    print(f"{out['tasks']} tasks, {out['draws']} draws: report {out['report']:.2f} s, "
          f"section alone {out['section']:.2f} s, report --extrapolate "
          f"{out['report_extrapolate']:.2f} s of CPU ({out['ratio']:.1f}x the report)")
    if args.json is not None:
        harness.write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
