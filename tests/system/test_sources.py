"""Where data files come from: cache, shipped copies, mirror, download (a server on 127.0.0.1)."""

from __future__ import annotations

import gzip
import hashlib
import shutil
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from loopback import GENEROUS, LoopbackServer

from nbvslr.data import BUILTIN_TASKS, fetch, get_recipe, load_task, task_status
from nbvslr.data import sources as src
from nbvslr.data.dataset import DataSettings, TaskSpec
from nbvslr.data.recipes import BASE_URLS
from nbvslr.errors import DataError, DownloadError
from nbvslr.runner.units import portable

# These tests are about the mirror and downloads, which a user reaches with --fresh (or for
# a file nbvslr does not ship): the shipped copies are switched off unless a test says so.
_fresh = partial(DataSettings, shipped=False)

LENSES = get_recipe("lenses")
LENSES_FILE = LENSES.train[0]


@pytest.fixture
def server(monkeypatch) -> Iterator[LoopbackServer]:
    """A loopback server standing in for every download host."""
    with LoopbackServer() as s:
        for host in BASE_URLS:
            monkeypatch.setitem(BASE_URLS, host, f"{s.url}/{host}")
        yield s


def _route(file) -> str:
    return f"/{file.host}/{file.path}"


def _online(cache_dir: Path, timeout: float = GENEROUS) -> DataSettings:
    return _fresh(cache_dir=cache_dir, mirror=None, download=True, timeout=timeout)


def _no_temp_files(folder: Path) -> bool:
    return not any(p.name.endswith(".tmp") for p in folder.rglob("*"))


# --------------------------------------------------------------------------- cache, mirror


def test_mirror_file_is_verified_and_copied_into_the_cache(mirror, cache_dir):
    """A mirror file enters the cache byte for byte; then the cache alone serves it."""
    settings = _fresh(cache_dir=cache_dir, mirror=mirror, download=False)
    assert task_status("lenses", settings) == "mirror"
    path, how = src.obtain(LENSES.dataset, LENSES_FILE, settings)
    assert how == "mirror"
    assert path == cache_dir / "lenses" / "lenses.data"
    assert path.read_bytes() == (mirror / "lenses" / "lenses.data").read_bytes()
    assert task_status("lenses", settings) == "cached"
    no_mirror = _fresh(cache_dir=cache_dir, mirror=None, download=False)
    assert src.obtain(LENSES.dataset, LENSES_FILE, no_mirror) == (path, "cache")
    assert _no_temp_files(cache_dir)


def test_flat_mirror_folder_is_accepted(mirror, cache_dir, tmp_path):
    """A mirror holding the files without dataset folders works too."""
    flat = tmp_path / "flat"
    flat.mkdir()
    shutil.copy(mirror / "lenses" / "lenses.data", flat / "lenses.data")
    settings = _fresh(cache_dir=cache_dir, mirror=flat, download=False)
    assert load_task(TaskSpec("lenses"), settings).n_rows == 24


def test_truncated_cache_file_is_replaced_from_the_mirror(mirror, cache_dir):
    """A cached file that fails its sha256 is never used: the mirror's copy replaces it."""
    settings = _fresh(cache_dir=cache_dir, mirror=mirror, download=False)
    path = src.fetch_file(LENSES.dataset, LENSES_FILE, settings)
    good = path.read_bytes()
    path.write_bytes(good[:-40])  # truncated
    assert task_status("lenses", settings) == "mirror"
    assert load_task(TaskSpec("lenses"), settings).n_rows == 24
    assert path.read_bytes() == good


def test_altered_cache_file_without_a_source_is_refused_with_a_hint(mirror, cache_dir):
    """An altered cached file with no mirror and no download: an error naming the fix."""
    settings = _fresh(cache_dir=cache_dir, mirror=mirror, download=False)
    path = src.fetch_file(LENSES.dataset, LENSES_FILE, settings)
    path.write_bytes(path.read_bytes().replace(b"3", b"1"))
    offline = _fresh(cache_dir=cache_dir, mirror=None, download=False)
    with pytest.raises(DownloadError, match=r"fails its sha256.*NBVSLR_DATA_MIRROR.*delete"):
        load_task(TaskSpec("lenses"), offline)


