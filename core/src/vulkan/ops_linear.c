/* Weight upload and the linear layers on the GPU. */

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ops.h"
#include "shaders.h"

/* Bytes of `rows` rows of m's values and of its scales. */
static uint64_t value_bytes(vox_dtype dt, int64_t rows, int64_t cols) {
    uint64_t n = (uint64_t)rows * (uint64_t)cols;
    switch (dt) {
    case VOX_DTYPE_F32: return 4 * n;
    case VOX_DTYPE_F16:
    case VOX_DTYPE_BF16: return 2 * n;
    case VOX_DTYPE_Q8: return n;
    default: return n / 2;
    }
}
static int quantized(vox_dtype dt) { return dt == VOX_DTYPE_Q8 || dt == VOX_DTYPE_Q4; }
static uint64_t scale_bytes(vox_dtype dt, int64_t rows, int64_t cols) {
    return quantized(dt) ? (uint64_t)rows * (uint64_t)(cols / 32) * 4 : 0;
}
static uint64_t round16(uint64_t n) { return (n + 15) & ~(uint64_t)15; }

uint64_t vx_gmat_bytes(const vx_mat *m) {
    return round16(value_bytes(m->dtype, m->rows, m->cols)) + round16(scale_bytes(m->dtype, m->rows, m->cols));
}

void vx_gmat_free(vx_gpu *g, vx_gmat *m) {
    for (int i = 0; i < m->n_parts; i++) {
        vx_gpu_release(g, &m->parts[i].w);
        vx_gpu_release(g, &m->parts[i].s);
    }
    vx_gpu_release(g, &m->bias);
    free(m->parts);
    memset(m, 0, sizeof *m);
}

/* n bf16 values as float16 (in place is fine: 2 bytes each) */
static void bf16_to_f16(const uint16_t *src, uint16_t *dst, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        uint32_t u = (uint32_t)src[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        dst[i] = vx_f32_to_f16(f);
    }
}

/* Copies rows [r0, r0 + rows) of the stack (values, then scales) to dst / dst_s. */
static void stack_rows(const vx_mat *const *m, int n, int64_t r0, int64_t rows, void *dst, void *dst_s) {
    vox_dtype dt = m[0]->dtype;
    int64_t cols = m[0]->cols, base = 0;
    for (int i = 0; i < n && rows > 0; base += m[i]->rows, i++) {
        if (r0 >= base + m[i]->rows) continue;
        int64_t a = r0 - base, k = m[i]->rows - a < rows ? m[i]->rows - a : rows;
        memcpy(dst, (const char *)m[i]->data + value_bytes(dt, a, cols), value_bytes(dt, k, cols));
        dst = (char *)dst + value_bytes(dt, k, cols);
        if (dst_s) {
            memcpy(dst_s, (const char *)m[i]->scales + scale_bytes(dt, a, cols), scale_bytes(dt, k, cols));
            dst_s = (char *)dst_s + scale_bytes(dt, k, cols);
        }
        r0 += k;
        rows -= k;
    }
}

static vox_status upload_rows(vx_gpu *g, const vx_mat *const *src, int n_src, int to_f16, vx_gmat *out);

vox_status vx_gmat_upload(vx_gpu *g, const vx_mat *m, vx_gmat *out) {
    const vx_mat *one[1] = {m};
    return upload_rows(g, one, 1, 0, out);
}

static vox_status upload_stack(vx_gpu *g, const vx_mat *const *m, const float *const *bias, int n, int to_f16,
                               vx_gmat *out);

vox_status vx_gmat_upload_stack(vx_gpu *g, const vx_mat *const *m, const float *const *bias, int n, vx_gmat *out) {
    return upload_stack(g, m, bias, n, 0, out);
}

vox_status vx_gmat_upload_f16(vx_gpu *g, const vx_mat *m, vx_gmat *out) {
    const vx_mat *one[1] = {m};
    return upload_rows(g, one, 1, 1, out);
}

