/* The F5-TTS text frontend: text -> symbols -> token ids, as f5_tts.model.utils does it with the
 * "custom" tokenizer (convert_char_to_pinyin, list_str_to_idx; vox.reference.f5.tokenizer is the spec):
 *
 *   text <- text with ; -> ,  “ ” -> "  ‘ ’ -> '
 *   for each segment of the word segmenter (jieba.c):
 *     ASCII only:        its characters; a segment of 2+ characters gets a " " symbol before it unless
 *                        the previous symbol is one of  space : ' "
 *     all 3-byte UTF-8:  the pinyin of the whole segment (pinyin.c: readings in context, sandhi inside
 *                        the word); every character in U+3100..U+9FFF is preceded by a " " symbol
 *     mixed:             per character: < U+0100 as is; U+3100..U+9FFF " " + its pinyin alone; else as is
 *   ids: each symbol's line in vocab.txt, 0 for a symbol outside the vocabulary.
 *
 * The data are the .tmod's tokenizer blobs, used in place from the mapping: sorted lines found by
 * binary search, so loading only indexes the line starts. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "../unicode/unicode.h"
#include "f5.h"
#include "text.h"

/* ------------------------------------------------------------------------------ helpers */
void f5_strs_push(f5_strs *l, const char *s, size_t len) {
    if (l->failed) return;
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        size_t *o = realloc(l->off, cap * sizeof *o);
        if (!o) {
            l->failed = 1;
            return;
        }
        l->off = o, l->cap = cap;
    }
    if (l->n == 0) l->off[0] = l->buf.len;
    vx_buf_append(&l->buf, s, len);
    if (l->buf.failed) {
        l->failed = 1;
        return;
    }
    l->off[++l->n] = l->buf.len;
}

void f5_strs_free(f5_strs *l) {
    vx_buf_free(&l->buf);
    free(l->off);
    memset(l, 0, sizeof *l);
}

size_t f5_utf8_split(const char *s, size_t len, uint32_t *cps, size_t *offs) {
    size_t n = 0, i = 0;
    while (i < len) {
        uint32_t cp;
        size_t k = vx_utf8_decode(s, len, i, &cp, NULL);
        if (!k) k = 1, cp = 0xFFFD;   /* callers pass valid UTF-8 (sessions check it) */
        cps[n] = cp;
        offs[n++] = i;
        i += k;
    }
    offs[n] = len;
    return n;
}

int f5_is_space(uint32_t cp) { return vx_uc_class(cp) == VX_UC_WS || (cp >= 0x1C && cp <= 0x1F); }

vox_status f5_lines_index(f5_lines *l, const char *data, size_t len, char sep, const char *what) {
    memset(l, 0, sizeof *l);
    if (len >= UINT32_MAX) return vox_set_error(VOX_ERR_FORMAT, "%s: too large", what);
    int64_t n = 0;
    for (size_t i = 0; i < len; i++) n += data[i] == '\n';
    if (len && data[len - 1] != '\n') n++;
    l->start = malloc((size_t)(n + 1) * sizeof *l->start);
    if (!l->start) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    l->data = data, l->len = len, l->sep = sep;
    int64_t k = 0;
    for (size_t a = 0; a < len;) {
        const char *nl = memchr(data + a, '\n', len - a);
        size_t b = nl ? (size_t)(nl - data) : len;
        if (b > a) {   /* empty lines are skipped, as the reference's readers do */
            if (!memchr(data + a, sep, b - a) || data[a] == sep) {
                free(l->start);
                l->start = NULL;
                return vox_set_error(VOX_ERR_FORMAT, "%s, line %lld: expected KEY%sVALUE", what, (long long)k + 1,
                                     sep == '\t' ? "<TAB>" : " ");
            }
            l->start[k++] = (uint32_t)a;
        }
        a = b + 1;
    }
    l->n = k;
    l->start[k] = (uint32_t)len;
    return VOX_OK;
}

void f5_lines_free(f5_lines *l) {
    free(l->start);
    memset(l, 0, sizeof *l);
}

static size_t line_end(const f5_lines *l, int64_t i) {
    const char *p = l->data + l->start[i];
    const char *nl = memchr(p, '\n', l->len - l->start[i]);
    return nl ? (size_t)(nl - l->data) : l->len;
}

