"""20 Newsgroups, the "bydate" version: 18,846 posts to 20 Usenet groups (Lang 1995; the
archive Jason Rennie sorted by date, the one scikit-learn's ``fetch_20newsgroups`` reads).

The archive ``20news-bydate.tar.gz`` (``ARCHIVE``: its sha256 and the public URL scikit-learn
downloads it from) is taken as every data file is (``nbvslr.data.sources``): the cache
``<cache>/20news/20news-bydate.tar.gz``, a mirror (``<mirror>/20news/<file>`` or
``<mirror>/<file>``), or a download within ``settings.timeout`` for the whole transfer, and
checked against the sha256 before it is used or enters the cache (a copy that fails it is
refused, never parsed). It is not shipped with nbvslr.

Both parts of the archive (``20news-bydate-train/<group>/<id>`` and
``20news-bydate-test/<group>/<id>``) make one task, since a run draws its own training
sets: the training part's posts first, then the test part's, each by group then file name
(sorted as strings). These are the posts of ``fetch_20newsgroups(subset="all")``, decoded as
latin-1 as scikit-learn decodes them, in the order of its ``load_files(..., shuffle=False)``
(scikit-learn keeps them shuffled with seed 0).

``strip`` removes the parts of a post that name its group rather than its topic, by
scikit-learn's rules (``remove=("headers", "footers", "quotes")``), applied in that order:

- ``headers``: everything before the first blank line (``From:``, ``Subject:``,
  ``Organization:``, ``Newsgroups:``... The ``Newsgroups:`` line names the class itself);
- ``footers``: from the last line that is blank or made of hyphens on (the post's text
  stripped first), a signature; nothing when that line is the first;
- ``quotes``: every line that starts with ``>`` or ``|``, or contains ``writes in``,
  ``writes:``, ``wrote:``, ``says:``, ``said:``, or starts with ``In article`` or
  ``Quoted from`` (quoted posts of other groups' threads, and their attributions).

All three are the default (``DEFAULT_STRIP``): with the headers left in, a classifier learns
the header lines (the group's name in ``Newsgroups:``, who posts where, which hosts relay
them) and its error says little about the words of the posts, as scikit-learn's
documentation of this dataset shows; ``strip="none"`` keeps the posts as they are.

Parsing the archive (about 18,800 members) takes seconds, so the parsed posts are kept
next to it, ``<cache>/20news/20news-bydate.<sha256[:16]>.npz`` (keyed by the archive's
digest, before stripping: stripping is done on every load), with the sha256 of their bytes,
checked on every read; a copy that fails it is parsed again from the archive.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

import numpy as np

from nbvslr.data.dataset import DataSettings
from nbvslr.data.recipes import DataFile
from nbvslr.data.sources import _write_atomic, cache_path, obtain, read_verified, url_of
from nbvslr.data.texttask import TextTask
from nbvslr.errors import ConfigError, DataError, did_you_mean

#: The dataset's folder in the cache (and in a mirror).
DATASET = "20news"

#: The archive scikit-learn's ``fetch_20newsgroups`` downloads (``ARCHIVE`` in
#: ``sklearn/datasets/_twenty_newsgroups.py``, 14 MB), the original of
#: https://people.csail.mit.edu/jrennie/20Newsgroups/20news-bydate.tar.gz. A test points it
#: at 127.0.0.1 (``monkeypatch.setattr(newsgroups, "ARCHIVE", ...)``).
ARCHIVE = DataFile(
    "20news-bydate.tar.gz",
    "8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610",
    "figshare",
    "files/5975967",
)

#: The archive's two parts, in the order their posts are taken.
PARTS = ("20news-bydate-train", "20news-bydate-test")

#: The parts of a post ``strip`` may remove, in the order they are removed.
STRIPS = ("headers", "footers", "quotes")
DEFAULT_STRIP = STRIPS

#: The groups of the built-in pair ``20news-crypt-graphics`` (sorted: sci.crypt is class 1).
CRYPT_GRAPHICS = ("comp.graphics", "sci.crypt")

#: The built-in tasks, name -> their groups (None: all 20, ``y`` = 0..19 in sorted order,
#: ``alt.atheism`` first; of the pair, sci.crypt is class 1 against comp.graphics).
TASKS = {"20news": None, "20news-crypt-graphics": CRYPT_GRAPHICS}

# scikit-learn's quote rule, ``(writes in|writes:|wrote:|says:|said:|^In article|^Quoted
# from|^\||^>)`` searched in each line, split in three tests that give the same lines: the
# anchored words as prefixes, the words ending in ":" only searched for in lines holding one.
_QUOTE_STARTS = (">", "|", "In article", "Quoted from")
_QUOTE_COLON = re.compile(r"writes:|wrote:|says:|said:")
_PARSED_VERSION = 1


# --------------------------------------------------------------------------- stripping

def strip_header(text: str) -> str:
    """The post without its headers: everything after the first blank line (``""`` if none)."""
    return text.partition("\n\n")[2]


def strip_footer(text: str) -> str:
    """The post without its signature: the text (stripped) up to its last line that is blank
    or all hyphens; the post unchanged when there is none but the first line."""
    lines = text.strip().split("\n")
    for line_num in range(len(lines) - 1, -1, -1):
        if lines[line_num].strip().strip("-") == "":
            break
    if line_num > 0:
        return "\n".join(lines[:line_num])
    return text


def strip_quotes(text: str) -> str:
    """The post without quoted lines (starting with ``>`` or ``|``) and the lines that
    introduce a quote (``... writes:``, ``In article ...``)."""
    colon = _QUOTE_COLON.search
    return "\n".join([line for line in text.split("\n")
                      if not (line.startswith(_QUOTE_STARTS) or "writes in" in line
                              or (":" in line and colon(line)))])


_STRIPPERS = {"headers": strip_header, "footers": strip_footer, "quotes": strip_quotes}


def strip_options(strip: str | Iterable[str] | None) -> tuple[str, ...]:
    """``strip`` as the parts to remove, in ``STRIPS`` order: ``None``, ``"none"`` or ``[]``
    for nothing, one name or a list of names of ``headers``, ``footers``, ``quotes``;
    one-line ``ConfigError`` for anything else."""
    if strip is None or (isinstance(strip, str) and strip == "none"):
        return ()
    given = [strip] if isinstance(strip, str) else strip
    try:
        given = list(given)
    except TypeError:
        given = [strip]
    for part in given:
        if part not in STRIPS:
            raise ConfigError(
                f"strip: {part!r} is not a part of a post{did_you_mean(part, STRIPS)}; give a "
                "list of headers, footers, quotes, or none"
            )
    return tuple(p for p in STRIPS if p in given)


def strip_post(text: str, strip: tuple[str, ...]) -> str:
    """``text`` with the parts ``strip`` names removed (headers, then footers, then quotes)."""
    for part in STRIPS:
        if part in strip:
            text = _STRIPPERS[part](text)
    return text


# --------------------------------------------------------------------------- the archive

def parse_archive(data: bytes) -> tuple[list[str], np.ndarray, tuple[str, ...]]:
    """The posts of a ``20news-bydate.tar.gz``'s bytes, unstripped.

    Returns
    -------
    documents : list of str
        Every ``<part>/<group>/<file>`` of both parts, decoded as latin-1, the training part
        first, each by group then file name.
    group : ndarray of shape (N,), int64
        Each post's group, an index into ``groups``.
    groups : tuple of str
        The groups, sorted.
    """
    try:
        raw = gzip.decompress(data)
        found = []
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for member in tar:
                parts = PurePosixPath(member.name).parts
                if parts[:1] == (".",):
                    parts = parts[1:]
                if not member.isfile() or len(parts) != 3 or parts[0] not in PARTS:
                    continue
                body = tar.extractfile(member).read()  # type: ignore[union-attr]
                found.append((PARTS.index(parts[0]), parts[1], parts[2], body))
    except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
        raise DataError(f"{ARCHIVE.name} is not a readable tar.gz archive ({exc}); delete it "
                        "from the cache and fetch it again") from exc
    if not found:
        raise DataError(f"{ARCHIVE.name} holds no post (no {PARTS[0]}/<group>/<file>); it is "
                        "not the 20 Newsgroups bydate archive")
    found.sort(key=lambda f: f[:3])
    groups = tuple(sorted({f[1] for f in found}))
    index = {g: k for k, g in enumerate(groups)}
    documents = [f[3].decode("latin-1") for f in found]
    group = np.fromiter((index[f[1]] for f in found), dtype=np.int64, count=len(found))
    return documents, group, groups


def parsed_path(settings: DataSettings) -> Path:
    """Where the parsed posts of ``ARCHIVE`` are kept (keyed by its sha256)."""
    folder = cache_path(DATASET, ARCHIVE, settings).parent
    return folder / f"20news-bydate.{ARCHIVE.sha256[:16]}.npz"


def _save_parsed(path: Path, documents: list[str], group: np.ndarray,
                 groups: tuple[str, ...]) -> None:
    # The posts were decoded as latin-1, so encoding them back gives their original bytes,
    # one per character: the offsets serve the bytes and the decoded text alike.
    blob = "".join(documents).encode("latin-1")
    offsets = np.zeros(len(documents) + 1, dtype=np.int64)
    np.cumsum([len(d) for d in documents], out=offsets[1:])
    out = io.BytesIO()
    np.savez(out, version=np.int64(_PARSED_VERSION), archive=np.str_(ARCHIVE.sha256),
             text=np.frombuffer(blob, dtype=np.uint8), offsets=offsets, group=group,
             groups=np.asarray(groups, dtype=str),
             digest=np.str_(hashlib.sha256(blob).hexdigest()))
    _write_atomic(path, data=out.getvalue())


def _load_parsed(path: Path) -> tuple[list[str], np.ndarray, tuple[str, ...]] | None:
    """The parsed posts kept at ``path``, or None when there are none or they fail a check
    (another archive, another format version, bytes that do not match their sha256)."""
    try:
        # from its bytes: np.load of a damaged file would leave the file open
        with np.load(io.BytesIO(path.read_bytes()), allow_pickle=False) as f:
            if int(f["version"]) != _PARSED_VERSION or str(f["archive"]) != ARCHIVE.sha256:
                return None
            blob = f["text"].tobytes()
            if hashlib.sha256(blob).hexdigest() != str(f["digest"]):
                return None
            offsets = f["offsets"]
            group = f["group"].astype(np.int64)
            groups = tuple(str(g) for g in f["groups"])
    except (OSError, ValueError, KeyError, EOFError, IndexError, TypeError, zlib.error,
            zipfile.BadZipFile, struct.error, NotImplementedError):
        return None  # cut short or damaged: parsed again from the verified archive
    bounds = offsets.tolist()
    if len(bounds) != group.shape[0] + 1 or bounds[0] != 0 or bounds[-1] != len(blob):
        return None
    text = blob.decode("latin-1")
    documents = [text[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return documents, group, groups


def _offline_hint(settings: DataSettings) -> str:
    folder = cache_path(DATASET, ARCHIVE, settings).parent
    first = ("run without --offline to download it" if not settings.download
             else "check the network (or raise --timeout)")
    return (f"{first}, or download {url_of(ARCHIVE)} yourself and "
            f"put it in {folder} as {ARCHIVE.name} (sha256 {ARCHIVE.sha256[:12]}...)")


def fetch_archive(settings: DataSettings) -> Path:
    """A verified copy of the archive in the cache (``nbvslr datasets fetch 20news``)."""
    return obtain(DATASET, ARCHIVE, settings, hint=_offline_hint(settings))[0]


def read_corpus(settings: DataSettings | None = None,
                ) -> tuple[list[str], np.ndarray, tuple[str, ...]]:
    """Every post of the archive, unstripped (``parse_archive``'s three values), from the
    parsed copy in the cache, or else from the verified archive (fetched if need be), then
    kept parsed in the cache."""
    settings = settings or DataSettings()
    kept = parsed_path(settings)
    if kept.is_file():
        parsed = _load_parsed(kept)
        if parsed is not None:
            return parsed
    data, _ = read_verified(DATASET, ARCHIVE, settings, hint=_offline_hint(settings))
    documents, group, groups = parse_archive(data)
    try:
        _save_parsed(kept, documents, group, groups)
    except OSError:
        pass  # a cache nbvslr may not write to: the archive is parsed again next time
    return documents, group, groups


# --------------------------------------------------------------------------- tasks

def _check_groups(groups: Sequence[str], known: tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(groups, str) or not isinstance(groups, Sequence | set | frozenset):
        raise ConfigError(f"groups: {groups!r} is not a list of newsgroups; give two or more, "
                          "e.g. [comp.graphics, sci.crypt]")
    for g in groups:
        if g not in known:
            raise ConfigError(f"groups: {g!r} is not a group of 20 Newsgroups"
                              f"{did_you_mean(str(g), known)}; groups: {', '.join(known)}")
    chosen = tuple(sorted(set(groups)))
    if len(chosen) != len(groups):
        raise ConfigError(f"groups: {list(groups)} names a group twice; name each once")
    if len(chosen) < 2:
        raise ConfigError(f"groups: {list(groups)} names fewer than 2 groups; a task needs two "
                          "or more, e.g. [comp.graphics, sci.crypt]")
    return chosen


def load_newsgroups(
    settings: DataSettings | None = None,
    groups: Sequence[str] | None = None,
    strip: str | Iterable[str] | None = DEFAULT_STRIP,
    name: str | None = None,
) -> TextTask:
    """A 20 Newsgroups task: the posts of ``groups`` (all 20 if None), both parts of the
    archive, their parts named by ``strip`` removed (``DEFAULT_STRIP``: headers, footers
    and quotes; ``"none"`` keeps the posts whole).

    The classes are the groups in sorted order, ``y`` their index (of two groups the second
    in sorted order is class 1). ``name`` defaults to ``20news`` for all groups, else
    ``20news-<group>-<group>...`` in that order. ``ConfigError`` for a bad ``strip`` or
    ``groups`` (checked against the archive's groups), ``DataError`` (``DownloadError``)
    when the archive cannot be had or fails its sha256.
    """
    parts = strip_options(strip)
    documents, group, known = read_corpus(settings)
    if groups is None:
        chosen = known
        rows = np.arange(group.shape[0])
        y = group
    else:
        chosen = _check_groups(groups, known)
        codes = np.asarray([known.index(g) for g in chosen], dtype=np.int64)
        rows = np.flatnonzero(np.isin(group, codes))
        y = np.searchsorted(codes, group[rows]).astype(np.int64)
    if name is None:
        name = DATASET if groups is None else "-".join((DATASET, *chosen))
    posts = tuple(strip_post(documents[i], parts) for i in rows.tolist())
    return TextTask(name, posts, np.ascontiguousarray(y, dtype=np.int64), tuple(chosen))