def test_corrupt_mirror_file_is_refused_and_nothing_enters_the_cache(mirror, cache_dir,
                                                                    tmp_path):
    """A mirror file with the wrong sha256 is a DataError; the cache stays empty."""
    bad = tmp_path / "bad-mirror" / "lenses"
    bad.mkdir(parents=True)
    (bad / "lenses.data").write_bytes((mirror / "lenses" / "lenses.data").read_bytes()[:-1])
    settings = _fresh(cache_dir=cache_dir, mirror=bad.parent, download=False)
    with pytest.raises(DataError, match=r"mirror file .*lenses.data has sha256"):
        load_task(TaskSpec("lenses"), settings)
    assert list(cache_dir.rglob("*.data")) == []


def test_offline_without_the_file_names_the_mirror_variable(cache_dir, server):
    """download=False and no mirror: a DownloadError saying how to work offline, no request."""
    settings = _fresh(cache_dir=cache_dir, mirror=None, download=False)
    with pytest.raises(DownloadError, match=r"lenses.data is not in the cache.*downloads are "
                                            r"off.*NBVSLR_DATA_MIRROR"):
        load_task(TaskSpec("lenses"), settings)
    assert server.requests == []


# --------------------------------------------------------------------------- download


def test_download_success_enters_the_cache(mirror, cache_dir, server):
    """A good download is verified, cached, and the task loads from it."""
    server.routes[_route(LENSES_FILE)] = (mirror / "lenses" / "lenses.data").read_bytes()
    settings = _online(cache_dir)
    assert task_status("lenses", settings) == "download"
    data = load_task(TaskSpec("lenses"), settings)
    assert data.n_rows == 24 and data.n_positive == 4
    assert data.notes["files"][0]["source"] == f"{server.url}{_route(LENSES_FILE)}"
    cached = cache_dir / "lenses" / "lenses.data"
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == LENSES_FILE.sha256
    assert task_status("lenses", settings) == "cached"
    load_task(TaskSpec("lenses"), settings)
    assert len(server.requests) == 1  # the second load used the cache
    assert _no_temp_files(cache_dir)


def test_fetch_downloads_every_file_of_the_tasks(mirror, cache_dir, server):
    """fetch() fills the cache for several tasks and hosts (UCI and the pima copy)."""
    pima = get_recipe("pima")
    for recipe in (pima, LENSES):
        for f in recipe.files:
            server.routes[_route(f)] = (mirror / recipe.dataset / f.name).read_bytes()
    paths = fetch(["pima", "lenses", "pima"], _online(cache_dir))
    assert paths == [cache_dir / "pima" / pima.train[0].name, cache_dir / "lenses" / "lenses.data"]
    assert {p.split("/")[1] for p in server.requests} == {"github", "uci"}


def test_corrupted_download_is_refused_and_the_cache_untouched(mirror, cache_dir, server):
    """Bytes whose sha256 differs from the recipe's never enter the cache."""
    good = (mirror / "lenses" / "lenses.data").read_bytes()
    server.routes[_route(LENSES_FILE)] = good.replace(b"1  1  1  1  1  3", b"1  1  1  1  1  1")
    with pytest.raises(DownloadError, match=r"lenses.data refused: sha256 .*NBVSLR_DATA_MIRROR"):
        load_task(TaskSpec("lenses"), _online(cache_dir))
    assert list(cache_dir.rglob("*")) == []


@pytest.mark.parametrize("status", [404, 500])
def test_http_errors_name_the_url_and_the_status(cache_dir, server, status):
    """A 404 or a 500 is a DownloadError with the URL, the status and the offline hint."""
    server.routes[_route(LENSES_FILE)] = status
    url = f"{server.url}{_route(LENSES_FILE)}"
    with pytest.raises(DownloadError, match=rf"download of {url} failed: HTTP {status}.*"
                                            r"NBVSLR_DATA_MIRROR"):
        load_task(TaskSpec("lenses"), _online(cache_dir))
    assert list(cache_dir.rglob("*")) == []


