/* The byte-level BPE model: vocabulary and merges loading, and the merge loop (see bpe.h). */
#include "bpe.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../json.h"
#include "../unicode/unicode.h"

/* Loading is bound by memory latency (random probes into tables of megabytes), so vocabulary
 * entries and merges are handled a batch at a time: hash and prefetch every probe of the batch
 * first, then probe (about 2x faster than one at a time). */
#define BATCH 32
#if defined(__GNUC__)
#  define PREFETCH(p) __builtin_prefetch(p)
#else
#  define PREFETCH(p) ((void)(p))
#endif

uint32_t q3_byte_char(unsigned v) {
    /* bytes_to_unicode(): printable Latin-1 bytes spell themselves, the 68 others U+0100.. in order */
    if ((v >= 0x21 && v <= 0x7E) || (v >= 0xA1 && v <= 0xAC) || (v >= 0xAE && v <= 0xFF)) return v;
    unsigned n = 0;
    for (unsigned b = 0; b < v; b++)
        if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF))) n++;
    return 0x100 + n;
}

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static uint64_t hash_pair(uint64_t k) {
    k ^= k >> 33; /* murmur3 fmix64 */
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
}

/* A power of two with room for n entries at a load of at most 2/3. */
static size_t table_size(size_t n) {
    size_t cap = 16;
    while (cap < n + n / 2) cap *= 2;
    return cap;
}

void q3_bpe_free(q3_bpe *b) {
    free(b->arena);
    free(b->slots);
    free(b->pairs);
    memset(b, 0, sizeof *b);
}

static int32_t lookup(const q3_bpe *b, const char *s, size_t len, uint64_t h);

int32_t q3_bpe_token_id(const q3_bpe *b, const char *s, size_t len) {
    if (!b->slots || !len) return -1;
    return lookup(b, s, len, hash_bytes(s, len));
}

int q3_bpe_pair(const q3_bpe *b, int32_t left, int32_t right, uint32_t *rank, int32_t *merged) {
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    for (size_t i = hash_pair(key) & b->pair_mask;; i = (i + 1) & b->pair_mask) {
        const q3_pair *p = &b->pairs[i];
        if (p->key == key) {
            *rank = p->rank;
            *merged = p->merged;
            return 1;
        }
        if (p->key == UINT64_MAX) return 0;
    }
}

/* ------------------------------------------------------------------------------------------------
 * Loading */