void f5_lines_key(const f5_lines *l, int64_t i, const char **key, size_t *klen) {
    const char *p = l->data + l->start[i];
    const char *s = memchr(p, l->sep, line_end(l, i) - l->start[i]);
    *key = p;
    *klen = (size_t)(s - p);
}

void f5_lines_value(const f5_lines *l, int64_t i, const char **val, size_t *vlen) {
    const char *k;
    size_t kl;
    f5_lines_key(l, i, &k, &kl);
    size_t end = line_end(l, i), v = l->start[i] + kl + 1;
    if (end > v && l->data[end - 1] == '\r') end--;
    *val = l->data + v;
    *vlen = end - v;
}

static int cmp_key(const f5_lines *l, int64_t i, const char *s, size_t n) {
    const char *k;
    size_t kl;
    f5_lines_key(l, i, &k, &kl);
    int c = memcmp(k, s, kl < n ? kl : n);
    return c ? c : (kl < n ? -1 : kl > n);
}

int64_t f5_lines_lower(const f5_lines *l, const char *s, size_t n) {
    int64_t lo = 0, hi = l->n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cmp_key(l, mid, s, n) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int64_t f5_lines_find(const f5_lines *l, const char *s, size_t n) {
    int64_t i = f5_lines_lower(l, s, n);
    return i < l->n && cmp_key(l, i, s, n) == 0 ? i : -1;
}

/* ------------------------------------------------------------------------------ the frontend */
struct f5_front {
    const char *vocab;          /* the vocab blob: one symbol per line, in id order */
    size_t vocab_len;
    uint32_t *sym_off;          /* [n_sym + 1] line starts */
    int32_t *sorted;            /* symbol ids sorted by their bytes */
    int64_t n_sym;
    f5_jieba jieba;
    f5_pinyin pinyin;
};

static const char *sym(const struct f5_front *f, int32_t id, size_t *len) {
    *len = f->sym_off[id + 1] - f->sym_off[id] - 1;
    return f->vocab + f->sym_off[id];
}

static const struct f5_front *sort_front;
static int cmp_sym(const void *a, const void *b) {
    size_t la, lb;
    const char *x = sym(sort_front, *(const int32_t *)a, &la), *y = sym(sort_front, *(const int32_t *)b, &lb);
    int c = memcmp(x, y, la < lb ? la : lb);
    return c ? c : (la < lb ? -1 : la > lb);
}

static vox_status blob(const vox_model *file, const vox_json *tok, const char *role, const char **data, size_t *len) {
    const vox_json *name = vox_json_get(tok, role);
    vox_tensor_info t;
    if (!name || name->type != VOX_JSON_STRING || vox_model_find_tensor(file, name->str, &t) != VOX_OK ||
        t.dtype != VOX_DTYPE_U8 || t.ndim != 1)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the tokenizer's %s is not a 1-D u8 tensor", vox_model_path(file), role);
    *data = t.data;
    *len = (size_t)t.shape[0];
    if (vx_utf8_valid_prefix(*data, *len) != *len)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the tokenizer's %s is not UTF-8 text", vox_model_path(file), role);
    return VOX_OK;
}

static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;

vox_status f5_front_create(const vox_model *file, const vox_json *tok, int64_t vocab_size, struct f5_front **out) {
    *out = NULL;
    struct f5_front *f = calloc(1, sizeof *f);
    if (!f) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    const char *d[5];
    size_t l[5];
    static const char *const roles[5] = {"vocab", "jieba_dict", "jieba_hmm", "pinyin_chars", "pinyin_phrases"};
    vox_status st = VOX_OK;
    for (int i = 0; i < 5 && st == VOX_OK; i++) st = blob(file, tok, roles[i], &d[i], &l[i]);
    if (st == VOX_OK) {
        f->vocab = d[0], f->vocab_len = l[0];
        int64_t n = 0;
        for (size_t i = 0; i < l[0]; i++) n += d[0][i] == '\n';
        if (!l[0] || d[0][l[0] - 1] != '\n')
            st = vox_set_error(VOX_ERR_FORMAT, "%s: the vocabulary must end with a line break", vox_model_path(file));
        else if (n != vocab_size)
            st = vox_set_error(VOX_ERR_FORMAT, "%s: the vocabulary has %lld symbols, the text embedding %lld (+1)",
                               vox_model_path(file), (long long)n, (long long)vocab_size);
        f->n_sym = n;
        f->sym_off = st == VOX_OK ? malloc((size_t)(n + 1) * sizeof *f->sym_off) : NULL;
        f->sorted = st == VOX_OK ? malloc((size_t)(n ? n : 1) * sizeof *f->sorted) : NULL;
        if (st == VOX_OK && (!f->sym_off || !f->sorted)) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        if (st == VOX_OK) {
            int64_t k = 0;
            f->sym_off[0] = 0;
            for (size_t i = 0; i < l[0]; i++)
                if (d[0][i] == '\n') f->sym_off[++k] = (uint32_t)(i + 1);
            for (int64_t i = 0; i < n; i++) f->sorted[i] = (int32_t)i;
            pthread_mutex_lock(&sort_lock);
            sort_front = f;
            qsort(f->sorted, (size_t)n, sizeof *f->sorted, cmp_sym);
            pthread_mutex_unlock(&sort_lock);
            for (int64_t i = 1; i < n && st == VOX_OK; i++)
                if (cmp_sym(&f->sorted[i - 1], &f->sorted[i]) == 0)
                    st = vox_set_error(VOX_ERR_FORMAT, "%s: the vocabulary lists a symbol twice (ids %d and %d)",
                                       vox_model_path(file), f->sorted[i - 1], f->sorted[i]);
        }
    }
    if (st == VOX_OK) st = f5_jieba_load(&f->jieba, d[1], l[1], d[2], l[2]);
    if (st == VOX_OK) st = f5_pinyin_load(&f->pinyin, d[3], l[3], d[4], l[4]);
    if (st != VOX_OK) {
        f5_front_free(f);
        return st;
    }
    *out = f;
    return VOX_OK;
}

void f5_front_free(struct f5_front *f) {
    if (!f) return;
    free(f->sym_off);
    free(f->sorted);
    f5_jieba_free(&f->jieba);
    f5_pinyin_free(&f->pinyin);
    free(f);
}

static int32_t symbol_id(const struct f5_front *f, const char *s, size_t n) {
    int64_t lo = 0, hi = f->n_sym;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        size_t ml;
        const char *m = sym(f, f->sorted[mid], &ml);
        int c = memcmp(m, s, ml < n ? ml : n);
        if (!c) c = ml < n ? -1 : ml > n;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < f->n_sym) {
        size_t ml;
        const char *m = sym(f, f->sorted[lo], &ml);
        if (ml == n && !memcmp(m, s, n)) return f->sorted[lo];
    }
    return 0;
}