def test_a_server_that_never_answers_times_out(cache_dir, server):
    """A server that accepts but never answers gives a timeout DownloadError, quickly."""
    server.routes[_route(LENSES_FILE)] = "hang"
    with pytest.raises(DownloadError, match=r"failed: timed out after 0.3 s.*NBVSLR_DATA_MIRROR"):
        load_task(TaskSpec("lenses"), _online(cache_dir, timeout=0.3))
    assert list(cache_dir.rglob("*")) == []


def test_a_server_that_trickles_is_stopped_at_the_timeout(cache_dir, server):
    """A byte every 0.1 s (each read well within the timeout): the whole transfer has one
    deadline, so the download stops at --timeout instead of going on byte after byte."""
    server.routes[_route(LENSES_FILE)] = ("trickle", b"1  1  1  1  1  3\n" * 4)
    with pytest.raises(DownloadError, match=r"failed: timed out after 1 s \(the whole transfer"):
        load_task(TaskSpec("lenses"), _online(cache_dir, timeout=1))
    assert list(cache_dir.rglob("*")) == []


@pytest.mark.parametrize("answer", [("endless", None), ("endless", 50 << 30), "redirect"])
def test_a_server_that_streams_without_end_is_stopped_at_the_size_limit(
        cache_dir, server, monkeypatch, answer):
    """Zeros without end (no length, a 50 GB length, behind a redirect): refused at the
    download limit, long before the timeout, nothing cached."""
    monkeypatch.setattr(src, "MAX_DOWNLOAD", 1 << 20)
    if answer == "redirect":
        server.routes[_route(LENSES_FILE)] = ("redirect", "/elsewhere")
        server.routes["/elsewhere"] = ("endless", None)
    else:
        server.routes[_route(LENSES_FILE)] = answer
    with pytest.raises(DownloadError, match=r"refused: it (sent|announces) .*more than the 1 "
                                            r"MiB .*NBVSLR_DATA_MIRROR"):
        load_task(TaskSpec("lenses"), _online(cache_dir, timeout=60))
    server.release.set()
    assert server.sent < 64 << 20  # the client stopped reading, not the test's end
    assert list(cache_dir.rglob("*")) == []


def test_a_url_mirror_that_streams_without_end_is_stopped_at_the_size_limit(
        cache_dir, server, monkeypatch):
    """The mirror's download has the same limit."""
    monkeypatch.setattr(src, "MAX_DOWNLOAD", 1 << 20)
    server.routes[MIRROR_ROUTE] = ("endless", None)
    with pytest.raises(DownloadError, match=r"refused: it sent more than 1048576 bytes"):
        load_task(TaskSpec("lenses"), _url_mirror(server, cache_dir, timeout=60))
    assert list(cache_dir.rglob("*")) == []


def test_every_recipe_file_fits_the_download_limit():
    """The limit is above every shipped data file (the largest is a few MB)."""
    from nbvslr.data.recipes import RECIPES

    sizes = [len(src.shipped_bytes(r.dataset, f) or b"") for r in RECIPES.values()
             for f in r.files]
    assert sizes and 0 < max(sizes) < src.MAX_DOWNLOAD / 8


def test_a_cached_file_of_a_terabyte_is_never_read(cache_dir):
    """A 1 TiB file (sparse) where a cached copy belongs: not read, the shipped copy is used."""
    target = cache_dir / LENSES.dataset / LENSES_FILE.name
    target.parent.mkdir(parents=True)
    with target.open("wb") as fh:
        fh.truncate(1 << 40)
    settings = DataSettings(cache_dir=cache_dir, download=False)
    assert load_task(TaskSpec("lenses"), settings).n_rows == 24
    assert task_status("lenses", settings) == "shipped"  # not hashed either


