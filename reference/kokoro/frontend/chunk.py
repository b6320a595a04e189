"""Sentence chunking, incremental: text may arrive in pieces; a span is emitted only when it is
complete (or when the caller says the text is final). core/src/kokoro/text/chunk.c is the twin;
lengths there are bytes of UTF-8, here characters, and the limit counts characters in both.

next_span(text, final) -> (span_len, consumed): the span is text[:span_len] (it may begin with
whitespace; it never ends with any), consumed (>= span_len) is what the caller drops before the next
call. span_len 0: no complete span yet (or, when final, only whitespace, which is then consumed).

A sentence ends after a run of . ! ? … (closing marks ) ] } " ” ' after it belong to it) that is
followed by whitespace, or by the end of the text when final; a blank line also ends a span. A "." does not end a sentence after an
abbreviation of the NO_BREAK list, a single capital letter ("J. K. Rowling") or an initialism
("U.S."); decimals ("3.14") never do as no whitespace follows the dot.
A sentence longer than LIMIT characters is cut inside its first LIMIT characters: after the last
clause mark (, ; : —) followed by whitespace, else at the last whitespace; a single word longer than
LIMIT runs to its end (never split inside a word). The choice depends only on the first LIMIT + 1
characters, so the spans are the same whatever the sizes of the pieces the text arrives in.
"""

from __future__ import annotations

from ...text.normalize import LEAD, NO_BREAK, is_initialism, is_upper, is_ws

LIMIT = 240
TERMINATORS = frozenset(".!?…")
CLOSERS = frozenset(")]}\"”'’")
CLAUSE = frozenset(",;:—")


def _no_break(text: str, i: int) -> bool:
    """Whether the "." at text[i] follows an abbreviation or initial."""
    k = i
    while k > 0 and not is_ws(text[k - 1]):
        k -= 1
    while k < i and text[k] in LEAD:
        k += 1
    w = text[k:i]
    if not w:
        return False
    return (w + ".") in NO_BREAK or (len(w) == 1 and is_upper(w)) or is_initialism(w + ".")


def next_span(text: str, final: bool) -> tuple[int, int]:
    n = len(text)
    s = 0
    while s < n and is_ws(text[s]):
        s += 1
    if s == n:  # only whitespace: dropped at the end (kept before, so spans do not depend on the pieces)
        return (0, n) if final else (0, 0)
    i = s
    while i < n and i - s < LIMIT:
        if text[i] == "\n":  # a blank line (two newlines, spaces between) ends a span
            j, nl = i + 1, 1
            while j < n and is_ws(text[j]):
                nl += text[j] == "\n"
                j += 1
            if nl >= 2:
                e = i
                while is_ws(text[e - 1]):
                    e -= 1
                return e, i
            if j == n and not final:
                return 0, 0  # a second newline may still come
        if text[i] in TERMINATORS:
            j = i
            while j < n and text[j] in TERMINATORS:
                j += 1
            while j < n and text[j] in CLOSERS:
                j += 1
            if j - s > LIMIT:
                break
            if j == n:
                return (j, j) if final else (0, 0)
            if is_ws(text[j]) and not (j == i + 1 and text[i] == "." and _no_break(text, i)):
                return j, j
            i = j
            continue
        i += 1
    if n - s <= LIMIT:
        if final:
            e = n
            while is_ws(text[e - 1]):
                e -= 1
            return e, n
        return 0, 0
    # Longer than LIMIT: decide within text[s : s + LIMIT + 1].
    w_end = s + LIMIT
    for p in range(w_end - 1, s, -1):
        if text[p] in CLAUSE and (is_ws(text[p + 1]) or text[p] == "—"):
            return p + 1, p + 1
    for p in range(w_end, s, -1):
        if is_ws(text[p]):
            e = p
            while is_ws(text[e - 1]):
                e -= 1
            return e, p
    # one word longer than LIMIT: up to its end
    p = w_end
    while p < n and not is_ws(text[p]):
        p += 1
    if p == n and not final:
        return 0, 0
    return p, p