vox_status vx_gmat_upload_stack_f16(vx_gpu *g, const vx_mat *const *m, const float *const *bias, int n, vx_gmat *out) {
    return upload_stack(g, m, bias, n, 1, out);
}

static vox_status upload_stack(vx_gpu *g, const vx_mat *const *m, const float *const *bias, int n, int to_f16,
                               vx_gmat *out) {
    memset(out, 0, sizeof *out);
    if (n < 1 || n > 3) return vox_set_error(VOX_ERR_INTERNAL, "vx_gmat_upload_stack: %d matrices", n);
    for (int i = 1; i < n; i++)
        if (m[i]->dtype != m[0]->dtype || m[i]->cols != m[0]->cols)
            return vox_set_error(VOX_ERR_INTERNAL, "vx_gmat_upload_stack: matrices of different dtype or columns");
    vox_status st = upload_rows(g, m, n, to_f16, out);
    if (st != VOX_OK) return st;
    out->n_segs = n;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        out->seg_rows[i] = m[i]->rows;
        total += m[i]->rows;
        if (bias && bias[i]) out->has_bias = 1;
    }
    if (out->has_bias) {
        float *b = calloc((size_t)total, sizeof *b);
        if (!b) st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
        for (int i = 0, r = 0; st == VOX_OK && i < n; r += (int)m[i]->rows, i++)
            if (bias[i]) memcpy(b + r, bias[i], (size_t)m[i]->rows * sizeof *b);
        if (st == VOX_OK && (st = vx_gpu_alloc(g, (uint64_t)total * 4, 0, &out->bias)) == VOX_OK)
            st = vx_gpu_upload(g, &out->bias, 0, b, (uint64_t)total * 4);
        free(b);
    }
    if (st != VOX_OK) vx_gmat_free(g, out);
    return st;
}

/* Whether the cooperative-matrix GEMM may take these weights: f16 always; bf16 when no value reaches
 * 65536 in magnitude (the next bf16 after 65280, f16's largest bf16), else it would be inf in float16. */
static int coopmat_ok(vx_gpu *g, const vx_mat *const *src, int n_src) {
    if (!vx_gpu_coopmat(g)) return 0;
    if (src[0]->dtype == VOX_DTYPE_F16) return 1;
    if (src[0]->dtype != VOX_DTYPE_BF16) return 0;
    for (int i = 0; i < n_src; i++) {
        const uint16_t *v = src[i]->data;
        for (int64_t e = 0, n = src[i]->rows * src[i]->cols; e < n; e++)
            if ((v[e] & 0x7fff) >= 0x4780) return 0;
    }
    return 1;
}