def test_a_url_that_is_not_http_is_refused_before_anything_is_read(tmp_path):
    """download() of a file: (or ftp:) URL is one line refusing it, and reads nothing (a
    file: URL read the local file, then failed with an AttributeError traceback)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("not for download")
    for url in (secret.as_uri(), "ftp://127.0.0.1:1/x", "data:,hello"):
        with pytest.raises(DataError) as info:
            src.download(url, 5)
        line = str(info.value)
        assert "\n" not in line and "not an http:// or https:// URL" in line and url in line


def test_a_redirect_away_from_http_is_refused(cache_dir, server):
    """A server redirecting a download to an ftp: URL is refused in one line naming it (urllib
    alone follows it)."""
    server.routes[_route(LENSES_FILE)] = ("redirect", "ftp://127.0.0.1:1/lenses.data")
    with pytest.raises(DownloadError) as info:
        load_task(TaskSpec("lenses"), _online(cache_dir))
    line = str(info.value)
    assert "\n" not in line
    assert "a redirect to 'ftp://127.0.0.1:1/lenses.data', not an http(s) URL" in line
    assert list(cache_dir.rglob("*")) == []


def test_a_refused_connection_is_a_download_error(cache_dir, monkeypatch):
    """Nothing listening on the port: a DownloadError naming the URL."""
    with LoopbackServer() as s:
        url = s.url
    monkeypatch.setitem(BASE_URLS, "uci", url)  # the server is closed now
    with pytest.raises(DownloadError, match=rf"download of {url}/lenses/lenses.data failed"):
        load_task(TaskSpec("lenses"), _online(cache_dir, timeout=2))


def test_a_body_cut_short_is_a_download_error(mirror, cache_dir, server):
    """A connection that drops before the announced length is refused, nothing cached."""
    server.routes[_route(LENSES_FILE)] = ("short", b"1  1  1  1  1  3\n")
    with pytest.raises(DownloadError, match=r"lenses.data failed: .*NBVSLR_DATA_MIRROR"):
        load_task(TaskSpec("lenses"), _online(cache_dir))
    assert list(cache_dir.rglob("*")) == []


def test_stale_cache_file_is_replaced_by_a_download(mirror, cache_dir, server):
    """An altered cached file, no mirror: a verified download replaces it."""
    good = (mirror / "lenses" / "lenses.data").read_bytes()
    server.routes[_route(LENSES_FILE)] = good
    stale = cache_dir / "lenses" / "lenses.data"
    stale.parent.mkdir()
    stale.write_bytes(good[:100])
    assert load_task(TaskSpec("lenses"), _online(cache_dir)).n_rows == 24
    assert stale.read_bytes() == good and len(server.requests) == 1


# --------------------------------------------------------------------------- a URL mirror

MIRROR_ROUTE = "/mirror/lenses/lenses.data"  # apart from the download hosts' routes


def _url_mirror(server: LoopbackServer, cache_dir: Path, timeout: float = GENEROUS,
                download: bool = True) -> DataSettings:
    return _fresh(cache_dir=cache_dir, mirror=f"{server.url}/mirror/", download=download,
                  timeout=timeout)


def test_a_url_mirror_is_downloaded_verified_and_cached(mirror, cache_dir, server):
    """A URL mirror serving <dataset>/<file>: one request there, none to the file's own host,
    the bytes verified into the cache, then the cache alone serves them."""
    good = (mirror / "lenses" / "lenses.data").read_bytes()
    server.routes[MIRROR_ROUTE] = good
    settings = _url_mirror(server, cache_dir)
    assert task_status("lenses", settings) == "mirror"
    path, how = src.obtain(LENSES.dataset, LENSES_FILE, settings)
    assert how == f"{server.url}{MIRROR_ROUTE}"
    assert path == cache_dir / "lenses" / "lenses.data" and path.read_bytes() == good
    assert load_task(TaskSpec("lenses"), settings).n_rows == 24
    assert server.requests == [MIRROR_ROUTE]
    assert task_status("lenses", settings) == "cached"
    assert _no_temp_files(cache_dir)


def test_a_damaged_file_in_a_url_mirror_is_refused_naming_it_and_the_fix(mirror, cache_dir,
                                                                         server):
    """A mirror file whose sha256 differs: a one-line DataError naming its URL and the fix;
    nothing enters the cache and the file's own host is not asked instead."""
    good = (mirror / "lenses" / "lenses.data").read_bytes()
    server.routes[MIRROR_ROUTE] = good[:-1]
    with pytest.raises(DataError) as info:
        load_task(TaskSpec("lenses"), _url_mirror(server, cache_dir))
    message = str(info.value)
    assert message.startswith(f"mirror file {server.url}{MIRROR_ROUTE} has sha256 ")
    assert "replace it in the mirror with the original UCI file" in message
    assert "\n" not in message
    assert server.requests == [MIRROR_ROUTE]
    assert list(cache_dir.rglob("*")) == []


