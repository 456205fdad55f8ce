"""20 Newsgroups: a tiny archive of the same layout served from 127.0.0.1 (download, sha256,
cache, time-out, offline), the posts against scikit-learn's reading of the same files, and
the header/footer/quote rules against scikit-learn's own functions."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import itertools
import tarfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from loopback import GENEROUS, LoopbackServer
from sklearn.datasets import _twenty_newsgroups as sk20
from sklearn.datasets import load_files

from nbvslr.data import newsgroups as ng
from nbvslr.data.dataset import DataSettings
from nbvslr.data.recipes import BASE_URLS
from nbvslr.data.sources import url_of
from nbvslr.errors import ConfigError, DataError, DownloadError


def _post(sender: str, group: str, subject: str, body: str, signature: str = "") -> bytes:
    head = (f"From: {sender}\nSubject: {subject}\nOrganization: Some University\n"
            f"Newsgroups: {group}\nLines: 12\n\n")
    tail = f"\n\n-- \n{signature}\n" if signature else "\n"
    return (head + body + tail).encode("latin-1")


# Posts of three groups in both parts: headers, quotes (an attribution line, "> " and "| "
# lines), signatures after "-- " or a line of hyphens, and a latin-1 byte (é).
POSTS: dict[tuple[str, str, str], bytes] = {
    ("20news-bydate-train", "comp.graphics", "38001"): _post(
        "ann@cs.uni.edu", "comp.graphics", "Re: rendering",
        "In article <1993.1@x.edu> bob@x.edu writes:\n> Which renderer is fastest?\n\n"
        "Try a ray tracer with a good bounding volume hierarchy.\nIt renders the café scene.",
        "Ann, Graphics Lab"),
    ("20news-bydate-train", "comp.graphics", "38002"): _post(
        "carl@gfx.com", "comp.graphics", "JPEG viewer wanted",
        "Is there a JPEG viewer for X11 that handles 24-bit images?\nThanks in advance."),
    ("20news-bydate-train", "comp.graphics", "38010"): _post(
        "dee@pix.org", "comp.graphics", "Re: polygons",
        "dee said: clip the polygons first\n| quoted from a digest\nthen fill them.",
        "-----------\nDee"),
    ("20news-bydate-train", "sci.crypt", "15001"): _post(
        "eve@nsa.gov", "sci.crypt", "Clipper chip",
        "The Clipper chip escrows the keys with two agencies.\nWho holds the keys?",
        "eve -- crypto is math"),
    ("20news-bydate-train", "sci.crypt", "15002"): _post(
        "frank@pgp.net", "sci.crypt", "Re: RSA key sizes",
        "In article <abc@pgp.net>, gail@rsa.com (Gail) wrote:\n>> 512 bits is enough\n"
        "> no it is not\n\nUse 1024 bit RSA keys for the session key exchange."),
    ("20news-bydate-train", "rec.autos", "10100"): _post(
        "hal@cars.com", "rec.autos", "Brakes",
        "My brakes squeal when wet.\nAny idea?", "Hal\n1990 sedan"),
    ("20news-bydate-test", "comp.graphics", "39001"): _post(
        "ivy@gfx.com", "comp.graphics", "Re: textures",
        "Quoted from the FAQ:\nMip-mapping avoids aliasing on textures."),
    ("20news-bydate-test", "sci.crypt", "16001"): _post(
        "jon@crypt.org", "sci.crypt", "DES",
        "DES has a 56 bit key.\nTriple DES is stronger.", "Jon"),
    ("20news-bydate-test", "sci.crypt", "15999"): _post(
        "kim@crypt.org", "sci.crypt", "Re: DES",
        "kim writes in reply to jon\nDifferential cryptanalysis does not break DES."),
    ("20news-bydate-test", "rec.autos", "10500"): _post(
        "lou@cars.com", "rec.autos", "Oil", "Synthetic oil every 5000 miles."),
}
GROUPS = ("comp.graphics", "rec.autos", "sci.crypt")


def _tar_gz(posts: dict[tuple[str, str, str], bytes]) -> bytes:
    """A tar.gz of ``<part>/<group>/<id>`` files, with their folders, as the original is."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        folders = sorted({k[:1] for k in posts} | {k[:2] for k in posts})
        for folder in folders:
            info = tarfile.TarInfo("/".join(folder))
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        for key, body in posts.items():
            info = tarfile.TarInfo("/".join(key))
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return raw.getvalue()


