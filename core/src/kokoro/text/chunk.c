/* Sentence chunking, incremental (reference/kokoro/frontend/chunk.py is the spec). Positions are
 * bytes; the span limit counts characters, as in the Python twin. */
#include <stdlib.h>
#include <string.h>

#include "kokoro/text/frontend.h"
#include "kokoro/text/text_internal.h"
#include "unicode/unicode.h"

#define TERMINATORS ".!?…"
#define CLOSERS ")]}\"”'’"
#define CLAUSE ",;:—"
#define LEAD "([{\"“'"

static const char *const NO_BREAK[] = {"Dr.", "Mr.", "Mrs.", "Ms.", "Prof.", "Mt.", "St.", "No.", "Gen.", "Sen.",
                                       "Rep.", "Capt.", "Lt.", "Sgt.", "Gov.", "Fig.", "e.g.", "i.e.", "vs.", "cf.",
                                       "approx.", "Jr.", "Sr.", "Jan.", "Feb.", "Mar.", "Apr.", "Jun.",
                                       "Jul.", "Aug.", "Sep.", "Sept.", "Oct.", "Nov.", "Dec."};

static uint32_t cp_at(const char *t, size_t n, size_t i, size_t *k) {
    uint32_t cp;
    *k = vt_next(t, n, i, &cp);
    return cp;
}

/* Whether the "." at t[i] follows an abbreviation, a capital initial or an initialism. */
static bool no_break(const char *t, size_t n, size_t i) {
    size_t k = i, l;
    while (k > 0) {
        size_t p = vt_prev(t, k);
        if (vt_is_ws(cp_at(t, n, p, &l))) break;
        k = p;
    }
    while (k < i && vt_in(cp_at(t, n, k, &l), LEAD)) k += l;
    size_t wn = i - k;
    if (!wn) return false;
    const char *w = t + k; /* w followed by the dot is t[k..i] */
    for (size_t a = 0; a < sizeof NO_BREAK / sizeof NO_BREAK[0]; a++)
        if (vt_eq(w, wn + 1, NO_BREAK[a])) return true;
    if (wn == 1 && vt_is_upper((unsigned char)w[0])) return true;
    return vt_is_initialism(w, wn + 1);
}

/* e without the whitespace that ends t[s..e), t[s] not being whitespace. The walk back stops at s:
 * on text that is not valid UTF-8, vt_prev can step over a stray continuation byte at s. */
static size_t trim_end(const char *t, size_t n, size_t s, size_t e) {
    size_t k;
    while (e > s) {
        size_t p = vt_prev(t, e);
        if (p < s || !vt_is_ws(cp_at(t, n, p, &k))) break;
        e = p;
    }
    return e;
}

size_t vx_kfront_next_span(const char *t, size_t n, int final, size_t *consumed) {
    size_t s = 0, k;
    if (!final && n) { /* a character cut off by the end of a piece counts only once it is whole */
        size_t p = vt_prev(t, n);
        uint32_t cp;
        bool incomplete = false;
        if (vx_utf8_decode(t, n, p, &cp, &incomplete) == 0 && incomplete) n = p;
    }
    while (s < n && vt_is_ws(cp_at(t, n, s, &k))) s += k;
    if (s == n) { /* only whitespace: dropped at the end (kept before, so spans do not depend on the pieces) */
        *consumed = final ? n : 0;
        return 0;
    }
    size_t i = s, count = 0;
    while (i < n && count < VX_KFRONT_SPAN_LIMIT) {
        uint32_t c = cp_at(t, n, i, &k);
        if (c == '\n') { /* a blank line (two newlines, spaces between) ends a span */
            size_t j = i + 1, nl = 1, k2;
            uint32_t c2;
            while (j < n && vt_is_ws((c2 = cp_at(t, n, j, &k2)))) {
                nl += c2 == '\n';
                j += k2;
            }
            if (nl >= 2) {
                *consumed = i;
                return trim_end(t, n, s, i);
            }
            if (j == n && !final) {
                *consumed = 0;
                return 0; /* a second newline may still come */
            }
        }
        if (vt_in(c, TERMINATORS)) {
            size_t j = i, jc = count;
            while (j < n && vt_in(cp_at(t, n, j, &k), TERMINATORS)) j += k, jc++;
            while (j < n && vt_in(cp_at(t, n, j, &k), CLOSERS)) j += k, jc++;
            if (jc > VX_KFRONT_SPAN_LIMIT) break;
            if (j == n) {
                *consumed = final ? j : 0;
                return final ? j : 0;
            }
            if (vt_is_ws(cp_at(t, n, j, &k)) && !(j == i + 1 && t[i] == '.' && no_break(t, n, i))) {
                *consumed = j;
                return j;
            }
            i = j;
            count = jc;
            continue;
        }
        i += k;
        count++;
    }
    size_t total = vt_count(t + s, n - s);
    if (total <= VX_KFRONT_SPAN_LIMIT) {
        if (!final) {
            *consumed = 0;
            return 0;
        }
        *consumed = n;
        return trim_end(t, n, s, n);
    }
    /* Longer than the limit: decide within the first LIMIT + 1 characters. */
    size_t w_end = s;
    for (size_t c = 0; c < VX_KFRONT_SPAN_LIMIT; c++) w_end += vt_next(t, n, w_end, &(uint32_t){0});
    size_t clause = 0, space = 0;
    for (size_t p = s; p <= w_end;) {
        uint32_t c = cp_at(t, n, p, &k);
        if (p > s) {
            if (p < w_end && vt_in(c, CLAUSE)) {
                size_t k2;
                if (c == 0x2014 || vt_is_ws(cp_at(t, n, p + k, &k2))) clause = p + k;
            }
            if (vt_is_ws(c)) space = p;
        }
        p += k;
    }
    if (clause) {
        *consumed = clause;
        return clause;
    }
    if (space) {
        *consumed = space;
        return trim_end(t, n, s, space);
    }
    size_t p = w_end;
    while (p < n && !vt_is_ws(cp_at(t, n, p, &k))) p += k;
    if (p == n && !final) {
        *consumed = 0;
        return 0;
    }
    *consumed = p;
    return p;
}
