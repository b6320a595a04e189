/* Chinese characters -> TONE3 pinyin as pypinyin 0.55.0's lazy_pinyin(text, style=Style.TONE3,
 * tone_sandhi=True) computes it (vox.reference.f5.pinyin is the spec):
 *  1. runs of characters with pinyin (pypinyin's RE_HANS ranges) and without; a run without is one item;
 *  2. a han run is cut by strict forward maximum matching on the phrase dictionary (pypinyin's mmseg: a
 *     candidate grows while it starts some phrase; only complete phrases are kept);
 *  3. a word's readings: the phrase's, else each character's first reading (a character without one
 *     stands for itself);
 *  4. tone sandhi inside the word: third tone (the run of 3s that ends the word), 不, 一;
 *  5. the data is already TONE3 ("ni3", "lv4", "ma"): the sandhi edits the digit. */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "text.h"

static const uint32_t HANS[][2] = {
    {0x3007, 0x3007},   {0xE815, 0xE864},   {0xFA18, 0xFA18},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},
    {0xF900, 0xFAFF},   {0x20000, 0x2A6DF}, {0x2A703, 0x2B73F}, {0x2B740, 0x2B81D}, {0x2B825, 0x2BF6E},
    {0x2C029, 0x2CE93}, {0x2D016, 0x2D016}, {0x2D11B, 0x2EBD9}, {0x2F80A, 0x2FA1F}, {0x30000, 0x3134A},
    {0x300F7, 0x31288}, {0x30EDD, 0x30EDD}, {0x30EDE, 0x30EDE}, {0x31350, 0x32389},
};

static int is_hans(uint32_t c) {
    for (size_t i = 0; i < sizeof HANS / sizeof HANS[0]; i++)
        if (c >= HANS[i][0] && c <= HANS[i][1]) return 1;
    return 0;
}

vox_status f5_pinyin_load(f5_pinyin *p, const char *chars, size_t chars_len, const char *phrases, size_t phrases_len) {
    memset(p, 0, sizeof *p);
    vox_status st = f5_lines_index(&p->chars, chars, chars_len, '\t', "pinyin characters");
    if (st == VOX_OK) st = f5_lines_index(&p->phrases, phrases, phrases_len, '\t', "pinyin phrases");
    for (int64_t i = 0; st == VOX_OK && i < p->phrases.n; i++) {   /* one reading per character */
        const char *k, *v;
        size_t kl, vl, cps = 0, words = 1;
        f5_lines_key(&p->phrases, i, &k, &kl);
        f5_lines_value(&p->phrases, i, &v, &vl);
        for (size_t c = 0; c < kl; c++) cps += ((unsigned char)k[c] & 0xC0) != 0x80;
        for (size_t c = 0; c < vl; c++) words += v[c] == ' ';
        if (cps != words)
            st = vox_set_error(VOX_ERR_FORMAT, "pinyin phrases, line %lld: %zu readings for %zu characters", (long long)i + 1,
                               words, cps);
    }
    return st;
}

void f5_pinyin_free(f5_pinyin *p) {
    f5_lines_free(&p->chars);
    f5_lines_free(&p->phrases);
}

/* A reading being edited by the sandhi rules. */
typedef struct reading {
    char s[32];
    size_t n;
} reading;

static int has(const reading *r, char c) { return memchr(r->s, c, r->n) != NULL; }
static void replace_char(reading *r, char from, char to) {
    for (size_t i = 0; i < r->n; i++)
        if (r->s[i] == from) r->s[i] = to;
}
static void replace_digits(reading *r, char to) {
    for (size_t i = 0; i < r->n; i++)
        if (r->s[i] >= '0' && r->s[i] <= '9') r->s[i] = to;
}

/* pypinyin ToneSandhiMixin._third_tone: the run of readings with a 3 that ends the word decides. */
static void third_tone(reading *py, size_t n) {
    size_t run = 0, any = 0;
    for (size_t i = 0; i < n; i++) {
        run = has(&py[i], '3') ? run + 1 : 0;
        any |= has(&py[i], '3');
    }
    if (!any) return;
    if (run == 2) {
        for (size_t i = 0; i < n; i++)
            if (has(&py[i], '3')) {
                replace_char(&py[i], '3', '2');
                break;
            }
    } else if (run > 2) {
        size_t k = 1;
        for (size_t i = 0; i < n; i++)
            if (has(&py[i], '3')) {
                if (k == run) break;
                replace_char(&py[i], '3', '2');
                k++;
            }
    }
}

