"""Inline UCI tasks: ucimlrepo pointed at a loopback server, its cache and its timeout.

Nothing here touches the internet: ``ucimlrepo.fetch.API_BASE_URL`` is redirected to an
HTTP server on 127.0.0.1 that answers like the UCI API (a JSON description whose
``data_url`` points back at the same server).
"""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
import ucimlrepo.fetch
from loopback import GENEROUS

from nbvslr.data import load_task, ucisource
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.errors import DataError, DownloadError

TOY_CSV = "id,a,b,color,class\n1,1.0,5,red,P\n2,2.0,6,blue,N\n3,4.0,7,red,P\n4,5.0,9,green,N\n"
VARIABLES = [
    {"name": "id", "role": "ID", "type": "Integer", "description": None},
    {"name": "a", "role": "Feature", "type": "Continuous", "description": "first"},
    {"name": "b", "role": "Feature", "type": "Integer", "description": None},
    {"name": "color", "role": "Feature", "type": "Categorical", "description": None},
    {"name": "class", "role": "Target", "type": "Categorical", "description": None},
]


class FakeUCI:
    """A loopback server speaking the two requests ucimlrepo makes."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.release = threading.Event()
        self.data_urls = {11: ("/static/cut.csv", None), 12: ("/static/toy.csv", 10),
                          13: ("/static/page.html", None), 14: ("/static/gone.csv", None),
                          15: ("/static/toy.csv", "4")}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, code: int, body: str, ctype: str = "application/json") -> None:
                data = body.encode()
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                fake.requests.append(self.path)
                url = urlparse(self.path)
                if url.path == "/static/toy.csv":
                    return self._send(200, TOY_CSV, "text/csv")
                if url.path == "/static/cut.csv":  # cut inside its last row, honest length
                    return self._send(200, TOY_CSV[:TOY_CSV.rindex(",")], "text/csv")
                if url.path == "/static/page.html":
                    return self._send(200, "<!DOCTYPE html>\n<html>\n<body>Maintenance"
                                      "</body>\n</html>\n", "text/html")
                uci_id = int(parse_qs(url.query).get("id", ["0"])[0])
                if uci_id in fake.data_urls:  # (data path, metadata's num_instances)
                    path, count = fake.data_urls[uci_id]
                    described = fake.describe(uci_id, fake.url(path))
                    if count is not None:
                        described["data"]["num_instances"] = count
                    return self._send(200, json.dumps(described))
                if uci_id == 1:  # a good dataset
                    described = fake.describe(1, fake.url("/static/toy.csv"))
                    return self._send(200, json.dumps(described))
                if uci_id == 2:  # exists, not importable
                    return self._send(200, json.dumps(fake.describe(2, None)))
                if uci_id == 3:
                    return self._send(200, json.dumps({"status": 404, "message": "Not found"}))
                if uci_id == 4:
                    return self._send(200, "<html>maintenance</html>", "text/html")
                if uci_id == 5:
                    return self._send(500, "oops", "text/plain")
                if uci_id == 6:  # never answers in time
                    fake.release.wait(10)
                    return self._send(200, "{}")
                return self._send(200, json.dumps({"status": 404}))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def url(self, path: str) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}{path}"

    @staticmethod
    def describe(uci_id: int, data_url: str | None) -> dict:
        return {
            "status": 200,
            "data": {
                "uci_id": uci_id, "name": "Toy", "doi": "10.0/toy", "data_url": data_url,
                "repository_url": "https://example.invalid/toy", "variables": VARIABLES,
                "additional_info": {"summary": "a toy"}, "intro_paper": None,
            },
        }


@pytest.fixture
def uci(monkeypatch):
    """A running fake UCI API; ucimlrepo is pointed at it, proxies bypassed."""
    fake = FakeUCI()
    fake.thread.start()
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setattr(ucimlrepo.fetch, "API_BASE_URL", fake.url("/api/dataset"))
    yield fake
    fake.release.set()
    fake.server.shutdown()
    fake.server.server_close()


def _spec(uci_id: int, **kw) -> TaskSpec:
    return TaskSpec(name="toy", source={"uci": uci_id}, **kw)


def _settings(tmp_path, **kw) -> DataSettings:
    return DataSettings(cache_dir=tmp_path / "cache", **{"timeout": GENEROUS, **kw})


def test_uci_fetch_builds_task_and_caches_csv_and_json(uci, tmp_path):
    """A fetched dataset becomes a task (default target = the Target column), and is cached
    as data.csv plus metadata.json; a second load makes no request."""
    spec = _spec(1, target={"positive": ["P"]}, features={"kind": "continuous", "drop": ["color"]})
    data = load_task(spec, _settings(tmp_path))
    assert data.feature_names == ("a", "b")  # Feature columns only: never the ID column
    np.testing.assert_allclose(data.X[:, 0], [0, 0.25, 0.75, 1])
    np.testing.assert_array_equal(data.y, [1, 0, 1, 0])
    assert data.notes["uci_id"] == 1 and data.notes["uci_name"] == "Toy"
    folder = tmp_path / "cache" / "uci-1"
    meta = json.loads((folder / "metadata.json").read_text())
    assert [v["role"] for v in meta["variables"]] == ["ID", "Feature", "Feature", "Feature",
                                                      "Target"]
    assert (folder / "data.csv").read_text().splitlines()[0] == "id,a,b,color,class"
    assert sorted(p.name for p in folder.iterdir()) == ["data.csv", "metadata.json"]
    n_requests = len(uci.requests)
    assert n_requests == 2  # the API description, then the CSV
    again = load_task(spec, _settings(tmp_path, download=False))
    assert len(uci.requests) == n_requests  # served from the cache
    np.testing.assert_array_equal(again.X, data.X)


def test_uci_discrete_features_and_target_choice(uci, tmp_path):
    """The config can pick discrete columns and a target among the table's columns."""
    spec = _spec(1, target={"column": "color", "positive": ["red"]},
                 features={"kind": "discrete", "columns": ["class"]})
    data = load_task(spec, _settings(tmp_path))
    assert data.n_values == (2,)
    np.testing.assert_array_equal(data.y, [1, 0, 1, 0])


