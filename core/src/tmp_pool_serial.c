/* TEMPORARY (removed when the kernels branch lands): a serial stand-in for the thread pool and CPU
 * detection, so the engine builds before the real core/src/cpu/ arrives. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kernels.h"
#include "pool.h"

struct vx_pool {
    int32_t n;
};

vox_status vx_pool_create(const vx_pool_opts *opts, vx_pool **out) {
    vx_pool *p = calloc(1, sizeof *p);
    if (!p) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    p->n = 1;
    (void)opts;
    *out = p;
    return VOX_OK;
}
void vx_pool_free(vx_pool *pool) { free(pool); }
int32_t vx_pool_size(const vx_pool *pool) { return pool ? pool->n : 1; }
void vx_pool_for(vx_pool *pool, int64_t n, int64_t grain, vx_range_fn fn, void *ctx) {
    (void)pool, (void)grain;
    if (n > 0) fn(ctx, 0, n);
}
uint32_t vx_fp_fast(void) { return 0; }
void vx_fp_restore(uint32_t state) { (void)state; }
const vx_cpu_info *vx_cpu(void) {
    static vx_cpu_info info = {.path = VX_PATH_SCALAR, .name = "scalar"};
    return &info;
}
