/* The pre-tokenizer scanners (see pretok.h for the two regexes).
 *
 * How each branch matches at position p under Oniguruma's rules (alternatives tried in order, the
 * first that matches wins; a greedy quantifier takes as much as it can and gives back one character
 * at a time until the rest of its branch matches):
 *
 *   (?i:'s|'t|'re|'ve|'m|'ll|'d)  an apostrophe and the letters, case-insensitively: s also matches
 *                          S and U+017F (long s, which case-folds to s); t r e v m l d only themselves
 *                          and their capitals (checked against Oniguruma for every code point).
 *   X?L+                   X = [^\r\n\p{L}\p{N}]: if p is a letter, the run of letters from p; else if
 *                          p is in X and p+1 a letter, p and the run from p+1. (Giving X? back cannot
 *                          help: then p would have to be a letter.)
 *   \p{N}                  one character.
 *   ' '?O+T*               O = [^\s\p{L}\p{N}], T = [\r\n] (qwen2) or [\r\n/] (mistral_fix): if p is
 *                          U+0020 and p+1 in O, p, the run of O from p+1 and the run of T after it;
 *                          else if p is in O, the run of O from p and the run of T after it.
 *   \s*[\r\n]+             \s* takes the whole whitespace run [p, e) and gives back until [\r\n]+ can
 *                          match: the match ends just after the LAST \r or \n of the run.
 *   \s+(?!\S)              the run [p, e) if it ends the text; else [p, e-1) when that is not empty
 *                          (the last space is left for the word that follows: " word").
 *   \s+                    the run (a single whitespace character before a non-space).
 *
 * mistral_fix's letter branches, with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
 * W = [\p{Ll}\p{Lm}\p{Lo}\p{M}] (Lm, Lo and M are in both; M is also in X):
 *   X?U*W+                 for a start s (p+1 after consuming X at p, then p without it): U* takes the
 *                          U run [s, b); if b is in W, W+ takes the W run from b; otherwise U* gives
 *                          back until W+ finds a W character: the match ends after the LAST W in
 *                          [s, b) (W+ cannot go further: what follows it in [s, b) is not W). With no
 *                          W at all the start fails (so a mark followed by capitals matches alone).
 *   X?U+W*                 the U run from p+1 (if p in X) or from p, then the W run after it.
 *
 * Every character is matched by some branch (letters by the letter branches, numbers by \p{N},
 * whitespace by the \s branches, the rest by the O branch), so the matches tile the text.
 *
 * Every read past the match start goes through cls_at() / cp_at(), which note how far the scanner
 * looked ("reach"): a match computed without reading the end of the text is the same whatever text
 * follows (used for streaming, see q3_pretok_stable). */
#include "pretok.h"

#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../unicode/unicode.h"

#define C_EOF 0xFF /* the class read past the end: in no set */

#define S_L VX_UCS_L
#define S_N VX_UCS(VX_UC_N)
#define S_WS VX_UCS(VX_UC_WS)
#define S_U (VX_UCS(VX_UC_LU) | VX_UCS(VX_UC_LT) | VX_UCS(VX_UC_LM) | VX_UCS(VX_UC_LO) | VX_UCS(VX_UC_M))
#define S_W (VX_UCS(VX_UC_LL) | VX_UCS(VX_UC_LM) | VX_UCS(VX_UC_LO) | VX_UCS(VX_UC_M))
/* O = [^\s\p{L}\p{N}] */
#define S_O (((1u << VX_UC_COUNT) - 1) & ~(S_L | S_N | S_WS))

typedef struct scan {
    const q3_chars *t;
    size_t reach; /* 1 + the largest index read */
} scan;

static inline int cls_at(scan *s, size_t i) {
    if (i >= s->reach) s->reach = i + 1;
    return i < s->t->n ? s->t->cls[i] : C_EOF;
}

static inline uint32_t cp_at(scan *s, size_t i) {
    if (i >= s->reach) s->reach = i + 1;
    return i < s->t->n ? s->t->cp[i] : UINT32_MAX;
}

