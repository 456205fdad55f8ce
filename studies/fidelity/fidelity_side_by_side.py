"""Two runs against the paper, side by side: the stated method and a profile.

    python studies/fidelity/fidelity_side_by_side.py STATED_DIR PROFILE_DIR

Per panel of the paper's Figure 1: each run's mean |ours - paper| of the NB and the LR curve
and the model ahead (lower mean error) at the smallest and largest m
(``nbvslr.analysis.fidelity``), beside the paper's; then each run's summary line. Prints
Markdown.
"""

from __future__ import annotations

import argparse

from nbvslr.analysis.fidelity import compare_results, summary_line


def _cell(p, tol: float = 0.03) -> str:
    def d(x: float) -> str:
        return f"**{x:.3f}**" if x > tol else f"{x:.3f}"

    ends = ", ".join(
        f"**{o}**" if o != t else o for o, t in zip(p.our_ends, p.paper_ends, strict=True)
    )
    return f"{d(p.diff_nb)} / {d(p.diff_lr)} | {ends}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stated")
    parser.add_argument("profile")
    args = parser.parse_args(argv)
    stated = {p.task: p for p in compare_results(args.stated)}
    profile = {p.task: p for p in compare_results(args.profile)}
    print("| panel | ahead at ends, paper | stated: mean abs. diff. NB / LR | ahead at ends | "
          "as-published: mean abs. diff. NB / LR | ahead at ends |")
    print("|---|---|---|---|---|---|")
    for task, p in stated.items():
        q = profile.get(task)
        right = _cell(q) if q is not None else "— | —"
        print(f"| {task} | {', '.join(p.paper_ends)} | {_cell(p)} | {right} |")
    print()
    print(f"- stated ({args.stated}): {summary_line(list(stated.values()))}")
    print(f"- as-published ({args.profile}): {summary_line(list(profile.values()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
