/* Chinese word segmentation as f5-tts 1.1.22 does it: rjieba 0.2.2's cut(text), i.e. jieba-rs 0.11
 * Jieba::cut(text, hmm=true) (vox.reference.f5.jieba is the spec, step for step):
 *  - the text is split into maximal runs of "han" characters (CJK ideographs, ASCII letters and digits,
 *    + # & . _ % -) and the rest; each character of the rest is a segment (CR LF stays one);
 *  - a han run is segmented on its word graph: route[i] = max over dictionary words s[i, j) of
 *    (ln freq - ln total + route[j], j), ties to the larger j; a position where no word starts steps one
 *    character with ln 1 - ln total;
 *  - along the route, consecutive one-character steps are buffered: a single one is a segment, a run
 *    that is itself a dictionary word is split into characters, any other run is cut by the HMM (jieba's
 *    finalseg B/M/E/S Viterbi, ties to the larger state index) on its U+4E00..U+9FD5 runs; other
 *    characters there form alphanumeric tokens (joined across single . _ -, an optional trailing %) and
 *    the gaps between them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../unicode/unicode.h"
#include "text.h"

#define MIN_FLOAT (-3.14e100)
enum { ST_B = 0, ST_E = 1, ST_M = 2, ST_S = 3 };
/* the states each one may follow, in jieba-rs order */
static const int PREV[4][2] = {[ST_B] = {ST_E, ST_S}, [ST_E] = {ST_B, ST_M}, [ST_M] = {ST_M, ST_B}, [ST_S] = {ST_S, ST_E}};

static int is_cjk(uint32_t o) {
    return (o >= 0x3400 && o <= 0x4DBF) || (o >= 0x4E00 && o <= 0x9FFF) || (o >= 0xF900 && o <= 0xFAFF) ||
           (o >= 0x20000 && o <= 0x2A6DF) || (o >= 0x2A700 && o <= 0x2B73F) || (o >= 0x2B740 && o <= 0x2B81F) ||
           (o >= 0x2B820 && o <= 0x2CEAF) || (o >= 0x2CEB0 && o <= 0x2EBEF) || (o >= 0x2F800 && o <= 0x2FA1F);
}
static int is_alnum(uint32_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_han_default(uint32_t c) { return is_cjk(c) || is_alnum(c) || (c < 128 && strchr("+#&._%-", (int)c) && c); }
static int is_hmm_han(uint32_t c) { return c >= 0x4E00 && c <= 0x9FD5; }

/* ------------------------------------------------------------------------------ loading */
static vox_status parse_doubles(const char *s, size_t len, double *out, int n, const char *what) {
    char buf[512];
    if (len >= sizeof buf) return vox_set_error(VOX_ERR_FORMAT, "jieba HMM: %s line is too long", what);
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *p = buf, *end;
    for (int i = 0; i < n; i++) {
        out[i] = strtod(p, &end);
        if (end == p) return vox_set_error(VOX_ERR_FORMAT, "jieba HMM: %s needs %d numbers", what, n);
        p = end;
    }
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (*p) return vox_set_error(VOX_ERR_FORMAT, "jieba HMM: %s has more than %d numbers", what, n);
    return VOX_OK;
}

typedef struct emit_pair {
    uint32_t cp;
    double lp;
} emit_pair;

static int cmp_pair(const void *a, const void *b) {
    uint32_t x = ((const emit_pair *)a)->cp, y = ((const emit_pair *)b)->cp;
    return x < y ? -1 : x > y;
}

static vox_status parse_emissions(f5_jieba *j, int st, const char *s, size_t len) {
    size_t n = 1;
    for (size_t i = 0; i < len; i++) n += s[i] == ',';
    emit_pair *pairs = malloc(n * sizeof *pairs);
    if (!pairs) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    size_t k = 0;
    for (size_t a = 0; a < len;) {
        size_t b = a;
        while (b < len && s[b] != ',') b++;
        /* "char:logprob": the last ':' separates (rsplit) */
        size_t c = b;
        while (c > a && s[c - 1] != ':') c--;
        uint32_t cp = 0;
        size_t cl = c > a ? vx_utf8_decode(s, c - 1, a, &cp, NULL) : 0;
        char num[64];
        size_t nl = b - c;
        if (c == a || !cl || a + cl != c - 1 || nl == 0 || nl >= sizeof num) {
            free(pairs);
            return vox_set_error(VOX_ERR_FORMAT, "jieba HMM: emission entry %zu of state %d is not char:logprob", k, st);
        }
        memcpy(num, s + c, nl);
        num[nl] = '\0';
        char *end;
        pairs[k].cp = cp;
        pairs[k].lp = strtod(num, &end);
        if (*end && *end != '\r') {
            free(pairs);
            return vox_set_error(VOX_ERR_FORMAT, "jieba HMM: emission entry %zu of state %d has a bad number", k, st);
        }
        k++;
        a = b + 1;
    }
    qsort(pairs, k, sizeof *pairs, cmp_pair);
    j->emit_cp[st] = malloc((k ? k : 1) * sizeof *j->emit_cp[st]);
    j->emit_lp[st] = malloc((k ? k : 1) * sizeof *j->emit_lp[st]);
    if (!j->emit_cp[st] || !j->emit_lp[st]) {
        free(pairs);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* a repeated key keeps its last value (a Python dict literal) */
    int64_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && j->emit_cp[st][m - 1] == pairs[i].cp) m--;
        j->emit_cp[st][m] = pairs[i].cp;
        j->emit_lp[st][m] = pairs[i].lp;
        m++;
    }
    j->emit_n[st] = m;
    free(pairs);
    return VOX_OK;
}

