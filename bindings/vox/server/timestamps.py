"""Word timestamps, where a model's family knows them: the hook between the core's chunks and the
server's events (SSE deltas, WebSocket "words" events, the page's highlighting).

A chunk carries them as `chunk.words`: a sequence of (word, start, end) with start and end in seconds
from the start of that chunk, as tuples, dicts {"word", "start", "end"} or objects with those
attributes. The server sends them as {"word", "start", "end"} in seconds from the start of the
utterance. A chunk without `words` (or with None) has none, and no event field is added.
"""

from __future__ import annotations

from typing import Any


def chunk_words(chunk: Any, first_sample: int, sample_rate: int) -> list[dict] | None:
    """The chunk's words with times from the start of the utterance (the chunk starts at
    first_sample), or None when the chunk has no timestamps."""
    words = getattr(chunk, "words", None)
    if not words:
        return None
    base = first_sample / sample_rate if sample_rate else 0.0
    out = []
    for w in words:
        if isinstance(w, dict):
            word, start, end = w.get("word"), w.get("start"), w.get("end")
        elif isinstance(w, (tuple, list)) and len(w) == 3:
            word, start, end = w
        else:
            word, start, end = getattr(w, "word", None), getattr(w, "start", None), getattr(w, "end", None)
        if not isinstance(word, str) or start is None or end is None:
            continue
        out.append({"word": word, "start": round(base + float(start), 4), "end": round(base + float(end), 4)})
    return out or None
