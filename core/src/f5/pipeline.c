/* The text side of infer_process / infer_batch_process (vox.reference.f5.pipeline): chunk_text,
 * max_chars, the piece durations and fix_duration's sharing.
 *
 * chunk_text splits the text into sentences after ; : , . ! ? followed by whitespace (the whitespace
 * run is dropped) or after ； ： ， 。 ！ ？ (nothing dropped), and packs them into pieces of at most
 * max_chars UTF-8 bytes (a sentence ending in a 1-byte character is appended with a trailing space; a
 * sentence that does not fit starts the next piece; pieces are stripped). f5_next_piece computes the same
 * pieces from a text that may still grow: a piece is decided once the sentence after it is seen not to
 * fit (the part of it seen so far already does not: it only grows) or the text is complete, so a
 * streamed text gives exactly the pieces of the whole. */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../unicode/unicode.h"
#include "f5.h"
#include "text.h"

static uint32_t cp_at(const char *s, size_t len, size_t i, size_t *n) {
    uint32_t cp;
    *n = vx_utf8_decode(s, len, i, &cp, NULL);
    if (!*n) *n = 1, cp = 0xFFFD;
    return cp;
}

static int ascii_punct(uint32_t c) { return c == ';' || c == ':' || c == ',' || c == '.' || c == '!' || c == '?'; }
static int wide_punct(uint32_t c) {
    return c == 0xFF1B || c == 0xFF1A || c == 0xFF0C || c == 0x3002 || c == 0xFF01 || c == 0xFF1F;
}

enum { SENT_NONE, SENT_FULL, SENT_TAIL };

/* The sentence starting at p: [p, *end) and where the next one starts (*next). SENT_FULL: its boundary
 * was seen; SENT_TAIL: the text ran out first ([p, len) is the sentence when complete, else the part of
 * it seen so far); SENT_NONE: nothing left. */
static int sentence(const char *s, size_t len, size_t p, int complete, size_t *end, size_t *next) {
    if (p >= len) return SENT_NONE;
    for (size_t i = p; i < len;) {
        size_t k;
        uint32_t c = cp_at(s, len, i, &k);
        size_t i2 = i + k;
        if (wide_punct(c)) {
            *end = *next = i2;
            return SENT_FULL;
        }
        if (ascii_punct(c) && i2 < len) {
            size_t k2;
            if (f5_is_space(cp_at(s, len, i2, &k2))) {
                size_t j = i2;
                while (j < len) {
                    size_t kk;
                    if (!f5_is_space(cp_at(s, len, j, &kk))) break;
                    j += kk;
                }
                *end = i2;
                *next = j;
                return SENT_FULL;
            }
        }
        i = i2;
    }
    (void)complete;
    *end = *next = len;
    return SENT_TAIL;
}

static size_t last_char_bytes(const char *s, size_t a, size_t b) {
    size_t i = b;
    while (i > a && ((unsigned char)s[i - 1] & 0xC0) == 0x80) i--;
    return i > a ? b - i + 1 : 0;
}

