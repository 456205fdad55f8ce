"""``nbvslr plot`` and ``nbvslr report`` through click: outputs, formats, exit codes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from results_factory import fabricate

from nbvslr.cli import cli


@pytest.fixture
def root(tmp_path):
    """A results root with two fabricated task folders."""
    fabricate(tmp_path / "results", task="sonar", title="sonar (continuous)", x_range=(0, 120))
    fabricate(tmp_path / "results", task="pima", title="pima (continuous)", x_range=(0, 60))
    return tmp_path / "results"


def _invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_plot_default_output_is_curve_png_in_the_folder(root):
    """Without -o the figure goes to RESULTS_DIR/curve.png (the name `run` writes),
    atomically (no temp files)."""
    res = _invoke("plot", root)
    assert res.exit_code == 0, res.output
    out = root / "curve.png"
    assert out.read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in root.iterdir() if p.is_file()) == ["curve.png"]


def test_plot_one_task_folder(root):
    """A task folder alone is plotted beside it (pima.png); the task folder is not written."""
    before = {p.name: p.read_bytes() for p in (root / "pima").iterdir()}
    res = _invoke("plot", root / "pima")
    assert res.exit_code == 0, res.output
    assert (root / "pima.png").read_bytes().startswith(b"\x89PNG")
    assert {p.name: p.read_bytes() for p in (root / "pima").iterdir()} == before


def test_plot_never_replaces_a_runs_file_and_holds_the_lock_inside_a_task(root, tmp_path):
    """-o TASK/curve.png is refused; another name in a task folder waits for no run: refused
    while a run holds the folder's lock."""
    from nbvslr import results

    (root / "pima" / "curve.png").write_bytes(b"the run's")
    res = _invoke("plot", root / "pima", "-o", root / "pima" / "curve.png")
    assert res.exit_code == 1 and "never replaces" in res.output
    assert (root / "pima" / "curve.png").read_bytes() == b"the run's"
    with results.TaskLocks([root / "pima"]):
        res = _invoke("plot", root / "pima", "-o", root / "pima" / "mine.png")
        assert res.exit_code == 1 and "another nbvslr run" in res.output, res.output
    assert _invoke("plot", root / "pima", "-o", root / "pima" / "mine.png").exit_code == 0


@pytest.mark.parametrize(("name", "magic"), [("f.pdf", b"%PDF"), ("f.svg", b"<?xml"),
                                             ("sub/f.png", b"\x89PNG")])
def test_plot_format_from_extension(root, tmp_path, name, magic):
    """PDF, SVG and PNG by the file name's extension; missing parent folders are made."""
    res = _invoke("plot", root, "--figure1", "-o", tmp_path / name)
    assert res.exit_code == 0, res.output
    assert (tmp_path / name).read_bytes().startswith(magic)


def test_plot_several_outputs_at_once(root, tmp_path):
    """Repeating -o writes the same figure in each format."""
    res = _invoke("plot", root, "-o", tmp_path / "a.png", "-o", tmp_path / "a.pdf")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "a.png").is_file() and (tmp_path / "a.pdf").is_file()


def test_plot_unknown_extension_exits_2_with_one_line(root, tmp_path):
    """An unknown format is a usage error: one line, exit 2, nothing written."""
    res = _invoke("plot", root, "-o", tmp_path / "fig.jpg")
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0
    assert "unknown figure format 'jpg'" in res.output
    assert not (tmp_path / "fig.jpg").exists()


def test_plot_missing_folder_is_one_line_error(tmp_path):
    """A results folder that does not exist: exit 2 (a usage error), the path and the fix,
    one line, for plot, report and compare alike."""
    for args in (["plot", tmp_path / "nothing"], ["report", tmp_path / "nothing"],
                 ["compare", tmp_path / "nothing", tmp_path]):
        res = _invoke(*args)
        assert res.exit_code == 2, args
        assert res.output.startswith(f"error: results folder {tmp_path / 'nothing'} does not "
                                     "exist"), args
        assert "Traceback" not in res.output and res.output.strip().count("\n") == 0, args
    res = _invoke("plot", tmp_path / "nothing")
    assert "nbvslr run" in res.output