static int is_chinese(uint32_t c) { return c >= 0x3100 && c <= 0x9FFF; }

/* ; -> ,  “ ” -> "  ‘ ’ -> ' (str.translate of convert_char_to_pinyin). */
static char *translate(const char *t, size_t len, size_t *out_len) {
    char *o = malloc(len + 1);
    if (!o) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        const unsigned char *u = (const unsigned char *)t + i;
        if (t[i] == ';') o[n++] = ',', i++;
        else if (i + 2 < len && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0x9C || u[2] == 0x9D)) o[n++] = '"', i += 3;
        else if (i + 2 < len && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0x98 || u[2] == 0x99)) o[n++] = '\'', i += 3;
        else o[n++] = t[i++];
    }
    o[n] = '\0';
    *out_len = n;
    return o;
}

/* convert_char_to_pinyin: the symbols of text into out. VOX_ERR_INVALID_ARGUMENT where pypinyin gives
 * fewer readings than a segment has characters (the official code fails there too). */
static vox_status to_symbols(const struct f5_front *f, const char *text, size_t len, f5_strs *out) {
    size_t tl;
    char *t = translate(text, len, &tl);
    if (!t) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    f5_strs segs = {0};
    f5_jieba_cut(&f->jieba, t, tl, &segs);
    vox_status st = segs.failed ? vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory") : VOX_OK;
    for (size_t s = 0; s < segs.n && st == VOX_OK; s++) {
        size_t sl;
        const char *sp = f5_strs_at(&segs, s, &sl);
        uint32_t cps[64], *cp = sl < 64 ? cps : malloc((sl + 1) * sizeof *cp);
        size_t offs[65], *of = sl < 64 ? offs : malloc((sl + 1) * sizeof *of);
        if (!cp || !of) {
            if (cp != cps) free(cp);
            if (of != offs) free(of);
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        size_t nc = f5_utf8_split(sp, sl, cp, of);
        if (sl == nc) {
            if (out->n && sl > 1) {
                size_t ll;
                const char *last = f5_strs_at(out, out->n - 1, &ll);
                if (!(ll == 1 && (last[0] == ' ' || last[0] == ':' || last[0] == '\'' || last[0] == '"')))
                    f5_strs_push(out, " ", 1);
            }
            for (size_t i = 0; i < nc; i++) f5_strs_push(out, sp + of[i], 1);
        } else if (sl == 3 * nc) {
            f5_strs r = {0};
            f5_lazy_pinyin(&f->pinyin, sp, sl, &r);
            if (r.failed) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            else if (r.n < nc)
                st = vox_set_error(VOX_ERR_INVALID_ARGUMENT, "the text segment \"%.*s\" gets %zu pinyin items for %zu "
                                   "characters (the official F5-TTS frontend fails on it too)", (int)sl, sp, r.n, nc);
            for (size_t i = 0; st == VOX_OK && i < nc; i++) {
                if (is_chinese(cp[i])) f5_strs_push(out, " ", 1);
                size_t rl;
                const char *rs = f5_strs_at(&r, i, &rl);
                f5_strs_push(out, rs, rl);
            }
            f5_strs_free(&r);
        } else {
            for (size_t i = 0; i < nc && st == VOX_OK; i++) {
                const char *c = sp + of[i];
                size_t cl = of[i + 1] - of[i];
                if (cp[i] < 256 || !is_chinese(cp[i])) {
                    f5_strs_push(out, c, cl);
                    continue;
                }
                f5_strs_push(out, " ", 1);
                f5_strs r = {0};
                f5_lazy_pinyin(&f->pinyin, c, cl, &r);
                for (size_t k = 0; k < r.n; k++) {
                    size_t rl;
                    const char *rs = f5_strs_at(&r, k, &rl);
                    f5_strs_push(out, rs, rl);
                }
                if (r.failed) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
                f5_strs_free(&r);
            }
        }
        if (cp != cps) free(cp);
        if (of != offs) free(of);
    }
    if (st == VOX_OK && out->failed) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    f5_strs_free(&segs);
    free(t);
    return st;
}

vox_status f5_tokenize(const struct f5_front *f, const char *text, size_t len, int32_t **ids, int64_t *n) {
    *ids = NULL;
    *n = 0;
    f5_strs s = {0};
    vox_status st = to_symbols(f, text, len, &s);
    if (st == VOX_OK) {
        *ids = malloc((s.n ? s.n : 1) * sizeof **ids);
        if (!*ids) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        for (size_t i = 0; st == VOX_OK && i < s.n; i++) {
            size_t l;
            const char *p = f5_strs_at(&s, i, &l);
            (*ids)[i] = symbol_id(f, p, l);
        }
        *n = st == VOX_OK ? (int64_t)s.n : 0;
    }
    f5_strs_free(&s);
    return st;
}

static vox_status join(f5_strs *s, char **out, size_t *out_len) {
    vx_buf b = {0};
    for (size_t i = 0; i < s->n; i++) {
        size_t l;
        const char *p = f5_strs_at(s, i, &l);
        vx_buf_append(&b, p, l);
        vx_buf_append(&b, "\x1f", 1);
    }
    vx_buf_append(&b, "", 0);
    *out_len = b.len;
    *out = vx_buf_take(&b);
    if (!*out && s->n) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (!*out) *out = calloc(1, 1);
    return *out ? VOX_OK : vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
}

vox_status f5_symbols(const struct f5_front *f, const char *text, size_t len, char **out, size_t *out_len) {
    f5_strs s = {0};
    vox_status st = to_symbols(f, text, len, &s);
    if (st == VOX_OK) st = join(&s, out, out_len);
    f5_strs_free(&s);
    return st;
}

vox_status f5_segment(const struct f5_front *f, const char *text, size_t len, char **out, size_t *out_len) {
    f5_strs s = {0};
    f5_jieba_cut(&f->jieba, text, len, &s);
    vox_status st = s.failed ? vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory") : join(&s, out, out_len);
    f5_strs_free(&s);
    return st;
}
