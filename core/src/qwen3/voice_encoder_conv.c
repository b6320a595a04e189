/* Convolutions on time-major signals for voice creation (ECAPA-TDNN, Mimi encoder), and numpy's
 * pairwise summation (the reference's reductions). */
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "../tmod.h"
#include "voice_encoder.h"

vox_status q3_bind_conv(const q3_model *m, const char *name, int64_t c_out, int64_t c_in, int64_t k, vx_mat *out) {
    vox_tensor_info t;
    const char *path = vox_model_path(m->file);
    if (vox_model_find_tensor(m->file, name, &t) != VOX_OK)
        return vox_set_error(VOX_ERR_FORMAT, "%s: the model has no tensor %s", path, name);
    if (t.ndim != 3 || (c_out >= 0 && t.shape[0] != c_out) || (c_in >= 0 && t.shape[1] != c_in) ||
        (k >= 0 && t.shape[2] != k) || t.shape[0] < 1 || t.shape[1] < 1 || t.shape[2] < 1)
        return vox_set_error(VOX_ERR_FORMAT,
                             "%s: tensor %s has shape [%lld, %lld, %lld] (ndim %d), expected a Conv1d weight "
                             "[%lld, %lld, %lld]",
                             path, name, (long long)t.shape[0], (long long)t.shape[1], (long long)t.shape[2], t.ndim,
                             (long long)c_out, (long long)c_in, (long long)k);
    if (t.dtype != VOX_DTYPE_F32 && t.dtype != VOX_DTYPE_F16 && t.dtype != VOX_DTYPE_BF16 &&
        !((t.dtype == VOX_DTYPE_Q8 || t.dtype == VOX_DTYPE_Q4) && (t.shape[1] * t.shape[2]) % 32 == 0))
        return vox_set_error(VOX_ERR_FORMAT, "%s: tensor %s has dtype %s, not a float weight", path, name,
                             vox_dtype_name(t.dtype));
    out->dtype = t.dtype;
    out->rows = t.shape[0];
    out->cols = t.shape[1] * t.shape[2];
    out->data = t.data;
    out->scales = NULL;
    if (t.dtype == VOX_DTYPE_Q8) out->scales = (const float *)((const char *)t.data + out->rows * out->cols);
    else if (t.dtype == VOX_DTYPE_Q4) out->scales = (const float *)((const char *)t.data + out->rows * out->cols / 2);
    return VOX_OK;
}

/* im2col scratch is bounded to about this many floats (the rows of one block). */
#define IM2COL_FLOATS (1 << 21)

typedef struct im2col_job {
    const float *x;
    int64_t t_in, c_in, k, dilation, stride, cols;
    float *out;
} im2col_job;

static void im2col_range(void *ctx, int64_t b, int64_t e) {
    const im2col_job *j = ctx;
    vx_im2col(j->x + b * j->stride * j->c_in, j->t_in - b * j->stride, j->c_in, j->k, j->dilation, j->stride, e - b,
              j->out + b * j->cols);
}

typedef struct map_job {
    void (*fn)(const float *, int64_t, float *);
    const float *x;
    float *y;
} map_job;

static void map_range(void *ctx, int64_t b, int64_t e) {
    const map_job *j = ctx;
    j->fn(j->x + b, e - b, j->y + b);
}

void q3_par_map(vx_pool *pool, void (*fn)(const float *, int64_t, float *), const float *x, int64_t n, float *y) {
    map_job j = {fn, x, y};
    if (n < (1 << 15)) fn(x, n, y);
    else vx_pool_for(pool, n, 1 << 13, map_range, &j);
}

vox_status q3_conv1d(vx_pool *pool, const vx_mat *w, const float *bias, int64_t k, int64_t dilation, int64_t stride,
                     const float *x, int64_t t_in, float *y, int64_t t_out) {
    if (t_out <= 0) return VOX_OK;
    int64_t c_in = w->cols / k;
    if (k == 1 && stride == 1) {  /* a 1x1 convolution is a linear layer on the rows */
        vx_linear(pool, w, bias, x, t_out, y);
        return VOX_OK;
    }
    if (w->dtype == VOX_DTYPE_F32) { /* the columns read in place: the bits of im2col + vx_linear */
        vx_conv1d_f32(pool, w, c_in, k, dilation, stride, bias, x, t_out, y);
        return VOX_OK;
    }
    int64_t block = IM2COL_FLOATS / w->cols;
    if (block < 64) block = 64;
    if (block > t_out) block = t_out;
    float *cols = malloc((size_t)block * (size_t)w->cols * sizeof *cols);
    if (!cols) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory (convolution of %lld frames)", (long long)t_out);
    for (int64_t t0 = 0; t0 < t_out; t0 += block) {
        int64_t n = t_out - t0 < block ? t_out - t0 : block;
        const float *xs = x + t0 * stride * c_in;
        im2col_job j = {xs, t_in - t0 * stride, c_in, k, dilation, stride, w->cols, cols};
        if (n * w->cols < (1 << 15)) im2col_range(&j, 0, n);
        else vx_pool_for(pool, n, 16, im2col_range, &j);
        vx_linear(pool, w, bias, cols, n, y + t0 * w->rows);
    }
    free(cols);
    return VOX_OK;
}

/* numpy's @TYPE@_pairwise_sum for float32 (numpy/_core/src/umath/loops_utils.h.src): blocks of up to
 * 128 terms summed with 8 accumulators, larger ranges split in halves (multiples of 8). A reduction
 * along a contiguous axis starts from the identity 0 and adds this. */
float q3_np_sum(const float *x, int64_t n, int64_t stride) {
    if (n < 8) {
        float res = 0.f;
        for (int64_t i = 0; i < n; i++) res += x[i * stride];
        return res;
    }
    if (n <= 128) {
        float r[8];
        for (int j = 0; j < 8; j++) r[j] = x[j * stride];
        int64_t i;
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += x[(i + j) * stride];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += x[i * stride];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return q3_np_sum(x, n2, stride) + q3_np_sum(x + n2 * stride, n - n2, stride);
}