static vox_status upload_rows(vx_gpu *g, const vx_mat *const *src, int n_src, int to_f16, vx_gmat *out) {
    const vx_mat *m = src[0];
    memset(out, 0, sizeof *out);
    /* bf16 as float16 where float16 holds every value (coopmat_ok's test, without the device) */
    to_f16 = to_f16 && m->dtype == VOX_DTYPE_BF16;
    for (int i = 0; i < n_src && to_f16; i++) {
        const uint16_t *v = src[i]->data;
        for (int64_t e = 0, n = src[i]->rows * src[i]->cols; e < n && to_f16; e++)
            if ((v[e] & 0x7fff) >= 0x4780) to_f16 = 0;
    }
    if (m->dtype != VOX_DTYPE_F32 && m->dtype != VOX_DTYPE_F16 && m->dtype != VOX_DTYPE_BF16 && !quantized(m->dtype))
        return vox_set_error(VOX_ERR_UNSUPPORTED, "GPU weights: dtype %d is not supported", (int)m->dtype);
    if (quantized(m->dtype) && m->cols % 32)
        return vox_set_error(VOX_ERR_FORMAT, "GPU weights: q8/q4 need cols %% 32 == 0 (cols %lld)", (long long)m->cols);
    /* Rows per part: as many as fit in one binding (values, and scales, each <= the range; rows of
     * 16-bit values in pairs so every part starts on a word). */
    uint64_t range = vx_gpu_max_range(g) & ~(uint64_t)15;
    uint64_t row_bytes = value_bytes(m->dtype, 1, m->cols) ? value_bytes(m->dtype, 1, m->cols) : 1;
    int64_t per = (int64_t)(range / row_bytes);
    if (m->dtype == VOX_DTYPE_F16 || m->dtype == VOX_DTYPE_BF16 || m->dtype == VOX_DTYPE_Q4) per &= ~(int64_t)1;
    if (per < 1)
        return vox_set_error(VOX_ERR_UNSUPPORTED, "GPU weights: a row of %lld columns exceeds the device's storage "
                             "buffer range (%llu bytes)", (long long)m->cols, (unsigned long long)range);
    int64_t rows = 0;
    for (int i = 0; i < n_src; i++) rows += src[i]->rows > 0 ? src[i]->rows : 0;
    int n_parts = rows ? (int)((rows + per - 1) / per) : 1;
    out->parts = calloc((size_t)n_parts, sizeof *out->parts);
    if (!out->parts) return vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
    out->dtype = to_f16 ? VOX_DTYPE_F16 : m->dtype;
    out->rows = rows;
    out->cols = m->cols;
    out->n_segs = 1;
    out->seg_rows[0] = rows;
    vox_status st = VOX_OK;
    for (int i = 0; i < n_parts && st == VOX_OK; i++) {
        vx_gmat_part *p = &out->parts[i];
        p->row0 = (int64_t)i * per;
        p->rows = rows - p->row0 < per ? rows - p->row0 : per;
        out->n_parts = i + 1;
        uint64_t vb = value_bytes(m->dtype, p->rows, m->cols), sb = scale_bytes(m->dtype, p->rows, m->cols);
        if ((st = vx_gpu_alloc(g, vb, 0, &p->w)) != VOX_OK) break;
        if (quantized(m->dtype) && (st = vx_gpu_alloc(g, sb, 0, &p->s)) != VOX_OK) break;
        if (n_src == 1 && !to_f16) {   /* straight from the mapping */
            uint64_t vo = value_bytes(m->dtype, p->row0, m->cols), so = scale_bytes(m->dtype, p->row0, m->cols);
            if (vb) st = vx_gpu_upload(g, &p->w, 0, (const char *)m->data + vo, vb);
            if (st == VOX_OK && sb) st = vx_gpu_upload(g, &p->s, 0, (const char *)m->scales + so, sb);
        } else {            /* a stack, or converted: the part's rows gathered from its matrices */
            char *tmp = malloc((size_t)(vb + sb) + 1);
            if (!tmp) {
                st = vox_set_error(VOX_ERR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            stack_rows(src, n_src, p->row0, p->rows, tmp, sb ? tmp + vb : NULL);
            if (to_f16) bf16_to_f16((const uint16_t *)tmp, (uint16_t *)tmp, vb / 2);
            if (vb) st = vx_gpu_upload(g, &p->w, 0, tmp, vb);
            if (st == VOX_OK && sb) st = vx_gpu_upload(g, &p->s, 0, tmp + vb, sb);
            free(tmp);
        }
    }
    if (st == VOX_OK) out->coopmat = to_f16 ? vx_gpu_coopmat(g) : coopmat_ok(g, src, n_src);
    if (st != VOX_OK) vx_gmat_free(g, out);
    return st;
}

vx_gbind vx_gop_whole(const vx_gpu *g, vx_gbind t, uint32_t *base) {
    uint64_t size = t.b->size, lim = vx_gpu_max_range(g);
    *base = (uint32_t)(t.offset / 4);
    return (vx_gbind){t.b, 0, size < lim ? size : lim};
}

void vx_gop_grid(uint64_t items, uint32_t *gx, uint32_t *gy) {
    uint64_t groups = (items + 63) / 64;
    if (!groups) groups = 1;
    uint64_t x = groups < 65535 ? groups : 65535;
    *gx = (uint32_t)x;
    *gy = (uint32_t)((groups + x - 1) / x);
}

void vx_gop_row_grid(uint64_t rows, uint32_t *gx, uint32_t *gy) {
    uint64_t x = rows < 65535 ? rows : 65535;
    *gx = (uint32_t)x;
    *gy = x ? (uint32_t)((rows + x - 1) / x) : 0;
}

/* quantize_q8.comp, or with up (not NULL) quantize_q8_silu.comp */
static vox_status quantize(vx_gpu *g, vx_gbind x, const vx_gbind *up, int64_t n, int64_t cols, vx_gbind xq,
                           vx_gbind xd, const char *label) {
    uint64_t blocks = (uint64_t)n * (uint64_t)(cols / 32);
    struct { uint32_t blocks, x_base, u_base; } push = {(uint32_t)blocks, 0, 0};
    uint32_t qb, db;
    vx_gbind b[4] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, xq, &qb), vx_gop_whole(g, xd, &db)};
    b[1].offset = xq.offset;   /* the codes and scales are written from their start: bind them there */
    b[1].size = blocks * 32;
    b[2].offset = xd.offset;
    b[2].size = blocks * 4;
    if (up) b[3] = vx_gop_whole(g, *up, &push.u_base);
    uint32_t gx, gy;
    vx_gop_grid(blocks, &gx, &gy);
    return vx_gpu_dispatch(g, up ? VX_SH_QUANTIZE_Q8_SILU : VX_SH_QUANTIZE_Q8, b, up ? 4 : 3, &push,
                           up ? sizeof push : 2 * sizeof(uint32_t), gx, gy, 1, label);
}

