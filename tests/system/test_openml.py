"""OpenML datasets (source: {openml: id}): a loopback server answering with hand-written
responses in the shape of OpenML's API (tests/openml_responses), never the internet."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from loopback import LoopbackServer

import nbvslr
from nbvslr.config import parse_config
from nbvslr.data import load_task, openml
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.errors import ConfigError, DataError, DownloadError

RESPONSES = Path(__file__).resolve().parents[1] / "openml_responses"
DESCRIPTION = "/api/v1/json/data/40"
DATA = "/data/v1/download/4040/tiny-credit.arff"


@pytest.fixture
def server(monkeypatch):
    """The loopback server as OpenML: dataset 40's description and ARFF file."""
    with LoopbackServer() as srv:
        monkeypatch.setenv(openml.SERVER_ENV, srv.url)
        srv.routes[DESCRIPTION] = (RESPONSES / "data-40.json").read_text().replace(
            "{server}", srv.url).encode()
        srv.routes[DATA] = (RESPONSES / "data-40.arff").read_bytes()
        yield srv


def _settings(tmp_path, **kw) -> DataSettings:
    return DataSettings(cache_dir=tmp_path / "cache", **{"timeout": 5.0, **kw})


def _spec(**kw) -> TaskSpec:
    return TaskSpec(name="credit", source={"openml": 40}, **kw)


def test_the_recorded_checksum_is_the_files():
    """The hand-written description publishes the md5 of the hand-written ARFF file."""
    text = (RESPONSES / "data-40.json").read_text()
    assert hashlib.md5((RESPONSES / "data-40.arff").read_bytes()).hexdigest() in text


def test_dataset_read_with_its_declared_types_then_from_the_cache(server, tmp_path):
    """Default target, numeric -> continuous and nominal -> discrete (a mixed task), the
    row id and string columns left out; a second read takes the cache, offline."""
    data = load_task(_spec(), _settings(tmp_path))
    assert data.kind == "mixed" and data.n_rows == 24
    assert data.feature_names == ("age", "income", "housing")  # continuous first
    assert data.n_values == (3,) and data.notes["levels"]["housing"] == ["for free", "own",
                                                                          "rent"]
    assert data.notes["target"] == "class" and data.notes["positive"] == ["good"]
    assert data.notes["source"] == "openml" and data.notes["from"].endswith("tiny-credit.arff")
    assert data.notes["left_out"] == ["id", "note"]
    assert server.requests == [DESCRIPTION, DATA]
    server.routes.clear()
    again = load_task(_spec(), _settings(tmp_path, download=False))
    assert again.notes["from"] == "cache" and (again.X == data.X).all()
    assert len(server.requests) == 2


def test_target_and_kind_from_the_config(server, tmp_path):
    """target.column and features.kind override the dataset's defaults."""
    data = load_task(_spec(target={"column": "housing", "classes": ["own", "rent"]},
                           features={"kind": "continuous", "columns": ["age", "income"]}),
                     _settings(tmp_path))
    assert data.kind == "continuous" and data.feature_names == ("age", "income")
    assert data.notes["target"] == "housing"


def test_a_bad_checksum_is_refused_and_not_cached(server, tmp_path):
    """An ARFF file whose md5 is not the published one: one line, nothing cached."""
    server.routes[DATA] = server.routes[DATA].replace(b"good", b"gold", 1)
    with pytest.raises(DownloadError) as info:
        load_task(_spec(), _settings(tmp_path))
    line = str(info.value)
    assert "\n" not in line and "refused: md5" in line and "OpenML publishes" in line
    assert not openml.cache_folder(40, _settings(tmp_path)).exists()


def test_a_damaged_cache_is_downloaded_again(server, tmp_path):
    """A cached file that no longer has its md5 is replaced by a verified download."""
    load_task(_spec(), _settings(tmp_path))
    cached = openml.cache_folder(40, _settings(tmp_path)) / openml.DATA_FILE
    cached.write_bytes(cached.read_bytes()[:-20])
    data = load_task(_spec(), _settings(tmp_path))
    assert data.n_rows == 24 and len(server.requests) == 4


