/* Internal: the thread pool of an engine (one per engine, never shared between engines).
 *
 * Determinism contract: vx_pool_for splits [0, n) into ranges that are multiples of `grain`, and a
 * range's result must never depend on which thread runs it or on how [0, n) was split. Kernels keep
 * it by computing every output element entirely inside one range with a fixed order of operations
 * (no cross-thread reductions), so results are bit-identical for any thread count.
 *
 * Compute threads run with flush-to-zero and denormals-are-zero set (random and real weights produce
 * denormals that would slow x86 down by 20x or more); vx_pool_for sets them on the calling thread for
 * the duration of the call as well. */
#ifndef VOX_POOL_H
#define VOX_POOL_H

#include <stdint.h>

#include "vox.h"

typedef struct vx_pool vx_pool;

typedef struct vx_pool_opts {
    int32_t n_threads;        /* total threads including the caller; <= 0: the CPUs this process may use */
    const char *cpu_affinity; /* "0-3,6" pins worker thread i (1..n_threads-1) to the i-th listed CPU
                                 (0-based, wrapping around a shorter list); thread 0, the caller, is never
                                 pinned by the pool (it belongs to the application). NULL or "": no pinning */
    int32_t nice;             /* added to the workers' nice value (Linux: per thread, setpriority on the
                                 TID); 0: unchanged. Lowering it needs privilege: creation then fails */
    int32_t spin_us;          /* how long idle workers spin before sleeping (microseconds; <= 0: sleep
                                 at once). Spinning workers pick up the next job in well under a microsecond */
} vx_pool_opts;

/* VOX_ERR_INVALID_ARGUMENT (a malformed affinity list, a CPU the process may not use, a nice value the
 * process may not set, more than 1024 threads), VOX_ERR_OUT_OF_MEMORY, VOX_ERR_INTERNAL (thread
 * creation failed); the message is in vox_last_error(). On failure nothing is leaked and *out is NULL. */

typedef void (*vx_range_fn)(void *ctx, int64_t begin, int64_t end);

vox_status vx_pool_create(const vx_pool_opts *opts, vx_pool **out);
void vx_pool_free(vx_pool *pool);
int32_t vx_pool_size(const vx_pool *pool);

/* Run fn(ctx, begin, end) over disjoint ranges covering [0, n) and return when all are done. Range
 * boundaries are multiples of grain (>= 1), except the end of the last. The calling thread works
 * too. If another thread is already running a job on this pool, the caller runs its whole job itself
 * (sessions of one engine can then proceed in parallel without waiting for each other). pool may be
 * NULL: everything runs on the caller. */
void vx_pool_for(vx_pool *pool, int64_t n, int64_t grain, vx_range_fn fn, void *ctx);
/* vx_pool_for with per_thread chunks per thread (vx_pool_for: 4). More, smaller chunks for jobs of
 * many equal, independent tasks (the int8 convolution's row blocks): a thread that finishes first
 * then waits for at most one small chunk of the other's. */
void vx_pool_for_chunks(vx_pool *pool, int64_t n, int64_t grain, int per_thread, vx_range_fn fn, void *ctx);

/* Set FTZ/DAZ on the current thread; returns the previous control state for vx_fp_restore. */
uint32_t vx_fp_fast(void);
void vx_fp_restore(uint32_t state);

#endif
