/* The per-engine thread pool (pool.h): n_threads - 1 workers plus the calling thread.
 *
 * Job protocol. One job at a time is published through a single 64-bit atomic word
 *     state = seq << 33 | closed << 32 | active
 * A worker that sees a new seq tries to ENTER the job by incrementing `active` with a CAS that also
 * checks seq and the closed bit; it then claims chunks until none are left, and leaves (decrement). The caller publishes (new seq, open), works on chunks itself, then CLOSES the job
 * and waits only for the workers that actually entered. A worker that wakes late finds the job closed
 * and never touches it, so the caller never waits for a sleeping thread to wake up: with few cores and
 * many small jobs (decode-time GEMVs take ~10-50 us), the caller simply does the work itself.
 *
 * Idle workers spin (with pause) for spin_us, then sleep on a condition variable. The wake-up cannot
 * be lost: a worker registers as a sleeper and re-checks seq under the mutex; the caller publishes
 * seq and then checks the sleeper count (both sequentially consistent), so either the caller sees
 * the sleeper and broadcasts under the mutex, or the worker sees the new seq.
 *
 * Chunks: [0, n) is cut into chunks (a few per thread) and the chunks into one contiguous segment per
 * thread. A participant (the caller, then the workers in the order they enter) takes the chunks of
 * its own segment front to back, so it streams one contiguous piece of the work (weight rows of a
 * GEMV: the kernels prefetch from one chunk into the next); when its segment is empty it steals
 * chunks from the BACK of the others' segments, so a late or descheduled thread holds nobody up by
 * more than a chunk. Each segment is one atomic word front | back << 32, its own cache line.
 *
 * Busy rule: `busy` is taken with an atomic exchange; a caller that finds it taken (another session
 * of the engine, or a kernel calling vx_pool_for from inside a job) runs its whole job alone on its
 * own thread. Determinism does not care which thread runs a range (pool.h). */
#include "pool.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"

#if defined(__x86_64__) || defined(__i386__)
#  include <immintrin.h>
#  define VX_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#  define VX_PAUSE() __asm__ volatile("yield")
#else
#  define VX_PAUSE() ((void)0)
#endif

#if defined(__linux__)
#  include <sys/resource.h>
#  include <sys/syscall.h>
#  include <unistd.h>
#endif

#define MAX_THREADS 1024
#define CLOSED_BIT ((uint64_t)1 << 32)
#define ACTIVE_MASK ((uint64_t)0xffffffffu)
#define SEQ_SHIFT 33

/* ------------------------------------------------------------------------------ FTZ / DAZ */
uint32_t vx_fp_fast(void) {
#if defined(__x86_64__) || defined(__i386__)
    uint32_t old = _mm_getcsr();
    _mm_setcsr(old | 0x8040u); /* FTZ (bit 15) | DAZ (bit 6) */
    return old;
#elif defined(__aarch64__)
    uint64_t old;
    __asm__ volatile("mrs %0, fpcr" : "=r"(old));
    __asm__ volatile("msr fpcr, %0" ::"r"(old | (1u << 24))); /* FZ */
    return (uint32_t)old;
#else
    return 0;
#endif
}

void vx_fp_restore(uint32_t state) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(state);
#elif defined(__aarch64__)
    uint64_t v = state;
    __asm__ volatile("msr fpcr, %0" ::"r"(v));
#else
    (void)state;
#endif
}

/* ------------------------------------------------------------------------------ pool state */
/* One thread's segment of the current job's chunks: [front, back) still to run. */
typedef struct seg_t {
    _Alignas(64) _Atomic uint64_t fb; /* front | back << 32 */
    char pad[64 - sizeof(uint64_t)];
} seg_t;

typedef struct worker {
    struct vx_pool *pool;
    int index;          /* 1 .. n_threads-1 (0 is the caller) */
    int cpu;            /* -1: not pinned */
    vox_status status;  /* startup result */
    char error[256];
} worker;

struct vx_pool {
    int32_t n_threads;
    int32_t n_workers, n_started; /* threads created / that finished their startup */
    int32_t spin_us, nice;
    worker *workers;
    pthread_t *threads;

    _Atomic uint64_t state;
    _Atomic int busy;
    _Atomic int stop;
    _Atomic int sleepers;

    /* The current job: written by its caller before publishing, read by the workers that entered. */
    vx_range_fn fn;
    void *ctx;
    int64_t n, chunk, n_chunks;
    int n_seg;
    _Atomic int next_slot;  /* participants that entered (the caller is slot 0) */
    seg_t *seg;             /* [n_threads] */

