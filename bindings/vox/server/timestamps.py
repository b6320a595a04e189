"""Word timestamps, where a model's family knows them (capabilities["timestamps"]): the hook between
the engine's chunks and the server's events (SSE deltas, the WebSocket's "words" events, the page's
highlighting).

A session made with timestamps=True gives each chunk its words as `chunk.words`: [{"word", "start",
"end"}] in seconds from the utterance's first sample (for a duplex stream, from the stream's first
sample). The server passes them on in that form; a chunk without words adds no field or event.
"""

from __future__ import annotations

from typing import Any


def wants_timestamps(engine) -> bool:
    """Whether sessions of this engine can carry word timestamps."""
    return bool(engine.capabilities.get("timestamps"))


def chunk_words(chunk: Any) -> list[dict] | None:
    """The chunk's words as {"word", "start", "end"} (seconds), or None when it has none."""
    words = getattr(chunk, "words", None)
    if not words:
        return None
    out = []
    for w in words:
        if isinstance(w, dict):
            word, start, end = w.get("word"), w.get("start"), w.get("end")
        else:
            word, start, end = getattr(w, "word", None), getattr(w, "start", None), getattr(w, "end", None)
        if isinstance(word, str) and start is not None and end is not None:
            out.append({"word": word, "start": round(float(start), 4), "end": round(float(end), 4)})
    return out or None