def test_uci_mixed_default_features_is_a_clear_error(uci, tmp_path):
    """Default features mixing numbers and text are refused, naming the dataset and fix."""
    with pytest.raises(DataError, match=r"UCI dataset 1 .*columns 'color' hold text"):
        load_task(_spec(1), _settings(tmp_path))


@pytest.mark.parametrize(
    ("uci_id", "pattern"),
    [
        (2, r"UCI dataset 2 exists but ucimlrepo cannot import it.*source: \{csv: path\}"),
        (3, r"UCI dataset 3: not found \(Not found\); check the id"),
        (4, r"UCI dataset 4: unexpected answer .*JSONDecodeError.*source: \{csv: path\}"),
        (5, r"UCI dataset 5: download failed .*source: \{csv: path\}"),
    ],
)
def test_uci_failures_are_download_errors(uci, tmp_path, uci_id, pattern):
    """Not importable, not found, a bad payload and an HTTP 500 each give a one-line
    DownloadError, and nothing enters the cache."""
    with pytest.raises(DownloadError, match=pattern) as info:
        load_task(_spec(uci_id), _settings(tmp_path))
    assert "\n" not in str(info.value)
    assert not (tmp_path / "cache" / f"uci-{uci_id}").exists()


def test_uci_timeout_is_a_download_error(uci, tmp_path):
    """A server that never answers gives a DownloadError within about the timeout."""
    import time

    start = time.monotonic()
    # the socket's own timeout, or on a busy machine the whole fetch's deadline, comes first
    with pytest.raises(DownloadError, match=r"UCI dataset 6: (no answer within 0.3 s|"
                                            r"the fetch did not finish within)"):
        load_task(_spec(6), _settings(tmp_path, timeout=0.3))
    assert time.monotonic() - start < 10.0  # never the default minutes of a socket
    assert not (tmp_path / "cache" / "uci-6").exists()


def test_uci_offline_without_cache_says_how_to_work_offline(tmp_path):
    """With downloads off and no cache, the error names the cache folder and the CSV way."""
    with pytest.raises(DownloadError, match=r"not in the cache .*uci-7.*source: \{csv: path\}"):
        load_task(_spec(7), _settings(tmp_path, download=False))


def test_uci_bad_payload_from_fetch_is_refused(tmp_path):
    """A fetch result without a table is a DownloadError and leaves no cache."""
    calls = []

    def fetch(uci_id):
        calls.append(uci_id)
        return {"data": {"original": None}, "variables": [], "metadata": {}}

    choices = ucisource.csvsource.TableChoices()
    with pytest.raises(DownloadError, match=r"UCI dataset 8: ucimlrepo returned no table"):
        ucisource.load("toy", 8, choices, _settings(tmp_path), fetch=fetch)
    assert calls == [8] and not (tmp_path / "cache" / "uci-8").exists()


def test_uci_cache_hit_calls_no_fetch(tmp_path):
    """A complete cache is used without calling the fetch at all."""
    folder = tmp_path / "cache" / "uci-9"
    folder.mkdir(parents=True)
    (folder / "data.csv").write_text(TOY_CSV)
    (folder / "metadata.json").write_text(json.dumps({"name": "Toy", "variables": VARIABLES}))

    def fetch(uci_id):
        raise AssertionError("the network must not be used")

    choices = ucisource.csvsource.TableChoices(kind="continuous", drop=("color",))
    data = ucisource.load("toy", 9, choices, _settings(tmp_path), fetch=fetch)
    assert data.n_rows == 4 and data.notes["cache"] == str(folder)