ARCHIVE_BYTES = _tar_gz(POSTS)
SHA = hashlib.sha256(ARCHIVE_BYTES).hexdigest()


@pytest.fixture
def tiny(monkeypatch) -> None:
    """``ARCHIVE`` with the tiny archive's sha256 (its host and path unchanged)."""
    monkeypatch.setattr(ng, "ARCHIVE", dataclasses.replace(ng.ARCHIVE, sha256=SHA))


@pytest.fixture
def server(monkeypatch, tiny) -> Iterator[LoopbackServer]:
    """The tiny archive served at the archive's own path, the download host pointed here."""
    with LoopbackServer() as s:
        monkeypatch.setitem(BASE_URLS, ng.ARCHIVE.host, s.url)
        s.routes["/" + ng.ARCHIVE.path] = ARCHIVE_BYTES
        yield s


def _settings(cache: Path, timeout: float = GENEROUS, download: bool = True) -> DataSettings:
    return DataSettings(cache_dir=cache, mirror=None, download=download, timeout=timeout)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _sklearn_all(tmp_path: Path, groups=None) -> tuple[list[str], np.ndarray, list[str]]:
    """scikit-learn's reading of the same archive, as ``fetch_20newsgroups(subset="all")``
    reads it (``load_files(..., encoding="latin1")`` on each part), unshuffled."""
    root = tmp_path / "extracted"
    with tarfile.open(fileobj=io.BytesIO(ARCHIVE_BYTES), mode="r:gz") as tar:
        tar.extractall(root, filter="data")
    data, target = [], []
    for part in ng.PARTS:
        bunch = load_files(root / part, encoding="latin1", categories=groups, shuffle=False)
        data += bunch.data
        target += list(bunch.target)
    return data, np.asarray(target), list(bunch.target_names)


def _sklearn_strip(text: str, parts) -> str:
    if "headers" in parts:
        text = sk20.strip_newsgroup_header(text)
    if "footers" in parts:
        text = sk20.strip_newsgroup_footer(text)
    if "quotes" in parts:
        text = sk20.strip_newsgroup_quoting(text)
    return text


# --------------------------------------------------------------------------- the archive

def test_the_archive_is_the_one_scikit_learn_downloads():
    assert ng.ARCHIVE.name == sk20.ARCHIVE.filename == "20news-bydate.tar.gz"
    assert ng.ARCHIVE.sha256 == sk20.ARCHIVE.checksum
    assert url_of(ng.ARCHIVE) == sk20.ARCHIVE.url == "https://ndownloader.figshare.com/files/5975967"


def test_download_then_parse_gives_scikit_learns_posts_and_classes(tmp_path, server):
    cache = tmp_path / "cache"
    task = ng.load_newsgroups(_settings(cache), strip="none")
    data, target, names = _sklearn_all(tmp_path)
    assert task.name == "20news"
    assert task.classes == tuple(names) == GROUPS
    assert list(task.documents) == data
    assert task.y.dtype == np.int64 and task.y.tolist() == target.tolist()
    assert len(task.documents) == len(POSTS)
    assert "café" in task.documents[0]  # latin-1 decoded
    # the verified archive and its parsed posts are kept in the cache, nothing else
    assert (cache / "20news" / "20news-bydate.tar.gz").read_bytes() == ARCHIVE_BYTES
    assert _files(cache) == sorted(["20news/20news-bydate.tar.gz",
                                    f"20news/20news-bydate.{SHA[:16]}.npz"])
    assert server.requests == ["/files/5975967"]


@pytest.mark.parametrize("strip", [
    parts for r in range(4) for parts in itertools.combinations(ng.STRIPS, r)])
def test_each_strip_choice_matches_scikit_learns_remove(tmp_path, server, strip):
    task = ng.load_newsgroups(_settings(tmp_path / "cache"), strip=list(strip))
    data, _, _ = _sklearn_all(tmp_path)
    assert list(task.documents) == [_sklearn_strip(d, strip) for d in data]


def test_the_default_strips_headers_footers_and_quotes(tmp_path, server):
    task = ng.load_newsgroups(_settings(tmp_path / "cache"))
    whole = ng.load_newsgroups(_settings(tmp_path / "cache"), strip="none")
    assert ng.DEFAULT_STRIP == ("headers", "footers", "quotes")
    joined = "\n".join(task.documents)
    for gone in ("Newsgroups:", "From:", "writes:", "> Which renderer", "Graphics Lab", "wrote:"):
        assert gone not in joined and gone in "\n".join(whole.documents)
    assert "Try a ray tracer" in task.documents[0]


