/* The engine's cache of primed stream-decoder states (codec.h: q3_prime_cache).
 *
 * A session's stream decoder starts by running the codec on the last `decoder_context` reference
 * frames of its voice (q3_stream_prime). That state depends only on those codes (and the codec), so
 * it is saved after the first warm-up and restored for the next session of the same voice: a copy
 * of ~5 MB instead of ~0.3 s of compute. Entries are keyed by the exact codes (frame count and every
 * code compared, a hash only to skip mismatches quickly); the least recently used one goes when the
 * cache is full. Restoring replaces the whole state of the stream, so the audio is bit-identical to
 * priming afresh (core/tests/test_codec.c checks it). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "codec.h"

typedef struct entry {
    uint64_t hash;
    int64_t n, nq;
    int32_t *codes;
    q3_stream_state *state;
    uint64_t used; /* LRU clock */
} entry;

struct q3_prime_cache {
    pthread_mutex_t mu;
    int cap, len;
    uint64_t clock;
    entry *e;
};

vox_status q3_prime_cache_create(int capacity, q3_prime_cache **out) {
    *out = NULL;
    q3_prime_cache *c = calloc(1, sizeof *c);
    if (!c) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    c->cap = capacity > 0 ? capacity : 1;
    c->e = calloc((size_t)c->cap, sizeof *c->e);
    if (!c->e || pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c->e);
        free(c);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    *out = c;
    return VOX_OK;
}

static void drop(entry *e) {
    free(e->codes);
    q3_stream_state_free(e->state);
    memset(e, 0, sizeof *e);
}

void q3_prime_cache_free(q3_prime_cache *c) {
    if (!c) return;
    for (int i = 0; i < c->len; i++) drop(&c->e[i]);
    pthread_mutex_destroy(&c->mu);
    free(c->e);
    free(c);
}

static uint64_t hash_codes(const int32_t *codes, size_t count) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the values */
    for (size_t i = 0; i < count; i++) {
        h ^= (uint32_t)codes[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static entry *find(q3_prime_cache *c, uint64_t h, const int32_t *codes, int64_t n, int64_t nq) {
    for (int i = 0; i < c->len; i++) {
        entry *e = &c->e[i];
        if (e->hash == h && e->n == n && e->nq == nq && !memcmp(e->codes, codes, (size_t)(n * nq) * sizeof *codes))
            return e;
    }
    return NULL;
}

vox_status q3_stream_prime_cached(q3_prime_cache *c, q3_stream *s, vx_pool *pool, const int32_t *codes, int64_t n) {
    if (!c || n <= 0) return q3_stream_prime(s, pool, codes, n);
    const int64_t nq = q3_codec_groups(q3_stream_codec(s));
    const uint64_t h = hash_codes(codes, (size_t)(n * nq));
    pthread_mutex_lock(&c->mu);
    entry *e = find(c, h, codes, n, nq);
    if (e) {
        e->used = ++c->clock;
        q3_stream_restore(s, e->state);
        pthread_mutex_unlock(&c->mu);
        return VOX_OK;
    }
    pthread_mutex_unlock(&c->mu);

    /* prime outside the lock, then remember it (unless another session got there first) */
    vox_status st = q3_stream_prime(s, pool, codes, n);
    if (st != VOX_OK) return st;
    q3_stream_state *saved = NULL;
    int32_t *key = malloc((size_t)(n * nq) * sizeof *key);
    if (!key || q3_stream_save(s, &saved) != VOX_OK) { /* no memory to cache: the stream is primed anyway */
        free(key);
        vox_clear_error();
        return VOX_OK;
    }
    memcpy(key, codes, (size_t)(n * nq) * sizeof *key);
    pthread_mutex_lock(&c->mu);
    if (find(c, h, codes, n, nq)) {
        pthread_mutex_unlock(&c->mu);
        free(key);
        q3_stream_state_free(saved);
        return VOX_OK;
    }
    if (c->len == c->cap) { /* evict the least recently used */
        int lru = 0;
        for (int i = 1; i < c->len; i++)
            if (c->e[i].used < c->e[lru].used) lru = i;
        drop(&c->e[lru]);
        c->e[lru] = c->e[--c->len];
    }
    c->e[c->len++] = (entry){h, n, nq, key, saved, ++c->clock};
    pthread_mutex_unlock(&c->mu);
    return VOX_OK;
}