    pthread_mutex_t mu;
    pthread_cond_t wake;    /* new job or stop */
    pthread_cond_t started; /* startup handshake */
};

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void run_chunk(vx_pool *p, int64_t c) {
    int64_t b = c * p->chunk, e = b + p->chunk;
    p->fn(p->ctx, b, e < p->n ? e : p->n);
}

/* Take the front (own segment) or back (stealing) chunk of segment s; -1 when it is empty. */
static int64_t take(seg_t *s, int back) {
    uint64_t v = atomic_load_explicit(&s->fb, memory_order_relaxed);
    for (;;) {
        uint32_t f = (uint32_t)v, b = (uint32_t)(v >> 32);
        if (f >= b) return -1;
        uint64_t nv = back ? ((uint64_t)(b - 1) << 32 | f) : ((uint64_t)b << 32 | (f + 1));
        if (atomic_compare_exchange_weak_explicit(&s->fb, &v, nv, memory_order_relaxed, memory_order_relaxed))
            return back ? (int64_t)b - 1 : (int64_t)f;
    }
}

static void run_chunks(vx_pool *p, int slot) {
    const int ns = p->n_seg;
    if (slot < ns) {
        int64_t c;
        while ((c = take(&p->seg[slot], 0)) >= 0) run_chunk(p, c);
    }
    for (int k = 1; k <= ns; k++) {
        seg_t *s = &p->seg[(slot + k) % ns];
        int64_t c;
        while ((c = take(s, 1)) >= 0) run_chunk(p, c);
    }
}

/* Returns the seq of the newest job (or anything when stopping); spins first, then sleeps. */
static uint64_t wait_new_seq(vx_pool *p, uint64_t seen) {
    uint64_t t0 = 0;
    for (unsigned i = 0;; i++) {
        uint64_t s = atomic_load(&p->state) >> SEQ_SHIFT;
        if (s != seen || atomic_load_explicit(&p->stop, memory_order_relaxed)) return s;
        VX_PAUSE();
        if ((i & 255) == 0) {
            uint64_t t = now_us();
            if (i == 0) t0 = t;
            else if (t - t0 >= (uint64_t)p->spin_us) break;
        }
    }
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1);
    uint64_t s;
    while ((s = atomic_load(&p->state) >> SEQ_SHIFT) == seen && !atomic_load(&p->stop))
        pthread_cond_wait(&p->wake, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mu);
    return s;
}

static vox_status setup_worker(worker *w) {
#if defined(__linux__)
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        if (rc != 0) {
            snprintf(w->error, sizeof w->error, "thread pool: cannot pin worker %d to CPU %d: %s", w->index,
                     w->cpu, strerror(rc));
            return VOX_ERR_INVALID_ARGUMENT;
        }
    }
    if (w->pool->nice != 0) {
        /* On Linux a nice value belongs to a thread (the TID), so this leaves the caller alone. */
        pid_t tid = (pid_t)syscall(SYS_gettid);
        errno = 0;
        int cur = getpriority(PRIO_PROCESS, (id_t)tid);
        if (cur == -1 && errno != 0) cur = 0;
        int want = cur + w->pool->nice;
        want = want < -20 ? -20 : want > 19 ? 19 : want;
        if (setpriority(PRIO_PROCESS, (id_t)tid, want) != 0) {
            snprintf(w->error, sizeof w->error, "thread pool: cannot set nice %d on worker %d: %s", want,
                     w->index, strerror(errno));
            return VOX_ERR_INVALID_ARGUMENT;
        }
    }
#else
    if (w->cpu >= 0 || w->pool->nice != 0) {
        snprintf(w->error, sizeof w->error, "thread pool: CPU affinity and nice need Linux");
        return VOX_ERR_UNSUPPORTED;
    }
#endif
    return VOX_OK;
}

static void *worker_main(void *arg) {
    worker *w = arg;
    vx_pool *p = w->pool;
    vx_fp_fast(); /* for the life of the thread */
    w->status = setup_worker(w);
    pthread_mutex_lock(&p->mu);
    p->n_started++;
    pthread_cond_broadcast(&p->started);
    pthread_mutex_unlock(&p->mu);
    if (w->status != VOX_OK) return NULL;

    uint64_t seen = atomic_load(&p->state) >> SEQ_SHIFT;
    for (;;) {
        seen = wait_new_seq(p, seen);
        if (atomic_load(&p->stop)) return NULL;
        uint64_t s = atomic_load(&p->state);
        while ((s >> SEQ_SHIFT) == seen && !(s & CLOSED_BIT)) {
            if (atomic_compare_exchange_weak(&p->state, &s, s + 1)) {
                run_chunks(p, atomic_fetch_add_explicit(&p->next_slot, 1, memory_order_relaxed));
                atomic_fetch_sub(&p->state, 1);
                break;
            }
        }
    }
}

