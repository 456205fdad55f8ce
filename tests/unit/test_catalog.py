"""The shipped configs: listed, shown, and run by name from any folder."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from nbvslr.cli import cli
from nbvslr.config import load_config
from nbvslr.config.catalog import resolve_config, shipped_config, shipped_configs
from nbvslr.data import BUILTIN_TASKS

REPO_CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_every_panel_has_a_shipped_config_with_a_description():
    """Each built-in task, figure1, adult and synthetic are shipped, each described in a line."""
    found = {c.name: c for c in shipped_configs()}
    assert set(BUILTIN_TASKS) | {"figure1", "adult", "synthetic"} <= set(found)
    for config in found.values():
        assert config.description and "\n" not in config.description
        load_config(config.path)  # every shipped config is valid
    assert found["adult"].description.endswith("discrete attributes only.")
    # the first sentence only, not the list of tasks that follows it
    assert found["synthetic"].description == (
        "Synthetic data with a known truth: runs offline, in seconds, with no download.")
    # a line of `nbvslr configs` fits a wide terminal
    assert max(len(c.description) for c in found.values()) <= 110


def test_the_checkout_configs_folder_is_the_shipped_one():
    """configs/ at the top of a checkout holds exactly the shipped configs."""
    shipped = {c.path.resolve() for c in shipped_configs()}
    assert {p.resolve() for p in REPO_CONFIGS.rglob("*.yaml")} == shipped


def test_configs_lists_and_show_prints_a_config():
    """`nbvslr configs` has one line per config; `configs show NAME` prints valid YAML."""
    runner = CliRunner()
    listing = runner.invoke(cli, ["configs"])
    assert listing.exit_code == 0
    names = [line.split()[0] for line in listing.output.splitlines()]
    assert names == [c.name for c in shipped_configs()]
    shown = runner.invoke(cli, ["configs", "show", "pima"])
    assert shown.exit_code == 0
    assert yaml.safe_load(shown.output)["tasks"] == ["pima"]


def test_a_config_name_in_place_of_a_command_names_configs_show():
    """`nbvslr configs generative` (a shipped config, not a command): exit 2, one line
    giving the command that prints it; another unknown word keeps click's message."""
    runner = CliRunner()
    result = runner.invoke(cli, ["configs", "generative"])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "nbvslr configs show generative" in result.output
    other = runner.invoke(cli, ["configs", "nosuch"])
    assert other.exit_code == 2
    assert "No such command 'nosuch'" in other.output


def test_an_unknown_name_suggests_the_closest(tmp_path, monkeypatch):
    """A misspelt name, or a checkout path used elsewhere: exit 2, one line with a hint."""
    runner = CliRunner()
    result = runner.invoke(cli, ["configs", "show", "pimaa"])
    assert result.exit_code == 2
    assert result.output.strip().endswith("`nbvslr configs` lists the shipped ones")
    assert "did you mean 'pima'" in result.output
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["run", "configs/synthetic.yaml"])
    assert result.exit_code == 2
    assert "did you mean the shipped config 'synthetic'" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_name_runs_the_shipped_config_from_an_empty_folder(tmp_path, monkeypatch):
    """`nbvslr run NAME` in a folder with no configs runs the shipped one into ./results."""
    monkeypatch.chdir(tmp_path)
    assert resolve_config("synthetic") == shipped_config("synthetic").path
    (tmp_path / "synthetic").write_text("tasks: [lenses]\n")
    assert resolve_config("synthetic") == Path("synthetic")  # files first
    result = CliRunner().invoke(cli, ["run", "lenses", "--splits", "3", "--jobs", "1", "-q",
                                      "--offline", "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "results" / "lenses" / "summary.csv").is_file()
    assert not (tmp_path / "cache").exists()  # the shipped files were read in place


def test_a_folder_given_as_config_is_one_line():
    """A folder where a config file belongs: exit 2, one line."""
    result = CliRunner().invoke(cli, ["run", str(REPO_CONFIGS)])
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and "is a folder" in result.output
    assert len(result.output.strip().splitlines()) == 1
