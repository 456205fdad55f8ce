"""How long 20 Newsgroups takes to read: parsing the archive, stripping the posts, and the
parsed copy kept in the cache, on a synthetic archive of the real one's shape.

Usage::

    python benchmarks/newsgroups_parse.py

The archive is made here, never downloaded: 18,846 posts (11,314 + 7,532, the real counts)
in 20 groups, ``20news-bydate-{train,test}/<group>/<id>``, each a header block, 5-60 lines of
words (a tenth quoted with "> ", some with a colon) and a signature. Every step is timed by
this process's CPU time (``time.process_time``), the best of 3; scikit-learn's quote rule
(``strip_newsgroup_quoting``) is timed beside ours on the same posts, and the outputs are
checked equal. Nothing here asserts a timing.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import random
import tarfile
import tempfile
import time
from pathlib import Path

from sklearn.datasets import _twenty_newsgroups as sk20

from nbvslr.data import newsgroups as ng


def synthetic_archive(seed: int = 0) -> bytes:
    """A ``20news-bydate.tar.gz`` of the real archive's post counts and layout."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 9)))
             for _ in range(30000)]
    groups = [f"group{i:02d}.topic" for i in range(20)]
    raw = io.BytesIO()
    n = 0
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for part, count in zip(ng.PARTS, (11314, 7532), strict=True):
            for i in range(count):
                head = (f"From: user{n}@host.edu\nSubject: topic {n}\nOrganization: Univ\n"
                        f"Newsgroups: {groups[i % 20]}\nLines: 20\n\n")
                body = []
                for _ in range(rng.randint(5, 60)):
                    line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
                    r = rng.random()
                    body.append("> " + line if r < 0.1 else line + ":" if r < 0.15 else line)
                text = (head + "\n".join(body) + "\n\n-- \nA signature\n").encode("latin-1")
                info = tarfile.TarInfo(f"{part}/{groups[i % 20]}/{50000 + n}")
                info.size = len(text)
                tar.addfile(info, io.BytesIO(text))
                n += 1
    return gzip.compress(raw.getvalue(), 6)


def best(f, repeat: int = 3) -> tuple[float, object]:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        out = f()
        times.append(time.process_time() - t)
    return min(times), out


def main() -> None:
    data = synthetic_archive()
    ng.ARCHIVE = dataclasses.replace(ng.ARCHIVE, sha256=hashlib.sha256(data).hexdigest())
    t_sha, _ = best(lambda: hashlib.sha256(data).hexdigest())
    t_parse, (docs, group, groups) = best(lambda: ng.parse_archive(data))
    chars = sum(map(len, docs))
    print(f"archive {len(data) / 1e6:.1f} MB, {len(docs)} posts, {chars / 1e6:.1f} M characters")
    print(f"sha256 of the archive      {t_sha:6.3f} s CPU")
    print(f"parse the archive          {t_parse:6.3f} s CPU")
    t_strip, stripped = best(lambda: [ng.strip_post(d, ng.STRIPS) for d in docs])
    print(f"strip headers+footers+quotes {t_strip:4.3f} s CPU")
    t_ours, ours = best(lambda: [ng.strip_quotes(d) for d in docs])
    t_sk, theirs = best(lambda: [sk20.strip_newsgroup_quoting(d) for d in docs])
    assert ours == theirs
    print(f"quote rule: ours {t_ours:.3f} s, scikit-learn's {t_sk:.3f} s CPU "
          f"({t_sk / t_ours:.1f}x), outputs equal")
    with tempfile.TemporaryDirectory() as tmp:
        kept = Path(tmp) / "parsed.npz"
        t_save, _ = best(lambda: ng._save_parsed(kept, docs, group, groups))
        t_load, back = best(lambda: ng._load_parsed(kept))
        assert back is not None and back[0] == docs
        print(f"parsed copy: save {t_save:.3f} s, load {t_load:.3f} s CPU "
              f"({kept.stat().st_size / 1e6:.1f} MB)")
    print(f"a load: from the archive {t_sha + t_parse + t_strip:.2f} s, from the parsed copy "
          f"{t_load + t_strip:.2f} s CPU")


if __name__ == "__main__":
    main()
