/* Full (bidirectional) multi-head attention (nn.h), as a DiT computes it over a whole sequence.
 *
 * Per (sequence, head) the keys are gathered once into K^T [d][n] and the values into a contiguous
 * V [n][d]; then each block of QB queries is two products and a softmax between them:
 *   S = Q_blk K^T (scores, [QB][n]),  S = softmax(scale S) by rows,  O = S V
 * Both products are vx_matmul_nn (y = x W with W already [k][m]): its register tiles broadcast an x
 * value and multiply whole vectors of W's row, so the scores come out 16 keys to a vector and the
 * output 16 channels to a vector, near the FMA peak. (The earlier form, two vx_linear calls on K
 * [n][d] and V^T [d][n], had to transpose weight panels for every block of 64 queries: it ran at a
 * third of that rate.) The tasks (sequence, head, query block) are independent and write disjoint
 * outputs; vx_matmul_nn's values never depend on how many rows it is given, so the result is the same
 * for any blocking and any thread count. The score block of one task (QB x n floats) stays in the
 * core's cache. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "nn.h"

#define QB 64

typedef struct att_job {
    int64_t batch, n, heads, d, ldq, ldk, ldv, ldo, nqb;
    const float *q, *k, *v;
    float *kt, *vc, *out;   /* kt: [batch][heads][d][n], vc: [batch][heads][n][d] */
    float scale;
    atomic_int failed;
} att_job;

static void pack_kv(void *ctx, int64_t p0, int64_t p1) {
    att_job *j = ctx;
    const int64_t n = j->n, d = j->d;
    for (int64_t p = p0; p < p1; p++) {   /* p = b * heads + h */
        int64_t b = p / j->heads, h = p % j->heads;
        float *kt = j->kt + p * n * d, *vc = j->vc + p * n * d;
        for (int64_t r = 0; r < n; r++) {
            memcpy(vc + r * d, j->v + (b * n + r) * j->ldv + h * d, (size_t)d * sizeof *vc);
            const float *kr = j->k + (b * n + r) * j->ldk + h * d;
            for (int64_t c = 0; c < d; c++) kt[c * n + r] = kr[c];
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
        vx_matmul_nn_f32(NULL, j->kt + p * n * d, d, n, qb, m, s);
        for (int64_t i = 0; i < m * n; i++) s[i] *= j->scale;
        vx_softmax_rows(s, m, n);
        vx_matmul_nn_f32(NULL, j->vc + p * n * d, n, d, s, m, ob);
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
    j.kt = malloc(per * sizeof *j.kt);
    j.vc = malloc(per * sizeof *j.vc);
    if (!j.kt || !j.vc) {
        free(j.kt), free(j.vc);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (attention over %lld frames)", (long long)n);
    }
    uint32_t fp = vx_fp_fast();
    vx_pool_for(pool, batch * heads, 1, pack_kv, &j);
    vx_pool_for_chunks(pool, batch * heads * j.nqb, 1, 8, att_tasks, &j);
    vx_fp_restore(fp);
    free(j.kt), free(j.vc);
    return atomic_load(&j.failed) ? vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (attention)") : VOX_OK;
}
