"""Where the bytes of a data file come from: the cache, the files shipped with nbvslr, a
local mirror, or a download.

In this order:

1. the cache ``settings.cache_dir / <dataset> / <file>``, used only if its sha256 matches
   the recipe's (a truncated or altered copy is replaced, never used);
2. the original files shipped in the package (``nbvslr/data/uci/<dataset>/<file>.gz``),
   verified on every read (``settings.shipped=False`` skips them: ``--fresh``);
3. the mirror ``settings.mirror``, read-only: a folder (``<mirror>/<dataset>/<file>``, or
   ``<mirror>/<file>`` for a flat folder) or an http(s) URL of a folder laid out the same
   way (``<mirror>/<dataset>/<file>``, fetched by ``download`` with the same deadline; a
   404 there means "not in the mirror"), verified, then copied into the cache;
4. a download from the file's URL, within ``settings.timeout`` for the whole transfer,
   verified before it enters
   the cache (``settings.download=False`` forbids this step).

``read_verified`` returns a file's bytes and never writes a shipped file into the cache;
``obtain`` puts a verified copy in the cache (``nbvslr datasets fetch``). Every write into the
cache goes to a temporary file in the same folder first and is moved into place with
``os.replace``, so an interrupted copy never leaves a partial file.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import os
import re
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from importlib import resources
from pathlib import Path

from nbvslr.data.dataset import DataSettings
from nbvslr.data.recipes import BASE_URLS, DataFile
from nbvslr.errors import DataError, DownloadError

MIRROR_ENV = "NBVSLR_DATA_MIRROR"
_OFFLINE_HINT = (
    f"to work offline, point {MIRROR_ENV} (or --mirror) at a folder of the original UCI files"
)
_MIRROR_HINT = (
    f"check that the mirror is up and serves <dataset>/<file>, or point {MIRROR_ENV} "
    "(or --mirror) at another mirror or a folder"
)
SHIPPED = "uci"
"""The folder of ``nbvslr.data`` that holds the shipped files, ``<dataset>/<file>.gz``."""
_CHUNK = 1 << 16
MAX_DOWNLOAD = 64 << 20
"""The most bytes a download may bring (64 MiB): above the largest file any recipe names
(the 20 Newsgroups archive, 14 MB; a UCI file, 4 MB at most), so a mirror, redirect or
server that streams without end, or announces a larger length, is stopped there rather
than filling the memory; its sha256 could not match anyway. A dataset of no known size (an
OpenML dataset) has its own limit, ``DataSettings.max_download`` (``--max-download``)."""


ERROR_BODY = 4096
"""The most bytes of an HTTP error's answer read (``HttpStatus.body``)."""


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def original(file: DataFile) -> str:
    """How a message names the file a mirror should hold in place of a wrong one: the
    original UCI file, or (another host's) the original archive or file at its URL."""
    if file.host == "uci":
        return "the original UCI file"
    what = "archive" if file.name.endswith((".tar.gz", ".tgz", ".zip", ".gz")) else "file"
    return f"the original {what} ({url_of(file)})"


def url_of(file: DataFile) -> str:
    """The download URL of a data file (``BASE_URLS[file.host] + '/' + file.path``)."""
    return f"{BASE_URLS[file.host].rstrip('/')}/{file.path}"


def cache_path(dataset: str, file: DataFile, settings: DataSettings) -> Path:
    """Where the verified copy of ``file`` lives in the cache."""
    return Path(settings.cache_dir) / dataset / file.name


def is_url(mirror: object) -> bool:
    """True when a mirror (or any address) is an http(s) URL rather than a folder."""
    return isinstance(mirror, str) and mirror.lower().startswith(("http://", "https://"))


def mirror_url(dataset: str, file: DataFile, settings: DataSettings) -> str | None:
    """The file's URL in a URL mirror (``<mirror>/<dataset>/<name>``), or None when the
    mirror is a folder or unset."""
    if not is_url(settings.mirror):
        return None
    return f"{str(settings.mirror).rstrip('/')}/{dataset}/{file.name}"


def mirror_path(dataset: str, file: DataFile, settings: DataSettings) -> Path | None:
    """The file in a folder mirror (``<mirror>/<dataset>/<name>`` or ``<mirror>/<name>``), if
    any (None for a URL mirror: see ``mirror_url``)."""
    if settings.mirror is None or is_url(settings.mirror):
        return None
    root = Path(settings.mirror)
    for candidate in (root / dataset / file.name, root / file.name):
        if candidate.is_file():
            return candidate
    return None


