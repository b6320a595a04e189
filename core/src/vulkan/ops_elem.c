/* Norms, rotary embedding, elementwise ops and attention on the GPU. */

#include "error.h"
#include "ops.h"
#include "shaders.h"

vox_status vx_gop_rms_norm(vx_gpu *g, vx_gbind x, const vx_gbind *w, int64_t rows, int64_t d, float eps, vx_gbind y,
                           const char *label) {
    struct { uint32_t rows, d, has_w, x_base, w_base, y_base; float eps; } push = {
        (uint32_t)rows, (uint32_t)d, w != NULL, 0, 0, 0, eps};
    vx_gbind b[3] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, w ? *w : x, &push.w_base),
                     vx_gop_whole(g, y, &push.y_base)};
    uint32_t gx, gy;
    vx_gop_row_grid((uint64_t)rows, &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_RMS_NORM, b, 3, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_rms_norm_q8(vx_gpu *g, vx_gbind x, const vx_gbind *w, int64_t rows, int64_t d, float eps, vx_gbind y,
                              vx_gbind xq, vx_gbind xd, const char *label) {
    if (d % 32) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_rms_norm_q8: d %% 32 != 0");
    struct { uint32_t rows, d, has_w, x_base, w_base, y_base; float eps; } push = {
        (uint32_t)rows, (uint32_t)d, w != NULL, 0, 0, 0, eps};
    vx_gbind b[5] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, w ? *w : x, &push.w_base),
                     vx_gop_whole(g, y, &push.y_base), xq, xd};
    b[3].size = (uint64_t)(rows * d);   /* the codes and scales from their start */
    b[4].size = (uint64_t)(rows * d / 32) * 4;
    uint32_t gx, gy;
    vx_gop_row_grid((uint64_t)rows, &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_RMS_NORM_Q8, b, 5, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_rope(vx_gpu *g, vx_gbind x, int64_t n, int64_t heads, int64_t d, vx_gbind cos, vx_gbind sin,
                       const char *label) {
    struct { uint32_t n, heads, d, x_base, cs_base; } push = {(uint32_t)n, (uint32_t)heads, (uint32_t)d, 0, 0};
    uint32_t sb;
    vx_gbind b[3] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, cos, &push.cs_base), vx_gop_whole(g, sin, &sb)};
    if (sb != push.cs_base) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_rope: cos and sin at different offsets");
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)(n * heads * (d / 2)), &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_ROPE, b, 3, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_norm_rope_qk(vx_gpu *g, vx_gbind q, vx_gbind wq, int64_t hq, vx_gbind k, vx_gbind wk, int64_t hk,
                               int64_t n, int64_t d, float eps, vx_gbind cos, vx_gbind sin, const char *label) {
    struct { uint32_t n, hq, hk, d, q_base, k_base, wq_base, wk_base, cs_base; float eps; } push = {
        (uint32_t)n, (uint32_t)hq, (uint32_t)hk, (uint32_t)d, 0, 0, 0, 0, 0, eps};
    uint32_t sb;
    vx_gbind b[6] = {vx_gop_whole(g, q, &push.q_base), vx_gop_whole(g, k, &push.k_base),
                     vx_gop_whole(g, wq, &push.wq_base), vx_gop_whole(g, wk, &push.wk_base),
                     vx_gop_whole(g, cos, &push.cs_base), vx_gop_whole(g, sin, &sb)};
    if (sb != push.cs_base) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_norm_rope: cos and sin at different offsets");
    uint32_t gx, gy;
    vx_gop_row_grid((uint64_t)(n * (hq + hk)), &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_NORM_ROPE, b, 6, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_norm_rope(vx_gpu *g, vx_gbind x, vx_gbind w, int64_t n, int64_t heads, int64_t d, float eps,
                            vx_gbind cos, vx_gbind sin, const char *label) {
    return vx_gop_norm_rope_qk(g, x, w, heads, x, w, 0, n, d, eps, cos, sin, label);   /* no k heads */
}

/* y = f(a, b) elementwise over n floats (silu_mul.comp, add.comp share the bindings and push constants) */
static vox_status binary(vx_gpu *g, int shader, vx_gbind a, vx_gbind bb, int64_t n, vx_gbind y, const char *label) {
    struct { uint32_t n, a_base, b_base, y_base; } push = {(uint32_t)n, 0, 0, 0};
    vx_gbind b[3] = {vx_gop_whole(g, a, &push.a_base), vx_gop_whole(g, bb, &push.b_base),
                     vx_gop_whole(g, y, &push.y_base)};
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)n, &gx, &gy);
    return vx_gpu_dispatch(g, shader, b, 3, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_silu_mul(vx_gpu *g, vx_gbind gate, vx_gbind up, int64_t n, vx_gbind y, const char *label) {
    return binary(g, VX_SH_SILU_MUL, gate, up, n, y, label);
}

vox_status vx_gop_add(vx_gpu *g, vx_gbind a, vx_gbind bb, int64_t n, vx_gbind y, const char *label) {
    return binary(g, VX_SH_ADD, a, bb, n, y, label);
}

/* attention.comp, or with nr (the new rows' norm + RoPE) attention_nr.comp */
typedef struct att_nr {
    vx_gbind kr, w, cos, sin;
    float eps;
} att_nr;

static vox_status attention(vx_gpu *g, vx_gbind q, int64_t nq, int64_t hq, vx_gbind k, vx_gbind v, int64_t nk,
                            int64_t hkv, int64_t d, float scale, int64_t window, vx_gbind out, const att_nr *nr,
                            const char *label) {
    if (nq > nk || hkv <= 0 || hq % hkv || nq > 65535 || hq > 65535 || d <= 0 || d > 256 ||
        (nr && (nq > VX_ATT_NR_MAX || d % 2)))
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_attention: bad shape (nq %lld nk %lld hq %lld hkv %lld d %lld)",
                             (long long)nq, (long long)nk, (long long)hq, (long long)hkv, (long long)d);
    struct {
        uint32_t nq, hq, nk, hkv, d;
        int32_t window;
        float scale;
        uint32_t q_base, k_base, v_base, o_base, kr_base, w_base, cs_base;
        float eps;
    } push = {(uint32_t)nq, (uint32_t)hq, (uint32_t)nk, (uint32_t)hkv, (uint32_t)d, (int32_t)window, scale,
              0, 0, 0, 0, 0, 0, 0, nr ? nr->eps : 0.0f};
    vx_gbind b[8] = {vx_gop_whole(g, q, &push.q_base), vx_gop_whole(g, k, &push.k_base),
                     vx_gop_whole(g, v, &push.v_base), vx_gop_whole(g, out, &push.o_base)};
    if (nr) {
        uint32_t sb;
        b[4] = vx_gop_whole(g, nr->kr, &push.kr_base);
        b[5] = vx_gop_whole(g, nr->w, &push.w_base);
        b[6] = vx_gop_whole(g, nr->cos, &push.cs_base);
        b[7] = vx_gop_whole(g, nr->sin, &sb);
        if (sb != push.cs_base) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_attention_nr: cos and sin at different offsets");
    }
    return vx_gpu_dispatch(g, nr ? VX_SH_ATTENTION_NR : VX_SH_ATTENTION, b, nr ? 8 : 4, &push, sizeof push,
                           (uint32_t)nq, (uint32_t)hq, 1, label);
}

vox_status vx_gop_attention(vx_gpu *g, vx_gbind q, int64_t nq, int64_t hq, vx_gbind k, vx_gbind v, int64_t nk,
                            int64_t hkv, int64_t d, float scale, int64_t window, vx_gbind out, const char *label) {
    return attention(g, q, nq, hq, k, v, nk, hkv, d, scale, window, out, NULL, label);
}

vox_status vx_gop_attention_nr(vx_gpu *g, vx_gbind q, int64_t nq, int64_t hq, vx_gbind k, vx_gbind v, int64_t nk,
                               int64_t hkv, int64_t d, float scale, int64_t window, vx_gbind out, vx_gbind kr,
                               vx_gbind w, float eps, vx_gbind cos, vx_gbind sin, const char *label) {
    att_nr nr = {kr, w, cos, sin, eps};
    return attention(g, q, nq, hq, k, v, nk, hkv, d, scale, window, out, &nr, label);
}

vox_status vx_gop_copy(vx_gpu *g, vx_gbind x, int64_t n, vx_gbind y, const char *label) {
    struct { uint32_t n, x_base, y_base; } push = {(uint32_t)n, 0, 0};
    vx_gbind b[2] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, y, &push.y_base)};
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)n, &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_COPY, b, 2, &push, sizeof push, gx, gy, 1, label);
}

