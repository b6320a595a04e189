/* Full (bidirectional) multi-head attention (nn.h), as a DiT computes it over a whole sequence.
 *
 * f32 (vx_nn_attention): per (sequence, head) the keys are gathered once into K^T [d][n] and the values
 * into a contiguous V [n][d]; then each block of QB queries is two products and a softmax between them:
 *   S = Q_blk K^T (scores, [QB][n]),  S = softmax(scale S) by rows,  O = S V
 * Both products are vx_matmul_nn (y = x W with W already [k][m]): its register tiles broadcast an x
 * value and multiply whole vectors of W's row, so the scores come out 16 keys to a vector and the
 * output 16 channels to a vector, near the FMA peak. (The earlier form, two vx_linear calls on K
 * [n][d] and V^T [d][n], had to transpose weight panels for every block of 64 queries.)
 *
 * bf16 dot products (vx_nn_attention_bf16): the same steps with K [n][d] and V^T [d][n] packed as
 * vx_bf16w matrices (keys, and the value channels of V^T, padded with zero rows to a multiple of 64:
 * their scores are dropped before the softmax, their outputs after the product) and both products
 * through vx_linear_bf16w: on AVX512-BF16 the queries and the probabilities are rounded to bf16 as
 * well, twice the f32 rate (AMX tiles on the amx path). Between the products one pass, vx_exp_rows
 * (unnormalized exp(scale (s - max)) and its sum, read straight from the scores), and the division by
 * the sum on the d outputs after the second product instead of on the n probabilities: the scale, the
 * softmax's three passes and the division had cost as much as the two products. Where the kernel takes
 * rows already rounded (vx_bf16w_takes_rounded), the pass stores the probabilities as bf16 and the
 * product reads them as they are: the bits of rounding the floats in the product, one pass fewer.
 *
 * q8 scores (vx_nn_attention_q8): the keys quantized per 32-block as vx_linear_q8w quantizes its x and
 * packed as its weights, so the scores are vx_linear_q8w products of the queries (int8 codes, exact
 * integer block sums, twice the bf16 rate on AVX512-VNNI); the rest as with bf16 dot products.
 *
 * The tasks (sequence, head, query block) are independent and write disjoint outputs; the products'
 * values never depend on how many rows they are given, so the result is the same for any blocking and
 * any thread count. The score block of one task (QB x n floats) stays in the core's cache. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "nn.h"

#define QB 64

typedef struct att_job {
    int64_t batch, n, heads, d, ldq, ldk, ldv, ldo, nqb, npad, dpad;
    const float *q, *k, *v;
    float *kt, *vc, *out;   /* f32: kt [batch][heads][d][n], vc [batch][heads][n][d] */
    vx_bf16w *kw, *vw;      /* bf16: per (sequence, head) K [npad][d] and V^T [dpad][n], packed */
    vx_q8w *kq;             /* q8 scores: K [npad][d] quantized and packed (kw unused) */
    uint32_t *kbuf, *vbuf;  /* their words, all heads in one allocation each */
    int rounded;            /* the probabilities go to the second product as bf16 (vx_linear_bf16w_rounded) */
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

static void pack_kv_bf16(void *ctx, int64_t p0, int64_t p1) {
    att_job *j = ctx;
    const int64_t n = j->n, d = j->d;
    for (int64_t p = p0; p < p1; p++) { /* p = b * heads + h */
        int64_t b = p / j->heads, h = p % j->heads;
        if (j->kq)
            vx_q8w_pack_f32(j->k + b * n * j->ldk + h * d, j->ldk, n, d, j->npad,
                            (unsigned char *)j->kbuf + p * vx_q8w_bytes(j->npad, d), &j->kq[p]);
        else
            vx_bf16w_pack_f32(j->k + b * n * j->ldk + h * d, j->ldk, n, d, j->npad, 0, j->kbuf + p * j->npad * ((d + 1) / 2),
                              &j->kw[p]);
        vx_bf16w_pack_f32(j->v + b * n * j->ldv + h * d, j->ldv, d, n, j->dpad, 1, j->vbuf + p * j->dpad * ((n + 1) / 2), &j->vw[p]);
    }
}