vox_status vx_gop_quantize(vx_gpu *g, vx_gbind x, int64_t n, int64_t cols, vx_gbind xq, vx_gbind xd, const char *label) {
    return quantize(g, x, NULL, n, cols, xq, xd, label);
}

vox_status vx_gop_quantize_silu(vx_gpu *g, vx_gbind gate, vx_gbind up, int64_t n, int64_t cols, vx_gbind xq, vx_gbind xd,
                                const char *label) {
    return quantize(g, gate, &up, n, cols, xq, xd, label);
}

static int float_dtype(vox_dtype dt) { return dt == VOX_DTYPE_F32 || dt == VOX_DTYPE_F16 || dt == VOX_DTYPE_BF16; }

int vx_gop_linear_pro_ok(const vx_gpu *g, const vx_gmat *w, int64_t n) {
    return float_dtype(w->dtype) && n >= 1 && n <= vx_gpu_gemv_max_rows(g);
}

/* The GEMV shader of a float dtype: [scalar, 16-byte loads][no prologue, RMSNorm, SiLU-gate] */
static const int gemv_float_shaders[3][2][3] = {
    {{VX_SH_GEMV_F32, VX_SH_GEMV_F32_NORM, VX_SH_GEMV_F32_SILU}, {VX_SH_GEMV_F32V, VX_SH_GEMV_F32V_NORM, VX_SH_GEMV_F32V_SILU}},
    {{VX_SH_GEMV_F16, VX_SH_GEMV_F16_NORM, VX_SH_GEMV_F16_SILU}, {VX_SH_GEMV_F16V, VX_SH_GEMV_F16V_NORM, VX_SH_GEMV_F16V_SILU}},
    {{VX_SH_GEMV_BF16, VX_SH_GEMV_BF16_NORM, VX_SH_GEMV_BF16_SILU},
     {VX_SH_GEMV_BF16V, VX_SH_GEMV_BF16V_NORM, VX_SH_GEMV_BF16V_SILU}},
};

/* The cooperative-matrix GEMM fills its tiles with 16-byte loads (flags bit 2: gemm_cm.glsl) where x and
 * the weight rows line up on them; VOX_VK_CM_LOADS=scalar keeps the one-value loads, which put the same
 * values in the tiles (the same bits: for measuring the difference). */
static int cm_wide_loads(const vx_gmat *w, uint32_t x_base) {
    const char *e = getenv("VOX_VK_CM_LOADS");
    return !(e && !strcmp(e, "scalar")) && x_base % 4 == 0 && w->cols % 8 == 0;
}

