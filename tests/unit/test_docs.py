"""The documentation: the generated options page is current, and every local link resolves."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _options_page():
    spec = importlib.util.spec_from_file_location("options_page", ROOT / "docs" / "options_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_options_page_is_generated_from_the_code():
    """docs/options.md is what docs/options_page.py prints (regenerate it after a change)."""
    assert (ROOT / "docs" / "options.md").read_text("utf-8") == _options_page().render()


def test_options_page_names_every_default():
    """Every config key and model option, with its default from the code, is on the page."""
    from nbvslr import config
    from nbvslr.models import FAMILIES

    page = _options_page().render()
    for key in config.KEYS:
        assert f"| `{key}` |" in page
    for family, options in FAMILIES.items():
        for option in options:
            assert f"| {family} | `{option}` |" in page
    assert f"| `splits` | {config.DEFAULT_SPLITS} |" in page


def test_results_page_lists_the_columns_of_the_code():
    """docs/results.md shows each file's columns as nbvslr.results.layout defines them."""
    from nbvslr.results import PAIRED_COLUMNS, SPLIT_COLUMNS, SUMMARY_COLUMNS

    page = (ROOT / "docs" / "results.md").read_text("utf-8")
    for columns in (SPLIT_COLUMNS, SUMMARY_COLUMNS, PAIRED_COLUMNS):
        assert f"`{','.join(columns)}`" in page


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_local_links_resolve(page):
    """Every relative link of the README and docs/ names a file that exists."""
    text = page.read_text("utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    missing = [t for t in targets if "://" not in t and not (page.parent / t).exists()]
    assert not missing, f"{page.name}: {missing}"


def test_results_readme_names_every_committed_folder():
    """results/README.md lists each folder that .gitignore lets git keep under results/
    (`name/`), and README.md names each (`results/name/`): no committed run unexplained."""
    text = (ROOT / "results" / "README.md").read_text("utf-8")
    kept = re.findall(r"^!/results/([^/\s]+)/$", (ROOT / ".gitignore").read_text("utf-8"),
                      flags=re.MULTILINE)
    assert len(kept) >= 10
    missing = [name for name in kept if f"`{name}/`" not in text]
    assert not missing, missing
    readme = (ROOT / "README.md").read_text("utf-8")
    missing = [name for name in kept if f"`results/{name}/`" not in readme]
    assert not missing, ("README.md", missing)


def _quasi_shares(task: str) -> dict[int, float]:
    """LR's share of quasi-separated training sets per m in the committed reference run."""
    import pandas as pd

    summary = pd.read_csv(ROOT / "results" / "reference" / task / "summary.csv")
    lr = summary[summary["model"] == "lr"]
    return dict(zip(lr["m"].astype(int), lr["share_quasi"], strict=True))


def _from_m(shares: dict[int, float], holds) -> int:
    """The smallest m from which ``holds(share)`` is true at every larger m of the grid."""
    sizes = sorted(shares)
    return next(m for i, m in enumerate(sizes) if all(holds(shares[k]) for k in sizes[i:]))


def test_quoted_shares_of_quasi_separated_sets_are_the_committed_ones():
    """Where the pages say from which m every adult (discrete) training set and most of
    sick's are quasi-separated, and the share at m = 102, they quote results/reference."""
    adult, sick = _quasi_shares("adult-discrete"), _quasi_shares("sick")
    every = _from_m(adult, lambda s: s == 1.0)
    most = _from_m(sick, lambda s: s > 0.5)
    at_102 = round(100 * adult[102])
    pages = {name: (ROOT / "docs" / name).read_text("utf-8").replace("\n", " ")
             for name in ("results.md", "findings.md", "fidelity.md")}
    claims = [
        ("results.md", r"adult \(discrete\) every training set from m = (\d+) on", every),
        ("results.md", r"on sick most from m = (\d+)", most),
        ("findings.md", r"(\d+)% of adult \(discrete\)'s at m = 102", at_102),
        ("findings.md", r"at m = 102 and all from\s+m = (\d+)", every),
        ("findings.md", r"most of sick's from m = (\d+)", most),
        ("fidelity.md", r"(\d+)% at m = 102, all from m = \d+", at_102),
        ("fidelity.md", r"% at m = 102, all from m = (\d+)", every),
    ]
    for page, pattern, want in claims:
        found = re.findall(pattern, re.sub(r"\s+", " ", pages[page]))
        assert found and all(int(f) == want for f in found), (page, pattern, found, want)


def test_the_default_pairs_are_described_by_approach_everywhere():
    """No page or docstring says the default pairs are nb models against lr models: they
    are every generative model against every discriminative one (config.pairs)."""
    stale = re.compile(r"(each|every) nb model (against|vs\.?) (each|every) lr model",
                       re.IGNORECASE)
    files = [*PAGES, *sorted((ROOT / "nbvslr").rglob("*.py"))]
    hits = [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in files
            for m in stale.finditer(re.sub(r"\s+#?\s*", " ", f.read_text("utf-8")))]
    assert not hits, hits


def test_the_as_published_profile_is_described_with_every_setting():
    """docs/configs.md's sentence on `profile: as-published` and docs/fidelity.md's section
    on it name each model setting the profile makes (nbvslr.models.options.PROFILES)."""
    from nbvslr.models.options import PROFILES

    configs = re.sub(r"\s+", " ", (ROOT / "docs" / "configs.md").read_text("utf-8"))
    sentence = configs[configs.index("`profile: as-published` (one config key"):]
    sentence = sentence[:sentence.index(". ")]
    fidelity = (ROOT / "docs" / "fidelity.md").read_text("utf-8")
    section = fidelity[fidelity.index("## The profile `as-published`"):]
    section = re.sub(r"\s+", " ", section[:section.index("\n## ", 5)])
    for options in PROFILES["as-published"].values():
        for key, value in options.items():
            assert f"`{key}: {value}`" in sentence, (key, value, sentence)
            assert f"`{key}: {value}`" in section, (key, value)


def test_the_fidelity_gate_on_the_reference_is_quoted_as_it_exits():
    """docs/fidelity.md's `nbvslr fidelity results/reference --min-within 13 --min-agree 14`
    comment gives the counts the committed reference has (within, agree at the largest m)."""
    from nbvslr.analysis import fidelity

    panels = fidelity.compare_results([ROOT / "results" / "reference"])
    within = sum(p.within() for p in panels)
    agree = sum(p.agrees_at(-1) for p in panels)
    page = (ROOT / "docs" / "fidelity.md").read_text("utf-8")
    line = next(ln for ln in page.splitlines()
                if ln.startswith("nbvslr fidelity results/reference --min-within"))
    assert line.endswith(f"# exits 1: {within} and {agree}"), (line, within, agree)