static char *strip(const char *s, size_t len) {
    size_t a = 0, b = len;
    while (a < b) {
        size_t k;
        uint32_t c = cp_at(s, len, a, &k);
        if (!f5_is_space(c)) break;
        a += k;
    }
    while (b > a) {
        size_t i = b - 1;
        while (i > a && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
        size_t k;
        uint32_t c = cp_at(s, len, i, &k);
        if (!f5_is_space(c)) break;
        b = i;
    }
    char *o = malloc(b - a + 1);
    if (!o) return NULL;
    memcpy(o, s + a, b - a);
    o[b - a] = '\0';
    return o;
}

int f5_next_piece(const char *text, size_t len, int complete, int64_t max_chars, char **piece, size_t *consumed) {
    *piece = NULL;
    *consumed = 0;
    vx_buf cur = {0};
    size_t p = 0;
    int ret = 0;
    for (;;) {
        size_t end, next;
        int kind = sentence(text, len, p, complete, &end, &next);
        if (kind == SENT_NONE || (kind == SENT_TAIL && !complete)) {
            /* the text ran out: a piece is decided only if the next sentence's start already overflows */
            if (kind == SENT_TAIL && cur.len && (int64_t)(cur.len + (end - p)) > max_chars) {
                *consumed = p;
                ret = 1;
            } else if (complete && cur.len) {
                *consumed = len;
                ret = 1;
            } else if (complete) {
                *consumed = len;
            }
            break;
        }
        size_t sl = end - p;
        if (sl == 0) {   /* empty sentences are skipped */
            p = next;
            if (kind == SENT_TAIL) continue;
            continue;
        }
        if (cur.len && (int64_t)(cur.len + sl) > max_chars) {
            *consumed = p;
            ret = 1;
            break;
        }
        vx_buf_append(&cur, text + p, sl);
        if (last_char_bytes(text, p, end) == 1) vx_buf_append(&cur, " ", 1);
        p = next;
        if (kind == SENT_TAIL) {   /* complete: that was the last sentence */
            *consumed = len;
            ret = 1;
            break;
        }
    }
    if (cur.failed) {
        vx_buf_free(&cur);
        return -1;
    }
    if (ret == 1) {
        *piece = strip(cur.s ? cur.s : "", cur.len);
        if (!*piece) ret = -1;
    }
    vx_buf_free(&cur);
    return ret;
}

vox_status f5_chunk_text(const char *text, size_t len, int64_t max_chars, char ***pieces, size_t *n) {
    *pieces = NULL;
    *n = 0;
    size_t pos = 0, cap = 0;
    char **v = NULL;
    while (pos < len) {
        char *pc;
        size_t used;
        int r = f5_next_piece(text + pos, len - pos, 1, max_chars, &pc, &used);
        if (r < 0 || (r == 1 && *n == cap)) {
            char **nv = r < 0 ? NULL : realloc(v, (cap = cap ? 2 * cap : 8) * sizeof *nv);
            if (!nv) {
                free(r == 1 ? pc : NULL);
                for (size_t i = 0; i < *n; i++) free(v[i]);
                free(v);
                *n = 0;
                return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            }
            v = nv;
        }
        if (r == 1) v[(*n)++] = pc;
        if (used == 0) break;
        pos += used;
    }
    *pieces = v;
    return VOX_OK;
}

int64_t f5_max_chars(size_t ref_text_bytes, int64_t ref_samples, int32_t ref_rate, double speed) {
    double sec = (double)ref_samples / (double)ref_rate;
    return (int64_t)((double)ref_text_bytes / sec * (22.0 - sec) * speed);
}

int64_t f5_piece_duration(int64_t ref_frames, size_t ref_text_bytes, size_t piece_bytes, double speed, double fix,
                          int64_t hop, int64_t sr) {
    if (fix > 0) return (int64_t)(fix * (double)sr / (double)hop);
    double local = piece_bytes < 10 ? 0.3 : speed;
    return ref_frames + (int64_t)((double)ref_frames / (double)ref_text_bytes * (double)piece_bytes / local);
}

void f5_fix_durations(double fix, const size_t *bytes, size_t n, int64_t ref_frames, int64_t hop, int64_t sr,
                      double cross_fade, double *out) {
    if (!(fix > 0) || n <= 1) {
        for (size_t i = 0; i < n; i++) out[i] = fix > 0 ? fix : 0.0;
        return;
    }
    const double ref_sec = (double)(ref_frames * hop) / (double)sr;
    double total = 0.0;
    for (size_t i = 0; i < n; i++) total += (double)bytes[i];
    const double alloc = (fix - ref_sec) + cross_fade * (double)(n - 1);
    for (size_t i = 0; i < n; i++) out[i] = ref_sec + alloc * (double)bytes[i] / total;
}