def test_a_url_mirror_that_is_down_is_one_line_naming_it(cache_dir, monkeypatch):
    """Nothing listening at the mirror: a one-line DownloadError naming the mirror's URL and
    what to check, not a fall back to the internet."""
    with LoopbackServer() as s:
        url = s.url
    settings = _fresh(cache_dir=cache_dir, mirror=f"{url}/uci", timeout=2)
    with pytest.raises(DownloadError) as info:
        load_task(TaskSpec("lenses"), settings)
    message = str(info.value)
    assert message.startswith(f"download of {url}/uci/lenses/lenses.data failed: ")
    assert "check that the mirror is up" in message and "\n" not in message
    assert list(cache_dir.rglob("*")) == []


def test_a_url_mirror_that_trickles_stops_at_the_timeout(cache_dir, server):
    """A mirror download has the archive's single deadline for the whole transfer."""
    server.routes[MIRROR_ROUTE] = ("trickle", b"1  1  1  1  1  3\n" * 4)
    with pytest.raises(DownloadError, match=r"failed: timed out after 1 s \(the whole "
                                            r"transfer.*check that the mirror is up"):
        load_task(TaskSpec("lenses"), _url_mirror(server, cache_dir, timeout=1))
    assert list(cache_dir.rglob("*")) == []


def test_a_file_missing_from_a_url_mirror_is_downloaded_from_its_own_url(mirror, cache_dir,
                                                                        server):
    """A 404 from the mirror means "not there", as a folder without the file: the file's own
    URL is tried next."""
    server.routes[_route(LENSES_FILE)] = (mirror / "lenses" / "lenses.data").read_bytes()
    _, how = src.obtain(LENSES.dataset, LENSES_FILE, _url_mirror(server, cache_dir))
    assert how == f"{server.url}{_route(LENSES_FILE)}"
    assert server.requests == [MIRROR_ROUTE, _route(LENSES_FILE)]


def test_a_file_missing_from_the_mirror_and_failing_at_its_url_names_both(cache_dir, server):
    """The mirror answers 404 and the file's own URL fails too: the one line says that the
    mirror does not hold the file as well as why the download failed (it named only the
    download's failure, as if the mirror had not been asked)."""
    server.routes[_route(LENSES_FILE)] = 500
    with pytest.raises(DownloadError) as info:
        src.obtain(LENSES.dataset, LENSES_FILE, _url_mirror(server, cache_dir))
    assert str(info.value).startswith(
        f"the mirror does not hold lenses.data (HTTP 404 for {server.url}{MIRROR_ROUTE}), and "
        f"the download of {server.url}{_route(LENSES_FILE)} failed: HTTP 500 ")
    assert server.requests == [MIRROR_ROUTE, _route(LENSES_FILE)]
    assert list(cache_dir.rglob("*")) == []


def test_a_damaged_archive_in_a_url_mirror_names_the_original_archive(cache_dir, server):
    """A 20 Newsgroups archive in a mirror that fails its sha256: the fix names the original
    archive and its URL, not 'the original UCI file'."""
    from nbvslr.data.newsgroups import ARCHIVE

    server.routes["/mirror/20news/20news-bydate.tar.gz"] = b"not the archive"
    with pytest.raises(DataError) as info:
        src.obtain("20news", ARCHIVE, _url_mirror(server, cache_dir))
    line = str(info.value)
    assert "replace it in the mirror with the original archive (" in line
    assert src.url_of(ARCHIVE) in line and "UCI" not in line


