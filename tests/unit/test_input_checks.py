"""Input checked before it is believed: YAML keys given twice and tags, CSV
headers naming a column twice, the offset of a byte that is not UTF-8, and a CSV too wide to
parse, each refused in one line before any parse of the whole file."""

from __future__ import annotations

import re

import pytest

from nbvslr.config import read_yaml
from nbvslr.data import csvsource
from nbvslr.errors import ConfigError, DataError


@pytest.mark.parametrize(("text", "line"), [
    ("splits: 5\nseed: 1\nsplits: 50\n", 3),
    ("models:\n  nb: {}\n  lr: {C: 1}\n  lr: {C: 2}\n", 4),
    ("tasks:\n  - {name: a, source: {csv: a.csv}, name: b}\n", 2),
])
def test_a_yaml_key_given_twice_is_refused_naming_its_line(tmp_path, text, line):
    """A repeated key is one ConfigError naming the repeat's line and the first's."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"line {line}: duplicate key"):
        read_yaml(path)


@pytest.mark.parametrize("tag", ["!!int", "!!str", "!!bool", "!!float", "!!map", "!custom"])
def test_every_yaml_tag_is_refused_naming_its_line(tmp_path, tag):
    """``!!int "5"`` and every other explicit tag: one ConfigError naming line and tag."""
    path = tmp_path / "c.yaml"
    value = "{}" if tag == "!!map" else '"5"' if tag in ("!!int", "!!float") else "5"
    path.write_text(f"seed: 0\nsplits: {tag} {value}\n")
    with pytest.raises(ConfigError, match=rf"line 2: YAML tags are not allowed \('{tag}'\)"):
        read_yaml(path)


def test_a_yaml_merge_key_is_still_plain_data(tmp_path):
    """``<<: *anchor`` and a key after it that overrides the merged one are accepted."""
    path = tmp_path / "c.yaml"
    path.write_text("base: &b {C: 1, l2: 0}\nlr:\n  <<: *b\n  C: 2\n")
    assert read_yaml(path)["lr"] == {"C": 2, "l2": 0}


@pytest.mark.parametrize(("text", "value"), [
    ("1e-6", 1e-6), ("1E+3", 1000.0), ("-2e5", -2e5), ("+1e-2", 0.01), ("1.0e-10", 1e-10),
    (".5", 0.5), ("10", 10), ("1e", "1e"), ("1e-6x", "1e-6x"),
])
def test_a_number_in_scientific_notation_without_a_dot_is_a_number(tmp_path, text, value):
    """``tol: 1e-6`` (as the docs write it) is the float 1e-6, as in YAML 1.2 and JSON,
    not the text "1e-6" of YAML 1.1; integers and other text stay as they were."""
    path = tmp_path / "c.yaml"
    path.write_text(f"tol: {text}\n")
    got = read_yaml(path)["tol"]
    assert got == value and type(got) is type(value)


def test_an_option_in_scientific_notation_resolves(tmp_path):
    """The config the docs show, ``lr: {tol: 1e-6}`` and ``C: 1e-3``, is accepted."""
    from nbvslr.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text("tasks: [pima]\nsizes: [2, 5]\nsplits: 3\n"
                    "models: {nb: {var_smoothing: 1e-9}, lr: {tol: 1e-6},\n"
                    "         lr_c: {model: lr, C: 1e-3}}\n")
    models = {m.name: m.options for m in load_config(path).models}
    assert models["lr"]["tol"] == 1e-6 and models["lr_c"]["C"] == 1e-3
    assert models["nb"]["var_smoothing"] == 1e-9


def test_a_csv_header_naming_a_column_twice_is_refused(tmp_path):
    """``a,b,a``: one DataError naming the column and its positions."""
    path = tmp_path / "t.csv"
    path.write_text("a,b,a\n1,2,3\n4,5,6\n")
    with pytest.raises(DataError, match=r"column 'a' more than once \(columns 1, 3\)"):
        csvsource.read_csv(path)


def test_the_offset_of_a_byte_that_is_not_utf8_counts_from_the_files_start(tmp_path):
    """A bad byte far into a large file is reported at its true offset."""
    body = b"a,b,label\n" + b"".join(b"%d,%d,%d\n" % (i, i % 7, i % 2) for i in range(60_000))
    offset = len(body) - 5
    path = tmp_path / "t.csv"
    path.write_bytes(body[:offset] + b"\xff" + body[offset + 1:])
    with pytest.raises(DataError) as err:
        csvsource.read_csv(path)
    assert re.search(rf"at offset {offset}\)", str(err.value)), str(err.value)


def test_a_csv_too_wide_is_refused_from_its_first_line(tmp_path):
    """A header of 10^6 columns (20 MB with its rows): the memory refusal, in one line,
    before the file is parsed (a parse would hold gigabytes)."""
    path = tmp_path / "wide.csv"
    n = 1_000_000
    with path.open("w") as fh:
        fh.write(",".join(f"c{i}" for i in range(n)) + "\n")
        fh.write(",".join("1" for _ in range(n)) + "\n")
    with pytest.raises(DataError, match=r"^memory: .*1000000 columns"):
        csvsource.read_csv(path)


def test_a_csv_whose_parse_would_not_fit_is_refused(tmp_path, monkeypatch):
    """Rows x columns beyond what the machine may hold: the memory refusal, before parsing."""
    monkeypatch.setattr(csvsource, "_memory_bytes", lambda: 1 << 20)
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n" + "1,2,0\n" * 5000)
    with pytest.raises(DataError, match=r"^memory: reading .* would need"):
        csvsource.read_csv(path)