static vox_status load_hmm(f5_jieba *j, const char *s, size_t len) {
    const char *lines[9];
    size_t lens[9];
    int n = 0;
    for (size_t a = 0; a < len;) {
        size_t b = a;
        while (b < len && s[b] != '\n') b++;
        size_t l = b - a;
        if (l && s[a + l - 1] == '\r') l--;
        if (l && s[a] != '#') {
            if (n == 9) return vox_set_error(VOX_ERR_FORMAT, "jieba HMM: more than 9 data lines");
            lines[n] = s + a, lens[n] = l, n++;
        }
        a = b + 1;
    }
    if (n != 9) return vox_set_error(VOX_ERR_FORMAT, "jieba HMM: expected 9 data lines, found %d", n);
    vox_status st = parse_doubles(lines[0], lens[0], j->start, 4, "the start");
    for (int i = 0; st == VOX_OK && i < 4; i++) st = parse_doubles(lines[1 + i], lens[1 + i], j->trans[i], 4, "a transition");
    for (int i = 0; st == VOX_OK && i < 4; i++) st = parse_emissions(j, i, lines[5 + i], lens[5 + i]);
    return st;
}

vox_status f5_jieba_load(f5_jieba *j, const char *dict, size_t dict_len, const char *hmm, size_t hmm_len) {
    memset(j, 0, sizeof *j);
    vox_status st = f5_lines_index(&j->dict, dict, dict_len, ' ', "jieba dictionary");
    if (st != VOX_OK) return st;
    if (j->dict.n == 0) return vox_set_error(VOX_ERR_FORMAT, "the jieba dictionary is empty");
    j->log_freq = malloc((size_t)j->dict.n * sizeof *j->log_freq);
    if (!j->log_freq) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    double total = 0.0;   /* sum of the integer frequencies: exact in double up to 2^53 */
    for (int64_t i = 0; i < j->dict.n; i++) {
        const char *k, *v;
        size_t kl, vl;
        f5_lines_key(&j->dict, i, &k, &kl);
        f5_lines_value(&j->dict, i, &v, &vl);
        uint64_t f = 0;
        for (size_t c = 0; c < vl; c++) {
            if (v[c] < '0' || v[c] > '9' || f > 1000000000000ull)
                return vox_set_error(VOX_ERR_FORMAT, "jieba dictionary line %lld: bad frequency", (long long)i + 1);
            f = f * 10 + (uint64_t)(v[c] - '0');
        }
        if (i && !(f5_lines_lower(&j->dict, k, kl) == i))
            return vox_set_error(VOX_ERR_FORMAT, "jieba dictionary line %lld: the words are not sorted (or repeated)",
                                 (long long)i + 1);
        total += (double)f;
        j->log_freq[i] = f > 0 ? log((double)f) : -INFINITY;
        int64_t cps = 0;
        for (size_t c = 0; c < kl; c++) cps += ((unsigned char)k[c] & 0xC0) != 0x80;
        if (cps > j->max_len) j->max_len = cps;
    }
    if (!(total > 0)) return vox_set_error(VOX_ERR_FORMAT, "the jieba dictionary's frequencies sum to 0");
    j->logtotal = log(total);
    return load_hmm(j, hmm, hmm_len);
}