static inline bool in(int cls, unsigned set) { return cls != C_EOF && VX_UC_IN((unsigned)cls, set); }
static inline bool is_crlf(uint32_t c) { return c == '\r' || c == '\n'; }
/* X = [^\r\n\p{L}\p{N}] */
static inline bool in_x(scan *s, size_t i) {
    int c = cls_at(s, i);
    return c != C_EOF && !in(c, S_L | S_N) && !is_crlf(s->t->cp[i]);
}

/* The end of the run of characters in `set` that starts at i. */
static size_t run(scan *s, size_t i, unsigned set) {
    while (in(cls_at(s, i), set)) i++;
    return i;
}

static size_t run_chars(scan *s, size_t i, bool slash) {
    for (;; i++) {
        uint32_t c = cp_at(s, i);
        if (!(is_crlf(c) || (slash && c == '/'))) return i;
    }
}

/* The contraction letter a code point case-folds to, or 0. */
static uint32_t fold(uint32_t c) {
    if (c == 0x17F) return 's';
    if (c >= 'A' && c <= 'Z') c += 'a' - 'A';
    return c < 128 && c && strchr("strevmld", (int)c) ? c : 0;
}

/* ' '?O+T* (or 0 if it does not match at p). */
static size_t punct(scan *s, size_t p, bool slash) {
    if (s->t->cp[p] == ' ' && in(cls_at(s, p + 1), S_O)) return run_chars(s, run(s, p + 2, S_O), slash);
    if (in(s->t->cls[p], S_O)) return run_chars(s, run(s, p + 1, S_O), slash);
    return 0;
}

/* The three whitespace branches; p is whitespace. */
static size_t space(scan *s, size_t p) {
    size_t e = run(s, p + 1, S_WS);
    for (size_t q = e; q-- > p;)
        if (is_crlf(s->t->cp[q])) return q + 1; /* \s*[\r\n]+ */
    if (e >= s->t->n) return e;                 /* \s+(?!\S) at the end of the text */
    if (e - p >= 2) return e - 1;               /* \s+(?!\S) before a non-space */
    return e;                                   /* \s+ */
}

static size_t scan_qwen2(scan *s, size_t p) {
    const q3_chars *t = s->t;
    uint32_t c = t->cp[p];
    int k = t->cls[p];
    if (c == '\'') {
        uint32_t a = fold(cp_at(s, p + 1));
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return p + 2;
        if (a == 'r' || a == 'v' || a == 'l') {
            uint32_t b = fold(cp_at(s, p + 2));
            if (b == (a == 'l' ? 'l' : 'e')) return p + 3;
        }
    }
    if (in(k, S_L)) return run(s, p + 1, S_L);
    if (!is_crlf(c) && !in(k, S_N) && in(cls_at(s, p + 1), S_L)) return run(s, p + 2, S_L);
    if (in(k, S_N)) return p + 1;
    size_t e = punct(s, p, false);
    return e ? e : space(s, p);
}

/* X?U*W+ from start a (the match starts at p <= a); 0 if it fails. */
static size_t upper_lower(scan *s, size_t a) {
    size_t b = run(s, a, S_U);
    if (in(cls_at(s, b), S_W)) return run(s, b + 1, S_W);
    for (size_t j = b; j-- > a;)
        if (in(s->t->cls[j], S_W)) return j + 1;
    return 0;
}

static size_t scan_mistral(scan *s, size_t p) {
    const q3_chars *t = s->t;
    int k = t->cls[p];
    bool x = in_x(s, p);
    size_t e;
    if (x && (e = upper_lower(s, p + 1))) return e;
    if ((e = upper_lower(s, p))) return e;
    if (x && in(cls_at(s, p + 1), S_U)) return run(s, run(s, p + 2, S_U), S_W);
    if (in(k, S_U)) return run(s, run(s, p + 1, S_U), S_W);
    if (in(k, S_N)) return p + 1;
    e = punct(s, p, true);
    return e ? e : space(s, p);
}

size_t q3_pretok_next(q3_pretok_kind kind, const q3_chars *t, size_t p, size_t *reach) {
    scan s = {t, p + 1};
    size_t e = kind == Q3_PRETOK_MISTRAL_FIX ? scan_mistral(&s, p) : scan_qwen2(&s, p);
    if (reach) *reach = s.reach;
    return e;
}

