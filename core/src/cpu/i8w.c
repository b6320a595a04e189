/* Packing convolution weights for the int8 dot-product kernels, the scalar model of their arithmetic
 * that the tests hold them to, and the entry points (the kernels: conv_i8.h, instantiated per path by
 * conv_i8_avx2.c, conv_i8_avx2_vnni.c, conv_i8_avx512.c).
 *
 * Packed layout (every path reads the same one): groups of 64 output channels; per group and tap, for
 * each quad u of input channels (4u .. 4u + 3), 64 x 4 bytes (channel r of the group: its 4 codes), so
 * one 64-byte line is the codes of 16 channels for one quad. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../error.h"
#include "cpu/dispatch.h"

#define IW_NR 64

/* round half to even, as vcvtps2dq under the default rounding mode */
static int32_t rne(float f) { return (int32_t)nearbyintf(f); }

vox_status vx_i8w_pack_conv(const vx_mat *w, int64_t c_in, int64_t k, vx_i8w *out) {
    memset(out, 0, sizeof *out);
    const vx_kernels *kt = vx_kernels_active();
    if (!kt->conv_i8)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "int8 convolutions: the CPU path %s has no int8 kernel", kt->name);
    if ((w->dtype != VOX_DTYPE_F32 && w->dtype != VOX_DTYPE_BF16) || w->rows % IW_NR || k < 1 || c_in < 1 ||
        c_in * k != w->cols)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "int8 packing: %lldx%lld weight, %lld taps (needs f32/bf16, rows %% %d == 0)",
                             (long long)w->rows, (long long)w->cols, (long long)k, IW_NR);
    const int64_t rows = w->rows, quads = (c_in + 3) / 4;
    int8_t *d = aligned_alloc(64, (size_t)(rows * k * quads * 4));
    float *scale = malloc((size_t)rows * sizeof *scale), *wsum = malloc((size_t)(rows * k) * sizeof *wsum);
    float *row = malloc((size_t)w->cols * sizeof *row);
    if (!d || !scale || !wsum || !row) {
        free(d), free(scale), free(wsum), free(row);
        return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memset(d, 0, (size_t)(rows * k * quads * 4));
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < w->cols; i++) {
            if (w->dtype == VOX_DTYPE_F32) {
                row[i] = ((const float *)w->data)[r * w->cols + i];
            } else {
                uint32_t u = (uint32_t)((const uint16_t *)w->data)[r * w->cols + i] << 16;
                memcpy(&row[i], &u, 4);
            }
        }
        float mx = 0.0f;
        for (int64_t i = 0; i < w->cols; i++) mx = fmaxf(mx, fabsf(row[i]));
        /* an all-zero channel (the int8 ONNX has 94) stays zero: scale 1, codes 0 */
        const float s = mx > 0.0f ? mx / 127.0f : 1.0f, inv = 1.0f / s;
        scale[r] = s;
        const int64_t g = r / IW_NR, lane = r % IW_NR;
        for (int64_t j = 0; j < k; j++) {
            int32_t sum = 0;
            for (int64_t c = 0; c < c_in; c++) {
                int32_t q = rne(row[c * k + j] * inv); /* torch order: [c_out][c_in][k] */
                q = q > 127 ? 127 : q < -127 ? -127 : q;
                sum += q;
                d[(((g * k + j) * quads + c / 4) * IW_NR + lane) * 4 + c % 4] = (int8_t)q;
            }
            wsum[j * rows + r] = (float)sum;
        }
    }
    free(row);
    out->rows = rows, out->c_in = c_in, out->taps = k, out->quads = quads;
    out->data = d, out->scale = scale, out->wsum = wsum;
    return VOX_OK;
}

void vx_i8w_free(vx_i8w *w) {
    free(w->data), free(w->scale), free(w->wsum);
    memset(w, 0, sizeof *w);
}

