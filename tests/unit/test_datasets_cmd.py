"""``nbvslr datasets``: parsing, output formats, exit codes and messages."""

from __future__ import annotations

import csv
import io

from click.testing import CliRunner

from nbvslr.cli import cli
from nbvslr.data import BUILTIN_TASKS, MIXED_TASKS, MULTICLASS_TASKS, get_recipe


def _run(args, env=None):
    env = {"NBVSLR_DATA_MIRROR": None, **(env or {})}
    return CliRunner().invoke(cli, args, env=env)


def test_csv_lists_every_task_with_its_counts(mirror, cache_dir):
    """--format csv: one row per built-in task (Figure 1's, adult-mixed, the K-class
    tasks), counts first."""
    result = _run(["datasets", "--format", "csv", "--cache", str(cache_dir),
                   "--mirror", str(mirror)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert list(rows[0])[:4] == ["task", "rows", "features", "positives"]
    assert [r["task"] for r in rows] == list(BUILTIN_TASKS + MIXED_TASKS + MULTICLASS_TASKS)
    digits = rows[-3]  # the K-class tasks are listed too, with their classes
    assert (digits["task"], digits["classes"], digits["positives"]) == ("optdigits-10", "10", "")
    mixed = rows[len(BUILTIN_TASKS)]
    assert (mixed["task"], mixed["rows"], mixed["features"], mixed["kind"]) == (
        "adult-mixed", "48842", "14", "mixed")
    lenses = rows[BUILTIN_TASKS.index("lenses")]
    assert (lenses["rows"], lenses["features"], lenses["positives"]) == ("24", "4", "4")
    assert lenses["title"] == get_recipe("lenses").panel_title()
    assert {r["status"] for r in rows} == {"shipped"}
    fresh = _run(["datasets", "--format", "csv", "--cache", str(cache_dir), "--mirror",
                  str(mirror), "--fresh"])
    assert {r["status"] for r in csv.DictReader(io.StringIO(fresh.output))} == {"mirror"}


def test_fetch_fills_the_cache_and_the_list_shows_it(mirror, cache_dir):
    """datasets fetch TASK copies the files; the table then says 'cached' with the path."""
    result = _run(["datasets", "fetch", "lenses", "--cache", str(cache_dir)],
                  env={"NBVSLR_DATA_MIRROR": str(mirror)})
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(cache_dir / "lenses" / "lenses.data")
    table = _run(["datasets", "--cache", str(cache_dir), "--offline"]).output
    lines = {line.split()[0]: line for line in table.splitlines()}
    assert "cached" in lines["lenses"] and str(cache_dir / "lenses") in lines["lenses"]
    assert "shipped" in lines["sonar"] and "nbvslr/data/uci/sonar" in lines["sonar"]
    fresh = _run(["datasets", "--cache", str(cache_dir), "--offline", "--fresh"]).output
    assert "download" in {line.split()[0]: line for line in fresh.splitlines()}["sonar"]


def test_group_options_reach_fetch(mirror, cache_dir):
    """Options given before 'fetch' (--cache, --mirror) are used by it."""
    result = _run(["datasets", "--cache", str(cache_dir), "--mirror", str(mirror),
                   "fetch", "voting"])
    assert result.exit_code == 0, result.output
    assert (cache_dir / "voting" / "house-votes-84.data").is_file()


def test_unknown_task_exits_2_with_a_suggestion(cache_dir):
    """A misspelt task name is a config error (exit 2) with 'did you mean'."""
    result = _run(["datasets", "fetch", "lensse", "--cache", str(cache_dir)])
    assert result.exit_code == 2
    assert "did you mean 'lenses'" in result.output
    assert list(cache_dir.iterdir()) == []


def test_a_misspelt_text_task_is_named_from_the_registry(cache_dir):
    """fetch checks every name against the registry's built-in tasks, text ones included:
    '20nws' gets '20news' and the list of text tasks, one line, nothing fetched."""
    result = _run(["datasets", "fetch", "sms-spam", "20nws", "--cache", str(cache_dir)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "did you mean '20news'" in lines[0]
    assert lines[0].endswith("text tasks: sms-spam, 20news, 20news-crypt-graphics")
    assert not cache_dir.exists() or list(cache_dir.iterdir()) == []


def test_offline_without_mirror_says_how_to_work_offline(cache_dir):
    """--fresh --offline with no mirror: exit 1, one 'error:' line naming NBVSLR_DATA_MIRROR."""
    result = _run(["datasets", "fetch", "sonar", "--offline", "--fresh", "--cache",
                   str(cache_dir)])
    assert result.exit_code == 1
    assert result.output.startswith("error: sonar.all-data is not in the cache")
    assert "NBVSLR_DATA_MIRROR" in result.output and "Traceback" not in result.output


def test_a_mirror_that_does_not_exist_is_an_error(cache_dir, tmp_path):
    """--mirror or NBVSLR_DATA_MIRROR naming no folder: exit 2, one line naming the path."""
    missing = tmp_path / "no-such-mirror"
    for args, env in ((["--mirror", str(missing)], None),
                      ([], {"NBVSLR_DATA_MIRROR": str(missing)})):
        for command in (["datasets"], ["datasets", "fetch", "lenses"]):
            result = _run([*command, "--cache", str(cache_dir), *args], env=env)
            assert result.exit_code == 2, result.output
            assert result.output.startswith(f"error: mirror {missing} does not exist")
            assert len(result.output.strip().splitlines()) == 1
    assert list(cache_dir.iterdir()) == []


def test_the_shipped_files_work_with_no_mirror_and_no_network(cache_dir):
    """A fresh installation: fetch fills the cache from the shipped copies, offline."""
    result = _run(["datasets", "fetch", "sonar", "--offline", "--cache", str(cache_dir)])
    assert result.exit_code == 0, result.output
    assert (cache_dir / "sonar" / "sonar.all-data").is_file()


def test_the_table_ends_naming_every_built_in_text_task(cache_dir):
    """The text tasks have no rows in the table (no features to count): its last line names
    each of them, so a reader of `nbvslr datasets` finds them."""
    from nbvslr.data import text_task_names

    result = _run(["datasets", "--offline", "--cache", str(cache_dir)])
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("text tasks")
    assert all(name in last for name in text_task_names())
