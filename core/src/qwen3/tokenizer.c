/* The Qwen2 byte-level BPE tokenizer of Qwen3-TTS (see tokenizer.h), equal to
 * vox.reference.qwen3.tokenizer (the HF `tokenizers` pipeline the official processor runs):
 *
 *   1. added tokens (tokenizer_config.json added_tokens_decoder) are found in the raw text first,
 *      leftmost-longest, as tokenizers' AddedVocabulary does (all of Qwen's have normalized,
 *      lstrip, rstrip and single_word false; other values are refused as unsupported);
 *   2. the text between them is split by the pre-tokenizer regex (pretok.c: "qwen2" or
 *      "mistral_fix", as the manifest's tokenizer.pre_tokenizer says; a manifest without it gets
 *      what the official loader would pick for its config, as the reference does);
 *   3. each pre-token's bytes go through the byte-level BPE (bpe.c); a small cache keeps the tokens
 *      of recent short pre-tokens.
 * NFC normalization is the caller's job (the Python layer applies it); the text must be UTF-8.
 *
 * Streaming (q3_tokenizer_stable_prefix): appending text can (a) complete an added token that
 * starts in the text, or make a longer one match; (b) change the pre-tokens at the end of the text.
 * (a): the added-token scan is stable up to the first position it examines whose rest of the text is
 * a proper prefix of an added token (any match starting earlier lies inside the text and cannot
 * change; see stable_added()). (b): within the text segment before that position, q3_pretok_stable
 * finds the pre-tokens that no appended text can change. BPE works per pre-token. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../json.h"
#include "../tmod.h"
#include "../unicode/unicode.h"
#include "bpe.h"
#include "pretok.h"
#include "tokenizer_impl.h"

typedef struct added_token {
    char *text;
    size_t len;
    int32_t id;
} added_token;

/* The BPE cache: direct-mapped, for pre-tokens of up to CACHE_BYTES bytes with up to CACHE_IDS
 * tokens. Guarded by a mutex (tokenize may be called from several threads at once). */
#define CACHE_SLOTS 2048
#define CACHE_BYTES 24
#define CACHE_IDS 8

typedef struct cache_entry {
    uint8_t len, n_ids; /* len 0: empty */
    char bytes[CACHE_BYTES];
    int32_t ids[CACHE_IDS];
} cache_entry;

struct q3_tokenizer {
    q3_bpe bpe;
    q3_pretok_kind kind;
    bool add_prefix_space;
    added_token *added;        /* sorted by first byte, then longest first */
    size_t n_added;
    size_t bucket[257];        /* added[bucket[c] .. bucket[c + 1]) start with byte c */
    pthread_mutex_t cache_lock;
    cache_entry *cache;
};

q3_pretok_kind q3_tokenizer_kind(const q3_tokenizer *tok) { return tok->kind; }

void q3_tokenizer_free(q3_tokenizer *tok) {
    if (!tok) return;
    q3_bpe_free(&tok->bpe);
    for (size_t i = 0; i < tok->n_added; i++) free(tok->added[i].text);
    free(tok->added);
    if (tok->cache) pthread_mutex_destroy(&tok->cache_lock);
    free(tok->cache);
    free(tok);
}

/* ------------------------------------------------------------------------------------------------
 * tokenizer_config.json */

static int added_cmp(const void *a, const void *b) {
    const added_token *x = a, *y = b;
    unsigned char cx = (unsigned char)x->text[0], cy = (unsigned char)y->text[0];
    if (cx != cy) return cx < cy ? -1 : 1;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return memcmp(x->text, y->text, x->len);
}

static bool flag(const vox_json *tok, const char *key) {
    const vox_json *v = vox_json_get(tok, key);
    return v && v->type == VOX_JSON_TRUE;
}