void vx_i8_quantize_row(const float *x, int64_t c, uint8_t *q, float *scale, float *zero) {
    float lo = x[0], hi = x[0];
    for (int64_t i = 1; i < c; i++) lo = fminf(lo, x[i]), hi = fmaxf(hi, x[i]);
    const float range = hi - lo;
    const float inv = range > 0.0f ? 255.0f / range : 0.0f;
    for (int64_t i = 0; i < c; i++) {
        int32_t v = rne((x[i] - lo) * inv);
        q[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    *scale = range > 0.0f ? range / 255.0f : 0.0f;
    *zero = lo;
}

/* The scalar statement of the fused convolution's Snake factor (conv_i8_avx512.c, iw_sin_sq): the same
 * operations lane by lane, so the same bits. */
static float sin_sq_model(float x) {
    if (x != x || fabsf(x) > 4096.0f) {
        float s = sinf(x);
        return s * s;
    }
    const float q = nearbyintf(x * 0.636619772367581343f);
    float r = fmaf(-q, 1.57079637050628662109375f, x);
    r = fmaf(-q, -4.37113900018624283e-8f, r);
    const float u = r * r;
    float p = 2.0f / 14175.0f;
    p = fmaf(p, u, -1.0f / 315.0f);
    p = fmaf(p, u, 2.0f / 45.0f);
    p = fmaf(p, u, -1.0f / 3.0f);
    p = fmaf(p, u, 1.0f);
    const float s2 = p * u;
    return ((int32_t)q & 1) ? 1.0f - s2 : s2;
}

void vx_i8_map_model(const float *x, int64_t t, int64_t c, const vx_i8_pre *pre, float *y) {
    for (int64_t r = 0; r < t; r++)
        for (int64_t i = 0; i < c; i++) {
            float v = x[r * c + i] * pre->mul[i] + pre->add[i];
            if (pre->alpha) v = v + pre->inv_alpha[i] * sin_sq_model(v * pre->alpha[i]);
            y[r * c + i] = v;
        }
}

void vx_conv1d_i8w_model(const vx_i8w *w, const float *bias, const float *x, int64_t n_out, int64_t dil, float *y) {
    const int64_t c = w->c_in, k = w->taps, rows = w->rows, n_in = n_out + dil * (k - 1), q4 = w->quads * 4;
    uint8_t *q = calloc((size_t)(n_in * q4), 1);
    float *s = malloc((size_t)n_in * sizeof *s), *z = malloc((size_t)n_in * sizeof *z);
    for (int64_t t = 0; t < n_in && q && s && z; t++) vx_i8_quantize_row(x + t * c, c, q + t * q4, &s[t], &z[t]);
    for (int64_t t = 0; t < n_out && q && s && z; t++)
        for (int64_t r = 0; r < rows; r++) {
            const int64_t g = r / IW_NR, lane = r % IW_NR;
            float f = 0.0f;
            for (int64_t j = 0; j < k; j++) {
                const uint8_t *xq = q + (t + j * dil) * q4;
                int32_t isum = 0;
                for (int64_t i = 0; i < q4; i++)
                    isum += (int32_t)xq[i] * w->data[(((g * k + j) * w->quads + i / 4) * IW_NR + lane) * 4 + i % 4];
                f = fmaf(s[t + j * dil], (float)isum, f);
                f = fmaf(z[t + j * dil], w->wsum[j * rows + r], f);
            }
            y[t * rows + r] = bias ? fmaf(f, w->scale[r], bias[r]) : f * w->scale[r];
        }
    free(q), free(s), free(z);
}

vox_status vx_conv1d_i8w(vx_pool *pool, const vx_i8w *w, const float *bias, const float *x, int64_t n_out, int64_t dil,
                         float *y) {
    const vx_i8_conv a = {.x = x, .t_in = n_out + dil * (w->taps - 1), .dil = dil, .y = y};
    return vx_conv1d_i8w_ex(pool, w, bias, &a);
}

size_t vx_conv1d_i8w_work_size(const vx_i8w *w, int64_t t_in, int64_t pad, int64_t dil, int moments) {
    const vx_kernels *kt = vx_kernels_active();
    return kt->conv_i8_work ? kt->conv_i8_work(w, t_in, pad, dil, moments) : 0;
}

vox_status vx_conv1d_i8w_ex(vx_pool *pool, const vx_i8w *w, const float *bias, const vx_i8_conv *a) {
    const vx_kernels *kt = vx_kernels_active();
    if (!w->data || !kt->conv_i8)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "int8 convolutions: %s", w->data ? "the CPU path has no int8 kernel"
                                                                                   : "the weight is not packed");
    if (w->c_in > VX_I8_MAX_CIN)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "int8 convolution: %lld input channels (at most %d)",
                             (long long)w->c_in, VX_I8_MAX_CIN);
    return kt->conv_i8(pool, w, bias, a);
}
