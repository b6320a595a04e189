/* Grouped Conv1d on time-major activations (nn.h): f32 weights through vx_conv1d_f32, which reads the
 * columns of im2col in place (each group's input channels gathered into a [t][c_in / groups] copy first),
 * other dtypes through im2col and vx_linear. Both give the bits of im2col + vx_linear (kernels.h); the
 * first without writing the [t][c_in / groups * k] columns (10 MB a group for F5's 31-tap position
 * convolution of a 1335-frame piece). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "nn.h"

typedef struct col_job {
    const float *xp;        /* zero-padded input [t_out + k - 1][c_in] */
    float *col;             /* [t_out][cg * k] */
    int64_t c_in, cg, k, c0;
} col_job;

/* col[t][ci * k + j] = xp[t + j][c0 + ci]: the (ci, j) order of a torch weight [c_out][cg][k]. */
static void col_rows(void *ctx, int64_t t0, int64_t t1) {
    const col_job *j = ctx;
    const int64_t w = j->cg * j->k;
    for (int64_t t = t0; t < t1; t++) {
        float *o = j->col + t * w;
        for (int64_t tap = 0; tap < j->k; tap++) {
            const float *src = j->xp + (t + tap) * j->c_in + j->c0;
            for (int64_t ci = 0; ci < j->cg; ci++) o[ci * j->k + tap] = src[ci];
        }
    }
}

vox_status vx_nn_conv1d(vx_pool *pool, const vx_mat *w, const float *bias, const float *x, int64_t t, int64_t c_in,
                        int64_t c_out, int64_t k, int64_t groups, int64_t pad_l, int64_t pad_r, float *y) {
    const int64_t tp = t + pad_l + pad_r, t_out = tp - (k - 1);
    if (groups < 1 || c_in % groups || c_out % groups || w->rows != c_out || w->cols != c_in / groups * k)
        return vox_set_error(VOX_ERR_INTERNAL, "conv1d: weight [%lld x %lld] does not fit %lld -> %lld channels, k %lld, "
                             "%lld groups", (long long)w->rows, (long long)w->cols, (long long)c_in, (long long)c_out,
                             (long long)k, (long long)groups);
    if (t_out <= 0) return VOX_OK;
    const int64_t cg = c_in / groups, og = c_out / groups;
    float *xp = calloc((size_t)(tp * c_in), sizeof *xp);
    const int f32 = w->dtype == VOX_DTYPE_F32;
    float *col = f32 ? NULL : malloc((size_t)(t_out * cg * k) * sizeof *col);
    float *yg = groups > 1 ? malloc((size_t)(t_out * og) * sizeof *yg) : NULL;
    if (!xp || (!f32 && !col) || (groups > 1 && !yg)) {
        free(xp), free(col), free(yg);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (conv1d over %lld frames)", (long long)t);
    }
    memcpy(xp + pad_l * c_in, x, (size_t)(t * c_in) * sizeof *xp);
    if (f32) {
        float *xg = groups > 1 ? malloc((size_t)(tp * cg) * sizeof *xg) : xp;
        if (!xg) {
            free(xp), free(col), free(yg);
            return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (conv1d over %lld frames)", (long long)t);
        }
        for (int64_t g = 0; g < groups; g++) {
            vx_mat wg = vx_mat_rows(w, g * og, og);
            if (groups == 1) {
                vx_conv1d_f32(pool, &wg, c_in, k, 1, 1, bias, xp, t_out, y);
                break;
            }
            for (int64_t r = 0; r < tp; r++) memcpy(xg + r * cg, xp + r * c_in + g * cg, (size_t)cg * sizeof *xg);
            vx_conv1d_f32(pool, &wg, cg, k, 1, 1, bias ? bias + g * og : NULL, xg, t_out, yg);
            for (int64_t i = 0; i < t_out; i++) memcpy(y + i * c_out + g * og, yg + i * og, (size_t)og * sizeof *y);
        }
        if (xg != xp) free(xg);
        free(xp), free(col), free(yg);
        return VOX_OK;
    }
    for (int64_t g = 0; g < groups; g++) {
        col_job cj = {xp, col, c_in, cg, k, g * cg};
        vx_pool_for(pool, t_out, 16, col_rows, &cj);
        vx_mat wg = vx_mat_rows(w, g * og, og);
        if (groups == 1) {
            vx_linear(pool, &wg, bias, col, t_out, y);
            break;
        }
        vx_linear(pool, &wg, bias ? bias + g * og : NULL, col, t_out, yg);
        for (int64_t i = 0; i < t_out; i++) memcpy(y + i * c_out + g * og, yg + i * og, (size_t)og * sizeof *y);
    }
    free(xp), free(col), free(yg);
    return VOX_OK;
}