def shipped_file(dataset: str, file: DataFile):
    """The shipped, compressed copy of ``file`` (a ``Traversable``), or None if not shipped."""
    found = resources.files("nbvslr.data").joinpath(SHIPPED, dataset, f"{file.name}.gz")
    return found if found.is_file() else None


def shipped_bytes(dataset: str, file: DataFile) -> bytes | None:
    """The verified bytes of the shipped copy of ``file``, or None if it is not shipped.

    Raises ``DataError`` when the shipped copy does not decompress to the recipe's sha256
    (an installation changed by hand): it is never used.
    """
    found = shipped_file(dataset, file)
    if found is None:
        return None
    try:
        data = gzip.decompress(found.read_bytes())
    except (OSError, EOFError) as exc:
        data, actual = b"", f"unreadable ({exc})"
    else:
        actual = hashlib.sha256(data).hexdigest()
    if actual != file.sha256:
        raise DataError(
            f"shipped file {found} is not the original {file.name} (sha256 {actual[:12]}..., "
            f"expected {file.sha256[:12]}...); reinstall nbvslr, or use --fresh to take a "
            "mirror or a download instead"
        )
    return data


def is_cached(dataset: str, file: DataFile, settings: DataSettings) -> bool:
    """True when the cache holds a copy of ``file`` whose sha256 matches."""
    return _holds(cache_path(dataset, file, settings), file)


def _holds(path: Path, file: DataFile) -> bool:
    """Whether ``path`` is a regular file with ``file``'s sha256; one larger than any data
    file (``MAX_DOWNLOAD``) is not, and is never read."""
    try:
        return (path.is_file() and path.stat().st_size <= MAX_DOWNLOAD
                and sha256_of(path) == file.sha256)
    except OSError:
        return False


def status(dataset: str, file: DataFile, settings: DataSettings) -> str:
    """``"cached"`` (verified copy in the cache), ``"shipped"`` (with the package),
    ``"mirror"`` (a verified copy in a folder mirror, or a URL mirror downloads may reach:
    asking no server, it is verified when fetched) or ``"download"``."""
    if is_cached(dataset, file, settings):
        return "cached"
    if settings.shipped and shipped_file(dataset, file) is not None:
        return "shipped"
    if is_url(settings.mirror) and settings.download:
        return "mirror"
    found = mirror_path(dataset, file, settings)
    if found is not None and _holds(found, file):
        return "mirror"
    return "download"