def test_a_second_load_uses_the_cache_and_asks_no_server(tmp_path, server):
    settings = _settings(tmp_path / "cache")
    first = ng.load_newsgroups(settings)
    second = ng.load_newsgroups(settings)
    assert server.requests == ["/files/5975967"]
    assert second.documents == first.documents and second.y.tolist() == first.y.tolist()
    # without its parsed copy, the cached archive is parsed again, still without a download
    ng.parsed_path(settings).unlink()
    assert ng.load_newsgroups(settings).documents == first.documents
    assert server.requests == ["/files/5975967"]
    assert ng.parsed_path(settings).is_file()


def test_a_damaged_parsed_copy_is_parsed_again_from_the_archive(tmp_path, server):
    settings = _settings(tmp_path / "cache")
    first = ng.load_newsgroups(settings, strip="none")
    kept = ng.parsed_path(settings)
    original = kept.read_bytes()
    with np.load(kept) as f:
        fields = dict(f)
    fields["text"] = fields["text"].copy()
    fields["text"][5] ^= 1  # one flipped bit in the posts: their sha256 no longer matches
    np.savez(kept, **fields)
    assert ng._load_parsed(kept) is None
    assert ng.load_newsgroups(settings, strip="none").documents == first.documents
    assert kept.read_bytes() == original  # written again
    kept.write_bytes(b"not an npz file")
    assert ng.load_newsgroups(settings, strip="none").documents == first.documents
    assert server.requests == ["/files/5975967"]