def test_uci_fetch_past_the_deadline_is_abandoned(tmp_path, monkeypatch):
    """A fetch that keeps going (e.g. a trickling server) is abandoned at the deadline."""
    release = threading.Event()
    monkeypatch.setattr(ucisource, "FETCH_DEADLINE_FACTOR", 2)

    def fetch(uci_id):
        release.wait(5)
        return {}

    try:
        with pytest.raises(DownloadError, match=r"UCI dataset 10: the fetch did not finish "
                                                r"within 0.2 s.*source: \{csv: path\}"):
            ucisource.load("toy", 10, ucisource.csvsource.TableChoices(),
                           _settings(tmp_path, timeout=0.1), fetch=fetch)
    finally:
        release.set()
    assert not (tmp_path / "cache" / "uci-10").exists()


@pytest.mark.parametrize(("uci_id", "problem"), [
    (11, "its data file ends in a row of 4 of its 5 fields (data row 4), the only row without "
         "its last field: it looks cut short, and was not cached"),
    (12, "its data file has 4 rows, fewer than the 10 its metadata gives (num_instances): it "
         "looks cut short, and was not cached")])
def test_a_table_cut_short_is_refused_and_never_cached(uci, tmp_path, uci_id, problem):
    """A data file cut inside its last row (its length honest), or with fewer rows than the
    metadata's num_instances, is refused in one line and not cached (it was cached, and every
    later run failed from the cache on a 'missing value'); a count that matches is read."""
    with pytest.raises(DownloadError) as info:
        load_task(_spec(uci_id), _settings(tmp_path))
    assert str(info.value).startswith(f"UCI dataset {uci_id}: {problem}; retry later")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    spec = _spec(15, target={"positive": ["P"]}, features={"kind": "continuous",
                                                           "drop": ["color"]})
    assert load_task(spec, _settings(tmp_path)).n_rows == 4


@pytest.mark.parametrize("uci_id", [13, 14])
def test_a_data_file_that_cannot_be_read_is_not_called_an_unknown_id(uci, tmp_path, uci_id):
    """A data URL answering a web page (read as a table without the variables' columns) or
    a 404: one line saying the dataset exists but its data file could not be read (they
    said 'unexpected answer ... KeyError' and 'not found ...; check the id')."""
    with pytest.raises(DownloadError) as info:
        load_task(_spec(uci_id), _settings(tmp_path))
    line = str(info.value)
    assert line.startswith(f"UCI dataset {uci_id} exists, but its data file could not be read")
    assert "check the id" not in line and "\n" not in line
    assert not (tmp_path / "cache" / f"uci-{uci_id}").exists()


def _cache(tmp_path, uci_id: int, csv: str, **meta) -> Path:
    folder = tmp_path / "cache" / f"uci-{uci_id}"
    folder.mkdir(parents=True)
    (folder / "data.csv").write_text(csv)
    (folder / "metadata.json").write_text(json.dumps({"variables": VARIABLES, **meta}))
    return folder


def test_a_damaged_cache_says_to_delete_its_folder(uci, tmp_path):
    """A cached table altered after its download (its recorded sha256), cut short (a cache
    that recorded none) or unreadable: one line saying to delete that folder (a cut table
    said 'set source.missing: drop'); once deleted, the next load fetches it again."""
    spec = _spec(1, target={"positive": ["P"]}, features={"kind": "continuous",
                                                          "drop": ["color"]})
    assert load_task(spec, _settings(tmp_path)).n_rows == 4
    folder = tmp_path / "cache" / "uci-1"
    (folder / "data.csv").write_text(TOY_CSV.replace("5.0", "6.0"))
    with pytest.raises(DataError, match=rf"^UCI dataset 1: the cached table {folder}/data.csv "
                                        r"is not the one downloaded \(its sha256 changed\); "
                                        rf"delete {folder} to fetch the dataset again$"):
        load_task(spec, _settings(tmp_path))
    shutil.rmtree(folder)
    assert load_task(spec, _settings(tmp_path)).n_rows == 4
    old = _cache(tmp_path, 21, TOY_CSV[:TOY_CSV.rindex(",")] + "\n")  # no sha256 recorded
    with pytest.raises(DataError, match=rf"^UCI dataset 21: the cached table {old}/data.csv ends "
                                        r"in a row of 4 of its 5 fields .*: it looks cut short; "
                                        rf"delete {old} to fetch the dataset again$"):
        load_task(_spec(21), _settings(tmp_path, download=False))
    bad = _cache(tmp_path, 22, "a,b\n\"1,2\n")
    with pytest.raises(DataError, match=rf"^UCI dataset 22: the cached table cannot be read "
                                        rf"\(.*\); delete {bad} to fetch the dataset again$"):
        load_task(_spec(22), _settings(tmp_path, download=False))