def _write_atomic(target: Path, data: bytes | None = None, source: Path | None = None) -> None:
    """Write ``data`` (or copy ``source``) to ``target`` via a temporary file + ``os.replace``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            if data is not None:
                out.write(data)
            else:
                with open(source, "rb") as src:  # type: ignore[arg-type]
                    shutil.copyfileobj(src, out, _CHUNK)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: Public name of the atomic write, for the other caches of the data layer (OpenML's).
write_atomic = _write_atomic


def download(url: str, timeout: float, hint: str = _OFFLINE_HINT,
             absent: int | None = None, limit: int | None = None) -> bytes | None:
    """The bytes at ``url`` within one deadline of ``timeout`` seconds for the whole transfer
    (connecting, the headers and every read: a server that trickles is stopped then, not
    ``timeout`` after its last byte) and at most ``limit`` bytes (default ``MAX_DOWNLOAD``:
    a longer announced length
    is refused before the body is read, a body that goes on is cut there); every failure is
    a ``DownloadError`` naming the URL, the reason and ``hint`` (``HttpStatus`` for an HTTP
    error status, with its code and the start of its answer), except an HTTP status equal
    to ``absent`` (a mirror's 404), which returns None; a URL that is not http(s) is a
    ``DataError``, nothing read."""
    if not is_url(url):  # file:, ftp:, data:... would read what is not a download
        raise DataError(f"download of {url!r} refused: not an http:// or https:// URL, the "
                        "only ones nbvslr downloads from; give an http(s) URL")
    outcome: dict[str, object] = {}
    deadline = time.monotonic() + timeout
    limit = MAX_DOWNLOAD if limit is None else limit

    def transfer() -> None:
        try:
            outcome["data"] = _read_until(url, timeout, deadline, limit)
        except urllib.error.HTTPError as exc:  # its body may say why (OpenML's does)
            outcome["error"] = exc
            try:
                outcome["body"] = exc.read(ERROR_BODY)
            except (OSError, http.client.HTTPException, ValueError):
                pass
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=transfer, name="nbvslr-download", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive() or isinstance(outcome.get("error"), _Late):
        raise DownloadError(f"download of {url} failed: timed out after {timeout:g} s (the "
                            f"whole transfer, --timeout); {hint}")
    if "data" in outcome:
        return outcome["data"]  # type: ignore[return-value]
    exc = outcome["error"]
    if isinstance(exc, _TooLong):
        raise TooLarge(
            f"download of {url} refused: {exc}, more than the {limit >> 20} MiB any data file "
            f"nbvslr reads may have (the server does not serve the file); {hint}",
            size=exc.size, limit=limit)
    if isinstance(exc, urllib.error.HTTPError):
        exc.close()  # an HTTPError holds the open response
        if absent is not None and exc.code == absent:
            return None
        raise HttpStatus(f"download of {url} failed: HTTP {exc.code} "
                         f"{_reason_text(str(exc.reason))}; {hint}",
                         status=exc.code, body=outcome.get("body") or b"")  # type: ignore
    elif isinstance(exc, urllib.error.URLError):
        inner = exc.reason
        is_timeout = isinstance(inner, TimeoutError)
        reason = f"timed out after {timeout:g} s" if is_timeout else _reason_text(f"{inner}")
    elif isinstance(exc, TimeoutError):
        reason = f"timed out after {timeout:g} s"
    elif isinstance(exc, http.client.BadStatusLine):
        reason = f"the answer is not HTTP ({_reason_text(str(exc))!r})"
    elif isinstance(exc, OSError | http.client.HTTPException | ValueError):
        # Connection reset, a body cut short (IncompleteRead), a malformed answer or URL...
        reason = _reason_text(str(exc)) or type(exc).__name__
    else:
        raise exc  # type: ignore[misc]
    raise DownloadError(f"download of {url} failed: {reason}; {hint}")


def _reason_text(text: str, most: int = 200) -> str:
    """``text`` as one line of at most ``most`` characters: line breaks (real, or written as
    ``\\r``/``\\n`` escapes by a ``repr``) and runs of spaces become one space."""
    text = " ".join(re.sub(r"\\[rn]", " ", text).split())
    return text if len(text) <= most else text[:most - 3] + "..."


class _Late(Exception):
    """The transfer went past its deadline."""


class _TooLong(Exception):
    """The transfer announced (``size``) or sent (``size`` None) more than its limit."""

    def __init__(self, message: str, size: int | None) -> None:
        super().__init__(message)
        self.size = size


class HttpStatus(DownloadError):
    """A download answered with an HTTP error: ``status`` its code, ``body`` the first
    ``ERROR_BODY`` bytes of the answer (where a server says why, as OpenML's JSON does)."""

    def __init__(self, message: str, status: int, body: bytes) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class TooLarge(DownloadError):
    """A download refused for its size: ``size`` the bytes the server announced (None: it
    sent more than ``limit`` without announcing a length), ``limit`` the bytes allowed."""

    def __init__(self, message: str, size: int | None, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


class _HttpRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to another http(s) URL (urllib's own would follow one to
    ``ftp:``)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not is_url(urllib.parse.urljoin(req.full_url, newurl)):
            raise urllib.error.HTTPError(
                req.full_url, code, f"a redirect to {newurl!r}, not an http(s) URL", headers,
                fp)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_HttpRedirects)
"""urllib's default opener, its redirects kept to http(s)."""


def _read_until(url: str, timeout: float, deadline: float, limit: int) -> bytes:
    chunks = []
    total = 0
    with _OPENER.open(url, timeout=timeout) as response:
        if response.length is not None and response.length > limit:
            raise _TooLong(f"it announces {response.length} bytes", response.length)
        while True:
            if time.monotonic() > deadline:
                raise _Late
            chunk = response.read1(_CHUNK)
            if not chunk:
                if response.length:  # the connection closed before the announced length
                    raise http.client.IncompleteRead(b"".join(chunks), response.length)
                return b"".join(chunks)
            total += len(chunk)
            if total > limit:
                raise _TooLong(f"it sent more than {limit} bytes", None)
            chunks.append(chunk)


def fetch_file(dataset: str, file: DataFile, settings: DataSettings) -> Path:
    """A verified copy of ``file`` in the cache (see ``obtain``)."""
    return obtain(dataset, file, settings)[0]


def read_verified(dataset: str, file: DataFile, settings: DataSettings,
                  hint: str = _OFFLINE_HINT) -> tuple[bytes, str]:
    """The bytes of ``file``, verified, and where they came from (``"cache"``,
    ``"shipped"``, ``"mirror"`` or the URL downloaded).

    A shipped file is read from the package and never copied into the cache; a mirror or
    downloaded copy goes through the cache (see ``obtain``, which ends a failed download's
    message with ``hint``).
    """
    target = cache_path(dataset, file, settings)
    if target.is_file() and target.stat().st_size <= MAX_DOWNLOAD:  # else never its file
        data = target.read_bytes()
        if hashlib.sha256(data).hexdigest() == file.sha256:
            return data, "cache"
    if settings.shipped:
        data = shipped_bytes(dataset, file)
        if data is not None:
            return data, "shipped"
    path, how = obtain(dataset, file, settings, hint)
    return path.read_bytes(), how


def obtain(dataset: str, file: DataFile, settings: DataSettings,
           hint: str = _OFFLINE_HINT) -> tuple[Path, str]:
    """A verified copy of ``file`` in the cache, and where it came from (``"cache"``,
    ``"shipped"``, ``"mirror"`` for a folder mirror, or the URL downloaded: a URL mirror's
    or the file's own).

    Raises ``DataError`` when a shipped or mirror copy fails its checksum (the mirror is
    never written to), ``DownloadError`` when a download (from a URL mirror too) fails, is
    refused by its checksum, or is not allowed (``settings.download`` false: a URL mirror is
    not reached then either). A URL mirror answering 404 does not hold the file: the file's
    own URL is tried next, as for a folder mirror without it. ``hint`` ends the message of a
    failed or forbidden download from the file's own URL (how to work offline).
    """
    target = cache_path(dataset, file, settings)
    stale = target.is_file()
    if stale and _holds(target, file):
        return target, "cache"
    if settings.shipped:
        data = shipped_bytes(dataset, file)
        if data is not None:
            _write_atomic(target, data=data)
            return target, "shipped"
    folder = settings.mirror if not is_url(settings.mirror) else None
    if folder is not None and target.resolve().is_relative_to(Path(folder).resolve()):
        raise DataError(
            f"the cache {settings.cache_dir} is inside the mirror {settings.mirror}, which is "
            f"never written to, and {file.name} is missing or fails its sha256 there; "
            "choose another cache folder (--cache)"
        )

    found = mirror_path(dataset, file, settings)
    if found is not None:
        if found.stat().st_size > MAX_DOWNLOAD:
            raise DataError(
                f"mirror file {found} is larger than any data file ({MAX_DOWNLOAD >> 20} MiB); "
                f"replace it with {original(file)}")
        actual = sha256_of(found)
        if actual != file.sha256:
            raise DataError(
                f"mirror file {found} has sha256 {actual[:12]}..., expected "
                f"{file.sha256[:12]}...; replace it with {original(file)}"
            )
        _write_atomic(target, source=found)
        return target, "mirror"
    url = mirror_url(dataset, file, settings)
    lacking = None  # the URL mirror's address of the file, when it answered 404
    if url is not None and settings.download:
        data = download(url, settings.timeout, hint=_MIRROR_HINT, absent=404)
        lacking = url if data is None else None
        if data is not None:
            actual = hashlib.sha256(data).hexdigest()
            if actual != file.sha256:
                raise DataError(
                    f"mirror file {url} has sha256 {actual[:12]}..., expected "
                    f"{file.sha256[:12]}... ({len(data)} bytes); replace it in the mirror with "
                    f"{original(file)}, or unset {MIRROR_ENV} (--mirror) to download it"
                )
            _write_atomic(target, data=data)
            return target, url

    where = f"{target} fails its sha256 check" if stale else f"{file.name} is not in the cache"
    if not settings.download:
        if is_url(settings.mirror):
            mirror = f"the mirror {settings.mirror} is a URL, which --offline does not reach"
        elif settings.mirror:
            mirror = f"not in the mirror {settings.mirror}"
        else:
            mirror = "no mirror set"
        raise DownloadError(
            f"{where} ({mirror}) and downloads are off; {hint}"
            + (f", or delete {target}" if stale else "")
        )
    url = url_of(file)
    try:
        data = download(url, settings.timeout, hint) or b""  # never None: no "absent" status
        actual = hashlib.sha256(data).hexdigest()
        if actual != file.sha256:
            raise DownloadError(
                f"download of {url} refused: sha256 {actual[:12]}... is not the expected "
                f"{file.sha256[:12]}... ({len(data)} bytes); {hint}"
            )
    except DownloadError as exc:
        if lacking is None:
            raise
        raise DownloadError(f"the mirror does not hold {file.name} (HTTP 404 for {lacking}), "
                            f"and the {exc}") from None
    _write_atomic(target, data=data)
    return target, url