void f5_jieba_free(f5_jieba *j) {
    f5_lines_free(&j->dict);
    free(j->log_freq);
    for (int i = 0; i < 4; i++) free(j->emit_cp[i]), free(j->emit_lp[i]);
    memset(j, 0, sizeof *j);
}

/* ------------------------------------------------------------------------------ segmentation */
static double emission(const f5_jieba *j, int st, uint32_t cp) {
    int64_t lo = 0, hi = j->emit_n[st];
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (j->emit_cp[st][mid] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < j->emit_n[st] && j->emit_cp[st][lo] == cp ? j->emit_lp[st][lo] : MIN_FLOAT;
}

/* A run of code points cps[0, n) whose bytes start at s + offs[i]. */
typedef struct run {
    const char *s;
    const uint32_t *cps;
    const size_t *offs;
    size_t n;
} run;

static void push_span(f5_strs *out, const run *r, size_t a, size_t b) { f5_strs_push(out, r->s + r->offs[a], r->offs[b] - r->offs[a]); }

static void hmm_words(const f5_jieba *j, const run *r, size_t a, size_t b, f5_strs *out) {
    const size_t n = b - a;
    double (*v)[4] = malloc(n * sizeof *v);
    int (*prev)[4] = malloc(n * sizeof *prev);
    int *path = malloc(n * sizeof *path);
    if (!v || !prev || !path) {
        out->failed = 1;
        free(v), free(prev), free(path);
        return;
    }
    static const int order[4] = {ST_B, ST_M, ST_E, ST_S};
    for (int q = 0; q < 4; q++) {
        int y = order[q];
        v[0][y] = j->start[y] + emission(j, y, r->cps[a]);
    }
    for (size_t t = 1; t < n; t++)
        for (int q = 0; q < 4; q++) {
            int y = order[q];
            double e = emission(j, y, r->cps[a + t]);
            int y0 = PREV[y][0], y1 = PREV[y][1];
            double s0 = v[t - 1][y0] + j->trans[y0][y] + e, s1 = v[t - 1][y1] + j->trans[y1][y] + e;
            /* max of (score, state) pairs: an equal score goes to the larger state */
            if (s0 > s1 || (s0 == s1 && y0 > y1)) v[t][y] = s0, prev[t][y] = y0;
            else v[t][y] = s1, prev[t][y] = y1;
        }
    double se = v[n - 1][ST_E], ss = v[n - 1][ST_S];
    int last = (se > ss || (se == ss && ST_E > ST_S)) ? ST_E : ST_S;
    path[n - 1] = last;
    for (size_t t = n - 1; t > 0; t--) {
        last = prev[t][last];
        path[t - 1] = last;
    }
    size_t begin = 0, next = 0;
    for (size_t i = 0; i < n; i++) {
        if (path[i] == ST_B) begin = i;
        else if (path[i] == ST_E) push_span(out, r, a + begin, a + i + 1), next = i + 1;
        else if (path[i] == ST_S) push_span(out, r, a + i, a + i + 1), next = i + 1;
    }
    if (next < n) push_span(out, r, a + next, b);
    free(v), free(prev), free(path);
}

/* Outside the HMM's range: alphanumeric tokens and the gaps between them. */
static void skip_split(const run *r, size_t a, size_t b, f5_strs *out) {
    size_t pos = a;
    while (pos < b) {
        size_t cur = pos;
        while (cur < b && !is_alnum(r->cps[cur])) cur++;
        if (cur > pos) push_span(out, r, pos, cur);
        if (cur == b) break;
        size_t end = cur;
        for (;;) {
            while (end < b && is_alnum(r->cps[end])) end++;
            if (end + 1 < b && (r->cps[end] == '.' || r->cps[end] == '_' || r->cps[end] == '-') && is_alnum(r->cps[end + 1]))
                end++;
            else
                break;
        }
        if (end < b && r->cps[end] == '%') end++;
        push_span(out, r, cur, end);
        pos = end;
    }
}

static void hmm_cut(const f5_jieba *j, const run *r, size_t a, size_t b, f5_strs *out) {
    for (size_t i = a; i < b;) {
        int han = is_hmm_han(r->cps[i]);
        size_t e = i + 1;
        while (e < b && is_hmm_han(r->cps[e]) == han) e++;
        if (han) {
            if (e - i > 1) hmm_words(j, r, i, e, out);
            else push_span(out, r, i, e);
        } else {
            skip_split(r, i, e, out);
        }
        i = e;
    }
}

static void flush_buffered(const f5_jieba *j, const run *r, size_t a, size_t b, f5_strs *out) {
    if (b - a == 1) {
        push_span(out, r, a, b);
    } else if (f5_lines_find(&j->dict, r->s + r->offs[a], r->offs[b] - r->offs[a]) < 0) {
        hmm_cut(j, r, a, b, out);
    } else {
        for (size_t i = a; i < b; i++) push_span(out, r, i, i + 1);
    }
}

static void cut_dag_hmm(const f5_jieba *j, const run *r, f5_strs *out) {
    const size_t n = r->n;
    double *score = malloc((n + 1) * sizeof *score);
    size_t *next = malloc((n + 1) * sizeof *next);
    if (!score || !next) {
        out->failed = 1;
        free(score), free(next);
        return;
    }
    score[n] = 0.0;
    const double log1 = 0.0 - j->logtotal;
    for (size_t i = n; i-- > 0;) {
        int found = 0;
        double best = 0.0;
        size_t best_j = i + 1;
        size_t jmax = n < i + (size_t)j->max_len ? n : i + (size_t)j->max_len;
        for (size_t e = i + 1; e <= jmax; e++) {
            const char *w = r->s + r->offs[i];
            size_t wl = r->offs[e] - r->offs[i];
            int64_t lo = f5_lines_lower(&j->dict, w, wl);
            if (lo >= j->dict.n) break;
            const char *k;
            size_t kl;
            f5_lines_key(&j->dict, lo, &k, &kl);
            if (kl < wl || memcmp(k, w, wl) != 0) break;   /* no word starts with s[i, e): none longer either */
            if (kl != wl) continue;                         /* a prefix of a word, not a word */
            double cand = j->log_freq[lo] - j->logtotal + score[e];
            if (!found || cand >= best) best = cand, best_j = e, found = 1;   /* ties: the larger e */
        }
        if (!found) best = log1 + score[i + 1], best_j = i + 1;
        score[i] = best;
        next[i] = best_j;
    }
    size_t x = 0, left = (size_t)-1;
    while (x < n) {
        size_t y = next[x];
        if (y - x == 1) {
            if (left == (size_t)-1) left = x;
        } else {
            if (left != (size_t)-1) {
                flush_buffered(j, r, left, x, out);
                left = (size_t)-1;
            }
            push_span(out, r, x, y);
        }
        x = y;
    }
    if (left != (size_t)-1) flush_buffered(j, r, left, n, out);
    free(score), free(next);
}

void f5_jieba_cut(const f5_jieba *j, const char *text, size_t len, f5_strs *out) {
    uint32_t *cps = malloc((len + 1) * sizeof *cps);
    size_t *offs = malloc((len + 1) * sizeof *offs);
    if (!cps || !offs) {
        out->failed = 1;
        free(cps), free(offs);
        return;
    }
    size_t n = f5_utf8_split(text, len, cps, offs);
    for (size_t i = 0; i < n;) {
        int han = is_han_default(cps[i]);
        size_t e = i + 1;
        while (e < n && is_han_default(cps[e]) == han) e++;
        run r = {text, cps + i, offs + i, e - i};
        if (han) {
            cut_dag_hmm(j, &r, out);
        } else {
            for (size_t k = 0; k < r.n;) {
                if (r.cps[k] == '\r' && k + 1 < r.n && r.cps[k + 1] == '\n') {
                    push_span(out, &r, k, k + 2);
                    k += 2;
                } else {
                    push_span(out, &r, k, k + 1);
                    k++;
                }
            }
        }
        i = e;
    }
    free(cps), free(offs);
}
