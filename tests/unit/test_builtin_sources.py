"""The built-in tasks as sources of the registry: every recipe (under every value of every
choice), sms-spam and 20 Newsgroups (by name and by ``source: {text: ...}``) give the data
they gave when they were read outside the registry, bit for bit; so do the synthetic
generators, whose ``Dataset`` is now made in one place.

``builtin_digests.json`` holds the sha256 of each variant's ``Dataset`` (``digest``: its
arrays, kind, names, grid, title and the ``notes`` run.json records) as the code before the
registry computed them (commit 5024653, ``python tests/unit/test_builtin_sources.py OUT`` run
against that commit's nbvslr/)."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

import numpy as np

from nbvslr.data import load_task
from nbvslr.data import newsgroups as ng
from nbvslr.data.dataset import Dataset, DataSettings, TaskSpec
from nbvslr.data.recipes import RECIPES

EXPECTED = Path(__file__).with_name("builtin_digests.json")


def digest(d: Dataset) -> str:
    """sha256 of everything a task's ``Dataset`` holds that a run reads or records."""
    h = hashlib.sha256()
    meta = [d.name, d.title, d.kind, list(d.n_values), list(d.feature_names), d.sizes,
            d.x_range, list(d.classes), dict(d.text_options)]
    h.update(json.dumps(meta, sort_keys=True, default=str).encode())
    h.update(json.dumps(d.notes, sort_keys=True, default=str).encode())
    X = d.X
    for a in ((X.data, X.indices, X.indptr) if d.kind == "text" else (X,)) + (d.y,):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def recipe_variants() -> list[TaskSpec]:
    """Every recipe under its defaults, and under each other value of each of its choices;
    sms-spam by name and renamed."""
    out = []
    for name, recipe in RECIPES.items():
        out.append(TaskSpec(name))
        for key, choice in recipe.choices.items():
            out += [TaskSpec(name, overrides={key: o}) for o in choice.options
                    if o != choice.value]
    return out + [
        TaskSpec("sms-spam"),
        TaskSpec("sms-spam", features={"vocabulary": "all", "max_features": 200}),
        TaskSpec("sms-200", source={"text": "sms-spam"}, features={"kind": "text", "min_df": 2}),
    ]


def news_variants() -> list[TaskSpec]:
    return [
        TaskSpec("20news"),
        TaskSpec("20news-crypt-graphics"),
        TaskSpec("20news", features={"vocabulary": "all"}),
        TaskSpec("n1", source={"text": "20news", "strip": "none"}),
        TaskSpec("n2", source={"text": "20news-crypt-graphics", "strip": ["headers"]}),
        TaskSpec("n3", source={"text": "20news"}),
    ]


def synthetic_variants() -> list[TaskSpec]:
    """Each generator, continuous and discrete (their Dataset made by nbvslr.data.draws)."""
    params = [{"generator": "nb", "rows": 300, "features": 5},
              {"generator": "nb", "kind": "discrete", "rows": 300, "features": 4, "levels": 3},
              {"generator": "dependent", "rows": 200, "features": 6},
              {"generator": "dependent", "kind": "discrete", "rows": 200, "features": 6},
              {"generator": "symmetric", "kind": "continuous", "bayes_error": 0.1,
               "features": 8, "rows": 300},
              {"generator": "symmetric", "kind": "discrete", "bayes_error": 0.2,
               "features": 5, "rows": 300}]
    return [TaskSpec(f"s{i}", source={"synthetic": p}) for i, p in enumerate(params)]


def key(spec: TaskSpec) -> str:
    return json.dumps([spec.name, dict(spec.overrides), spec.source, spec.features],
                      sort_keys=True)


def _post(group: str, n: int, body: str) -> bytes:
    return (f"From: u{n}@x.edu\nSubject: post {n}\nNewsgroups: {group}\n\n"
            f"In article <{n}@x.edu> a@b.c writes:\n> quoted {n}\n\n{body}\n\n-- \nsig {n}\n"
            ).encode("latin-1")


def news_archive() -> bytes:
    """A tiny bydate archive of three groups in both parts (fixed bytes: gzip's mtime 0)."""
    posts = {}
    words = ("render the polygons", "the engine and brakes", "keys and ciphers are math")
    for part in ng.PARTS:
        for g, group in enumerate(("comp.graphics", "rec.autos", "sci.crypt")):
            for n in range(3):
                posts[(part, group, f"{g}{n}{len(part)}")] = _post(group, n, f"{words[g]} {n}")
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, body in sorted(posts.items()):
            info = tarfile.TarInfo("/".join(name))
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return gzip.compress(raw.getvalue(), mtime=0)


def news_settings(cache: Path) -> DataSettings:
    """Offline settings whose cache holds the tiny archive (``ng.ARCHIVE`` set to it)."""
    data = news_archive()
    ng.ARCHIVE = dataclasses.replace(ng.ARCHIVE, sha256=hashlib.sha256(data).hexdigest())
    (cache / ng.DATASET).mkdir(parents=True, exist_ok=True)
    (cache / ng.DATASET / ng.ARCHIVE.name).write_bytes(data)
    return DataSettings(cache_dir=cache, download=False)


def digests(cache: Path) -> dict[str, str]:
    """Every variant's digest (or its error, by type and message)."""
    out = {}
    plain = DataSettings(cache_dir=cache / "files", download=False)
    news = news_settings(cache / "news")
    for settings, specs in ((plain, recipe_variants() + synthetic_variants()),
                            (news, news_variants())):
        for spec in specs:
            try:
                out[key(spec)] = digest(load_task(spec, settings))
            except Exception as exc:  # noqa: BLE001 -- an error is a result to compare too
                out[key(spec)] = f"{type(exc).__name__}: {exc}"
    return out


def test_every_built_in_task_gives_the_data_it_gave_before_the_registry(tmp_path,
                                                                        monkeypatch):
    """The recipes (under every value of every choice), sms-spam and 20 Newsgroups read
    through the registry, and the synthetic generators, are bit-identical to what the code
    before it gave (73 variants)."""
    monkeypatch.setattr(ng, "ARCHIVE", ng.ARCHIVE)  # news_settings replaces it
    expected = json.loads(EXPECTED.read_text())
    found = digests(tmp_path)
    assert set(found) == set(expected)
    assert not any(" " in v for v in found.values()), "a variant failed to load"
    changed = [k for k in expected if found[k] != expected[k]]
    assert not changed, f"{len(changed)} of {len(expected)} variants changed: {changed[:3]}"


if __name__ == "__main__":  # the digests of the nbvslr importable here
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        json.dump(digests(Path(folder)), open(sys.argv[1], "w"), indent=1, sort_keys=True)