vox_status vx_nn_conv1d_bf16w_pack(const vx_mat *w, int64_t c_in, int64_t k, int64_t groups, vx_nn_gconv_bf16 *out) {
    memset(out, 0, sizeof *out);
    if (groups < 1 || c_in % groups || w->rows % groups || w->cols != c_in / groups * k)
        return vox_set_error(VOX_ERR_INTERNAL, "conv1d bf16: weight [%lld x %lld] does not fit %lld channels, k %lld, %lld groups",
                             (long long)w->rows, (long long)w->cols, (long long)c_in, (long long)k, (long long)groups);
    if (w->dtype != VOX_DTYPE_F32 && w->dtype != VOX_DTYPE_BF16)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "conv1d bf16: f32 or bf16 weights only");
    const int64_t og = w->rows / groups, opad = (og + 63) / 64 * 64, cols = w->cols;
    const size_t es = w->dtype == VOX_DTYPE_F32 ? 4 : 2;
    out->g = calloc((size_t)groups, sizeof *out->g);
    unsigned char *pad = calloc((size_t)(opad * cols), es); /* a group's rows, then zero rows */
    if (!out->g || !pad) {
        free(out->g), free(pad);
        out->g = NULL;
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    out->groups = groups, out->og = og, out->k = k;
    vox_status st = VOX_OK;
    for (int64_t g = 0; g < groups && st == VOX_OK; g++) {
        memcpy(pad, (const unsigned char *)w->data + (size_t)(g * og * cols) * es, (size_t)(og * cols) * es);
        const vx_mat wg = {.dtype = w->dtype, .rows = opad, .cols = cols, .data = pad};
        st = vx_bf16w_pack_conv(&wg, c_in / groups, k, &out->g[g]);
    }
    free(pad);
    if (st != VOX_OK) vx_nn_conv1d_bf16w_free(out);
    return st;
}

void vx_nn_conv1d_bf16w_free(vx_nn_gconv_bf16 *w) {
    if (w->g)
        for (int64_t g = 0; g < w->groups; g++) vx_bf16w_free(&w->g[g]);
    free(w->g);
    memset(w, 0, sizeof *w);
}

/* Per group: its input channels gathered into a zero-padded [t + pad][cg] copy, the tap-major packed
 * product over it (vx_conv1d_bf16w), the group's og outputs scattered into y. */
vox_status vx_nn_conv1d_bf16w(vx_pool *pool, const vx_nn_gconv_bf16 *w, const float *bias, const float *x, int64_t t,
                              int64_t c_in, int64_t pad_l, int64_t pad_r, float *y) {
    const int64_t groups = w->groups, og = w->og, k = w->k, cg = c_in / groups, tp = t + pad_l + pad_r, t_out = tp - (k - 1);
    if (!w->g || c_in % groups || w->g[0].tap_pairs * 2 != cg)
        return vox_set_error(VOX_ERR_INTERNAL, "conv1d bf16: the packed weight does not fit %lld channels", (long long)c_in);
    if (t_out <= 0) return VOX_OK;
    const int64_t opad = w->g[0].rows, c_out = groups * og;
    float *xg = calloc((size_t)(tp * cg), sizeof *xg), *yg = malloc((size_t)(t_out * opad) * sizeof *yg);
    if (!xg || !yg) {
        free(xg), free(yg);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (conv1d over %lld frames)", (long long)t);
    }
    vox_status st = VOX_OK;
    for (int64_t g = 0; g < groups && st == VOX_OK; g++) {
        for (int64_t r = 0; r < t; r++) memcpy(xg + (pad_l + r) * cg, x + r * c_in + g * cg, (size_t)cg * sizeof *xg);
        st = vx_conv1d_bf16w(pool, &w->g[g], NULL, xg, t_out, 1, yg);
        for (int64_t i = 0; i < t_out && st == VOX_OK; i++) { /* + bias last, as the kernel adds it */
            float *yo = y + i * c_out + g * og;
            if (bias)
                for (int64_t o = 0; o < og; o++) yo[o] = yg[i * opad + o] + bias[g * og + o];
            else
                memcpy(yo, yg + i * opad, (size_t)og * sizeof *yo);
        }
    }
    free(xg), free(yg);
    return st;
}