def test_offline_without_a_cache_says_so(tmp_path):
    """Downloads off and nothing cached: one line naming the cache and the way out."""
    with pytest.raises(DownloadError, match=r"OpenML dataset 40 is not in the cache .* "
                                            r"downloads are off; to work offline"):
        load_task(_spec(), _settings(tmp_path, download=False))


def test_no_network_is_one_line(tmp_path, monkeypatch):
    """A server that is not there (no network): one line naming the address."""
    with LoopbackServer() as srv:
        url = srv.url
    monkeypatch.setenv(openml.SERVER_ENV, url)  # closed: nothing listens there now
    with pytest.raises(DownloadError) as info:
        load_task(_spec(), _settings(tmp_path))
    line = str(info.value)
    assert "\n" not in line and line.startswith(f"download of {url}/api/v1/json/data/40 failed")


def test_unknown_id_is_one_line(server, tmp_path):
    """OpenML's answer to an unknown id (HTTP 412, its JSON error 111) is one line saying
    that OpenML has no such dataset (it said 'download ... failed: HTTP 412 Precondition
    Failed; to work offline...'); another status or a body not OpenML's names the address."""
    server.routes[DESCRIPTION] = ("status", 412, json.dumps(
        {"error": {"code": "111", "message": "Unknown dataset"}}).encode())
    with pytest.raises(DownloadError) as info:
        load_task(_spec(), _settings(tmp_path))
    assert str(info.value) == (f"OpenML has no dataset 40 ({server.url} answered HTTP 412, "
                               "error 111: Unknown dataset); check the id")
    server.routes[DESCRIPTION] = ("status", 412, json.dumps(
        {"error": {"code": "112", "message": "No access granted"}}).encode())
    with pytest.raises(DownloadError, match=r"^OpenML refused dataset 40 \(.* error 112: No "
                                            r"access granted\); to work offline"):
        load_task(_spec(), _settings(tmp_path))
    server.routes[DESCRIPTION] = 412
    with pytest.raises(DownloadError, match=r"data/40 failed: HTTP 412"):
        load_task(_spec(), _settings(tmp_path))
    assert not openml.cache_folder(40, _settings(tmp_path)).exists()


@pytest.mark.parametrize(("url", "problem"), [
    ("file:///etc/passwd", "the data URL 'file:///etc/passwd' is not an http:// or https:// URL"),
    (None, "the description has no data URL (url: null)")])
def test_a_description_whose_url_is_not_http_is_refused(server, tmp_path, url, problem):
    """A description whose data URL is a local file (or null) is one line naming it, and
    nothing is read or cached (a file: URL read the local file, then a traceback; null was
    'download of None failed')."""
    described = json.loads(server.routes[DESCRIPTION])
    described["data_set_description"]["url"] = url
    server.routes[DESCRIPTION] = json.dumps(described).encode()
    with pytest.raises(DataError) as info:
        load_task(_spec(), _settings(tmp_path))
    line = str(info.value)
    assert "\n" not in line and problem in line and openml.SERVER_ENV in line
    assert server.requests == [DESCRIPTION]
    assert not openml.cache_folder(40, _settings(tmp_path)).exists()


@pytest.mark.parametrize("slow", ["description", "data"])
def test_one_deadline_for_the_whole_transfer(server, tmp_path, slow):
    """A server that trickles either file stops at --timeout for both requests together."""
    route = DESCRIPTION if slow == "description" else DATA
    server.routes[route] = ("trickle", server.routes[route])
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"timed out after 0\.6 s \(the whole transfer"):
        load_task(_spec(), _settings(tmp_path, timeout=0.6))
    assert time.monotonic() - started < 5
    assert not openml.cache_folder(40, _settings(tmp_path)).exists()