static vox_status load_config(q3_tokenizer *t, const char *text, size_t len, const char *what) {
    vox_json_doc *doc;
    vox_json_error err;
    vox_status st = vox_json_parse(text, len, &doc, &err);
    if (st == VOX_ERR_OUT_OF_MEMORY) return vox_set_error(st, "out of memory");
    if (st != VOX_OK)
        return vox_set_error(st, "%s: tokenizer_config.json: %s at byte %zu", what, err.message, err.offset);
    const vox_json *root = vox_json_root(doc);
    const vox_json *dec = vox_json_get(root, "added_tokens_decoder");
    if (root->type != VOX_JSON_OBJECT || (dec && dec->type != VOX_JSON_OBJECT)) {
        vox_json_free(doc);
        return vox_set_error(VOX_ERR_FORMAT, "%s: tokenizer_config.json: expected an object with an object "
                                             "added_tokens_decoder", what);
    }
    t->add_prefix_space = flag(root, "add_prefix_space");
    size_t n = dec ? dec->count : 0;
    t->added = calloc(n ? n : 1, sizeof *t->added);
    if (!t->added) {
        vox_json_free(doc);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    char q[64];
    for (const vox_json *c = dec ? dec->child : NULL; c; c = c->next) {
        uint64_t id = 0;
        bool digits = c->key_len > 0 && c->key_len <= 10;
        for (size_t i = 0; i < c->key_len && digits; i++) {
            digits = c->key[i] >= '0' && c->key[i] <= '9';
            id = id * 10 + (uint64_t)(c->key[i] - '0');
        }
        const vox_json *content = vox_json_get(c, "content");
        if (!digits || id > INT32_MAX || c->type != VOX_JSON_OBJECT || !content || content->type != VOX_JSON_STRING ||
            !content->str_len) {
            st = vox_set_error(VOX_ERR_FORMAT, "%s: tokenizer_config.json: added token %s needs an id in "
                               "[0, 2^31) and a non-empty string content", what,
                               vox_json_quote(q, sizeof q, c->key, c->key_len));
            break;
        }
        static const char *const unsupported[] = {"normalized", "lstrip", "rstrip", "single_word"};
        for (size_t i = 0; i < 4 && st == VOX_OK; i++)
            if (flag(c, unsupported[i]))
                st = vox_set_error(VOX_ERR_UNSUPPORTED, "%s: added token %s has %s = true, which vox does not "
                                   "support", what, vox_json_quote(q, sizeof q, content->str, content->str_len),
                                   unsupported[i]);
        if (st != VOX_OK) break;
        added_token *a = &t->added[t->n_added];
        if (!(a->text = malloc(content->str_len))) {
            st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        memcpy(a->text, content->str, content->str_len);
        a->len = content->str_len;
        a->id = (int32_t)id;
        t->n_added++;
    }
    vox_json_free(doc);
    if (st != VOX_OK) return st;
    qsort(t->added, t->n_added, sizeof *t->added, added_cmp);
    for (size_t i = 1; i < t->n_added; i++)
        if (t->added[i].len == t->added[i - 1].len && !memcmp(t->added[i].text, t->added[i - 1].text, t->added[i].len))
            return vox_set_error(VOX_ERR_FORMAT, "%s: tokenizer_config.json: added token %s appears twice", what,
                                 vox_json_quote(q, sizeof q, t->added[i].text, t->added[i].len));
    for (size_t i = 0; i < t->n_added; i++)
        if (vx_utf8_valid_prefix(t->added[i].text, t->added[i].len) != t->added[i].len)
            return vox_set_error(VOX_ERR_FORMAT, "%s: tokenizer_config.json: an added token is not UTF-8", what);
    size_t i = 0;
    for (unsigned c = 0; c < 256; c++) {
        t->bucket[c] = i;
        while (i < t->n_added && (unsigned char)t->added[i].text[0] == c) i++;
    }
    t->bucket[256] = i;
    return VOX_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Construction */

vox_status q3_tokenizer_from_files(const char *vocab, size_t vocab_len, const char *merges, size_t merges_len,
                                   const char *config, size_t config_len, q3_pretok_kind kind, const char *what,
                                   q3_tokenizer **out) {
    *out = NULL;
    q3_tokenizer *t = calloc(1, sizeof *t);
    if (!t) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    t->kind = kind;
    vox_status st = q3_bpe_load(&t->bpe, vocab, vocab_len, merges, merges_len, what);
    if (st == VOX_OK) st = load_config(t, config, config_len, what);
    if (st == VOX_OK) {
        t->cache = calloc(CACHE_SLOTS, sizeof *t->cache);
        if (!t->cache) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        else if (pthread_mutex_init(&t->cache_lock, NULL) != 0) {
            free(t->cache);
            t->cache = NULL;
            st = vox_set_error(VOX_ERR_INTERNAL, "cannot create a mutex");
        }
    }
    if (st != VOX_OK) {
        q3_tokenizer_free(t);
        return st;
    }
    *out = t;
    return VOX_OK;
}

static vox_status file_tensor(const q3_model *m, const vox_json *tok, const char *role, const char **data,
                              size_t *len) {
    const vox_json *name = vox_json_get(tok, role);
    vox_tensor_info info;
    if (!name || name->type != VOX_JSON_STRING || vox_model_find_tensor(m->file, name->str, &info) != VOX_OK ||
        info.dtype != VOX_DTYPE_U8 || info.ndim != 1)
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tokenizer %s must name a 1-D u8 tensor",
                             vox_model_path(m->file), role);
    *data = info.data;
    *len = (size_t)info.nbytes;
    return VOX_OK;
}

/* vox.reference.qwen3.tokenizer.official_regex: the regex the official loader ends up with for a local
 * checkpoint directory whose config.json is `config` (transformers 4.57.3 _patch_mistral_regex with
 * fix_mistral_regex=True): the Qwen2 regex when transformers_version <= 4.57.2 and model_type is set
 * and not a Mistral one, or when transformers_version >= 5; the mistral_fix regex otherwise. */
static int official_kind(const vox_json *config, const char *path) {
    const vox_json *ver = vox_json_get(config, "transformers_version"), *type = vox_json_get(config, "model_type");
    if (!ver || ver->type == VOX_JSON_NULL || (ver->type == VOX_JSON_STRING && !ver->str_len))
        return Q3_PRETOK_MISTRAL_FIX;
    if (ver->type != VOX_JSON_STRING) {
        vox_set_error(VOX_ERR_FORMAT, "%s: manifest: config.transformers_version is not a string", path);
        return -1;
    }
    /* release numbers: the leading digits of each dot-separated part, up to the first part without any */
    long v[16];
    size_t n = 0;
    for (const char *p = ver->str; n < 16;) {
        if (*p < '0' || *p > '9') break;
        long x = 0;
        while (*p >= '0' && *p <= '9') x = x < 100000000 ? x * 10 + (*p++ - '0') : (p++, x);
        v[n++] = x;
        while (*p && *p != '.') p++;
        if (!*p) break;
        p++;
    }
    static const long v4572[3] = {4, 57, 2}, v5[3] = {5, 0, 0};
    int c4572 = 0, c5 = 0; /* Python tuple comparison of v with (4, 57, 2) and (5, 0, 0) */
    for (size_t i = 0; i < 3 && !c4572; i++) c4572 = i >= n ? -1 : v[i] < v4572[i] ? -1 : v[i] > v4572[i] ? 1 : 0;
    if (!c4572) c4572 = n > 3 ? 1 : 0;
    for (size_t i = 0; i < 3 && !c5; i++) c5 = i >= n ? -1 : v[i] < v5[i] ? -1 : v[i] > v5[i] ? 1 : 0;
    if (!c5) c5 = n > 3 ? 1 : 0;
    if (c4572 <= 0) {
        static const char *const mistral[] = {"mistral", "mistral3", "voxtral", "ministral", "pixtral"};
        bool is_mistral = false;
        for (size_t i = 0; i < 5 && type && type->type == VOX_JSON_STRING; i++)
            is_mistral |= vox_json_is_string(type, mistral[i]);
        if (type && type->type != VOX_JSON_NULL && !is_mistral) return Q3_PRETOK_QWEN2;
    } else if (c5 >= 0) {
        return Q3_PRETOK_QWEN2;
    }
    return Q3_PRETOK_MISTRAL_FIX;
}

vox_status q3_tokenizer_load(const q3_model *m, q3_tokenizer **out) {
    *out = NULL;
    const char *path = vox_model_path(m->file);
    const vox_json *tok = vox_json_get(m->manifest, "tokenizer");
    if (!tok || tok->type != VOX_JSON_OBJECT || !vox_json_is_string(vox_json_get(tok, "type"), "qwen2_bpe"))
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tokenizer.type must be \"qwen2_bpe\"", path);
    /* the regex the converter recorded; without one, the official loader's choice for the config */
    const vox_json *pre = vox_json_get(tok, "pre_tokenizer");
    int kind;
    if (!pre) {
        if ((kind = official_kind(m->config, path)) < 0) return VOX_ERR_FORMAT;
    } else if (pre->type != VOX_JSON_STRING || (kind = q3_pretok_kind_from_name(pre->str)) < 0) {
        return vox_set_error(VOX_ERR_FORMAT, "%s: manifest: tokenizer.pre_tokenizer must be \"qwen2\" or "
                             "\"mistral_fix\"", path);
    }
    const char *vocab = NULL, *merges = NULL, *config = NULL;
    size_t nv = 0, nm = 0, nc = 0;
    vox_status st;
    if ((st = file_tensor(m, tok, "vocab", &vocab, &nv)) != VOX_OK ||
        (st = file_tensor(m, tok, "merges", &merges, &nm)) != VOX_OK ||
        (st = file_tensor(m, tok, "config", &config, &nc)) != VOX_OK)
        return st;
    return q3_tokenizer_from_files(vocab, nv, merges, nm, config, nc, (q3_pretok_kind)kind, path, out);
}

/* ------------------------------------------------------------------------------------------------
 * Lookups */

int32_t q3_token_id(const q3_tokenizer *tok, const char *token) {
    if (!tok || !token) return -1;
    size_t len = strlen(token);
    unsigned char c = (unsigned char)token[0];
    for (size_t i = tok->bucket[c]; i < tok->bucket[c + 1] && len; i++)
        if (tok->added[i].len == len && !memcmp(tok->added[i].text, token, len)) return tok->added[i].id;
    return q3_bpe_token_id(&tok->bpe, token, len);
}

/* The longest added token that matches text[i..len), or NULL. */
static const added_token *match_added(const q3_tokenizer *tok, const char *text, size_t len, size_t i) {
    unsigned char c = (unsigned char)text[i];
    for (size_t k = tok->bucket[c]; k < tok->bucket[c + 1]; k++) {
        const added_token *a = &tok->added[k];
        if (a->len <= len - i && !memcmp(a->text, text + i, a->len)) return a;
    }
    return NULL;
}

/* Whether text[i..len) is a proper prefix of an added token (which appended text could complete). */
static bool partial_added(const q3_tokenizer *tok, const char *text, size_t len, size_t i) {
    unsigned char c = (unsigned char)text[i];
    for (size_t k = tok->bucket[c]; k < tok->bucket[c + 1]; k++) {
        const added_token *a = &tok->added[k];
        if (a->len > len - i && !memcmp(a->text, text + i, len - i)) return true;
    }
    return false;
}

/* ------------------------------------------------------------------------------------------------
 * Tokenizing */

typedef struct ids_buf {
    int32_t *v;
    size_t n, cap;
} ids_buf;

static bool reserve(ids_buf *b, size_t more) {
    if (b->n + more <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + more) cap *= 2;
    int32_t *v = realloc(b->v, cap * sizeof *v);
    if (!v) return false;
    b->v = v;
    b->cap = cap;
    return true;
}

static uint32_t cache_slot(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return (h ^ (h >> 15)) & (CACHE_SLOTS - 1);
}

/* Appends the tokens of one pre-token. */
static vox_status bpe_piece(q3_tokenizer *tok, const char *s, size_t n, ids_buf *out) {
    if (!reserve(out, n + 1)) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (tok->add_prefix_space && s[0] != ' ') {
        /* ByteLevel(add_prefix_space): a space before every pre-token that lacks one */
        char *tmp = malloc(n + 1);
        if (!tmp) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        tmp[0] = ' ';
        memcpy(tmp + 1, s, n);
        size_t k = q3_bpe_word(&tok->bpe, (const unsigned char *)tmp, n + 1, out->v + out->n);
        free(tmp);
        if (k == (size_t)-1) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        out->n += k;
        return VOX_OK;
    }
    uint32_t slot = 0;
    if (n <= CACHE_BYTES) {
        slot = cache_slot(s, n);
        pthread_mutex_lock(&tok->cache_lock);
        const cache_entry *e = &tok->cache[slot];
        bool hit = e->len == n && !memcmp(e->bytes, s, n);
        if (hit) {
            memcpy(out->v + out->n, e->ids, e->n_ids * sizeof *e->ids);
            out->n += e->n_ids;
        }
        pthread_mutex_unlock(&tok->cache_lock);
        if (hit) return VOX_OK;
    }
    size_t k = q3_bpe_word(&tok->bpe, (const unsigned char *)s, n, out->v + out->n);
    if (k == (size_t)-1) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    if (n <= CACHE_BYTES && k <= CACHE_IDS) {
        pthread_mutex_lock(&tok->cache_lock);
        cache_entry *e = &tok->cache[slot];
        e->len = (uint8_t)n;
        e->n_ids = (uint8_t)k;
        memcpy(e->bytes, s, n);
        memcpy(e->ids, out->v + out->n, k * sizeof *e->ids);
        pthread_mutex_unlock(&tok->cache_lock);
    }
    out->n += k;
    return VOX_OK;
}

/* Scratch for decoding one text segment. */
typedef struct seg_buf {
    uint32_t *cp;
    uint8_t *cls;
    size_t *off;
} seg_buf;

static bool seg_alloc(seg_buf *b, size_t len) {
    b->cp = malloc((len ? len : 1) * sizeof *b->cp);
    b->cls = malloc(len ? len : 1);
    b->off = malloc((len + 1) * sizeof *b->off);
    return b->cp && b->cls && b->off;
}

static void seg_free(seg_buf *b) {
    free(b->cp);
    free(b->cls);
    free(b->off);
}

/* Pre-tokenizes text[a..b) (valid UTF-8) and appends the tokens. */
static vox_status segment(q3_tokenizer *tok, const char *text, size_t a, size_t b, seg_buf *sb, ids_buf *out) {
    size_t bad;
    size_t n = q3_decode_utf8(text + a, b - a, sb->cp, sb->cls, sb->off, &bad);
    q3_chars t = {sb->cp, sb->cls, n};
    vox_status st = VOX_OK;
    for (size_t p = 0; p < n && st == VOX_OK;) {
        size_t e = q3_pretok_next(tok->kind, &t, p, NULL);
        st = bpe_piece(tok, text + a + sb->off[p], sb->off[e] - sb->off[p], out);
        p = e;
    }
    return st;
}

vox_status q3_tokenize(const q3_tokenizer *ctok, const char *text, size_t len, int32_t **ids, size_t *n) {
    q3_tokenizer *tok = (q3_tokenizer *)ctok; /* only the cache (under its lock) changes */
    *ids = NULL;
    *n = 0;
    if (!tok) return vox_set_error(VOX_ERR_UNSUPPORTED, "this model has no tokenizer");
    if (!text && len) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "text is NULL");
    size_t valid = vx_utf8_valid_prefix(text, len);
    if (valid != len) {
        char q[40];
        size_t show = len - valid < 4 ? len - valid : 4;
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "text is not valid UTF-8: bytes %s at offset %zu",
                             vox_json_quote(q, sizeof q, text + valid, show), valid);
    }
    ids_buf out = {0};
    seg_buf sb;
    vox_status st = VOX_OK;
    if (!seg_alloc(&sb, len) || !reserve(&out, len / 4 + 8)) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    } else {
        size_t start = 0, i = 0;
        while (i < len && st == VOX_OK) {
            const added_token *a = tok->bucket[(unsigned char)text[i] + 1] > tok->bucket[(unsigned char)text[i]]
                                       ? match_added(tok, text, len, i)
                                       : NULL;
            if (!a) {
                i++;
                continue;
            }
            if (start < i) st = segment(tok, text, start, i, &sb, &out);
            if (st == VOX_OK && !reserve(&out, 1)) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
            if (st == VOX_OK) out.v[out.n++] = a->id;
            i += a->len;
            start = i;
        }
        if (st == VOX_OK && start < len) st = segment(tok, text, start, len, &sb, &out);
    }
    seg_free(&sb);
    if (st != VOX_OK) {
        free(out.v);
        return st;
    }
    *ids = out.v;
    *n = out.n;
    return VOX_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Streaming */

