"""The packed lexicon (docs/formats.md "Kokoro frontend data"), read in place by binary search, as
core/src/kokoro/text/lexicon.c reads it from the mapped .tmod."""

from __future__ import annotations

import struct

MAGIC = b"VXL1"


class LexiconError(ValueError):
    pass


class Lexicon:
    def __init__(self, blob: bytes | memoryview):
        blob = bytes(blob)
        if len(blob) < 8 or blob[:4] != MAGIC:
            raise LexiconError("frontend lexicon: bad magic (expected VXL1)")
        (self.count,) = struct.unpack_from("<I", blob, 4)
        if 8 + 4 * self.count > len(blob):
            raise LexiconError("frontend lexicon: offset table runs past the end")
        self.blob = blob
        self.offsets = struct.unpack_from(f"<{self.count}I", blob, 8)
        # Every record must end inside the blob with two NULs; checked once so lookups cannot overrun.
        if self.count and (self.offsets[-1] >= len(blob) or blob[-1] != 0):
            raise LexiconError("frontend lexicon: last record is not terminated")

    def _key(self, i: int) -> bytes:
        o = self.offsets[i]
        return self.blob[o:self.blob.index(b"\0", o)]

    def get(self, word: str) -> str | None:
        key = word.encode("utf-8")
        lo, hi = 0, self.count
        while lo < hi:
            mid = (lo + hi) // 2
            k = self._key(mid)
            if k < key:
                lo = mid + 1
            elif k > key:
                hi = mid
            else:
                o = self.offsets[mid] + len(k) + 1
                return self.blob[o:self.blob.index(b"\0", o)].decode("utf-8")
        return None

    def __contains__(self, word: str) -> bool:
        return self.get(word) is not None