def test_config_and_python_name_it(server, tmp_path):
    """source: {openml: id} in a config and Task.from_openml give the same task; a bad id is
    a config error."""
    task = nbvslr.Task.from_openml(40, positive="bad")
    config = parse_config({"tasks": [task.to_config()], "sizes": [4]}, source="<dict>")
    spec = config.tasks[0]
    assert spec.name == "openml-40" and spec.parsed.dataset_id == 40
    data = load_task(spec, _settings(tmp_path))
    assert data.notes["positive"] == ["bad"]
    with pytest.raises(ConfigError, match=r"source\.openml: must be an OpenML dataset id"):
        parse_config({"tasks": [{"name": "x", "source": {"openml": "credit"}}],
                      "sizes": [4]}, source="<dict>")


def test_arff_reader_refuses_what_it_does_not_read():
    """A sparse row, a relational attribute and a short row: one line each."""
    head = b"@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n"
    with pytest.raises(DataError, match="sparse ARFF row"):
        openml.read_arff(head + b"{0 1, 1 x}\n", "t")
    with pytest.raises(DataError, match="line 5: 1 value, the header declares 2"):
        openml.read_arff(head + b"1\n", "t")
    with pytest.raises(DataError, match="ARFF type 'relational'"):
        openml.read_arff(b"@relation r\n@attribute a relational\n@data\n", "t")
    table, attributes = openml.read_arff(head + b"1.5,'y'\n?,x\n", "t")
    assert table.values.tolist() == [["1.5", "y"], ["", "x"]]
    assert [a.type for a in attributes] == ["numeric", "nominal"]