/* "0-3,6" -> cpus[]; returns the count, or -1 (message in err) on a malformed list. */
static int parse_cpu_list(const char *s, int *cpus, int cap, char *err, size_t errlen) {
    int n = 0;
    const char *q = s;
    while (*q) {
        char *end;
        errno = 0;
        long a = strtol(q, &end, 10), b;
        if (end == q || errno || a < 0 || a >= CPU_SETSIZE) goto bad;
        q = end;
        b = a;
        if (*q == '-') {
            q++;
            b = strtol(q, &end, 10);
            if (end == q || errno || b < a || b >= CPU_SETSIZE) goto bad;
            q = end;
        }
        for (long c = a; c <= b; c++) {
            if (n == cap) goto bad;
            cpus[n++] = (int)c;
        }
        if (*q == ',') {
            q++;
            if (!*q) goto bad;
        } else if (*q) {
            goto bad;
        }
    }
    return n;
bad:
    snprintf(err, errlen, "thread pool: invalid CPU affinity list \"%s\" (expected e.g. \"0-3,6\", CPUs < %d)", s,
             CPU_SETSIZE);
    return -1;
}

static int default_threads(void) {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int c = CPU_COUNT(&set);
        if (c > 0) return c;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

static void stop_and_join(vx_pool *p) {
    atomic_store(&p->stop, 1);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_workers; i++) pthread_join(p->threads[i], NULL);
    p->n_workers = 0;
}

static void destroy(vx_pool *p) {
    pthread_cond_destroy(&p->started);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->seg);
    free(p->threads);
    free(p->workers);
    free(p);
}

vox_status vx_pool_create(const vx_pool_opts *opts, vx_pool **out) {
    if (!out) return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "vx_pool_create: out is NULL");
    *out = NULL;
    vx_pool_opts o = {0};
    if (opts) o = *opts;
    int n = o.n_threads > 0 ? o.n_threads : default_threads();
    if (n > MAX_THREADS)
        return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "thread pool: %d threads (at most %d)", n, MAX_THREADS);

    int n_cpus = 0;
    char err[256];
    int *cpu_list = NULL;
    if (o.cpu_affinity && *o.cpu_affinity) {
        cpu_list = malloc(sizeof(int) * CPU_SETSIZE);
        if (!cpu_list) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
        n_cpus = parse_cpu_list(o.cpu_affinity, cpu_list, CPU_SETSIZE, err, sizeof err);
        if (n_cpus < 0) {
            free(cpu_list);
            return vox_set_error(VOX_ERR_INVALID_ARGUMENT, "%s", err);
        }
    }

    vx_pool *p = calloc(1, sizeof *p);
    if (!p) {
        free(cpu_list);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
    }
    p->n_threads = n;
    p->spin_us = o.spin_us > 0 ? o.spin_us : 0;
    p->nice = o.nice;
    atomic_init(&p->state, 0);
    atomic_init(&p->busy, 0);
    atomic_init(&p->stop, 0);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->next_slot, 0);
    p->seg = aligned_alloc(64, sizeof(seg_t) * (size_t)n);
    if (!p->seg) {
        free(p);
        free(cpu_list);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
    }
    for (int i = 0; i < n; i++) atomic_init(&p->seg[i].fb, 0);
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->seg);
        free(p);
        free(cpu_list);
        return vox_set_error(VOX_ERR_INTERNAL, "thread pool: cannot create a mutex");
    }
    if (pthread_cond_init(&p->wake, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p->seg);
        free(p);
        free(cpu_list);
        return vox_set_error(VOX_ERR_INTERNAL, "thread pool: cannot create a condition variable");
    }
    if (pthread_cond_init(&p->started, NULL) != 0) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->mu);
        free(p->seg);
        free(p);
        free(cpu_list);
        return vox_set_error(VOX_ERR_INTERNAL, "thread pool: cannot create a condition variable");
    }
    int nw = n - 1;
    if (nw > 0) {
        p->workers = calloc((size_t)nw, sizeof *p->workers);
        p->threads = calloc((size_t)nw, sizeof *p->threads);
        if (!p->workers || !p->threads) {
            destroy(p);
            free(cpu_list);
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
        }
    }
    /* Thread i (0 = the caller, which the pool never pins: it belongs to the application) is meant
     * for the i-th listed CPU; a shorter list wraps around. */
    for (int i = 0; i < nw; i++) {
        worker *w = &p->workers[i];
        w->pool = p;
        w->index = i + 1;
        w->cpu = n_cpus > 0 ? cpu_list[(i + 1) % n_cpus] : -1;
    }
    free(cpu_list);

    vox_status st = VOX_OK;
    for (int i = 0; i < nw; i++) {
        int rc = pthread_create(&p->threads[i], NULL, worker_main, &p->workers[i]);
        if (rc != 0) {
            st = vox_set_error(VOX_ERR_INTERNAL, "thread pool: cannot start thread %d of %d: %s", i + 1, n,
                               strerror(rc));
            break;
        }
        p->n_workers++;
    }
    /* Wait for every started worker to report its affinity/nice setup. */
    pthread_mutex_lock(&p->mu);
    while (p->n_started < p->n_workers) pthread_cond_wait(&p->started, &p->mu);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; st == VOX_OK && i < p->n_workers; i++)
        if (p->workers[i].status != VOX_OK) st = vox_set_error(p->workers[i].status, "%s", p->workers[i].error);
    if (st != VOX_OK) {
        stop_and_join(p);
        destroy(p);
        return st;
    }
    *out = p;
    return VOX_OK;
}