/* 不 / 一: before a fourth tone 2, else 4; at the end of the word `final`. */
static void bu_yi(const uint32_t *word, size_t n, reading *py, uint32_t ch, char final) {
    for (size_t i = 0; i < n; i++) {
        if (word[i] != ch) continue;
        if (i < n - 1) {
            if (has(&py[i + 1], '4')) replace_char(&py[i], '4', '2');
            else replace_digits(&py[i], '4');
        } else {
            replace_digits(&py[i], final);
        }
    }
}

/* The readings of the word text[offs[a], offs[b]) (code points cps[a, b)), sandhi applied, appended to out. */
static void word_pinyin(const f5_pinyin *p, const char *text, const uint32_t *cps_all, const size_t *offs, size_t a,
                        size_t b, f5_strs *out) {
    const char *s = text + offs[a];
    const size_t len = offs[b] - offs[a], n = b - a;
    const uint32_t *cps = cps_all + a;
    reading stack[16], *py = n <= 16 ? stack : malloc(n * sizeof *py);
    if (!py) {
        out->failed = 1;
        return;
    }
    int64_t ph = f5_lines_find(&p->phrases, s, len);
    if (ph >= 0) {
        const char *v;
        size_t vl, i = 0;
        f5_lines_value(&p->phrases, ph, &v, &vl);
        for (size_t u = 0; u <= vl && i < n; i++) {
            size_t w = u;
            while (w < vl && v[w] != ' ') w++;
            size_t m = w - u < sizeof py[i].s ? w - u : sizeof py[i].s - 1;
            memcpy(py[i].s, v + u, m);
            py[i].n = m;
            u = w + 1;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            const char *c = text + offs[a + i];
            size_t cl = offs[a + i + 1] - offs[a + i];
            int64_t ln = f5_lines_find(&p->chars, c, cl);
            const char *v = c;
            size_t vl = cl;
            if (ln >= 0) f5_lines_value(&p->chars, ln, &v, &vl);
            if (vl >= sizeof py[i].s) vl = sizeof py[i].s - 1;
            memcpy(py[i].s, v, vl);
            py[i].n = vl;
        }
    }
    third_tone(py, n);
    bu_yi(cps, n, py, 0x4E0D, '4');   /* 不 */
    bu_yi(cps, n, py, 0x4E00, '1');   /* 一 */
    for (size_t i = 0; i < n; i++) f5_strs_push(out, py[i].s, py[i].n);
    if (py != stack) free(py);
}

static int is_prefix(const f5_pinyin *p, const char *s, size_t n) {
    int64_t i = f5_lines_lower(&p->phrases, s, n);
    if (i >= p->phrases.n) return 0;
    const char *k;
    size_t kl;
    f5_lines_key(&p->phrases, i, &k, &kl);
    return kl >= n && !memcmp(k, s, n);
}

/* pypinyin.seg.mmseg.Seg(no_non_phrases=True).cut over cps[a, b), each word through word_pinyin. */
static void mmseg(const f5_pinyin *p, const char *s, const uint32_t *cps, const size_t *offs, size_t a, size_t b,
                  f5_strs *out) {
#define WORD(x, y) word_pinyin(p, s, cps, offs, (x), (y), out)
    size_t r = a;
    while (r < b) {
        size_t last = 0;   /* end (exclusive, relative) of the longest phrase found, 0: none */
        int broke = 0;
        for (size_t idx = 0; idx < b - r; idx++) {
            const char *w = s + offs[r];
            size_t wl = offs[r + idx + 1] - offs[r];
            if (is_prefix(p, w, wl)) {
                if (f5_lines_find(&p->phrases, w, wl) >= 0) last = idx + 1;
            } else {
                size_t take = last ? last : 1;
                WORD(r, r + take);
                r += take;
                broke = 1;
                break;
            }
        }
        if (broke) continue;
        if (last) {
            WORD(r, r + last);
            r += last;
        } else {   /* the rest is no phrase: character by character */
            for (size_t i = r; i < b; i++) WORD(i, i + 1);
            break;
        }
    }
#undef WORD
}

void f5_lazy_pinyin(const f5_pinyin *p, const char *text, size_t len, f5_strs *out) {
    uint32_t *cps = malloc((len + 1) * sizeof *cps);
    size_t *offs = malloc((len + 1) * sizeof *offs);
    if (!cps || !offs) {
        out->failed = 1;
        free(cps), free(offs);
        return;
    }
    size_t n = f5_utf8_split(text, len, cps, offs);
    for (size_t i = 0; i < n;) {
        int h = is_hans(cps[i]);
        size_t e = i + 1;
        while (e < n && is_hans(cps[e]) == h) e++;
        if (h) mmseg(p, text, cps, offs, i, e, out);
        else f5_strs_push(out, text + offs[i], offs[e] - offs[i]);
        i = e;
    }
    free(cps), free(offs);
}