/* sample.comp, or with a table (not NULL) sample_gather.comp */
static vox_status sample(vx_gpu *g, vx_gbind logits, int64_t v, const vx_gsampler *sp, vx_gbind ws, vx_gbind codes,
                         vx_gbind u, int slot, const vx_gmat *table, vx_gbind out, const char *label) {
    if (v < 1 || v > 8192) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_sample: %lld logits (at most 8192)", (long long)v);
    if (table && table->n_parts != 1)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_sample_gather: a table in %d parts", table->n_parts);
    struct {
        uint32_t v, do_sample, top_k, slot, l_base;
        float temperature, top_p;
        uint32_t w_base, c_base, u_base, cols, dtype, o_base, rows;
    } push = {(uint32_t)v, sp->do_sample != 0, (uint32_t)(sp->top_k > 0 ? sp->top_k : sp->top_k < 0 ? 1 : 0), (uint32_t)slot, 0,
              sp->temperature, sp->top_p, 0, 0, 0, 0, 0, 0, 0};
    vx_gbind b[7] = {vx_gop_whole(g, logits, &push.l_base), vx_gop_whole(g, ws, &push.w_base),
                     vx_gop_whole(g, codes, &push.c_base), vx_gop_whole(g, u, &push.u_base)};
    if (table) {
        const vx_gmat_part *pt = &table->parts[0];
        push.cols = (uint32_t)table->cols;
        push.dtype = (uint32_t)table->dtype;
        push.rows = (uint32_t)table->rows;
        b[4] = (vx_gbind){&pt->w, 0, 0};
        b[5] = (vx_gbind){pt->s.buf ? &pt->s : &pt->w, 0, 0};
        b[6] = vx_gop_whole(g, out, &push.o_base);
    }
    return vx_gpu_dispatch(g, table ? VX_SH_SAMPLE_GATHER : VX_SH_SAMPLE, b, table ? 7 : 4, &push, sizeof push, 1, 1, 1,
                           label);
}