@pytest.mark.parametrize("damage", ["cut", "every byte"])
def test_a_parsed_copy_cut_short_or_with_a_flipped_byte_is_parsed_again(tmp_path, server,
                                                                        damage):
    """A parsed .npz cut in half, or with any one byte flipped: parsed again, no traceback."""
    settings = _settings(tmp_path / "cache")
    first = ng.load_newsgroups(settings, strip="none").documents
    kept = ng.parsed_path(settings)
    original = kept.read_bytes()
    if damage == "cut":
        damaged = [original[: len(original) // 2]]
    else:  # one flipped byte at each of 64 places spread over the file
        places = np.linspace(0, len(original) - 1, 64).astype(int)
        damaged = [original[:i] + bytes([original[i] ^ 0xFF]) + original[i + 1:]
                   for i in places]
    for data in damaged:
        kept.write_bytes(data)
        assert ng.load_newsgroups(settings, strip="none").documents == first
    assert server.requests == ["/files/5975967"]


def test_a_download_with_the_wrong_sha256_is_refused_and_not_kept(tmp_path, server,
                                                                  monkeypatch):
    monkeypatch.setattr(ng, "ARCHIVE", dataclasses.replace(ng.ARCHIVE, sha256="0" * 64))
    cache = tmp_path / "cache"
    with pytest.raises(DownloadError, match=r"download of http://127\.0\.0\.1:\d+/files/5975967 "
                                            r"refused: sha256 .* is not the expected 000000000000"
                       ) as info:
        ng.load_newsgroups(_settings(cache))
    message = str(info.value)
    assert "\n" not in message and "put it in" in message and str(cache / "20news") in message
    assert _files(cache) == []


def test_a_cached_archive_that_fails_its_sha256_is_never_parsed(tmp_path, tiny):
    cache = tmp_path / "cache"
    damaged = bytearray(ARCHIVE_BYTES)
    damaged[-10] ^= 0xFF
    (cache / "20news").mkdir(parents=True)
    (cache / "20news" / "20news-bydate.tar.gz").write_bytes(bytes(damaged))
    with pytest.raises(DownloadError, match=r"20news-bydate.tar.gz fails its sha256 check .*"
                                            r"downloads are off.*or delete") as info:
        ng.load_newsgroups(_settings(cache, download=False))
    assert "\n" not in str(info.value)
    assert _files(cache) == ["20news/20news-bydate.tar.gz"]  # no parsed copy made


def test_a_cached_archive_that_fails_its_sha256_is_replaced_by_a_download(tmp_path, server):
    cache = tmp_path / "cache"
    (cache / "20news").mkdir(parents=True)
    (cache / "20news" / "20news-bydate.tar.gz").write_bytes(ARCHIVE_BYTES[:100])
    assert len(ng.load_newsgroups(_settings(cache)).documents) == len(POSTS)
    assert (cache / "20news" / "20news-bydate.tar.gz").read_bytes() == ARCHIVE_BYTES


def test_a_server_that_never_answers_times_out(tmp_path, server):
    server.routes["/files/5975967"] = "hang"
    cache = tmp_path / "cache"
    with pytest.raises(DownloadError, match=r"failed: timed out after 0.3 s.*check the network"
                       ) as info:
        ng.load_newsgroups(_settings(cache, timeout=0.3))
    assert "\n" not in str(info.value)
    assert _files(cache) == []


def test_no_server_is_a_one_line_offline_error(tmp_path, tiny, monkeypatch):
    with LoopbackServer() as s:
        url = s.url
    monkeypatch.setitem(BASE_URLS, ng.ARCHIVE.host, url)  # nothing listens there now
    cache = tmp_path / "cache"
    with pytest.raises(DownloadError, match=rf"download of {url}/files/5975967 failed: .*"
                                            r"check the network .*put it in") as info:
        ng.load_newsgroups(_settings(cache, timeout=2))
    assert "\n" not in str(info.value)
    assert _files(cache) == []


def test_offline_without_the_archive_says_where_to_put_it(tmp_path, tiny):
    cache = tmp_path / "cache"
    with pytest.raises(DownloadError, match=r"20news-bydate.tar.gz is not in the cache .*"
                                            r"downloads are off; run without --offline to "
                                            r"download it, or download .* yourself") as info:
        ng.load_newsgroups(_settings(cache, download=False))
    message = str(info.value)
    assert "check the network" not in message  # offline by choice: no network was tried
    assert "\n" not in message and f"put it in {cache / '20news'}" in message


def test_an_archive_put_in_the_cache_by_hand_is_used_offline(tmp_path, tiny):
    cache = tmp_path / "cache"
    (cache / "20news").mkdir(parents=True)
    (cache / "20news" / "20news-bydate.tar.gz").write_bytes(ARCHIVE_BYTES)
    assert ng.load_newsgroups(_settings(cache, download=False)).classes == GROUPS


def test_a_folder_mirror_serves_the_archive_into_the_cache(tmp_path, tiny):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "20news-bydate.tar.gz").write_bytes(ARCHIVE_BYTES)  # flat, as a user keeps it
    cache = tmp_path / "cache"
    settings = DataSettings(cache_dir=cache, mirror=mirror, download=False)
    assert ng.load_newsgroups(settings).classes == GROUPS
    assert (cache / "20news" / "20news-bydate.tar.gz").read_bytes() == ARCHIVE_BYTES


def test_an_archive_without_posts_is_a_data_error(tmp_path, monkeypatch):
    empty = _tar_gz({("README", "x", "y"): b"nothing"})
    monkeypatch.setattr(ng, "ARCHIVE", dataclasses.replace(
        ng.ARCHIVE, sha256=hashlib.sha256(empty).hexdigest()))
    (tmp_path / "20news").mkdir()
    (tmp_path / "20news" / "20news-bydate.tar.gz").write_bytes(empty)
    with pytest.raises(DataError, match="holds no post"):
        ng.load_newsgroups(_settings(tmp_path, download=False))
    with pytest.raises(DataError, match="not a readable tar.gz"):
        ng.parse_archive(b"not gzip at all")


# --------------------------------------------------------------------------- the tasks

def test_the_built_in_tasks_are_registered_with_their_groups(tmp_path, server):
    """The registry's 20 Newsgroups source serves both tasks by name: every group, or the
    pair, in sorted order."""
    import nbvslr.data.registry as registry
    from nbvslr.data import load_task
    from nbvslr.data.dataset import TaskSpec

    assert registry.BUILTIN["20news"] is registry.BUILTIN["20news-crypt-graphics"] is (
        registry.newsgroups)
    assert ng.TASKS == {"20news": None, "20news-crypt-graphics": ng.CRYPT_GRAPHICS}
    settings = _settings(tmp_path / "cache")
    every = load_task(TaskSpec("20news"), settings)
    assert every.name == "20news" and every.classes == GROUPS
    pair = ng.load_newsgroups(settings, ng.TASKS["20news-crypt-graphics"],
                              name="20news-crypt-graphics")
    assert pair.name == "20news-crypt-graphics"
    assert pair.classes == ("comp.graphics", "sci.crypt")  # sci.crypt is class 1
    data, target, names = _sklearn_all(tmp_path, groups=["comp.graphics", "sci.crypt"])
    assert names == ["comp.graphics", "sci.crypt"]
    assert list(pair.documents) == [_sklearn_strip(d, ng.STRIPS) for d in data]
    assert pair.y.tolist() == target.tolist() == [0, 0, 0, 1, 1, 0, 1, 1]


def test_chosen_groups_are_numbered_in_sorted_order(tmp_path, server):
    task = ng.load_newsgroups(_settings(tmp_path / "cache"), groups=["sci.crypt", "rec.autos"],
                              strip="none")
    assert task.name == "20news-rec.autos-sci.crypt"
    assert task.classes == ("rec.autos", "sci.crypt")
    assert task.y.tolist() == [0, 1, 1, 0, 1, 1]
    assert all("Newsgroups: rec.autos" in d for d, c in zip(task.documents, task.y, strict=True)
               if c == 0)


@pytest.mark.parametrize("groups, message", [
    (["sci.crypt", "comp.graphic"], r"'comp.graphic' is not a group .*did you mean "
                                    r"'comp.graphics'"),
    (["sci.crypt"], "fewer than 2 groups"),
    (["sci.crypt", "sci.crypt"], "names a group twice"),
    ("sci.crypt", "not a list of newsgroups"),
])
def test_bad_groups_are_one_line_config_errors(tmp_path, server, groups, message):
    with pytest.raises(ConfigError, match=message) as info:
        ng.load_newsgroups(_settings(tmp_path / "cache"), groups=groups)
    assert "\n" not in str(info.value)


def test_strip_options():
    assert ng.strip_options(None) == ng.strip_options("none") == ng.strip_options([]) == ()
    assert ng.strip_options("quotes") == ("quotes",)
    assert ng.strip_options(["quotes", "headers"]) == ("headers", "quotes")
    with pytest.raises(ConfigError, match=r"^strip: 'header' is not a part of a post \(did "
                                          r"you mean 'headers'\?\); give a list"):
        ng.strip_options(["header"])
    with pytest.raises(ConfigError, match="give a list of headers, footers, quotes, or none"):
        ng.strip_options(3)


# --------------------------------------------------------------------------- the rules

CRAFTED = [
    "From: a@b.c\nSubject: x\n\nbody line\n\n-- \nsig\n",
    "no headers at all, one line",
    "From: a\n\n\n\nbody after blank lines\n-----\nfooter\n\n\n",
    "From: a\n\nIn article <x> y writes:\n> quoted\n>> deeper\n| bar quoted\nmine\n"
    "he said: yes\nshe says: no\nit wrote: z\nQuoted from somewhere\nkim writes in reply\n"
    " In article not at the start\n x > y is fine\n",
    "",
    "\n\n",
    "-----\n",
    "  \n text \n  ",
    "line one\n\nline two\n\n",
    "a\r\nb\r\n\r\nc\r\n-- \r\nsig\r\n",
    "Subject: caf\xe9\n\nna\xefve text\n",
]


@pytest.mark.parametrize("text", CRAFTED)
def test_the_rules_equal_scikit_learns_on_crafted_posts(text):
    assert ng.strip_header(text) == sk20.strip_newsgroup_header(text)
    assert ng.strip_footer(text) == sk20.strip_newsgroup_footer(text)
    assert ng.strip_quotes(text) == sk20.strip_newsgroup_quoting(text)
    for r in range(4):
        for parts in itertools.combinations(ng.STRIPS, r):
            assert ng.strip_post(text, parts) == _sklearn_strip(text, parts)


_PIECES = st.sampled_from([
    "\n", "\n\n", " ", "-", "--", ">", "|", ":", "writes", "writes:", "writes in", "wrote:",
    "says:", "said:", "In article", "Quoted from", "In", "article", "word", "x", "\t", "\r",
    "é", "said", "says", "wrote",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_the_rules_equal_scikit_learns_on_any_text(text):
    assert ng.strip_header(text) == sk20.strip_newsgroup_header(text)
    assert ng.strip_footer(text) == sk20.strip_newsgroup_footer(text)
    assert ng.strip_quotes(text) == sk20.strip_newsgroup_quoting(text)