def test_report_prints_and_writes_the_same_table(root, tmp_path):
    """report prints the Markdown table; -o writes exactly the same text."""
    out = tmp_path / "report.md"
    res = CliRunner().invoke(cli, ["report", str(root), "--n-boot", "100", "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert text.startswith("| task | m |")
    rows = [ln.split("|")[1].strip() for ln in text.splitlines()[2:4]]
    assert rows == ["pima", "sonar"]
    assert text in res.output


def test_report_brief_prints_a_line_per_task_and_writes_the_table(root, tmp_path):
    """--brief (make figures): one line per task on stdout, the whole table in the file."""
    out = tmp_path / "report.md"
    res = CliRunner().invoke(cli, ["report", str(root), "--n-boot", "50", "-o", str(out),
                                   "--brief"])
    assert res.exit_code == 0, res.output
    full = _invoke("report", root, "--n-boot", 50).output
    assert out.read_text() == full
    printed = res.stdout.splitlines()
    assert [line.split()[0] for line in printed] == ["pima", "sonar"]
    assert all("winner" in line and "|" not in line for line in printed)
    assert len(res.stdout) < len(full) / 3


def test_report_corrupt_results_is_one_line_error(root):
    """A corrupt summary.csv: exit 1, naming the file."""
    (root / "pima" / "summary.csv").write_text("nothing,useful\n")
    res = _invoke("report", root)
    assert res.exit_code == 1
    assert "pima/summary.csv: missing column" in res.output
    assert res.output.strip().count("\n") == 0


def test_plot_and_report_a_tiny_real_run(tmp_path):
    """A real run of an inline synthetic task is plotted and reported from its folder alone."""
    from nbvslr.config import parse_config
    from nbvslr.data.dataset import DataSettings
    from nbvslr.results import load_results
    from nbvslr.runner import run_experiment
    from nbvslr.views.plots import figure1

    out = tmp_path / "results"
    raw = {
        "tasks": [{"name": "syn", "source": {"synthetic": {
            "generator": "dependent", "rows": 200, "features": 5, "seed": 1}}}],
        "sizes": [2, 6, 12, 24], "splits": 20, "seed": 0,
        "models": {"nb": {}, "lr": {}}, "block": 20,
    }
    data = DataSettings(cache_dir=tmp_path / "cache", download=False)
    run_experiment(parse_config(raw, source="inline", data=data, out=out,
                                backend="sequential"))
    assert (out / "syn" / "curve.png").read_bytes().startswith(b"\x89PNG")

    res = _invoke("plot", out, "--figure1", "-o", tmp_path / "fig.svg")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "fig.svg").read_bytes().startswith(b"<?xml")
    tasks = load_results(out)
    (ax,) = figure1(tasks).get_axes()
    assert ax.get_title() == tasks[0].title
    styles = {ln.get_label(): ln.get_linestyle() for ln in ax.get_lines()
              if ln.get_gid() != "crossover"}
    assert styles == {"nb": "-", "lr": "--"}
    assert ax.get_xlim() == (0.0, 24.0)

    res = _invoke("report", out, "--n-boot", "50", "--no-notes")
    assert res.exit_code == 0, res.output
    (row,) = [ln for ln in res.output.splitlines() if ln.startswith("| syn ")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "2–24"
    assert cells[4] in ("nb", "lr", "tie") and cells[7] in ("nb", "lr", "tie")
    assert cells[11] == "0.500"  # the synthetic prior is 1/2


@pytest.mark.parametrize(("args", "drawn"), [
    ((), False), (("--paper",), True), (("--figure1",), True),
    (("--figure1", "--no-paper"), False),
])
def test_plot_paper_overlay_default_and_switches(root, tmp_path, args, drawn):
    """The paper's curves: on by default with --figure1, off otherwise, switched by
    --paper/--no-paper (SVG ids name the drawn lines)."""
    out = tmp_path / "f.svg"
    res = _invoke("plot", root, *args, "-o", out)
    assert res.exit_code == 0, res.output
    assert ('id="paper-nb"' in out.read_text()) is drawn


def test_report_no_paper_leaves_the_comparison_out(root):
    """`report` ends with the comparison with the paper; --no-paper leaves it out."""
    assert "Against the paper's Figure 1" in _invoke("report", root, "--n-boot", 10).output
    assert "Against the paper" not in _invoke("report", root, "--n-boot", 10,
                                              "--no-paper").output


def test_figure_and_report_are_ordinary_files(root, tmp_path):
    """The figure and the report go through the results writer: the mode of any new file
    (0666 minus the umask), not the owner-only mode of a temporary file."""
    import os

    umask = os.umask(0)
    os.umask(umask)
    assert _invoke("plot", root, "-o", tmp_path / "fig.png").exit_code == 0
    assert _invoke("report", root, "-o", tmp_path / "report.md", "--n-boot", 20).exit_code == 0
    for name in ("fig.png", "report.md"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask


def _panel_titles(svg: str, titles: list[str]) -> list[str]:
    """The given panel titles in the order an SVG draws them (matplotlib writes each text
    as a comment before its glyphs)."""
    return sorted(titles, key=lambda t: svg.index(f"<!-- {t} -->"))


def test_plot_orders_a_folder_of_tasks_as_the_report_and_given_folders_as_given(root, tmp_path):
    """A folder of task folders is drawn in the report's order (the paper's panels first,
    in Figure 1's order, then the others); task folders named one by one keep their order."""
    fabricate(root, task="my-task", title="my task")
    titles = ["pima (continuous)", "sonar (continuous)", "my task"]
    out = tmp_path / "all.svg"
    assert _invoke("plot", root, "-o", out).exit_code == 0
    assert _panel_titles(out.read_text(), titles) == titles  # folders: my-task, pima, sonar
    out = tmp_path / "given.svg"
    assert _invoke("plot", root / "my-task", root / "sonar", root / "pima",
                   "-o", out).exit_code == 0
    assert _panel_titles(out.read_text(), titles) == ["my task", "sonar (continuous)",
                                                      "pima (continuous)"]


def test_plot_of_a_task_folder_names_its_file_as_given(root, monkeypatch):
    """``nbvslr plot results/pima`` writes and names results/pima.png, relative as given
    (it printed the absolute path, where a folder of tasks' was relative); ``.`` inside
    the task folder is its own name beside it."""
    monkeypatch.chdir(root.parent)
    res = _invoke("plot", "results/pima")
    assert res.exit_code == 0 and "wrote results/pima.png (1 panel)" in res.output
    monkeypatch.chdir(root / "sonar")
    res = _invoke("plot", ".")
    assert res.exit_code == 0 and f"wrote {root / 'sonar.png'} (1 panel)" in res.output
    assert (root / "sonar.png").is_file()