void vx_pool_free(vx_pool *pool) {
    if (!pool) return;
    stop_and_join(pool);
    destroy(pool);
}

int32_t vx_pool_size(const vx_pool *pool) { return pool ? pool->n_threads : 1; }

void vx_pool_for(vx_pool *pool, int64_t n, int64_t grain, vx_range_fn fn, void *ctx) {
    vx_pool_for_chunks(pool, n, grain, 4, fn, ctx);
}

void vx_pool_for_chunks(vx_pool *pool, int64_t n, int64_t grain, int per_thread, vx_range_fn fn, void *ctx) {
    if (n <= 0) return;
    if (per_thread < 1) per_thread = 1;
    if (grain < 1) grain = 1;
    uint32_t fp = vx_fp_fast();
    int64_t n_grains = (n + grain - 1) / grain;
    if (!pool || pool->n_threads <= 1 || n_grains <= 1 || atomic_exchange(&pool->busy, 1)) {
        fn(ctx, 0, n);
        vx_fp_restore(fp);
        return;
    }
    /* A few chunks per thread: stealing evens out threads that were descheduled or started late,
     * while chunks stay large enough to stream weight rows efficiently. */
    int64_t target = (int64_t)pool->n_threads * per_thread;
    int64_t per = (n_grains + target - 1) / target;
    pool->fn = fn;
    pool->ctx = ctx;
    pool->n = n;
    pool->chunk = per * grain;
    pool->n_chunks = (n_grains + per - 1) / per;
    int ns = pool->n_threads < pool->n_chunks ? pool->n_threads : (int)pool->n_chunks;
    pool->n_seg = ns;
    for (int i = 0; i < ns; i++) {
        uint64_t f = (uint64_t)(pool->n_chunks * i / ns), b = (uint64_t)(pool->n_chunks * (i + 1) / ns);
        atomic_store_explicit(&pool->seg[i].fb, f | b << 32, memory_order_relaxed);
    }
    atomic_store_explicit(&pool->next_slot, 1, memory_order_relaxed);

    uint64_t seq = ((atomic_load(&pool->state) >> SEQ_SHIFT) + 1) & ((UINT64_C(1) << 31) - 1);
    atomic_store(&pool->state, seq << SEQ_SHIFT); /* open, no one inside; publishes the job fields */
    if (atomic_load(&pool->sleepers) > 0) {
        pthread_mutex_lock(&pool->mu);
        pthread_cond_broadcast(&pool->wake);
        pthread_mutex_unlock(&pool->mu);
    }
    run_chunks(pool, 0);
    atomic_fetch_or(&pool->state, CLOSED_BIT);
    /* Wait for the workers still inside; yield now and then in case one was descheduled (more
     * threads than free CPUs), so it can finish instead of us burning its time slice. */
    for (unsigned i = 1; (atomic_load(&pool->state) & ACTIVE_MASK) != 0; i++) {
        VX_PAUSE();
        if ((i & 1023) == 0) sched_yield();
    }
    atomic_store(&pool->busy, 0);
    vx_fp_restore(fp);
}