vox_status vx_gop_sample(vx_gpu *g, vx_gbind logits, int64_t v, const vx_gsampler *sp, vx_gbind ws, vx_gbind codes,
                         vx_gbind u, int slot, const char *label) {
    return sample(g, logits, v, sp, ws, codes, u, slot, NULL, codes, label);
}

vox_status vx_gop_sample_gather(vx_gpu *g, vx_gbind logits, int64_t v, const vx_gsampler *sp, vx_gbind ws,
                                vx_gbind codes, vx_gbind u, int slot, const vx_gmat *w, vx_gbind out, const char *label) {
    return sample(g, logits, v, sp, ws, codes, u, slot, w, out, label);
}

vox_status vx_gop_gather(vx_gpu *g, const vx_gmat *w, vx_gbind codes, int slot, vx_gbind out, const char *label) {
    if (w->n_parts != 1) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_gather: a table in %d parts", w->n_parts);
    const vx_gmat_part *pt = &w->parts[0];
    struct { uint32_t cols, dtype, slot, o_base, rows, c_base; } push = {(uint32_t)w->cols, (uint32_t)w->dtype,
                                                                         (uint32_t)slot, 0, (uint32_t)w->rows, 0};
    vx_gbind b[4] = {{&pt->w, 0, 0}, {pt->s.buf ? &pt->s : &pt->w, 0, 0}, vx_gop_whole(g, codes, &push.c_base),
                     vx_gop_whole(g, out, &push.o_base)};
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)w->cols, &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_GATHER, b, 4, &push, sizeof push, gx, gy, 1, label);
}