def test_the_shipped_config_offline_is_one_line(tmp_path):
    """configs/openml.yaml parses (four OpenML tasks); run offline with an empty cache it
    stops with exit 1 and one line naming the dataset, before writing anything."""
    from click.testing import CliRunner

    from nbvslr.cli import cli
    from nbvslr.config import load_config
    from nbvslr.config.catalog import resolve_config

    config = load_config(resolve_config("openml"))
    assert [t.parsed.dataset_id for t in config.tasks] == [31, 37, 1464, 1462]
    result = CliRunner().invoke(cli, ["run", "openml", "--offline", "--cache",
                                      str(tmp_path / "cache"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "OpenML dataset 31 is not in the cache" in lines[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_damaged_cache_offline_names_the_file(server, tmp_path):
    """Offline with a cached file that fails its md5: the message names that file."""
    load_task(_spec(), _settings(tmp_path))
    cached = openml.cache_folder(40, _settings(tmp_path)) / openml.DATA_FILE
    cached.write_bytes(b"damaged")
    with pytest.raises(DownloadError, match=rf"{cached} fails its md5 check and downloads "
                                            "are off"):
        load_task(_spec(), _settings(tmp_path, download=False))


def test_python_task_chooses_columns_and_many_levels(server, tmp_path):
    """Task.from_openml takes the features.columns and features.many_levels a refusal names:
    its columns become the task's features, and many_levels='allow' keeps a column of
    nearly all distinct levels."""
    task = nbvslr.Task.from_openml(40, columns=["age", "housing"])
    entry = task.to_config()
    assert entry["features"] == {"columns": ["age", "housing"]}
    data = load_task(parse_config({"tasks": [entry], "sizes": [4]}, source="<dict>").tasks[0],
                     _settings(tmp_path))
    assert list(data.feature_names) == ["age", "housing"]
    assert data.kind == "mixed"
    allowing = nbvslr.Task.from_openml(40, many_levels="allow").to_config()
    assert allowing["features"] == {"many_levels": "allow"}
    assert parse_config({"tasks": [allowing], "sizes": [4]},
                        source="<dict>").tasks[0].parsed.table.many_levels == "allow"


def test_the_default_target_listed_as_a_feature_is_refused(server, tmp_path):
    """features.columns naming the dataset's default target is refused in one line, as a
    CSV task's is (with declared kinds it was silently dropped from the features)."""
    with pytest.raises(DataError, match=r"features\.columns: the target column 'class' is "
                       r"listed as a feature; remove it from features\.columns"):
        load_task(_spec(features={"columns": ["class", "age"]}), _settings(tmp_path))


def test_timeout_help_names_the_openml_transfer():
    """--timeout's help says that an OpenML dataset's one deadline covers its description
    and its file, as fetch does."""
    from click.testing import CliRunner

    from nbvslr.cli import cli

    out = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output
    assert "of an OpenML dataset, its description and its file together" in " ".join(out.split())


def _serve(srv, dataset_id: int, arff: bytes, target: str) -> None:
    """Add dataset ``dataset_id`` (its ARFF bytes, their md5 published) to the server."""
    path = f"/data/v1/download/{dataset_id}/d.arff"
    srv.routes[f"/api/v1/json/data/{dataset_id}"] = json.dumps({"data_set_description": {
        "id": str(dataset_id), "name": f"d{dataset_id}", "version": "1", "format": "ARFF",
        "url": srv.url + path, "default_target_attribute": target,
        "md5_checksum": hashlib.md5(arff).hexdigest()}}).encode()
    srv.routes[path] = arff


_HEAD = ("@relation r\n@attribute city {'Zürich',\"Köln, Nord\",Bern}\n@attribute x numeric\n"
         "@attribute y {a,b}\n@data\n")
_ROWS = "".join(f"{city},{i},{'ab'[i % 2]}\n" for i, city in enumerate(
    ["'Zürich'", '"Köln, Nord"', "Bern", "'Zürich'", '"Köln, Nord"', "Bern"] * 2))


def test_a_latin1_file_whose_md5_matched_is_read(server, tmp_path):
    """An ARFF file in Latin-1 (not UTF-8) with the published md5 is read, its accented
    levels intact (it was refused, the message pointing at the server)."""
    _serve(server, 41, (_HEAD + _ROWS).encode("latin-1"), "y")
    data = load_task(TaskSpec(name="cities", source={"openml": 41}), _settings(tmp_path))
    assert data.n_rows == 12
    assert data.notes["levels"]["city"] == ["Bern", "Köln, Nord", "Zürich"]


def test_double_quoted_values_with_commas_are_one_value():
    """ARFF's two quote styles: a double-quoted value holding a comma is one value (it was
    split in two), escapes undone in both; an unclosed quote is one line."""
    head = b"@relation r\n@attribute a string\n@attribute b {x,y}\n@attribute c numeric\n@data\n"
    table, _ = openml.read_arff(
        head + b'"one, two",x,1\n\'three, four\',y,2\n"say \\"hi\\"",\'x\',?\n\'?\',"y",3\n',
        "t")
    assert table.values.tolist() == [["one, two", "x", "1"], ["three, four", "y", "2"],
                                     ['say "hi"', "x", ""], ["?", "y", "3"]]
    with pytest.raises(DataError, match=r"t line 6: a quoted value is not closed"):
        openml.read_arff(head + b"'a,x,1\n", "t")


def test_a_value_outside_its_nominal_declaration_is_refused(server, tmp_path):
    """A row whose nominal value is not in its attribute's declared {...} set: one line naming
    the row's line, the value and the declared set (it ran, 'maybe' a third class); missing
    values and quoted declared values pass."""
    head = "@relation r\n@attribute x numeric\n@attribute class {yes,'no, never'}\n@data\n"
    rows = "".join(f"{i}.5,{'yes' if i % 2 else chr(39) + 'no, never' + chr(39)}\n"
                   for i in range(20))
    table, attributes = openml.read_arff((head + rows + "3,?\n").encode(), "t")
    assert attributes[1].levels == ("yes", "no, never") and table.shape == (21, 2)
    _serve(server, 43, (head + rows + "1,maybe\n2,yes\n").encode(), "class")
    with pytest.raises(DataError) as info:
        load_task(TaskSpec(name="bad", source={"openml": 43}), _settings(tmp_path))
    assert str(info.value) == (
        "OpenML dataset 43 (d43) line 25: attribute 'class' has the value 'maybe', not one of "
        "the values its header declares ({'yes', 'no, never'}; 1 such row); check "
        "NBVSLR_OPENML_SERVER, or save the table as a CSV file and use source: {csv: path}")


def test_a_numeric_default_target_is_refused_in_one_line(server, tmp_path):
    """A regression dataset (a numeric default target) is refused, naming the fix (it was
    read as one class per distinct value); a nominal target.column is taken instead."""
    head = "@relation r\n@attribute price numeric\n@attribute x numeric\n@attribute y {a,b}\n"
    rows = "".join(f"{100 + 7 * i}.5,{i},{'ab'[i % 2]}\n" for i in range(30))
    _serve(server, 42, (head + "@data\n" + rows).encode(), "price")
    spec = TaskSpec(name="houses", source={"openml": 42})
    with pytest.raises(DataError) as caught:
        load_task(spec, _settings(tmp_path))
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        "OpenML dataset 42 (d42): its default target 'price' is numeric (a regression "
        "dataset), not classes; name a nominal column in target.column, or make classes of "
        "'price': target.positive (its values of class 1) or a CSV of the table with it "
        "binned, source: {csv: path}")
    data = load_task(TaskSpec(name="houses", source={"openml": 42}, target={"column": "y"}),
                     _settings(tmp_path))
    assert data.n_rows == 30 and data.notes["target"] == "y"


# --------------------------------------------------------------------------- the size limit

def test_a_file_announced_above_the_limit_names_the_limit_and_the_fix(server, tmp_path):
    """A 200 MiB file (announced) against the default 64 MiB: one line naming the size, the
    limit and the option that takes it (--max-download 256), refused before its body is
    read; nothing cached."""
    server.routes[DATA] = ("endless", 200 << 20)
    with pytest.raises(DownloadError) as info:
        load_task(_spec(), _settings(tmp_path))
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith("download of OpenML dataset 40 refused: ") and DATA in line
    assert "is 200.0 MiB, more than the download limit of 64 MiB" in line
    assert line.endswith("raise it with --max-download 256 (or NBVSLR_MAX_DOWNLOAD=256; in "
                         "Python DataSettings(max_download=256))")
    assert server.sent < 64 << 20
    assert not openml.cache_folder(40, _settings(tmp_path)).exists()


def test_a_file_streamed_past_the_limit_doubles_the_suggestion(server, tmp_path):
    """A file sent without its length, past a 1 MiB limit: cut there, one line suggesting
    twice the limit."""
    server.routes[DATA] = ("endless", None)
    with pytest.raises(DownloadError) as info:
        load_task(_spec(), _settings(tmp_path, max_download=1))
    line = str(info.value)
    assert "\n" not in line and "sent more than that without announcing its size" in line
    assert "more than the download limit of 1 MiB; raise it with --max-download 2 " in line


def test_the_limit_is_a_run_option_and_raising_it_reads_the_file(server, tmp_path):
    """nbvslr run --max-download below the file's size stops with exit 1 and the line; the
    same run with the limit raised (here: the default) reads the dataset."""
    from click.testing import CliRunner

    from nbvslr.cli import cli

    config = tmp_path / "c.yaml"
    config.write_text("tasks: [{name: credit, source: {openml: 40}}]\nsizes: [4]\nsplits: 2\n"
                      "models: {nb: {}}\n")
    size = len(server.routes[DATA])
    limit = f"{size / 2 / (1 << 20):.6f}"  # half the file, in MiB
    common = ["run", str(config), "--cache", str(tmp_path / "cache"), "--out",
              str(tmp_path / "out"), "--jobs", "1", "--quiet"]
    small = CliRunner().invoke(cli, [*common, "--max-download", limit])
    assert small.exit_code == 1
    lines = small.output.strip().splitlines()
    assert len(lines) == 1 and f"more than the download limit of {float(limit):g} MiB" in lines[0]
    assert DATA in lines[0] and "raise it with --max-download 1 " in lines[0]  # 2 ** 0 MiB
    assert not openml.cache_folder(40, _settings(tmp_path)).exists()
    again = CliRunner(env={"NBVSLR_MAX_DOWNLOAD": "1"}).invoke(cli, common)
    assert again.exit_code == 0, again.output
    assert (tmp_path / "out" / "credit" / "summary.csv").is_file()
    zero = CliRunner().invoke(cli, [*common, "--max-download", "0"])
    assert zero.exit_code == 2 and "--max-download" in zero.output
