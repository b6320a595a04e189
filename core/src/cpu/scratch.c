/* Per-thread growable scratch buffers (scratch.h). */
#include "cpu/scratch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct scratch {
    void *buf[VX_SCRATCH_SLOTS];
    size_t cap[VX_SCRATCH_SLOTS];
} scratch;

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int key_ok;

static void release(void *p) {
    scratch *s = p;
    for (int i = 0; i < VX_SCRATCH_SLOTS; i++) free(s->buf[i]);
    free(s);
}

static void make_key(void) { key_ok = pthread_key_create(&key, release) == 0; }

static atomic_int refuse;   /* vx_scratch_refuse: the tests of the fallbacks */
void vx_scratch_refuse(int on) { atomic_store(&refuse, on); }

void *vx_scratch(int slot, size_t bytes) {
    if (atomic_load_explicit(&refuse, memory_order_relaxed)) return NULL;
    pthread_once(&once, make_key);
    if (!key_ok || slot < 0 || slot >= VX_SCRATCH_SLOTS) return NULL;
    scratch *s = pthread_getspecific(key);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) return NULL;
        if (pthread_setspecific(key, s) != 0) {
            free(s);
            return NULL;
        }
    }
    if (bytes == 0) bytes = 64;
    if (s->cap[slot] < bytes) {
        /* Grow geometrically so slowly growing requests do not reallocate every time. */
        size_t cap = s->cap[slot] * 2 > bytes ? s->cap[slot] * 2 : bytes;
        cap = (cap + 63) & ~(size_t)63;
        void *p = aligned_alloc(64, cap);
        if (!p) return NULL;
        free(s->buf[slot]);
        s->buf[slot] = p;
        s->cap[slot] = cap;
    }
    return s->buf[slot];
}