def test_a_redirect_loop_or_an_answer_that_is_not_http_is_one_clean_line(cache_dir, server):
    """A redirect loop and a status line that is not HTTP: one line each, without line
    breaks or their escapes (they carried a literal '\\n' and 'NOT HTTP AT ALL\\r\\n')."""
    import socket
    import threading

    server.routes["/loop"] = ("redirect", "/loop")
    listener = socket.create_server(("127.0.0.1", 0))

    def garbage() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"NOT HTTP AT ALL\r\n\r\n")

    threading.Thread(target=garbage, daemon=True).start()
    lines = []
    for url in (f"{server.url}/loop", f"http://127.0.0.1:{listener.getsockname()[1]}/x"):
        with pytest.raises(DownloadError) as info:
            src.download(url, GENEROUS)
        lines.append(str(info.value))
    listener.close()
    for line in lines:
        assert not any(c in line for c in "\r\n") and "\\n" not in line and "\\r" not in line
    assert "infinite loop. The last 30x error message was: Found;" in lines[0]
    assert "failed: the answer is not HTTP ('NOT HTTP AT ALL');" in lines[1]


def test_offline_never_reaches_a_url_mirror(cache_dir, server):
    """download=False (--offline): no request to a URL mirror, one line saying why."""
    settings = _url_mirror(server, cache_dir, download=False)
    assert task_status("lenses", settings) == "download"
    with pytest.raises(DownloadError, match=r"is a URL, which --offline does not reach"):
        load_task(TaskSpec("lenses"), settings)
    assert server.requests == []


def test_listing_with_a_url_mirror_asks_no_server(cache_dir, server):
    """nbvslr datasets with a URL mirror shows each task's folder there, without a request."""
    from nbvslr.cli.datasets_cmd import task_rows

    rows = task_rows(_url_mirror(server, cache_dir))
    lenses = next(r for r in rows if r["task"] == "lenses")
    assert (lenses["status"], lenses["location"]) == ("mirror", f"{server.url}/mirror/lenses/")
    assert server.requests == []


def test_a_url_mirror_stays_a_url_for_the_workers(cache_dir):
    """portable() makes a folder mirror absolute but leaves a URL mirror as it is."""
    url = "https://example.org/uci/"
    _, settings = portable(TaskSpec("lenses"), DataSettings(cache_dir=cache_dir, mirror=url))
    assert settings.mirror == url


def test_the_cli_takes_a_url_mirror_and_a_folder_mirror(mirror, tmp_path, server):
    """nbvslr datasets fetch --mirror URL fills the cache from the server; --mirror DIR
    still reads the folder; a mirror that is down is one 'error:' line, exit 1."""
    from click.testing import CliRunner

    from nbvslr.cli import cli

    server.routes[MIRROR_ROUTE] = (mirror / "lenses" / "lenses.data").read_bytes()
    env = {"NBVSLR_DATA_MIRROR": None}
    for name, where in (("url", f"{server.url}/mirror/"), ("folder", str(mirror))):
        cache = tmp_path / name
        result = CliRunner().invoke(cli, ["datasets", "fetch", "lenses", "--fresh", "--cache",
                                          str(cache), "--mirror", where], env=env)
        assert result.exit_code == 0, result.output
        assert (cache / "lenses" / "lenses.data").read_bytes() == (
            mirror / "lenses" / "lenses.data").read_bytes()
    assert server.requests == [MIRROR_ROUTE]
    with LoopbackServer() as down:
        gone = down.url
    result = CliRunner().invoke(cli, ["datasets", "fetch", "lenses", "--fresh", "--cache",
                                      str(tmp_path / "down"), "--timeout", "2", "--mirror",
                                      f"{gone}/mirror/"], env=env)
    assert result.exit_code == 1
    assert result.output.startswith(f"error: download of {gone}/mirror/lenses/lenses.data")
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [
    ["datasets", "fetch", "lenses", "--timeout", "inf"],
    ["datasets", "fetch", "lenses", "--timeout", "1e10"],
    ["datasets", "fetch", "lenses", "--timeout", "nan"],
    ["run", "openml", "--offline", "--max-download", "inf"],
    ["run", "openml", "--offline", "--max-download", "nan"]])