static vox_status load_vocab(q3_bpe *b, const char *text, size_t len, const char *what) {
    vox_json_doc *doc;
    vox_json_error err;
    vox_status st = vox_json_parse(text, len, &doc, &err);
    if (st == VOX_ERR_OUT_OF_MEMORY) return vox_set_error(st, "out of memory");
    if (st != VOX_OK) return vox_set_error(st, "%s: vocab.json: %s at byte %zu", what, err.message, err.offset);
    const vox_json *root = vox_json_root(doc);
    if (root->type != VOX_JSON_OBJECT) {
        vox_json_free(doc);
        return vox_set_error(VOX_ERR_FORMAT, "%s: vocab.json is not a JSON object", what);
    }
    size_t total = 0;
    for (const vox_json *c = root->child; c; c = c->next) total += c->key_len > 8 ? c->key_len : 0;
    if (total >= UINT32_MAX || root->count >= UINT32_MAX / 2) {
        vox_json_free(doc);
        return vox_set_error(VOX_ERR_FORMAT, "%s: vocab.json is too large", what);
    }
    size_t cap = table_size(root->count);
    b->arena = malloc(total ? total : 1);
    b->slots = calloc(cap, sizeof *b->slots);
    b->slot_mask = cap - 1;
    if (!b->arena || !b->slots) {
        vox_json_free(doc);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    size_t off = 0;
    b->max_id = -1;
    for (const vox_json *c = root->child; c;) {
        /* a batch at a time: hash and prefetch, then insert (see BATCH) */
        const vox_json *batch[BATCH];
        uint64_t h[BATCH];
        size_t nb = 0;
        for (; c && nb < BATCH; c = c->next, nb++) {
            batch[nb] = c;
            h[nb] = hash_bytes(c->key, c->key_len);
            PREFETCH(&b->slots[h[nb] & b->slot_mask]);
        }
        for (size_t k = 0; k < nb; k++) {
            const vox_json *e = batch[k];
            uint64_t id;
            char q[64];
            if (!vox_json_get_uint(e, INT32_MAX, &id) || !e->key_len) {
                vox_status st2 = vox_set_error(VOX_ERR_FORMAT, "%s: vocab.json: %s needs a non-empty spelling and "
                                               "an integer id in [0, 2^31)", what,
                                               vox_json_quote(q, sizeof q, e->key, e->key_len));
                vox_json_free(doc);
                return st2;
            }
            /* keys are unique (the parser rejects duplicates): insert without comparing */
            size_t i = h[k] & b->slot_mask;
            while (b->slots[i].len) i = (i + 1) & b->slot_mask;
            q3_vocab_slot *v = &b->slots[i];
            v->len = (uint32_t)e->key_len;
            v->id = (int32_t)id;
            if (e->key_len <= 8) {
                memcpy(v->s.text, e->key, e->key_len);
            } else {
                memcpy(b->arena + off, e->key, e->key_len);
                v->s.off = off;
                off += e->key_len;
            }
            if ((int32_t)id > b->max_id) b->max_id = (int32_t)id;
            b->n_tokens++;
        }
    }
    vox_json_free(doc);
    for (unsigned v = 0; v < 256; v++) {
        char s[4];
        uint32_t c = q3_byte_char(v);
        size_t n = c < 0x80 ? 1 : 2;
        if (n == 1) s[0] = (char)c;
        else s[0] = (char)(0xC0 | (c >> 6)), s[1] = (char)(0x80 | (c & 0x3F));
        b->byte_id[v] = q3_bpe_token_id(b, s, n);
    }
    return VOX_OK;
}

/* Whether s[i..end) starts with a character Python's str.isspace() accepts (what str.strip() and
 * str.split() use); *k: the length of the character there (valid UTF-8). */
static bool py_space_at(const char *str, size_t end, size_t i, size_t *k) {
    const unsigned char *s = (const unsigned char *)str + i;
    size_t avail = end - i;
    unsigned c = s[0];
    if (c < 0x80) {
        *k = 1;
        return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
    }
    *k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (*k > avail) *k = avail;
    if (c == 0xC2) return avail >= 2 && (s[1] == 0x85 || s[1] == 0xA0);           /* U+0085 U+00A0 */
    if (c == 0xE1) return avail >= 3 && s[1] == 0x9A && s[2] == 0x80;              /* U+1680 */
    if (c == 0xE3) return avail >= 3 && s[1] == 0x80 && s[2] == 0x80;              /* U+3000 */
    if (c == 0xE2 && avail >= 3) {
        if (s[1] == 0x80) return s[2] <= 0x8A || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF; /* U+2000..200A 2028 2029 202F */
        if (s[1] == 0x81) return s[2] == 0x9F;                                    /* U+205F */
    }
    return false;
}

typedef struct pending {
    size_t a, na, b, nb;   /* the two spellings in the text */
    size_t j;              /* the joined spelling in the join buffer (na + nb bytes) */
    size_t lineno;
    uint64_t ha, hb, hj, key;
    int32_t merged;
} pending;

static int32_t lookup(const q3_bpe *b, const char *s, size_t len, uint64_t h) {
    for (size_t i = h & b->slot_mask;; i = (i + 1) & b->slot_mask) {
        const q3_vocab_slot *v = &b->slots[i];
        if (!v->len) return -1;
        if (v->len == len && !memcmp(len <= 8 ? v->s.text : b->arena + v->s.off, s, len)) return v->id;
    }
}

static vox_status flush_merges(q3_bpe *b, const char *text, const char *join, pending *q, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++) {
        q[i].ha = hash_bytes(text + q[i].a, q[i].na);
        q[i].hb = hash_bytes(text + q[i].b, q[i].nb);
        q[i].hj = hash_bytes(join + q[i].j, q[i].na + q[i].nb);
        PREFETCH(&b->slots[q[i].ha & b->slot_mask]);
        PREFETCH(&b->slots[q[i].hb & b->slot_mask]);
        PREFETCH(&b->slots[q[i].hj & b->slot_mask]);
    }
    for (size_t i = 0; i < n; i++) {
        int32_t ia = lookup(b, text + q[i].a, q[i].na, q[i].ha), ib = lookup(b, text + q[i].b, q[i].nb, q[i].hb);
        q[i].merged = lookup(b, join + q[i].j, q[i].na + q[i].nb, q[i].hj);
        if (ia < 0 || ib < 0 || q[i].merged < 0) {
            char qs[64];
            const char *s = ia < 0 ? text + q[i].a : ib < 0 ? text + q[i].b : join + q[i].j;
            size_t len = ia < 0 ? q[i].na : ib < 0 ? q[i].nb : q[i].na + q[i].nb;
            return vox_set_error(VOX_ERR_FORMAT, "%s: merges.txt line %zu: %s is not in the vocabulary", what,
                                 q[i].lineno, vox_json_quote(qs, sizeof qs, s, len));
        }
        q[i].key = (uint64_t)(uint32_t)ia << 32 | (uint32_t)ib;
        PREFETCH(&b->pairs[hash_pair(q[i].key) & b->pair_mask]);
    }
    for (size_t i = 0; i < n; i++) { /* in rank order: a repeated pair keeps its last rank, as tokenizers' HashMap */
        size_t k = hash_pair(q[i].key) & b->pair_mask;
        while (b->pairs[k].key != UINT64_MAX && b->pairs[k].key != q[i].key) k = (k + 1) & b->pair_mask;
        b->pairs[k] = (q3_pair){q[i].key, (uint32_t)b->n_merges++, q[i].merged};
    }
    return VOX_OK;
}

