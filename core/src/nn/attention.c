/* Full (bidirectional) multi-head attention (nn.h), as a DiT computes it over a whole sequence.
 *
 * Per (sequence, head) the keys are gathered once into a contiguous [n][d] matrix and the values into
 * V^T [d][n]; then each block of QB queries is two vx_linear products and a softmax between them:
 *   S = Q_blk K^T (scores, [QB][n]),  S = softmax(scale S) by rows,  O = S V  (as S . (V^T)^T)
 * The tasks (sequence, head, query block) are independent and write disjoint outputs; vx_linear's
 * values never depend on how many rows it is given, so the result is the same for any blocking and
 * any thread count. The score block of one task (QB x n floats) stays in the core's cache. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "nn.h"

#define QB 64

typedef struct att_job {
    int64_t batch, n, heads, d, ldq, ldk, ldv, ldo, nqb;
    const float *q, *k, *v;
    float *kc, *vt, *out;   /* kc: [batch][heads][n][d], vt: [batch][heads][d][n] */
    float scale;
    atomic_int failed;
} att_job;

static void pack_kv(void *ctx, int64_t p0, int64_t p1) {
    att_job *j = ctx;
    const int64_t n = j->n, d = j->d;
    for (int64_t p = p0; p < p1; p++) {   /* p = b * heads + h */
        int64_t b = p / j->heads, h = p % j->heads;
        float *kc = j->kc + p * n * d, *vt = j->vt + p * n * d;
        for (int64_t r = 0; r < n; r++) {
            memcpy(kc + r * d, j->k + (b * n + r) * j->ldk + h * d, (size_t)d * sizeof *kc);
            const float *vr = j->v + (b * n + r) * j->ldv + h * d;
            for (int64_t c = 0; c < d; c++) vt[c * n + r] = vr[c];
        }
    }
}

static void att_tasks(void *ctx, int64_t t0, int64_t t1) {
    att_job *j = ctx;
    const int64_t n = j->n, d = j->d;
    float *s = malloc((size_t)(QB * n) * sizeof *s), *qb = malloc((size_t)(QB * d) * sizeof *qb);
    float *ob = malloc((size_t)(QB * d) * sizeof *ob);
    if (!s || !qb || !ob) {
        atomic_store(&j->failed, 1);
        free(s), free(qb), free(ob);
        return;
    }
    for (int64_t task = t0; task < t1; task++) {
        int64_t p = task / j->nqb, blk = task % j->nqb, b = p / j->heads, h = p % j->heads;
        int64_t r0 = blk * QB, m = n - r0 < QB ? n - r0 : QB;
        for (int64_t i = 0; i < m; i++) memcpy(qb + i * d, j->q + (b * n + r0 + i) * j->ldq + h * d, (size_t)d * sizeof *qb);
        vx_mat km = {.dtype = VOX_DTYPE_F32, .rows = n, .cols = d, .data = j->kc + p * n * d};
        vx_mat vm = {.dtype = VOX_DTYPE_F32, .rows = d, .cols = n, .data = j->vt + p * n * d};
        vx_linear(NULL, &km, NULL, qb, m, s);
        for (int64_t i = 0; i < m * n; i++) s[i] *= j->scale;
        vx_softmax_rows(s, m, n);
        vx_linear(NULL, &vm, NULL, s, m, ob);
        for (int64_t i = 0; i < m; i++) memcpy(j->out + (b * n + r0 + i) * j->ldo + h * d, ob + i * d, (size_t)d * sizeof *ob);
    }
    free(s), free(qb), free(ob);
}

vox_status vx_nn_attention(vx_pool *pool, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                           int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale, float *out,
                           int64_t ldo) {
    if (batch <= 0 || n <= 0 || heads <= 0) return VOX_OK;
    const size_t per = (size_t)(batch * heads * n * d);
    att_job j = {.batch = batch, .n = n, .heads = heads, .d = d, .ldq = ldq, .ldk = ldk, .ldv = ldv, .ldo = ldo,
                 .nqb = (n + QB - 1) / QB, .q = q, .k = k, .v = v, .out = out, .scale = scale};
    atomic_init(&j.failed, 0);
    j.kc = malloc(per * sizeof *j.kc);
    j.vt = malloc(per * sizeof *j.vt);
    if (!j.kc || !j.vt) {
        free(j.kc), free(j.vt);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (attention over %lld frames)", (long long)n);
    }
    uint32_t fp = vx_fp_fast();
    vx_pool_for(pool, batch * heads, 1, pack_kv, &j);
    vx_pool_for_chunks(pool, batch * heads * j.nqb, 1, 8, att_tasks, &j);
    vx_fp_restore(fp);
    free(j.kc), free(j.vt);
    return atomic_load(&j.failed) ? vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (attention)") : VOX_OK;
}