static void att_tasks(void *ctx, int64_t t0, int64_t t1) {
    att_job *j = ctx;
    const int64_t n = j->n, d = j->d, sw = j->kw ? j->npad : n; /* a score row's stride */
    float *s = malloc((size_t)(QB * sw) * sizeof *s), *qb = malloc((size_t)(QB * d) * sizeof *qb), sums[QB];
    const int64_t ow = j->kw ? j->dpad : d; /* an output row's stride */
    float *ob = malloc((size_t)(QB * ow) * sizeof *ob), *pc = j->kw ? malloc((size_t)(QB * n) * sizeof *pc) : NULL;
    if (!s || !qb || !ob || (j->kw && !pc)) {
        atomic_store(&j->failed, 1);
        free(s), free(qb), free(ob), free(pc);
        return;
    }
    for (int64_t task = t0; task < t1; task++) {
        int64_t p = task / j->nqb, blk = task % j->nqb, b = p / j->heads, h = p % j->heads;
        int64_t r0 = blk * QB, m = n - r0 < QB ? n - r0 : QB;
        for (int64_t i = 0; i < m; i++) memcpy(qb + i * d, j->q + (b * n + r0 + i) * j->ldq + h * d, (size_t)d * sizeof *qb);
        if (j->kw) {
            /* scores against the padded keys, then each row's first n (scaled, softmax) packed together */
            if ((j->kq ? vx_linear_q8w(NULL, &j->kq[p], NULL, qb, m, s) : vx_linear_bf16w(NULL, &j->kw[p], NULL, qb, m, s)) !=
                VOX_OK) {
                atomic_store(&j->failed, 1);
                break;
            }
            vox_status st;
            if (j->rounded) { /* the probabilities stored as bf16 straight away (pc's memory as bf16 pairs) */
                uint16_t *pb = (uint16_t *)pc;
                const int64_t ldp = 2 * j->vw[p].pairs;
                vx_exp_rows_bf16(s, sw, m, n, j->scale, pb, ldp, sums);
                if (n & 1)
                    for (int64_t i = 0; i < m; i++) pb[i * ldp + n] = 0;
                st = vx_linear_bf16w_rounded(NULL, &j->vw[p], pb, m, ob);
            } else {
                vx_exp_rows(s, sw, m, n, j->scale, pc, sums);
                st = vx_linear_bf16w(NULL, &j->vw[p], NULL, pc, m, ob);
            }
            if (st != VOX_OK) {
                atomic_store(&j->failed, 1);
                break;
            }
            for (int64_t i = 0; i < m; i++) {
                const float inv = 1.0f / sums[i];
                for (int64_t c = 0; c < d; c++) ob[i * ow + c] *= inv;
            }
        } else {
            vx_matmul_nn_f32(NULL, j->kt + p * n * d, d, n, qb, m, s);
            for (int64_t i = 0; i < m * n; i++) s[i] *= j->scale;
            vx_softmax_rows(s, m, n);
            vx_matmul_nn_f32(NULL, j->vc + p * n * d, n, d, s, m, ob);
        }
        for (int64_t i = 0; i < m; i++) memcpy(j->out + (b * n + r0 + i) * j->ldo + h * d, ob + i * ow, (size_t)d * sizeof *ob);
    }
    free(s), free(qb), free(ob), free(pc);
}

enum { ATT_F32, ATT_BF16, ATT_Q8 };