static vox_status load_merges(q3_bpe *b, const char *text, size_t len, const char *what) {
    size_t bad = vx_utf8_valid_prefix(text, len);
    if (bad != len)
        return vox_set_error(VOX_ERR_FORMAT, "%s: merges.txt is not valid UTF-8 (offset %zu)", what, bad);
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n' || (text[i] == '\r' && (i + 1 == len || text[i + 1] != '\n'));
    size_t cap = table_size(lines);
    b->pairs = malloc(cap * sizeof *b->pairs);
    b->pair_mask = cap - 1;
    char *join = malloc(len ? len : 1); /* the joined spellings of a batch (never longer than its lines) */
    if (!b->pairs || !join) {
        free(join);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memset(b->pairs, 0xFF, cap * sizeof *b->pairs);
    pending q[BATCH];
    size_t nq = 0, used = 0, lineno = 0;
    vox_status st = VOX_OK;
    for (size_t pos = 0; pos <= len && st == VOX_OK; lineno++) {
        /* one line: up to \r\n, \r or \n (Python's universal newlines) */
        size_t end = pos;
        while (end < len && text[end] != '\n' && text[end] != '\r') end++;
        size_t next = end + (end < len && text[end] == '\r' && end + 1 < len && text[end + 1] == '\n' ? 2 : 1);
        /* split on Python whitespace (which also strips the line) */
        size_t words[3][2], nw = 0;
        for (size_t i = pos, k; i < end;) {
            if (py_space_at(text, end, i, &k)) {
                i += k;
                continue;
            }
            size_t w0 = i;
            while (i < end && !py_space_at(text, end, i, &k)) i += k;
            if (nw < 3) words[nw][0] = w0, words[nw][1] = i;
            nw++;
        }
        bool header = lineno == 0 && nw > 0 && words[0][1] - words[0][0] >= 9 &&
                      !memcmp(text + words[0][0], "#version:", 9);
        if (nw && !header) {
            if (nw != 2) {
                st = vox_set_error(VOX_ERR_FORMAT, "%s: merges.txt line %zu has %zu entries, expected 2", what,
                                   lineno + 1, nw);
                break;
            }
            pending *m = &q[nq++];
            m->a = words[0][0], m->na = words[0][1] - words[0][0];
            m->b = words[1][0], m->nb = words[1][1] - words[1][0];
            m->j = used;
            m->lineno = lineno + 1;
            memcpy(join + used, text + m->a, m->na);
            memcpy(join + used + m->na, text + m->b, m->nb);
            used += m->na + m->nb;
            if (nq == BATCH) {
                st = flush_merges(b, text, join, q, nq, what);
                nq = used = 0;
            }
        }
        pos = next;
    }
    if (st == VOX_OK && nq) st = flush_merges(b, text, join, q, nq, what);
    free(join);
    return st;
}

vox_status q3_bpe_load(q3_bpe *b, const char *vocab, size_t vocab_len, const char *merges, size_t merges_len,
                       const char *what) {
    memset(b, 0, sizeof *b);
    vox_status st = load_vocab(b, vocab, vocab_len, what);
    if (st == VOX_OK) st = load_merges(b, merges, merges_len, what);
    if (st != VOX_OK) q3_bpe_free(b);
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * Merging (tokenizers/src/models/bpe/word.rs, Word::merge_all without dropout) */

typedef struct sym {
    int32_t id;
    int32_t dead;
    size_t prev, next; /* SIZE_MAX: none */
} sym;

typedef struct merge {
    uint32_t rank;
    int32_t id;
    size_t pos;
} merge;

static inline bool before(const merge *a, const merge *b) {
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(merge *h, size_t *n, merge m) {
    size_t i = (*n)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&m, &h[parent])) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = m;
}

static merge heap_pop(merge *h, size_t *n) {
    merge top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && before(&h[c + 1], &h[c])) c++;
        if (!before(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

size_t q3_bpe_word(const q3_bpe *b, const unsigned char *bytes, size_t n, int32_t *out) {
    sym sbuf[64];
    merge hbuf[3 * 64];
    sym *s = sbuf;
    merge *h = hbuf;
    if (n > 64) {
        s = malloc(n * sizeof *s);
        h = malloc(3 * n * sizeof *h);
        if (!s || !h) {
            free(s), free(h);
            return (size_t)-1;
        }
    }
    size_t m = 0, nh = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t id = b->byte_id[bytes[i]];
        if (id < 0) continue;
        s[m] = (sym){id, 0, m ? m - 1 : SIZE_MAX, SIZE_MAX};
        if (m) s[m - 1].next = m;
        m++;
    }
    merge mg;
    for (size_t i = 0; i + 1 < m; i++)
        if (q3_bpe_pair(b, s[i].id, s[i + 1].id, &mg.rank, &mg.id)) mg.pos = i, heap_push(h, &nh, mg);
    while (nh) {
        merge top = heap_pop(h, &nh);
        sym *cur = &s[top.pos];
        if (cur->dead || cur->next == SIZE_MAX) continue;
        size_t nx = cur->next;
        uint32_t rank;
        int32_t id;
        if (!q3_bpe_pair(b, cur->id, s[nx].id, &rank, &id) || id != top.id) continue; /* stale */
        cur->id = top.id;
        cur->next = s[nx].next;
        s[nx].dead = 1;
        if (cur->next != SIZE_MAX) s[cur->next].prev = top.pos;
        if (cur->prev != SIZE_MAX && q3_bpe_pair(b, s[cur->prev].id, cur->id, &mg.rank, &mg.id))
            mg.pos = cur->prev, heap_push(h, &nh, mg);
        if (cur->next != SIZE_MAX && q3_bpe_pair(b, cur->id, s[cur->next].id, &mg.rank, &mg.id))
            mg.pos = top.pos, heap_push(h, &nh, mg);
    }
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (!s[i].dead) out[k++] = s[i].id;
    if (s != sbuf) free(s), free(h);
    return k;
}