/* Streaming. The pre-tokens of t that did not read index n (the end) are the same whatever text
 * follows: a scanner's result is a function of what it reads. So the pre-tokens before k0, the
 * start of the first one that read the end, are those of any longer text. Tokenizing the prefix
 * t[0..k) alone must give them too, and pre-tokens that read index k or beyond may differ there,
 * because the end is not a character: "\t\xa0\u2028X" splits "\xa0" | "\u2028" (\s+(?!\S) gives
 * back the last space before X) but its prefix "\t\xa0\u2028" ends in one run. Those pre-tokens are
 * scanned again on t[0..k); when they differ, k moves back one pre-token. */
size_t q3_pretok_stable(q3_pretok_kind kind, const q3_chars *t, size_t *starts, size_t *reach) {
    size_t m = 0, k = t->n;
    for (size_t p = 0; p < t->n; m++) {
        starts[m] = p;
        p = q3_pretok_next(kind, t, p, &reach[m]);
        if (reach[m] > t->n) {
            k = starts[m];
            break;
        }
    }
    /* pre-tokens [0, m) end at or before k = starts[m] (m = the count when all are stable) */
    while (m > 0) {
        size_t j = 0;
        while (j < m && reach[j] <= k) j++;
        if (j == m) break;
        q3_chars cut = {t->cp, t->cls, k};
        size_t p = starts[j], i = j;
        for (; p < k && i < m; i++) {
            p = q3_pretok_next(kind, &cut, p, NULL);
            if (p != (i + 1 < m ? starts[i + 1] : k)) break;
        }
        if (i == m && p == k) break;
        k = starts[--m];
    }
    return k;
}

int q3_pretok_kind_from_name(const char *name) {
    if (!strcmp(name, "qwen2")) return Q3_PRETOK_QWEN2;
    if (!strcmp(name, "mistral_fix")) return Q3_PRETOK_MISTRAL_FIX;
    return -1;
}

const char *q3_pretok_kind_name(q3_pretok_kind kind) {
    return kind == Q3_PRETOK_MISTRAL_FIX ? "mistral_fix" : "qwen2";
}

size_t q3_decode_utf8(const char *text, size_t len, uint32_t *cp, uint8_t *cls, size_t *off, size_t *bad) {
    size_t n = 0, i = 0;
    while (i < len) {
        unsigned char b = (unsigned char)text[i];
        uint32_t c;
        size_t k = 1;
        if (b < 0x80) {
            c = b;
        } else if (!(k = vx_utf8_decode(text, len, i, &c, NULL))) {
            *bad = i;
            return (size_t)-1;
        }
        cp[n] = c;
        cls[n] = (uint8_t)vx_uc_class(c);
        off[n++] = i;
        i += k;
    }
    off[n] = len;
    return n;
}

vox_status q3_pretokenize(q3_pretok_kind kind, const char *text, size_t len, size_t **ends, size_t *n,
                          size_t *stable) {
    *ends = NULL;
    *n = 0;
    uint32_t *cp = malloc((len ? len : 1) * sizeof *cp);
    uint8_t *cls = malloc(len ? len : 1);
    size_t *off = malloc((len + 1) * sizeof *off);
    size_t *out = malloc((len ? len : 1) * sizeof *out);
    vox_status st = VOX_OK;
    size_t bad, nc;
    if (!cp || !cls || !off || !out) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    } else if ((nc = q3_decode_utf8(text, len, cp, cls, off, &bad)) == (size_t)-1) {
        st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "text is not valid UTF-8 (byte 0x%02X at offset %zu)",
                           (unsigned char)text[bad], bad);
    } else {
        q3_chars t = {cp, cls, nc};
        size_t m = 0;
        for (size_t p = 0; p < nc;) {
            p = q3_pretok_next(kind, &t, p, NULL);
            out[m++] = off[p];
        }
        if (stable) {
            size_t *starts = malloc((nc + 1) * sizeof *starts), *reach = malloc((nc + 1) * sizeof *reach);
            if (!starts || !reach) {
                free(starts), free(reach);
                free(cp), free(cls), free(off), free(out);
                return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            }
            *stable = off[q3_pretok_stable(kind, &t, starts, reach)];
            free(starts);
            free(reach);
        }
        *ends = out;
        *n = m;
        out = NULL;
    }
    free(cp);
    free(cls);
    free(off);
    free(out);
    return st;
}
