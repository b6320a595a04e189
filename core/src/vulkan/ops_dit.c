/* Ops of diffusion / flow-matching transformers and spectral vocoders on the GPU (ops_dit.h). */

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ops_dit.h"
#include "shaders.h"

vox_status vx_gop_adaln(vx_gpu *g, vx_gbind x, vx_gbind scale, vx_gbind shift, int64_t rows, int64_t d, float eps,
                        vx_gbind y, const char *label) {
    struct { uint32_t rows, d, x_base, scale_base, shift_base, y_base; float eps; } push = {
        (uint32_t)rows, (uint32_t)d, 0, 0, 0, 0, eps};
    vx_gbind b[3] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, scale, &push.scale_base),
                     vx_gop_whole(g, y, &push.y_base)};
    vx_gop_whole(g, shift, &push.shift_base);
    if (shift.b != scale.b) return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_adaln: scale and shift in different buffers");
    uint32_t gx, gy;
    vx_gop_row_grid((uint64_t)rows, &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_ADALN, b, 3, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_gated_add(vx_gpu *g, vx_gbind h, vx_gbind y, vx_gbind gate, int64_t rows, int64_t d,
                            const char *label) {
    struct { uint32_t n, d, h_base, y_base, g_base; } push = {(uint32_t)(rows * d), (uint32_t)d, 0, 0, 0};
    vx_gbind b[3] = {vx_gop_whole(g, h, &push.h_base), vx_gop_whole(g, y, &push.y_base),
                     vx_gop_whole(g, gate, &push.g_base)};
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)(rows * d), &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_GATED_ADD, b, 3, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_act(vx_gpu *g, int mode, vx_gbind x, int64_t n, vx_gbind y, const char *label) {
    struct { uint32_t n, mode, x_base, y_base; } push = {(uint32_t)n, (uint32_t)mode, 0, 0};
    vx_gbind b[2] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, y, &push.y_base)};
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)n, &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_ACT, b, 2, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_rope_pairs(vx_gpu *g, vx_gbind q, vx_gbind k, int64_t rows, int64_t n, int64_t inner, int64_t heads,
                             int64_t d, vx_gbind cos, vx_gbind sin, const char *label) {
    if (d % 2 || heads * d > inner || cos.b != sin.b)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_rope_pairs: bad shape or tables");
    struct { uint32_t rows, n, inner, d, heads, q_base, k_base, c_base, s_base; } push = {
        (uint32_t)rows, (uint32_t)n, (uint32_t)inner, (uint32_t)d, (uint32_t)heads, 0, 0, 0, 0};
    vx_gbind b[3] = {vx_gop_whole(g, q, &push.q_base), vx_gop_whole(g, k, &push.k_base),
                     vx_gop_whole(g, cos, &push.c_base)};
    vx_gop_whole(g, sin, &push.s_base);
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)(2 * rows * heads * (d / 2)), &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_ROPE_PAIRS, b, 3, &push, sizeof push, gx, gy, 1, label);
}

int vx_gop_attention_cm_ok(const vx_gpu *g, int64_t d, int64_t ld) {
    const uint32_t sg = vx_gpu_info(g)->subgroup_size;
    return vx_gpu_coopmat(g) && d == 64 && ld % 4 == 0 && (sg == 32 || sg == 64);
}

vox_status vx_gop_attention_full(vx_gpu *g, vx_gbind q, vx_gbind k, vx_gbind v, int64_t batch, int64_t n,
                                 int64_t heads, int64_t d, int64_t ld, float scale, int f16, vx_gbind out,
                                 const char *label) {
    if (d <= 0 || d > 64 || d % 4 || heads * d > ld || (n + 63) / 64 > 65535 || heads > 65535 || batch > 65535)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_attention_full: bad shape (n %lld heads %lld d %lld)",
                             (long long)n, (long long)heads, (long long)d);
    struct { uint32_t n, heads, d, ld, q_base, k_base, v_base, o_base; float scale; } push = {
        (uint32_t)n, (uint32_t)heads, (uint32_t)d, (uint32_t)ld, 0, 0, 0, 0, scale};
    vx_gbind b[4] = {vx_gop_whole(g, q, &push.q_base), vx_gop_whole(g, k, &push.k_base),
                     vx_gop_whole(g, v, &push.v_base), vx_gop_whole(g, out, &push.o_base)};
    if (f16 && (!vx_gop_attention_cm_ok(g, d, ld) || (push.q_base | push.k_base | push.v_base | push.o_base) % 4))
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_attention_full: the float16 attention does not run here "
                             "(d %lld, ld %lld, or a tensor not on 16 bytes)", (long long)d, (long long)ld);
    /* VOX_VK_ATTN_CM2=1, with VK_NV_cooperative_matrix2: the same arithmetic on workgroup-scope matrices
     * (attention_cm2.comp; on an H100 381 us a call against attention_cm.comp's 366: not the default) */
    const char *e = getenv("VOX_VK_ATTN_CM2");
    const int cm2 = f16 && vx_gpu_coopmat2(g) && e && !strcmp(e, "1");
    return vx_gpu_dispatch(g, cm2 ? VX_SH_ATTENTION_CM2 : f16 ? VX_SH_ATTENTION_CM : VX_SH_ATTENTION_FULL, b, 4, &push, sizeof push,
                           (uint32_t)((n + 63) / 64), (uint32_t)heads, (uint32_t)batch, label);
}