/* One GEMV over the parts of w, output rows routed to up to 3 outputs (segments); pro: a prologue
 * (float weights on the GEMV only: vx_gop_linear_pro_ok). */
static vox_status gemv(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, vx_gbind x, vx_gbind xq, vx_gbind xd,
                       int64_t n, const vx_gbind *ys, const int64_t *strides, int accumulate, const vx_gpro *pro,
                       int epi, const vx_gbind *gate, int xh, const char *label) {
    int q = quantized(w->dtype);
    int pk = pro ? (int)pro->kind : VX_PRO_NONE;
    if (pk != VX_PRO_NONE && !vx_gop_linear_pro_ok(g, w, n))
        return vox_set_error(VOX_ERR_INTERNAL, "GEMV prologue: %lld x rows of dtype %d", (long long)n, (int)w->dtype);
    /* more than vx_gpu_gemv_max_rows x rows (prefill): the tiled GEMM, which reads each weight once per 64 x
     * rows; else the GEMV, with 16-byte loads when every row and x start on 16 bytes */
    const int tiled = n > vx_gpu_gemv_max_rows(g), cm = tiled && w->coopmat;
    uint32_t tm = VX_GEMM_TM, tn = VX_GEMM_TN;
    uint32_t xb0;
    vx_gbind xw = vx_gop_whole(g, x, &xb0);
    int shader = w->dtype == VOX_DTYPE_Q8 ? VX_SH_GEMV_Q8 : VX_SH_GEMV_Q4;
    if (!q) {
        int di = w->dtype == VOX_DTYPE_F32 ? 0 : w->dtype == VOX_DTYPE_F16 ? 1 : 2;
        int vec = xb0 % 4 == 0 && w->cols % (w->dtype == VOX_DTYPE_F32 ? 4 : 8) == 0;
        shader = gemv_float_shaders[di][vec][pk];
    }
    if (tiled)
        shader = w->dtype == VOX_DTYPE_F32 ? VX_SH_GEMM_F32 : w->dtype == VOX_DTYPE_F16 ? VX_SH_GEMM_F16
               : w->dtype == VOX_DTYPE_BF16 ? VX_SH_GEMM_BF16 : w->dtype == VOX_DTYPE_Q8 ? VX_SH_GEMM_Q8 : VX_SH_GEMM_Q4;
    if (cm) {   /* on cooperative matrices */
        shader = w->dtype == VOX_DTYPE_F16 ? VX_SH_GEMM_CM_F16 : VX_SH_GEMM_CM_BF16;
        tm = VX_GEMM_CM_TM;
        tn = VX_GEMM_CM_TN;
        if (w->cm_wide) {
            shader = w->dtype == VOX_DTYPE_F16 ? VX_SH_GEMM_CM_WIDE_F16 : VX_SH_GEMM_CM_WIDE_BF16;
            tn = VX_GEMM_CM_WIDE_TN;
        }
        /* x as float16: one product, 128 x 128 tiles (at least 128 invocations: subgroups of 32 or more) */
        if (w->cm_half && xb0 % 4 == 0 && w->cols % 8 == 0 && vx_gpu_info(g)->subgroup_size >= 32) {
            shader = w->dtype == VOX_DTYPE_F16 ? VX_SH_GEMM_CMH_F16 : VX_SH_GEMM_CMH_BF16;
            tm = VX_GEMM_CMH_TM;
            tn = VX_GEMM_CMH_TN;
        }
        /* workgroup-scope matrices (VK_NV_cooperative_matrix2), float16 weights: x keeps hi + lo */
        if (vx_gop_linear_epi_ok(g, w, n)) {
            shader = VX_SH_GEMM_CM2;
            vx_gpu_cm2_tile(g, &tm, &tn);
        }
    }
    struct {
        uint32_t rows, cols, x_stride, y_offset, flags, x_base, b_base, seg1, seg2, y_base[3], y_stride[3], n;
        float eps;
        uint32_t a_base;
    } push;
    memset(&push, 0, sizeof push);
    push.cols = (uint32_t)w->cols;
    push.x_stride = (uint32_t)(q ? w->cols / 32 : w->cols);
    push.flags = (bias != NULL ? 1u : 0u) | (accumulate ? 2u : 0u) | (cm && cm_wide_loads(w, xb0) ? 4u : 0u);
    if ((epi || xh) && shader != VX_SH_GEMM_CM2)
        return vox_set_error(VOX_ERR_INTERNAL, "linear epilogue %d / float16 x %d: the matrix does not run on gemm_cm2",
                             epi, xh);
    /* gemm_cm2: a tile whose rows lie in one output goes out by a tensor store (flags bit 6), not element
     * by element (VOX_VK_CM2_STORE=element keeps the latter: the same bits, ~10% slower on an H100) */
    const char *cs = getenv("VOX_VK_CM2_STORE");
    if (shader == VX_SH_GEMM_CM2 && !(cs && !strcmp(cs, "element"))) push.flags |= 64u;
    if (xh) {   /* x as float16: its first element and row stride in float16 elements */
        push.flags |= 32u;
        xb0 *= 2;
    }
    if (epi == VX_EPI_GELU_TANH) push.flags |= 8u;
    if (epi == VX_EPI_GATED_ADD) push.flags |= 16u | 2u;
    push.x_base = q ? 0 : xb0;   /* quantized: xq / xd are bound from their start */
    push.n = (uint32_t)n;
    const uint32_t gz = (uint32_t)((n + 3) / 4);   /* x rows in groups of NX = 4 (gemv_common.glsl) */
    int ns = w->n_segs > 0 ? w->n_segs : 1;
    push.seg1 = ns > 1 ? (uint32_t)w->seg_rows[0] : UINT32_MAX;
    push.seg2 = ns > 2 ? (uint32_t)(w->seg_rows[0] + w->seg_rows[1]) : UINT32_MAX;
    vx_gbind yb[3];
    for (int k = 0; k < 3; k++) {
        int s = k < ns ? k : 0;
        yb[k] = vx_gop_whole(g, ys[s], &push.y_base[k]);
        push.y_stride[k] = (uint32_t)strides[s];
    }
    vx_gbind bb = bias ? vx_gop_whole(g, *bias, &push.b_base) : yb[0];   /* unused, but bound */
    vx_gbind ab = pk != VX_PRO_NONE ? vx_gop_whole(g, pro->aux, &push.a_base)
                : epi == VX_EPI_GATED_ADD ? vx_gop_whole(g, *gate, &push.a_base) : xw;
    if (pk == VX_PRO_RMS_NORM) push.eps = pro->eps;
    for (int i = 0; i < w->n_parts; i++) {
        const vx_gmat_part *p = &w->parts[i];
        if (!p->rows) continue;
        push.rows = (uint32_t)p->rows;
        push.y_offset = (uint32_t)p->row0;
        uint32_t gx, gy, z = gz;
        vx_gop_row_grid((uint64_t)(p->rows + VX_GEMV_RPW - 1) / VX_GEMV_RPW, &gx, &gy);   /* GEMV: RPW rows a workgroup */
        if (tiled) {   /* tiles of tn weight rows by tm x rows */
            gx = (uint32_t)((p->rows + tn - 1) / tn);
            gy = (uint32_t)((n + tm - 1) / tm);
            z = 1;
        }
        vox_status st;
        if (q) {
            vx_gbind b[8] = {{&p->w, 0, 0}, {&p->s, 0, 0}, xq, xd, yb[0], yb[1], yb[2], bb};
            b[2].size = (uint64_t)n * (uint64_t)w->cols;   /* the quantized x from its start */
            b[3].size = (uint64_t)n * (uint64_t)(w->cols / 32) * 4;
            st = vx_gpu_dispatch(g, shader, b, 8, &push, sizeof push, gx, gy, z, label);
        } else {
            vx_gbind b[7] = {{&p->w, 0, 0}, xw, yb[0], yb[1], yb[2], bb, ab};
            st = vx_gpu_dispatch(g, shader, b, pk != VX_PRO_NONE || shader == VX_SH_GEMM_CM2 ? 7 : 6, &push, sizeof push,
                                 gx, gy, z, label);
        }
        if (st != VOX_OK) return st;
    }
    return VOX_OK;
}