/* The added-token scan of text[0..len) up to the first examined position where appended text could
 * complete an added token (*end: that position, or len). Matches that start before it lie inside the
 * text and stay: one that extended past the end would make its start such a position. *seg: where the
 * text segment before *end starts (after the last added token). */
static void stable_added(const q3_tokenizer *tok, const char *text, size_t len, size_t *seg, size_t *end) {
    size_t start = 0, i = 0;
    while (i < len) {
        if (partial_added(tok, text, len, i)) break;
        const added_token *a = match_added(tok, text, len, i);
        if (a) {
            i += a->len;
            start = i;
        } else {
            i++;
        }
    }
    *seg = start;
    *end = i;
}

size_t q3_tokenizer_stable_prefix(const q3_tokenizer *tok, const char *text, size_t len) {
    if (!tok || !text) return 0;
    len = vx_utf8_valid_prefix(text, len); /* a cut-off UTF-8 sequence (or invalid bytes) ends the text */
    size_t seg, end;
    stable_added(tok, text, len, &seg, &end);
    if (seg == end) return end;
    seg_buf sb;
    size_t *starts = malloc((end - seg + 1) * sizeof *starts), *reach = malloc((end - seg + 1) * sizeof *reach);
    size_t k = seg, bad;
    if (seg_alloc(&sb, end - seg) && starts && reach) {
        size_t n = q3_decode_utf8(text + seg, end - seg, sb.cp, sb.cls, sb.off, &bad);
        q3_chars t = {sb.cp, sb.cls, n};
        k = seg + sb.off[q3_pretok_stable(tok->kind, &t, starts, reach)];
    } /* out of memory: only what is surely stable */
    seg_free(&sb);
    free(starts);
    free(reach);
    return k;
}