vox_status vx_gop_gconv(vx_gpu *g, vx_gbind x, vx_gbind wt, vx_gbind bias, int64_t batch, int64_t n, int64_t c,
                        int64_t cg, int64_t pad, int mish, const vx_gbind *res, vx_gbind y, const char *label) {
    if (cg < 1 || 64 % cg || c % 64 || pad < 0 || pad > VX_GCONV_K - 1 || batch > 65535 || c / 64 > 65535)
        return vox_set_error(VOX_ERR_INTERNAL, "vx_gop_gconv: bad shape (c %lld, %lld channels a group)", (long long)c,
                             (long long)cg);
    struct { uint32_t n, c, cg, pad, flags, x_base, w_base, b_base, r_base, y_base; } push = {
        (uint32_t)n, (uint32_t)c, (uint32_t)cg, (uint32_t)pad, (mish ? 1u : 0u) | (res ? 2u : 0u), 0, 0, 0, 0, 0};
    vx_gbind b[5] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, wt, &push.w_base),
                     vx_gop_whole(g, bias, &push.b_base), vx_gop_whole(g, res ? *res : x, &push.r_base),
                     vx_gop_whole(g, y, &push.y_base)};
    return vx_gpu_dispatch(g, VX_SH_GCONV, b, 5, &push, sizeof push, (uint32_t)((n + 31) / 32), (uint32_t)(c / 64),
                           (uint32_t)batch, label);
}

vox_status vx_gop_euler_cfg(vx_gpu *g, vx_gbind x, vx_gbind flow, int64_t n, int64_t w, int guided, float dt,
                            float cfg, vx_gbind a, int64_t a_w, int64_t batch, const char *label) {
    struct { uint32_t count, w, a_w, batch, guided, x_base, f_base, a_base; float dt, cfg; } push = {
        (uint32_t)(n * w), (uint32_t)w, (uint32_t)a_w, (uint32_t)batch, guided ? 1u : 0u, 0, 0, 0, dt, cfg};
    vx_gbind b[3] = {vx_gop_whole(g, x, &push.x_base), vx_gop_whole(g, flow, &push.f_base),
                     vx_gop_whole(g, a, &push.a_base)};
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)(n * w), &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_EULER_CFG, b, 3, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_istft_spec(vx_gpu *g, vx_gbind y, int64_t frames, int64_t bins, vx_gbind s, const char *label) {
    struct { uint32_t frames, bins, y_base, s_base; } push = {(uint32_t)frames, (uint32_t)bins, 0, 0};
    vx_gbind b[2] = {vx_gop_whole(g, y, &push.y_base), vx_gop_whole(g, s, &push.s_base)};
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)(frames * bins), &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_ISTFT_SPEC, b, 2, &push, sizeof push, gx, gy, 1, label);
}

vox_status vx_gop_istft_ola(vx_gpu *g, vx_gbind wv, vx_gbind window, int64_t frames, int64_t n_fft, int64_t hop,
                            int64_t trim, int64_t n_out, vx_gbind out, const char *label) {
    struct { uint32_t frames, n_fft, hop, trim, n_out, wv_base, win_base, o_base; } push = {
        (uint32_t)frames, (uint32_t)n_fft, (uint32_t)hop, (uint32_t)trim, (uint32_t)n_out, 0, 0, 0};
    vx_gbind b[3] = {vx_gop_whole(g, wv, &push.wv_base), vx_gop_whole(g, window, &push.win_base),
                     vx_gop_whole(g, out, &push.o_base)};
    uint32_t gx, gy;
    vx_gop_grid((uint64_t)n_out, &gx, &gy);
    return vx_gpu_dispatch(g, VX_SH_ISTFT_OLA, b, 3, &push, sizeof push, gx, gy, 1, label);
}