vox_status vx_gop_linear(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, vx_gbind x, vx_gbind xq, vx_gbind xd,
                         int64_t n, vx_gbind y, int64_t y_stride, int accumulate, const char *label) {
    int64_t stride = y_stride > 0 ? y_stride : w->rows;
    vx_gmat one = *w;   /* a stack applied as one matrix: every row to y */
    one.n_segs = 1;
    return gemv(g, &one, bias, x, xq, xd, n, &y, &stride, accumulate, NULL, 0, NULL, 0, label);
}

vox_status vx_gop_linear_pro(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, const vx_gpro *pro, vx_gbind x,
                             int64_t n, vx_gbind y, int64_t y_stride, int accumulate, const char *label) {
    int64_t stride = y_stride > 0 ? y_stride : w->rows;
    vx_gmat one = *w;
    one.n_segs = 1;
    return gemv(g, &one, bias, x, x, x, n, &y, &stride, accumulate, pro, 0, NULL, 0, label);
}

vox_status vx_gop_linear_stack(vx_gpu *g, const vx_gmat *w, vx_gbind x, vx_gbind xq, vx_gbind xd, int64_t n,
                               const vx_gbind *ys, const char *label) {
    vx_gbind b = {&w->bias, 0, 0};
    return gemv(g, w, w->has_bias ? &b : NULL, x, xq, xd, n, ys, w->seg_rows, 0, NULL, 0, NULL, 0, label);
}