static vox_status attention(vx_pool *pool, int mode, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                            int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale, float *out,
                            int64_t ldo) {
    if (batch <= 0 || n <= 0 || heads <= 0) return VOX_OK;
    const int64_t pairs = batch * heads;
    const size_t per = (size_t)(pairs * n * d);
    att_job j = {.batch = batch, .n = n, .heads = heads, .d = d, .ldq = ldq, .ldk = ldk, .ldv = ldv, .ldo = ldo,
                 .nqb = (n + QB - 1) / QB, .npad = (n + 63) / 64 * 64, .dpad = (d + 63) / 64 * 64, .q = q, .k = k, .v = v, .out = out,
                 .scale = scale};
    atomic_init(&j.failed, 0);
    const int bf16 = mode != ATT_F32;
    j.rounded = bf16 && vx_bf16w_takes_rounded();
    if (bf16) {
        j.kw = calloc((size_t)pairs, sizeof *j.kw);
        j.vw = calloc((size_t)pairs, sizeof *j.vw);
        /* one 64-byte aligned allocation, as the kernels load the packed words (every head's share is a
         * multiple of 64 rows' worth): ~11 MB for F5's 2 x 1335 frames */
        if (mode == ATT_Q8) j.kq = calloc((size_t)pairs, sizeof *j.kq);
        const size_t kwords = mode == ATT_Q8 ? (size_t)pairs * vx_q8w_bytes(j.npad, d) / 4 : (size_t)(pairs * j.npad * ((d + 1) / 2));
        const size_t vwords = (size_t)(pairs * j.dpad * ((n + 1) / 2));
        j.kbuf = aligned_alloc(64, (kwords + vwords) * sizeof *j.kbuf);
        j.vbuf = j.kbuf ? j.kbuf + kwords : NULL;
    } else {
        j.kt = malloc(per * sizeof *j.kt);
        j.vc = malloc(per * sizeof *j.vc);
    }
    vox_status st = VOX_OK;
    if (bf16 ? !j.kw || !j.vw || !j.kbuf || !j.vbuf || (mode == ATT_Q8 && !j.kq) : !j.kt || !j.vc) {
        st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (attention over %lld frames)", (long long)n);
    } else {
        uint32_t fp = vx_fp_fast();
        vx_pool_for(pool, pairs, 1, bf16 ? pack_kv_bf16 : pack_kv, &j);
        if (!atomic_load(&j.failed)) vx_pool_for_chunks(pool, pairs * j.nqb, 1, 8, att_tasks, &j);
        vx_fp_restore(fp);
        if (atomic_load(&j.failed)) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (attention)");
    }
    free(j.kw), free(j.vw), free(j.kq), free(j.kbuf), free(j.kt), free(j.vc);
    return st;
}

vox_status vx_nn_attention(vx_pool *pool, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                           int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale, float *out,
                           int64_t ldo) {
    return attention(pool, ATT_F32, batch, n, heads, d, q, ldq, k, ldk, v, ldv, scale, out, ldo);
}

/* The reduced forms: the values' product needs the path's bf16 kernel; q8 scores need 32-blocks. */
static vox_status reduced(vx_pool *pool, int mode, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                          int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale, float *out,
                          int64_t ldo) {
    const char *what = mode == ATT_Q8 ? "q8" : "bf16";
    if (!vx_cpu_dots().bf16)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "%s attention: the CPU path %s has no bf16 kernel", what, vx_cpu()->name);
    if (mode == ATT_Q8 && d % 32)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "q8 attention: heads of %lld (needs a multiple of 32)", (long long)d);
    return attention(pool, mode, batch, n, heads, d, q, ldq, k, ldk, v, ldv, scale, out, ldo);
}

vox_status vx_nn_attention_bf16(vx_pool *pool, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                                int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale,
                                float *out, int64_t ldo) {
    return reduced(pool, ATT_BF16, batch, n, heads, d, q, ldq, k, ldk, v, ldv, scale, out, ldo);
}

vox_status vx_nn_attention_q8(vx_pool *pool, int64_t batch, int64_t n, int64_t heads, int64_t d, const float *q,
                              int64_t ldq, const float *k, int64_t ldk, const float *v, int64_t ldv, float scale,
                              float *out, int64_t ldo) {
    return reduced(pool, ATT_Q8, batch, n, heads, d, q, ldq, k, ldk, v, ldv, scale, out, ldo);
}