def test_an_infinite_timeout_or_download_limit_is_a_usage_error(tmp_path, args):
    """--timeout inf, 1e10 (past the longest wait a thread takes) or nan, and --max-download
    inf or nan: exit 2 and one line asking for a finite value, before any download (they
    were an OverflowError or ValueError traceback)."""
    from click.testing import CliRunner

    from nbvslr.cli import cli

    result = CliRunner().invoke(cli, [*args, "--fresh", "--cache", str(tmp_path / "cache"),
                                      "--mirror", "http://127.0.0.1:1/"],
                                env={"NBVSLR_DATA_MIRROR": None})
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith(f"error: {args[-2]} ")
    assert "must be a finite number" in lines[0] or "must be at most 9" in lines[0]
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("setting", [{"timeout": float("inf")}, {"timeout": 1e10},
                                     {"timeout": 0.0}, {"max_download": float("nan")},
                                     {"max_download": float("inf")}])
def test_data_settings_refuse_an_infinite_timeout_or_limit(tmp_path, setting):
    """DataSettings (the Python path) refuses the values the options refuse, in one line
    naming the setting (they reached the waits and the size check as tracebacks)."""
    from nbvslr.errors import ConfigError

    with pytest.raises(ConfigError, match=rf"^DataSettings\({next(iter(setting))}=.*: must be"):
        DataSettings(cache_dir=tmp_path, **setting)


# --------------------------------------------------------------------------- shipped copies


def test_shipped_files_serve_a_fresh_installation_without_writing_the_cache(mirror, cache_dir):
    """No cache, mirror or network: the shipped copies load, byte for byte the originals."""
    settings = DataSettings(cache_dir=cache_dir, mirror=None, download=False)
    assert task_status("lenses", settings) == "shipped"
    data, how = src.read_verified(LENSES.dataset, LENSES_FILE, settings)
    assert how == "shipped"
    assert data == (mirror / "lenses" / "lenses.data").read_bytes()
    assert load_task(TaskSpec("lenses"), settings).n_rows == 24
    assert list(cache_dir.iterdir()) == []


def test_every_recipe_file_is_shipped_and_verified():
    """Each file of the 15 recipes is shipped, and decompresses to the recipe's sha256."""
    for name in BUILTIN_TASKS:
        recipe = get_recipe(name)
        for file in recipe.files:
            data = src.shipped_bytes(recipe.dataset, file)
            assert data is not None, (name, file.name)
            assert hashlib.sha256(data).hexdigest() == file.sha256


def test_a_verified_cache_copy_comes_before_the_shipped_one(cache_dir):
    """The cache is read first; fetch puts a shipped file into it, marked as shipped."""
    settings = DataSettings(cache_dir=cache_dir, mirror=None, download=False)
    path, how = src.obtain(LENSES.dataset, LENSES_FILE, settings)
    assert (path, how) == (cache_dir / "lenses" / "lenses.data", "shipped")
    assert src.read_verified(LENSES.dataset, LENSES_FILE, settings)[1] == "cache"
    assert task_status("lenses", settings) == "cached"


def test_an_altered_shipped_file_is_refused_naming_the_fix(cache_dir, tmp_path, monkeypatch):
    """A shipped copy that does not decompress to its sha256 is never read."""
    fake = tmp_path / "lenses.data.gz"
    fake.write_bytes(gzip.compress(b"1 1 1 1 1 3\n"))
    monkeypatch.setattr(src, "shipped_file", lambda dataset, file: fake)
    settings = DataSettings(cache_dir=cache_dir, mirror=None, download=False)
    with pytest.raises(DataError, match=r"shipped file .* is not the original .*reinstall"):
        load_task(TaskSpec("lenses"), settings)
    fake.write_bytes(b"not gzip")
    with pytest.raises(DataError, match=r"unreadable"):
        load_task(TaskSpec("lenses"), settings)


def test_fresh_skips_the_shipped_copies(cache_dir, server):
    """With shipped=False (--fresh) a missing file is downloaded, not taken from the package."""
    server.routes[_route(LENSES_FILE)] = src.shipped_bytes(LENSES.dataset, LENSES_FILE)
    settings = DataSettings(cache_dir=cache_dir, mirror=None, download=True, shipped=False)
    data, how = src.read_verified(LENSES.dataset, LENSES_FILE, settings)
    assert how.startswith(server.url)
    assert (cache_dir / "lenses" / "lenses.data").read_bytes() == data