vox_status vx_gop_linear_stack_pro(vx_gpu *g, const vx_gmat *w, const vx_gpro *pro, vx_gbind x, int64_t n,
                                   const vx_gbind *ys, const char *label) {
    vx_gbind b = {&w->bias, 0, 0};
    return gemv(g, w, w->has_bias ? &b : NULL, x, x, x, n, ys, w->seg_rows, 0, pro, 0, NULL, 0, label);
}

int vx_gop_linear_epi_ok(const vx_gpu *g, const vx_gmat *w, int64_t n) {
    return w->cm2 && w->coopmat && w->dtype == VOX_DTYPE_F16 && vx_gpu_coopmat2(g) && n > vx_gpu_gemv_max_rows(g);
}

vox_status vx_gop_linear_epi(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, vx_gbind x, int64_t n, vx_gbind y,
                             int64_t y_stride, int epi, const vx_gbind *gate, const char *label) {
    if (!vx_gop_linear_epi_ok(g, w, n) || (epi != VX_EPI_GELU_TANH && epi != VX_EPI_GATED_ADD) ||
        (epi == VX_EPI_GATED_ADD && !gate))
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_linear_epi: epilogue %d does not run here", epi);
    int64_t stride = y_stride > 0 ? y_stride : w->rows;
    vx_gmat one = *w;
    one.n_segs = 1;
    return gemv(g, &one, bias, x, x, x, n, &y, &stride, 0, NULL, epi, gate, 0, label);
}

vox_status vx_gop_linear_h(vx_gpu *g, const vx_gmat *w, const vx_gbind *bias, vx_gbind x16, int64_t n, vx_gbind y,
                           int64_t y_stride, int epi, const vx_gbind *gate, const char *label) {
    if (!vx_gop_linear_epi_ok(g, w, n) || epi < 0 || epi > VX_EPI_GATED_ADD || (epi == VX_EPI_GATED_ADD && !gate))
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_linear_h: float16 x (epilogue %d) does not run here", epi);
    int64_t stride = y_stride > 0 ? y_stride : w->rows;
    vx_gmat one = *w;
    one.n_segs = 1;
    return gemv(g, &one, bias, x16, x16, x16, n, &y, &stride, 0, NULL, epi, gate, 1, label);
}
