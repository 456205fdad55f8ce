"""The command-line options that say where data files come from, declared once.

``nbvslr run``, ``nbvslr datasets`` and ``nbvslr datasets fetch`` take the same five options;
``data_settings`` turns them into a ``DataSettings`` and refuses a folder mirror that does not
exist (a mirror is only ever read, so a mistyped path would otherwise be skipped in silence);
an http(s) URL mirror is kept as given (reached only when a file is fetched).
"""

from __future__ import annotations

from pathlib import Path

import click

from nbvslr.data.dataset import DataSettings, default_cache_dir, setting_problem
from nbvslr.data.sources import MIRROR_ENV, is_url
from nbvslr.errors import ConfigError

CACHE_ENV = "NBVSLR_CACHE"
DEFAULT_TIMEOUT = DataSettings.timeout

OPTIONS = (
    click.option("--mirror", type=str, envvar=MIRROR_ENV, metavar="DIR|URL",
                 show_envvar=True, default=None,
                 help="Mirror of the original UCI files, tried after the shipped copies and "
                      "before any download: a folder, or an http(s) URL of a folder holding "
                      "<dataset>/<file> (fetched within --timeout, checked by sha256, never "
                      "written to)."),
    click.option("--cache", type=click.Path(path_type=Path), envvar=CACHE_ENV,
                 show_envvar=True, default=None,
                 help=f"Dataset cache: verified copies of downloaded files "
                      f"[default: {default_cache_dir()}]."),
    click.option("--offline", is_flag=True,
                 help="Never download: use the cache, the shipped files and a folder mirror "
                      "only (a URL mirror is not reached)."),
    click.option("--fresh", is_flag=True,
                 help="Skip the UCI files shipped with nbvslr: take the cache, the mirror or "
                      "a download instead."),
    click.option("--timeout", type=float, default=DEFAULT_TIMEOUT, show_default=True,
                 metavar="SECONDS",
                 help="Download timeout for the whole transfer of a file (from a URL mirror "
                      "too; of an OpenML dataset, its description and its file together)."),
)


MAX_DOWNLOAD_ENV = "NBVSLR_MAX_DOWNLOAD"
MAX_DOWNLOAD_OPTION = click.option(
    "--max-download", type=click.FloatRange(min=0, min_open=True),
    default=DataSettings.max_download, show_default=True, envvar=MAX_DOWNLOAD_ENV,
    show_envvar=True, metavar="MIB",
    help="The largest file of an OpenML dataset downloaded, in MiB: a larger one is refused "
         "(before it is read when the server announces its size) with the value to give here.")
"""``nbvslr run``'s one more data option: the files of a dataset of no known size (OpenML's);
``datasets fetch`` fetches built-in files only, of known sizes."""


def data_options(func):
    """Add the data options (``mirror``, ``cache``, ``offline``, ``fresh``, ``timeout``)."""
    for option in reversed(OPTIONS):
        func = option(func)
    return func


def data_settings(mirror: str | Path | None, cache: Path | None, offline: bool, fresh: bool,
                  timeout: float, max_download: float = DataSettings.max_download
                  ) -> DataSettings:
    """The ``DataSettings`` of the data options; ``ConfigError`` (exit 2) for a folder mirror
    or a cache that is not a folder, or a timeout or download limit that is not a finite
    positive number (click's ``float`` and ``FloatRange`` let ``inf`` and ``nan`` through).
    A mirror starting with ``http://`` or ``https://`` is a URL, kept as a ``str``; anything
    else is a folder."""
    given = mirror
    if mirror is not None:
        mirror = str(mirror) if is_url(str(mirror)) else Path(mirror)
    if isinstance(mirror, Path) and not mirror.is_dir():
        what = "does not exist" if not mirror.exists() else "is not a folder"
        raise ConfigError(
            f"mirror {given} {what} (--mirror or {MIRROR_ENV}); point it at a folder of "
            f"the original UCI files (or an http(s):// URL of one), or unset {MIRROR_ENV}"
        )
    if cache is not None and Path(cache).exists() and not Path(cache).is_dir():
        raise ConfigError(
            f"cache {cache} is not a folder (--cache or {CACHE_ENV}); name a folder"
        )
    for option, name, value in (("--timeout", "timeout", timeout),
                                ("--max-download", "max_download", max_download)):
        problem = setting_problem(name, value)
        if problem is not None:
            raise ConfigError(f"{option} {value:g}: {problem}")
    cache_dir = Path(cache) if cache is not None else default_cache_dir()
    return DataSettings(cache_dir=cache_dir, mirror=mirror, download=not offline,
                        timeout=timeout, shipped=not fresh, max_download=max_download)
